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
//! It is a workspace of its own (the `redis-module` crate runs bindgen, which needs
//! libclang). Build it with `cargo build --release --manifest-path
//! lab/redis-module/Cargo.toml --target-dir target` from the repository root. It needs
//! Redis 7.0 or later.

pub mod api;
pub mod args;
pub mod batch;
pub mod bf;
pub mod bf_commands;
pub mod cf;
pub mod cf_commands;
pub mod datatype;
pub mod dump;
pub mod guard_commands;
pub mod lookup;
pub mod memory;

// The fuzz target's checks name this crate by its name, in the fuzz workspace and here.
#[cfg(test)]
extern crate self as linebloom_redis;

/// The fuzz checks over the committed seeds and regressions.
#[cfg(test)]
#[path = "../fuzz/corpus.rs"]
mod fuzz_corpus;

use api::Call;
use redis_module::raw;
use std::ffi::{CString, c_int};

/// One command: its name without the namespace, its flags (RedisBloom's, for the
/// `BF.*` and `CF.*` commands), and its handler. Every command's first argument is a
/// key; the guard's commands declare their others when Redis asks (`getkeys-api`).
pub struct Command {
    /// `BF.ADD`, …
    pub name: &'static str,
    /// The command's flags, as RedisBloom registers it.
    pub flags: &'static str,
    /// Parses, runs and replies.
    pub run: fn(&Call),
}

const WRITE: &str = "write deny-oom";
const READ: &str = "readonly fast";

/// Every command, once: RedisBloom's `BF.*` and `CF.*`, then the guard's.
pub static COMMANDS: [Command; 27] = [
    Command {
        name: "BF.RESERVE",
        flags: WRITE,
        run: bf_commands::reserve,
    },
    Command {
        name: "BF.ADD",
        flags: WRITE,
        run: bf_commands::add_one,
    },
    Command {
        name: "BF.MADD",
        flags: WRITE,
        run: bf_commands::add_many,
    },
    Command {
        name: "BF.INSERT",
        flags: WRITE,
        run: bf_commands::insert,
    },
    Command {
        name: "BF.EXISTS",
        flags: READ,
        run: bf_commands::exists_one,
    },
    Command {
        name: "BF.MEXISTS",
        flags: READ,
        run: bf_commands::exists_many,
    },
    Command {
        name: "BF.INFO",
        flags: READ,
        run: bf_commands::info,
    },
    Command {
        name: "BF.CARD",
        flags: READ,
        run: bf_commands::card,
    },
    Command {
        name: "BF.DEBUG",
        flags: READ,
        run: bf_commands::debug,
    },
    Command {
        name: "BF.SCANDUMP",
        flags: READ,
        run: bf_commands::scandump,
    },
    Command {
        name: "BF.LOADCHUNK",
        flags: WRITE,
        run: bf_commands::loadchunk,
    },
    Command {
        name: "CF.RESERVE",
        flags: WRITE,
        run: cf_commands::reserve,
    },
    Command {
        name: "CF.ADD",
        flags: WRITE,
        run: cf_commands::add_one,
    },
    Command {
        name: "CF.ADDNX",
        flags: WRITE,
        run: cf_commands::add_new,
    },
    Command {
        name: "CF.INSERT",
        flags: WRITE,
        run: cf_commands::insert_all,
    },
    Command {
        name: "CF.INSERTNX",
        flags: WRITE,
        run: cf_commands::insert_new,
    },
    Command {
        name: "CF.EXISTS",
        flags: READ,
        run: cf_commands::exists_one,
    },
    Command {
        name: "CF.MEXISTS",
        flags: READ,
        run: cf_commands::exists_many,
    },
    Command {
        name: "CF.COUNT",
        flags: READ,
        run: cf_commands::count,
    },
    Command {
        name: "CF.DEL",
        flags: "write fast",
        run: cf_commands::delete,
    },
    Command {
        name: "CF.COMPACT",
        flags: READ,
        run: cf_commands::compact,
    },
    Command {
        name: "CF.INFO",
        flags: READ,
        run: cf_commands::info,
    },
    Command {
        name: "CF.DEBUG",
        flags: READ,
        run: cf_commands::debug,
    },
    Command {
        name: "CF.SCANDUMP",
        flags: READ,
        run: cf_commands::scandump,
    },
    Command {
        name: "CF.LOADCHUNK",
        flags: WRITE,
        run: cf_commands::loadchunk,
    },
    // getkeys-api: Redis asks the command for its keys, which include the count and
    // the guard's meta key; the first argument, the shard, is also the static key
    // spec, for older servers.
    Command {
        name: linebloom_redis_wire::MTEST,
        flags: "readonly getkeys-api",
        run: guard_commands::mtest,
    },
    Command {
        name: linebloom_redis_wire::MADD,
        flags: "write deny-oom getkeys-api",
        run: guard_commands::madd,
    },
];

/// What Redis calls for command `I` of [`COMMANDS`] (unit tests and fuzzing register
/// nothing).
///
/// # Safety
///
/// Called by Redis only, with a command's context and arguments.
#[cfg_attr(any(test, fuzzing), allow(dead_code))]
unsafe extern "C" fn entry<const I: usize>(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
) -> c_int {
    // SAFETY: Redis's arguments for this command call (the contract), used within it.
    let call = unsafe { Call::new(ctx, argv, argc) };
    (COMMANDS[I].run)(&call);
    raw::REDISMODULE_OK as c_int
}

type Entry = unsafe extern "C" fn(
    *mut raw::RedisModuleCtx,
    *mut *mut raw::RedisModuleString,
    c_int,
) -> c_int;

/// [`entry`] for each command, in [`COMMANDS`]' order.
#[cfg_attr(any(test, fuzzing), allow(dead_code))]
const ENTRIES: [Entry; 27] = [
    entry::<0>,
    entry::<1>,
    entry::<2>,
    entry::<3>,
    entry::<4>,
    entry::<5>,
    entry::<6>,
    entry::<7>,
    entry::<8>,
    entry::<9>,
    entry::<10>,
    entry::<11>,
    entry::<12>,
    entry::<13>,
    entry::<14>,
    entry::<15>,
    entry::<16>,
    entry::<17>,
    entry::<18>,
    entry::<19>,
    entry::<20>,
    entry::<21>,
    entry::<22>,
    entry::<23>,
    entry::<24>,
    entry::<25>,
    entry::<26>,
];

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

/// Registers the data types and every command of [`COMMANDS`].
///
/// # Safety
///
/// `ctx` is the context of `OnLoad`.
#[cfg_attr(any(test, fuzzing), allow(dead_code))]
unsafe fn register(ctx: *mut raw::RedisModuleCtx, args: &ModuleArgs) -> Result<(), String> {
    // SAFETY: `OnLoad`'s context. With this option a short or corrupt RDB value makes
    // the load functions report an error, which `rdb_load` turns into a refusal,
    // instead of Redis stopping.
    unsafe {
        api::raw_fn!(RedisModule_SetModuleOptions)(
            ctx,
            raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS as c_int,
        );
        datatype::register(
            ctx,
            &args.command_name("BF.LOADCHUNK"),
            &args.command_name("CF.LOADCHUNK"),
        )?;
    }
    for (command, entry) in COMMANDS.iter().zip(ENTRIES) {
        let name = CString::new(args.command_name(command.name)).expect("no NUL in a name");
        let flags = CString::new(command.flags).expect("no NUL in flags");
        // SAFETY: `OnLoad`'s context, NUL-terminated strings Redis copies, and a
        // command function of the type Redis calls; the key is argument 1.
        let status = unsafe {
            api::raw_fn!(RedisModule_CreateCommand)(
                ctx,
                name.as_ptr(),
                Some(entry),
                flags.as_ptr(),
                1,
                1,
                1,
            )
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!(
                "could not register {name:?} (is another module, RedisBloom say, answering it? \
                 load this one with NAMESPACE name)"
            ));
        }
    }
    Ok(())
}

/// The entry points Redis calls (`RedisModule_OnLoad`, `RedisModule_OnUnload`),
/// generated by the `redis-module` crate and exported from the shared library whatever
/// the module path.
///
/// Left out of unit tests and fuzzing: the generated code installs Redis's allocator as
/// the global one, which aborts outside a server.
#[cfg(not(any(test, fuzzing)))]
#[allow(missing_docs)]
mod entry_points {
    use redis_module::{Context, RedisString, Status};

    fn init(ctx: &Context, args: &[RedisString]) -> Status {
        let args: Vec<String> = args.iter().map(|a| a.to_string_lossy()).collect();
        let registered = super::ModuleArgs::parse(&args)
            // SAFETY: `init` runs inside `OnLoad`, with its context.
            .and_then(|parsed| unsafe { super::register(ctx.ctx, &parsed) });
        match registered {
            Ok(()) => Status::Ok,
            Err(why) => {
                ctx.log_warning(&format!("linebloom: {why}"));
                Status::Err
            }
        }
    }

    redis_module::redis_module! {
        name: "linebloom",
        version: 3,
        allocator: (redis_module::alloc::RedisAlloc, redis_module::alloc::RedisAlloc),
        data_types: [],
        init: init,
        commands: [],
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

    #[test]
    fn every_command_is_listed_once() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
    }
}
