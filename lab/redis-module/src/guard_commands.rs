//! The guard's commands, `LINEBLOOM.MTEST` and `LINEBLOOM.MADD`: a whole batch of keys
//! of a linebloom filter held as plain Redis strings by `linebloom-redis-client`
//! (`lab/redis-client`; the protocol is its `PROTOCOL.md`), tested or set in one
//! command per shard. The batch logic is [`crate::batch`]; this file is its Redis glue.
//!
//! Without the module a batch of `n` keys costs the server `n` `GETRANGE` commands or
//! a script that touches every key's block; RedisBloom answers the same batch with one
//! `BF.MEXISTS`. With it, a batch is one command per shard:
//!
//! * `LINEBLOOM.MTEST <shard> <scheme> <k> <blocks> <probes>` replies a bulk string of
//!   one byte per probe, 1 ("maybe present") or 0 ("absent");
//! * `LINEBLOOM.MADD <shard> <scheme> <k> <blocks> <probes>` sets every probe's bits
//!   and replies how many probes had a bit clear before (as `BF.MADD` counts new items);
//!
//! where `<scheme>` is `linebloom-v2/ascii-probes`: the bit pattern, and the probes'
//! encoding.
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
//! `<probes>` is one argument of 19 bytes per key: the key's block index within the
//! shard and its 64-bit hash, seven bits a byte (`linebloom-redis-wire`, which also
//! defines the names, positions and codes here). The client hashes (it knows the
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

use crate::batch;
use linebloom_redis_wire::errors;
use redis_module::{Context, KeyType, RedisError, RedisResult, RedisString, RedisValue};

// Key-spec flags, as redismodule.h defines them (`REDISMODULE_CMD_KEY_*`).
const KEY_RO: u32 = 1 << 0;
const KEY_RW: u32 = 1 << 1;
const KEY_ACCESS: u32 = 1 << 4;
const KEY_UPDATE: u32 = 1 << 5;
/// Flags of a key the command only reads.
const READ: u32 = KEY_RO | KEY_ACCESS;
/// Flags of a key the command updates in place (the shard, the count).
const UPDATE: u32 = KEY_RW | KEY_UPDATE;

/// The arguments as byte slices.
fn bytes(argv: &[RedisString]) -> Vec<&[u8]> {
    argv.iter().map(|a| a.as_slice()).collect()
}

/// Answers Redis's key-position request (ACL checks, cluster routing): the shard at
/// argument 1 with `shard_flags`, the count key (updated) and the guard's meta key
/// (read only) where the options name them well-formed. A malformed call declares
/// what it can; the command itself then refuses it.
fn declare_keys(ctx: &Context, argv: &[RedisString], shard_flags: u32, writes: bool) {
    let key_at = |pos: usize, flags: u32| {
        debug_assert!(pos < argv.len());
        // SAFETY: a copy of a `static mut` of the module API table, which
        // `RedisModule_Init` writes once in `OnLoad`, before any command runs; after
        // that it is only read, on Redis's main thread.
        let with_flags = unsafe { redis_module::raw::RedisModule_KeyAtPosWithFlags };
        match with_flags {
            // SAFETY: `ctx.ctx` is the live context of this keys-position request,
            // and `pos` indexes an argument of its argv (callers check the length:
            // Redis reads `argv[pos]`).
            Some(key_at_pos) => unsafe { key_at_pos(ctx.ctx, pos as i32, flags as i32) },
            // A server before 7.0: the key with full access.
            None => ctx.key_at_pos(pos as i32),
        }
    };
    if argv.len() > batch::SHARD_ARG {
        key_at(batch::SHARD_ARG, shard_flags);
    }
    if let Ok(options) = batch::options(&bytes(argv), writes) {
        if let Some(count) = options.count {
            key_at(count.position, UPDATE);
        }
        if let Some(guard) = options.guard {
            key_at(guard.key.position, READ);
        }
    }
}

/// A command's checked arguments.
struct Args<'a> {
    shard: &'a RedisString,
    k: u32,
    blocks: u64,
    probes: &'a [u8],
    /// The `COUNT` key, one of the arguments.
    count: Option<&'a RedisString>,
}

/// The arguments: shard key, scheme, `k`, the shard's block count, probes, then the
/// options; checks the meta guard where there is one (see [`batch::options`]).
fn args<'a>(ctx: &Context, argv: &'a [RedisString], writes: bool) -> Result<Args<'a>, RedisError> {
    let [_, shard, scheme, k, blocks, probes, ..] = argv else {
        return Err(RedisError::WrongArity);
    };
    let (k, blocks) =
        batch::check_args(scheme.as_slice(), k.as_slice(), blocks.as_slice()).map_err(refusal)?;
    let options = batch::options(&bytes(argv), writes).map_err(refusal)?;
    if let Some(guard) = options.guard {
        // The meta key is one of the arguments: opened as it is, not copied.
        let meta_key = &argv[guard.key.position];
        let meta = ctx.open_key(meta_key);
        let held = match meta.key_type() {
            KeyType::String => meta.read()?,
            _ => None,
        };
        if !batch::meta_matches(held, guard.value) {
            return Err(RedisError::String(format!(
                "{} {} (the filter's meta is no longer the one the client sent)",
                errors::STALE,
                meta_key.to_string_lossy()
            )));
        }
    }
    Ok(Args {
        shard,
        k,
        blocks,
        probes: probes.as_slice(),
        count: options.count.map(|c| &argv[c.position]),
    })
}

/// Replicates one `EVAL` of [`batch::REPLICATE_BLOCKS`] on `shard` (and its count
/// key, increased by `new`) with `blob` ([`batch::replication_blob`]). It calls
/// `RedisModule_Replicate` with the arguments as they are, where the `redis-module`
/// crate's `replicate` copies each into a string first (the script's body every
/// time): measured with callgrind, that copy was most of a single-key insert's work.
fn replicate_blocks(
    ctx: &Context,
    shard: &RedisString,
    count: Option<&RedisString>,
    blob: &[u8],
    new: u64,
) {
    use std::os::raw::{c_char, c_longlong};
    // SAFETY: a copy of a `static mut` of the module API table, which
    // `RedisModule_Init` writes once in `OnLoad`, before any command runs; after that
    // it is only read, on Redis's main thread.
    let Some(replicate) = (unsafe { redis_module::raw::RedisModule_Replicate }) else {
        return;
    };
    let (script, blob_ptr) = (
        batch::REPLICATE_BLOCKS.as_ptr(),
        blob.as_ptr() as *const c_char,
    );
    match count {
        // SAFETY: `ctx.ctx` is this command's live context; the format's items match
        // the arguments that follow, as `RedisModule_Replicate` reads them with
        // `va_arg`: `c` a NUL-terminated C string (a `CStr` constant), `l` a `long
        // long`, `s` a `RedisModuleString *` (the command's own arguments, alive for
        // the call), `b` a pointer and a `size_t` length (`blob`, alive for the call).
        Some(count) => unsafe {
            replicate(
                ctx.ctx,
                c"EVAL".as_ptr(),
                c"clssbl".as_ptr(),
                script,
                2 as c_longlong,
                shard.inner,
                count.inner,
                blob_ptr,
                blob.len(),
                new as c_longlong,
            )
        },
        // SAFETY: as above, with the format `clsb`.
        None => unsafe {
            replicate(
                ctx.ctx,
                c"EVAL".as_ptr(),
                c"clsb".as_ptr(),
                script,
                1 as c_longlong,
                shard.inner,
                blob_ptr,
                blob.len(),
            )
        },
    };
}

fn refusal(e: batch::BatchError) -> RedisError {
    RedisError::String(e.to_string())
}

/// A refused batch on shard `key`. A shard of the wrong length names the key and the
/// two sizes first, so that a client can report them: `LBLENGTH <key> <bytes held>
/// <bytes needed> …`.
fn refusal_on(key: &RedisString, e: batch::BatchError) -> RedisError {
    match e {
        batch::BatchError::Length { held, needed } => RedisError::String(format!(
            "{} {} {held} {needed} (bytes held, bytes the filter's shape needs)",
            errors::LENGTH,
            key.to_string_lossy(),
        )),
        e => refusal(e),
    }
}

/// The error for a shard key that is absent or of another type.
fn not_a_shard(key: &RedisString, kind: KeyType) -> RedisError {
    if kind == KeyType::Empty {
        RedisError::String(format!(
            "{} {} (no such filter shard)",
            errors::MISSING,
            key.to_string_lossy()
        ))
    } else {
        RedisError::WrongType
    }
}

/// `LINEBLOOM.MTEST <shard> <scheme> <k> <blocks> <probes> [META <meta key> <meta value>]`.
pub(crate) fn mtest(ctx: &Context, argv: Vec<RedisString>) -> RedisResult {
    if ctx.is_keys_position_request() {
        declare_keys(ctx, &argv, READ, false);
        return Ok(RedisValue::NoReply);
    }
    let args = args(ctx, &argv, false)?;
    let key = ctx.open_key(args.shard);
    match key.key_type() {
        KeyType::String => {}
        kind => return Err(not_a_shard(args.shard, kind)),
    }
    let shard = key.read()?.unwrap_or_default();
    let answers = batch::test_all(shard, args.k, args.blocks, args.probes)
        .map_err(|e| refusal_on(args.shard, e))?;
    Ok(RedisValue::StringBuffer(answers))
}

/// `LINEBLOOM.MADD <shard> <scheme> <k> <blocks> <probes> [COUNT <count key>] [META
/// <meta key> <meta value>]`.
pub(crate) fn madd(ctx: &Context, argv: Vec<RedisString>) -> RedisResult {
    if ctx.is_keys_position_request() {
        declare_keys(ctx, &argv, UPDATE, true);
        return Ok(RedisValue::NoReply);
    }
    let args = args(ctx, &argv, true)?;
    // The count goes up only while its key exists (an expired filter's count key
    // is not brought back), and must hold a count: checked before any bit is set.
    let count = match args.count {
        None => None,
        Some(name) => {
            let key = ctx.open_key_writable(name);
            match key.key_type() {
                KeyType::Empty => None,
                KeyType::String if key.as_string_dma()?.len() == batch::COUNT_BYTES => {
                    Some((name, key))
                }
                _ => return Err(refusal(batch::BatchError::Count)),
            }
        }
    };
    let key = ctx.open_key_writable(args.shard);
    match key.key_type() {
        KeyType::String => {}
        // Never create a shard: its length is fixed by the filter's shape.
        kind => return Err(not_a_shard(args.shard, kind)),
    }
    let mut shard = key.as_string_dma()?;
    let added = batch::set_all(&mut shard, args.k, args.blocks, args.probes)
        .map_err(|e| refusal_on(args.shard, e))?;
    if added.changed.is_empty() {
        return Ok(RedisValue::Integer(0));
    }
    if let Some((_, count)) = &count {
        batch::add_count(&mut count.as_string_dma()?, added.new).map_err(refusal)?;
    }
    // Replicas and the append-only file get one `EVAL` of a script any server runs,
    // with or without this module: the changed blocks' new bytes, then the count (a
    // command per block cost the master about a microsecond each: `benches`
    // `redis_batch`).
    let blob = batch::replication_blob(&shard, &added.changed);
    let count_key = count.as_ref().map(|(name, _)| *name);
    replicate_blocks(ctx, args.shard, count_key, &blob, added.new);
    Ok(RedisValue::Integer(added.new as i64))
}
