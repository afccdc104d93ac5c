//! `linebloom-redis`: a Redis module with two jobs.
//!
//! * **A drop-in for RedisBloom's `BF.*` and `CF.*`.** One key per filter, answering
//!   RedisBloom's commands with its syntax, replies and error texts: `BF.*` on
//!   linebloom's blocked Bloom filter, scaling as RedisBloom's does ([`bf`],
//!   [`bf_commands`]), and `CF.*` on linebloom's vector quotient filter, which deletes
//!   ([`cf`], [`cf_commands`]). The keys persist (RDB, AOF), replicate, copy, expire and
//!   report `MEMORY USAGE` like any other ([`datatype`]); bytes from outside (`LOADCHUNK`,
//!   `RESTORE`, an RDB file) are checked before anything is kept ([`dump`]).
//! * **The guard's batch commands**, `LINEBLOOM.MTEST` and `LINEBLOOM.MADD`, over the
//!   plain strings `linebloom-redis-client` keeps ([`guard_commands`], [`batch`]).
//!
//! Loaded alone, it answers `BF.*` and `CF.*`. The module argument `NAMESPACE ns` puts
//! those commands under `ns.BF.*` and `ns.CF.*` instead, so that it loads beside
//! RedisBloom in one server (the lab, the benches and CI load it as
//! `NAMESPACE linebloom`):
//!
//! ```text
//! redis-server --loadmodule target/release/liblinebloom_redis.so
//! redis-server --loadmodule redisbloom.so --loadmodule liblinebloom_redis.so NAMESPACE linebloom
//! ```
//!
//! What runs inside Redis (the commands, the data types and the entry points, through
//! the `redis-module` crate) is the `server` feature, on by default; without it the
//! crate is the filters and their dumps' decoders, which the fuzz target builds.
//!
//! It is a workspace of its own (the `redis-module` crate runs bindgen, which needs
//! libclang). Build it with `cargo build --release --manifest-path
//! lab/redis-module/Cargo.toml --target-dir target` from the repository root. It needs
//! Redis 7.0 or later.

pub mod args;
pub mod batch;
pub mod bf;
pub mod cf;
pub mod dump;
pub mod memory;
pub mod stored;

// What runs inside Redis, through the `redis-module` crate (the `server` feature, on
// by default): the fuzz target builds the crate without it, and without bindgen.
#[cfg(feature = "server")]
pub mod api;
#[cfg(feature = "server")]
pub mod bf_commands;
#[cfg(feature = "server")]
pub mod cf_commands;
#[cfg(feature = "server")]
pub mod commands;
#[cfg(feature = "server")]
pub mod datatype;
#[cfg(feature = "server")]
pub mod guard_commands;
#[cfg(feature = "server")]
pub mod lookup;

// The fuzz target's checks name this crate by its name, in the fuzz workspace and here.
#[cfg(test)]
extern crate self as linebloom_redis;

/// The fuzz checks over the committed seeds and regressions.
#[cfg(test)]
#[path = "../fuzz/corpus.rs"]
mod fuzz_corpus;

/// What the guard's command names start with.
const GUARD_PREFIX: &str = "LINEBLOOM.";

/// The module's arguments.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ModuleArgs {
    /// `NAMESPACE ns`: commands as `ns.BF.ADD`.
    pub namespace: Option<String>,
}

impl ModuleArgs {
    /// Reads `NAMESPACE ns`; anything else is refused, and the module then fails to
    /// load with that reason in the server's log.
    pub fn parse(args: &[String]) -> Result<ModuleArgs, String> {
        let mut out = ModuleArgs::default();
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            if arg.eq_ignore_ascii_case("NAMESPACE") {
                let ns = rest.next().ok_or("NAMESPACE needs a name")?;
                if ns.is_empty()
                    || !ns
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_-".contains(&b))
                {
                    return Err(format!("NAMESPACE {ns:?}: letters, digits, _ and - only"));
                }
                out.namespace = Some(ns.clone());
            } else {
                return Err(format!(
                    "unknown module argument {arg:?} (the one argument is NAMESPACE name)"
                ));
            }
        }
        Ok(out)
    }

    /// The registered name of `name` (`BF.ADD` → `ns.BF.ADD`). The guard's commands
    /// (`LINEBLOOM.*`), which no other module answers, keep their names.
    pub fn command_name(&self, name: &str) -> String {
        match &self.namespace {
            Some(ns) if !name.starts_with(GUARD_PREFIX) => format!("{ns}.{name}"),
            _ => name.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn module_args_read_a_namespace_and_refuse_the_rest() {
        assert_eq!(ModuleArgs::parse(&[]), Ok(ModuleArgs::default()));
        let ns = ModuleArgs::parse(&["NAMESPACE".into(), "linebloom".into()]).unwrap();
        assert_eq!(ns.command_name("BF.ADD"), "linebloom.BF.ADD");
        assert_eq!(ModuleArgs::default().command_name("CF.DEL"), "CF.DEL");
        assert_eq!(
            ns.command_name(linebloom_redis_wire::MTEST),
            "LINEBLOOM.MTEST"
        );
        assert!(ModuleArgs::parse(&["NAMESPACE".into()]).is_err());
        assert!(ModuleArgs::parse(&["NAMESPACE".into(), "a b".into()]).is_err());
        assert!(ModuleArgs::parse(&["ERROR_RATE".into(), "0.1".into()]).is_err());
    }
}
