//! What the fronts and the script fallback read of a `redis::Cmd`: its words, and
//! whether it is one of the protocol's commands that name no key.

/// A command's words (its name, then its arguments), as bytes.
pub(crate) fn words(cmd: &redis::Cmd) -> impl Iterator<Item = &[u8]> {
    cmd.args_iter().map(|a| match a {
        redis::Arg::Simple(bytes) => bytes,
        _ => &[][..],
    })
}

/// Is this the name of a command the protocol sends that names no key (a cluster
/// routes it by itself)?
pub(crate) fn keyless(name: &[u8]) -> bool {
    [&b"INFO"[..], b"COMMAND", b"TIME"]
        .iter()
        .any(|k| name.eq_ignore_ascii_case(k))
}
