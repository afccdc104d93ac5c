//! Every command the module registers, in one table ([`COMMANDS`]), and what Redis
//! calls to load the module: `OnLoad` reads the module's arguments ([`ModuleArgs`]),
//! registers the two data types ([`crate::datatype`]) and each command under its name.

use crate::api::{self, Call};
use crate::{ModuleArgs, bf_commands, cf_commands, datatype, guard_commands};
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

/// What Redis calls for command `I` of [`COMMANDS`] (unit tests register nothing).
///
/// # Safety
///
/// Called by Redis only, with a command's context and arguments.
#[cfg_attr(test, allow(dead_code))]
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
#[cfg_attr(test, allow(dead_code))]
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

/// Registers the data types and every command of [`COMMANDS`].
///
/// # Safety
///
/// `ctx` is the context of `OnLoad`.
#[cfg_attr(test, allow(dead_code))]
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
/// Left out of unit tests: the generated code installs Redis's allocator as
/// the global one, which aborts outside a server.
#[cfg(not(test))]
#[allow(missing_docs)]
mod entry_points {
    use redis_module::{Context, RedisString, Status};

    fn init(ctx: &Context, args: &[RedisString]) -> Status {
        let args: Vec<String> = args.iter().map(|a| a.to_string_lossy()).collect();
        let registered = crate::ModuleArgs::parse(&args)
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
    fn every_command_is_listed_once() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
    }
}
