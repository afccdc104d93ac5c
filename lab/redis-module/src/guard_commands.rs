//! The guard's commands, `LINEBLOOM.MTEST` and `LINEBLOOM.MADD`: a whole batch of keys
//! of a linebloom filter held as plain Redis strings by `linebloom-redis-client`
//! (`lab/redis-client`; the protocol is its `PROTOCOL.md`), tested or set in one
//! command per shard. The batch logic is [`crate::batch`]; this file is its Redis glue.
//!
//! Without the module a batch of `n` keys costs the server `n` `GETRANGE` commands or
//! a script that touches every key's block; RedisBloom answers the same batch with one
//! `BF.MEXISTS`. With it, a batch is one command per shard:
//!
//! * `LINEBLOOM.MTEST <shard> <batch>` replies a bulk string of one byte per probe, 1
//!   ("maybe present") or 0 ("absent");
//! * `LINEBLOOM.MADD <shard> <batch>` sets every probe's bits and replies how many
//!   probes had a bit clear before (as `BF.MADD` counts new items);
//!
//! where `<batch>` is `<scheme>:<k>:<blocks>:<probes>`, and `<scheme>` is
//! `linebloom-v2`, the bit pattern (the head itself marks the batch's encoding: an
//! older client's arguments have none, and are refused).
//!
//! `<blocks>` is the shard's length in blocks as the filter's shape fixes it: a shard of
//! any other length (truncated, extended, replaced by a foreign write) is refused with
//! `LBLENGTH <shard> <bytes held> <bytes needed>`, and a missing shard with `LBMISSING
//! <shard>`; `MADD` never creates a shard.
//!
//! Options may follow the probes, each at most once:
//!
//! * `COUNT <count key>` (`MADD` only): the filter's approximate count (8 bytes, a
//!   big-endian `i64`, what `BITFIELD … INCRBY i64 0` adds to), increased by the number
//!   of new keys, while that key exists;
//! * `META <meta key> <meta value>`: the command first checks that the filter's meta key
//!   holds exactly that value, and refuses with `LBSTALE <meta key>`, reading and
//!   writing nothing, if it does not. A client on one server sends it instead of a `GET`
//!   of the meta after the batch, to know that the batch used the generation it
//!   computed against.
//!
//! Both commands answer Redis's key-position requests (`getkeys-api`) with the shard,
//! the count key and the guard's meta key, so Redis applies the caller's ACL key
//! permissions to each before the command runs (a user without access to the meta key
//! gets `NOPERM` and no answer: the guard is no equality oracle on keys the ACL hides),
//! and a cluster refuses a guard whose meta key sits in another slot than the shard with
//! its own `CROSSSLOT` error. Shards are spread over the slots on purpose, so the client
//! sends the guard on one server only and on a cluster reads the meta in a round trip
//! of its own.
//!
//! `<probes>` are 19 bytes per key: the key's block index within the shard and its
//! 64-bit hash, seven bits a byte (`linebloom-redis-wire`, which also defines the
//! names, positions and codes here). The shape and the probes share one argument:
//! Redis makes and frees an object per argument (what that costs a single-key `MTEST`
//! is counted in `benches/README.md`, "Redis"). The client hashes (it knows the
//! filter's hasher and seed from the meta); the module derives the in-block pattern
//! with the core's own code, so the bits are exactly a `BloomFilter`'s.
//!
//! The data stay plain strings: a client without the module reads and writes the same
//! keys with its scripts, and `SAVE`/`BGSAVE` persist them as any string. `MADD`
//! replicates what it changed as one `EVAL` of a script any server runs (`SETRANGE` of
//! each changed block's new bytes, then `BITFIELD … INCRBY` of the count), never itself,
//! so a replica or an append-only file replayed without the module holds the same
//! bits.
//!
//! A command runs whole on Redis's one thread, so a batch is atomic: no reader sees
//! half of it. A refused batch (missing key, wrong type, wrong length, a block past the
//! end of the shard, a bad argument) is an error reply and writes nothing; it never
//! answers "absent" for a key it did not test.
//!

use crate::api::{Call, Key, KeyKind};
use crate::batch;
use linebloom_redis_wire::errors;

// Key-spec flags, as redismodule.h defines them (`REDISMODULE_CMD_KEY_*`).
const KEY_RO: u32 = 1 << 0;
const KEY_RW: u32 = 1 << 1;
const KEY_ACCESS: u32 = 1 << 4;
const KEY_UPDATE: u32 = 1 << 5;
/// Flags of a key the command only reads.
const READ: u32 = KEY_RO | KEY_ACCESS;
/// Flags of a key the command updates in place (the shard, the count).
const UPDATE: u32 = KEY_RW | KEY_UPDATE;

/// Redis's own reply to a key of another type.
const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// Why a command refused: Redis's wrong-arity error, or an error reply.
enum Refusal {
    Arity,
    Error(String),
}

impl From<batch::BatchError> for Refusal {
    fn from(e: batch::BatchError) -> Self {
        Refusal::Error(e.to_string())
    }
}

/// Replies `result`: `ok`'s reply, or the refusal.
fn answer<T>(call: &Call, result: Result<T, Refusal>, ok: impl FnOnce(&Call, T)) {
    match result {
        Ok(value) => ok(call, value),
        Err(Refusal::Arity) => call.wrong_arity(),
        Err(Refusal::Error(message)) => call.error(&message),
    }
}

/// The most arguments a well-formed command has: its name, the shard and the batch,
/// `COUNT` and its key, `META` and its two.
const MAX_ARGS: usize = batch::OPTIONS_ARG + 5;

/// Hands `f` the arguments as byte slices, the command name first, gathered on the
/// stack (a command runs without a heap allocation for them); a call with more than
/// [`MAX_ARGS`] is refused with [`batch::BatchError::Options`] before `f` runs.
fn with_args<'a, T>(
    call: &Call<'a>,
    f: impl FnOnce(&[&'a [u8]]) -> Result<T, Refusal>,
) -> Result<T, Refusal> {
    let argc = call.argc();
    if argc > MAX_ARGS {
        return Err(batch::BatchError::Options.into());
    }
    let mut argv = [&[][..]; MAX_ARGS];
    for (slot, arg) in argv.iter_mut().zip(call.args_from(0)) {
        *slot = arg;
    }
    f(&argv[..argc])
}

/// Answers Redis's key-position request (ACL checks, cluster routing): the shard at
/// argument 1 with `shard_flags`, the count key (updated) and the guard's meta key
/// (read only) where the options name them well-formed. A malformed call declares
/// what it can; the command itself then refuses it.
fn declare_keys(call: &Call, shard_flags: u32, writes: bool) {
    if call.argc() > batch::SHARD_ARG {
        call.key_at_with_flags(batch::SHARD_ARG, shard_flags);
    }
    let options = with_args(call, |argv| Ok(batch::options(argv, writes)?));
    if let Ok(options) = options {
        if let Some(count) = options.count {
            call.key_at_with_flags(count.position, UPDATE);
        }
        if let Some(guard) = options.guard {
            call.key_at_with_flags(guard.key.position, READ);
        }
    }
}

/// A command's checked arguments.
struct Args<'a> {
    k: u32,
    blocks: u64,
    probes: &'a [u8],
    /// The position of the `COUNT` key among the arguments.
    count: Option<usize>,
}

/// The arguments: shard key, batch, then the options; checks the meta guard where
/// there is one (see [`batch::options`]).
fn args<'a>(call: &Call<'a>, writes: bool) -> Result<Args<'a>, Refusal> {
    with_args(call, |argv| checked(call, argv, writes))
}

/// [`args`] of the arguments `argv`.
fn checked<'a>(call: &Call<'a>, argv: &[&'a [u8]], writes: bool) -> Result<Args<'a>, Refusal> {
    let [_, _shard, batch, ..] = argv[..] else {
        return Err(Refusal::Arity);
    };
    let batch::Checked { k, blocks, probes } = batch::check_batch(batch)?;
    let options = batch::options(argv, writes)?;
    if let Some(guard) = options.guard {
        // The meta key is one of the arguments: opened as it is, not copied.
        let meta = call.key(guard.key.position, false);
        if !batch::meta_matches(meta.bytes(), guard.value) {
            return Err(Refusal::Error(format!(
                "{} {} (the filter's meta is no longer the one the client sent)",
                errors::STALE,
                String::from_utf8_lossy(guard.key.key)
            )));
        }
    }
    Ok(Args {
        k,
        blocks,
        probes,
        count: options.count.map(|c| c.position),
    })
}

/// Replicates one `EVAL` of [`batch::REPLICATE_BLOCKS`] on the shard (argument
/// [`batch::SHARD_ARG`]) and its count key (argument `count`, increased by `new`) with
/// `blob` ([`batch::replication_blob`]). It calls `RedisModule_Replicate` with the
/// arguments as they are, where the `redis-module` crate's `replicate` copies each
/// into a string first (the script's body every time): measured with callgrind, that
/// copy was most of a single-key insert's work.
fn replicate_blocks(call: &Call, count: Option<usize>, blob: &[u8], new: u64) {
    use std::os::raw::{c_char, c_longlong};
    // SAFETY: a copy of a `static mut` of the module API table, which
    // `RedisModule_Init` writes once in `OnLoad`, before any command runs; after that
    // it is only read, on Redis's main thread.
    let Some(replicate) = (unsafe { redis_module::raw::RedisModule_Replicate }) else {
        return;
    };
    let (ctx, shard) = call.raw_arg(batch::SHARD_ARG);
    let (script, blob_ptr) = (
        batch::REPLICATE_BLOCKS.as_ptr(),
        blob.as_ptr() as *const c_char,
    );
    match count {
        // SAFETY: `ctx` is this command's live context; the format's items match
        // the arguments that follow, as `RedisModule_Replicate` reads them with
        // `va_arg`: `c` a NUL-terminated C string (a `CStr` constant), `l` a `long
        // long`, `s` a `RedisModuleString *` (the command's own arguments, alive for
        // the call), `b` a pointer and a `size_t` length (`blob`, alive for the call).
        Some(count) => unsafe {
            replicate(
                ctx,
                c"EVAL".as_ptr(),
                c"clssbl".as_ptr(),
                script,
                2 as c_longlong,
                shard,
                call.raw_arg(count).1,
                blob_ptr,
                blob.len(),
                new as c_longlong,
            )
        },
        // SAFETY: as above, with the format `clsb`.
        None => unsafe {
            replicate(
                ctx,
                c"EVAL".as_ptr(),
                c"clsb".as_ptr(),
                script,
                1 as c_longlong,
                shard,
                blob_ptr,
                blob.len(),
            )
        },
    };
}

/// A refused batch on the shard. A shard of the wrong length names the key and the two
/// sizes first, so that a client can report them: `LBLENGTH <key> <bytes held> <bytes
/// needed> …`.
fn refusal_on_shard(call: &Call, e: batch::BatchError) -> Refusal {
    match e {
        batch::BatchError::Length { held, needed } => Refusal::Error(format!(
            "{} {} {held} {needed} (bytes held, bytes the filter's shape needs)",
            errors::LENGTH,
            shard_name(call),
        )),
        e => e.into(),
    }
}

fn shard_name(call: &Call) -> String {
    String::from_utf8_lossy(call.arg(batch::SHARD_ARG)).into_owned()
}

/// The shard, opened: an error where it is absent or of another type.
fn shard<'c>(call: &'c Call, write: bool) -> Result<Key<'c>, Refusal> {
    let key = call.key(batch::SHARD_ARG, write);
    match key.kind() {
        KeyKind::String => Ok(key),
        KeyKind::Empty => Err(Refusal::Error(format!(
            "{} {} (no such filter shard)",
            errors::MISSING,
            shard_name(call)
        ))),
        KeyKind::Other => Err(Refusal::Error(WRONGTYPE.into())),
    }
}

/// `LINEBLOOM.MTEST <shard> <batch> [META <meta key> <meta value>]`.
pub fn mtest(call: &Call) {
    if call.is_keys_request() {
        declare_keys(call, READ, false);
        return;
    }
    let tested = args(call, false).and_then(|args| {
        let key = shard(call, false)?;
        batch::test_all(
            key.bytes().unwrap_or_default(),
            args.k,
            args.blocks,
            args.probes,
        )
        .map_err(|e| refusal_on_shard(call, e))
    });
    answer(call, tested, |call, answers| call.bulk(&answers));
}

/// `LINEBLOOM.MADD <shard> <batch> [COUNT <count key>] [META <meta key> <meta value>]`.
pub fn madd(call: &Call) {
    if call.is_keys_request() {
        declare_keys(call, UPDATE, true);
        return;
    }
    let added = args(call, true).and_then(|args| add(call, &args));
    answer(call, added, |call, new| call.integer(new as i64));
}

/// `MADD`'s work once its arguments are checked: the number of new keys.
fn add(call: &Call, args: &Args) -> Result<u64, Refusal> {
    // The count goes up only while its key exists (an expired filter's count key is
    // not brought back), and must hold a count: checked before any bit is set. One
    // key of a call is open at a time (the count key could name the shard), so it is
    // opened again to add to it; nothing runs in between on Redis's one thread.
    let count = match args.count {
        None => None,
        Some(at) => {
            let key = call.key(at, false);
            match key.kind() {
                KeyKind::Empty => None,
                KeyKind::String if key.bytes().map(<[u8]>::len) == Some(batch::COUNT_BYTES) => {
                    Some(at)
                }
                _ => return Err(batch::BatchError::Count.into()),
            }
        }
    };
    let (added, blob) = {
        // Never creates a shard: its length is fixed by the filter's shape.
        let mut key = shard(call, true)?;
        let shard = key.bytes_mut().unwrap_or_default();
        let added = batch::set_all(shard, args.k, args.blocks, args.probes)
            .map_err(|e| refusal_on_shard(call, e))?;
        if added.changed.is_empty() {
            return Ok(0);
        }
        let blob = batch::replication_blob(shard, &added.changed);
        (added, blob)
    };
    if let Some(at) = count {
        let mut key = call.key(at, true);
        let held = key.bytes_mut().ok_or(batch::BatchError::Count)?;
        batch::add_count(held, added.new)?;
    }
    // Replicas and the append-only file get one `EVAL` of a script any server runs,
    // with or without this module: the changed blocks' new bytes, then the count (a
    // command per block cost the master about a microsecond each: `benches`
    // `redis_batch`).
    replicate_blocks(call, count, &blob, added.new);
    Ok(added.new)
}
