//! The scenario's defences, each loaded and ready to run: no protection, null caching
//! and linebloom in process over an in-process LRU cache; and with a Redis server,
//! linebloom held in Redis, RedisBloom's `BF.*` and `CF.*` on RedisBloom and on the
//! linebloom module, and the classic `SETBIT` filter over a Redis cache.

use super::cache::{Cache, LocalCache, RedisCache};
use super::db::Db;
use super::guard::{CommandFilter, CommandSet, Guard, InProcess, InRedis, NoGuard, RedisClassic};
use super::row::FPR;
use super::scenario::Scenario;
use crate::Ctx;
use crate::contenders::looks;
use crate::support::redis::connection::{RedisTarget, bloom_modules};
use crate::support::redis::namespace::Namespace;
use linebloom_redis_client::{BuildOptions, DEFAULT_SHARD_BLOCKS, FilterOptions, RedisFilter};
use std::time::Duration;

/// Blocks per shard key on a Redis Cluster: 1024 (64 KiB), so a filter of 1e6 keys at 1%
/// spans about 19 keys over the nodes.
pub const CLUSTER_SHARD_BLOCKS: u64 = 1024;

/// Every defence of the scenario, loaded and ready to run, each with a fresh copy of
/// the database (`fresh_db(tag)`): no protection, null caching and linebloom in process,
/// with an in-process LRU cache; and with `redis`, linebloom held in Redis, RedisBloom
/// (where the server has it) and the classic `SETBIT` filter, with Redis as the cache,
/// every key under the namespace. Each defence's traffic comes from `ctx.seed`.
pub fn defences(
    ctx: &Ctx,
    redis: Option<(&RedisTarget, &Namespace)>,
    n: u64,
    fresh_db: &dyn Fn(&str) -> anyhow::Result<Db>,
) -> anyhow::Result<Vec<Scenario>> {
    let ttl = Duration::from_secs(60);
    let local = || Box::new(LocalCache::new(100_000, ttl));
    let scenario =
        |name: &str, guard: Box<dyn Guard + Send>, cache: Box<dyn Cache + Send>, db, null| {
            Scenario::new(name, guard, cache, db, n, ctx.seed, null)
        };
    let mut out = vec![
        scenario(
            looks::NO_PROTECTION,
            Box::new(NoGuard),
            local(),
            fresh_db("none")?,
            false,
        ),
        scenario(
            looks::NULL_CACHING,
            Box::new(NoGuard),
            local(),
            fresh_db("null")?,
            true,
        ),
        scenario(
            looks::IN_PROCESS,
            Box::new(InProcess::load(n, FPR)?),
            local(),
            fresh_db("inproc")?,
            false,
        ),
    ];
    let Some((target, ns)) = redis else {
        return Ok(out);
    };
    let cache = |tag: &str| -> anyhow::Result<Box<dyn Cache + Send>> {
        Ok(Box::new(RedisCache::new(
            target.connect()?,
            &ns.key(&format!("cache:{tag}")),
            ttl,
            target.label(),
        )))
    };
    let mut con = target.connect()?;
    // On a cluster, shards of 64 KiB, so the filter spreads over the nodes.
    let shard_blocks = match target {
        RedisTarget::Single(_) => DEFAULT_SHARD_BLOCKS,
        RedisTarget::Cluster(_) => CLUSTER_SHARD_BLOCKS,
    };
    let options = FilterOptions::default().shard_blocks(shard_blocks);
    // The seeds' recipe: at start-up, every legal id into the filter before it answers.
    let filter = RedisFilter::open_or_build(
        &mut *con,
        &ns.key("filter"),
        linebloom::Params::for_fpr(n, FPR)?,
        options,
        BuildOptions::default(),
        || Ok::<_, std::convert::Infallible>(0..n),
    )?;
    out.push(scenario(
        looks::IN_REDIS,
        Box::new(InRedis { filter, con }),
        cache("inredis")?,
        fresh_db("inredis")?,
        false,
    ));
    // RedisBloom's commands, on RedisBloom and on the linebloom module: `BF.*`, then
    // `CF.*`, whose deletes take products off sale.
    let modules = bloom_modules(target.connect()?.commands());
    let mut by_commands = Vec::new();
    if modules.redisbloom {
        by_commands.push((looks::REDISBLOOM, CommandSet::Bf, String::new()));
    }
    if let Some(prefix) = &modules.linebloom {
        by_commands.push((looks::LINEBLOOM_MODULE_BF, CommandSet::Bf, prefix.clone()));
    }
    if modules.redisbloom {
        by_commands.push((looks::REDISBLOOM_CUCKOO, CommandSet::Cf, String::new()));
    }
    if let Some(prefix) = &modules.linebloom {
        by_commands.push((looks::LINEBLOOM_MODULE_CF, CommandSet::Cf, prefix.clone()));
    }
    for (name, set, prefix) in by_commands {
        let guard =
            CommandFilter::load(name, set, &prefix, target.connect()?, &ns.key(name), n, FPR)?;
        out.push(scenario(
            name,
            Box::new(guard),
            cache(name)?,
            fresh_db(name)?,
            false,
        ));
    }
    if !modules.redisbloom {
        crate::support::progress::note(format!(
            "   RedisBloom is not loaded in {target}: skipping its defences"
        ));
    }
    if modules.linebloom.is_none() {
        crate::support::progress::note(format!(
            "   the linebloom module is not loaded in {target} (alone, or with NAMESPACE \
             linebloom): skipping its BF.* and CF.* defences"
        ));
    }
    let guard = RedisClassic::load(target.connect()?, &ns.key("classic"), n, FPR)?;
    out.push(scenario(
        looks::CLASSIC_SETBIT,
        Box::new(guard),
        cache("classic")?,
        fresh_db("classic")?,
        false,
    ));
    Ok(out)
}
