//! `penetration`: the cache-penetration scenario, against real components.
//!
//! A service looks a product up in its cache, then in its database. A flood of requests
//! for products that do not exist misses the cache and lands on the database. The fix
//! under test is a filter in front of both, loaded with every valid id: "certainly
//! absent" answers at once, "maybe" goes on to cache and database.
//!
//! * **Database**: SQLite on disk (rusqlite, bundled), `n` products (1e6 at quick scale).
//! * **Cache**: an in-process LRU with a TTL, or Redis (`--redis URL`) with `SET … PX`.
//! * **Traffic**: one client in a closed loop; valid ids follow a Zipf(1) law, and the
//!   share of ids that do not exist changes over time: 0%, then 10%, 50% and 90% (the
//!   attack), a quarter of the run each. Every 500 requests a new product is added (the
//!   guard first, then the database, so no client ever sees a false "absent"); every 1000
//!   a product is deleted (database, then cache, then the guard where it can remove:
//!   the in-process scheme uses a counting filter; Redis-held filters keep deleted ids as
//!   "maybe" until a periodic rebuild, so their requests reach the database).
//! * **Schemes**: no protection; null caching (empty results cached with the TTL);
//!   linebloom in process; and with `--redis`: linebloom held in Redis, RedisBloom
//!   (`BF.EXISTS`/`BF.ADD`, when the server has the module), and the classic
//!   `SETBIT`/`GETBIT` filter. Each starts from a fresh copy of the same database.
//!
//! With `--redis`, every key the run creates starts with one prefix (`--redis-prefix`,
//! by default `linebloom:<run id>:`), and all of them are removed at the end and on
//! error; nothing outside the prefix is touched ([`namespace`]).
//!
//! Output: `data.csv`, one row per scheme and second (requests, database queries, cache
//! hits, filter rejections, false positives that reached the database, degraded
//! requests, false negatives, p50/p99 latency, and the filter's capacity monitor: fill
//! ratio, estimated keys, capacity at the target rate, estimated rate now); `plot.svg`
//! (database queries per 1000 requests), `dbps.svg` (per second) and `requests.svg`
//! (requests per second), each with the attack phases shaded; `replay.csv`: the
//! in-process schemes under a 90% attack whose ids never repeat and under one that
//! replays 1000 ids ([`replay`]); with `--redis` also `sidebyside.csv`: the
//! Redis-held linebloom filter against RedisBloom at equal memory.

pub mod cache;
pub mod connection;
pub mod db;
pub mod guard;
pub mod namespace;
pub mod redis_filter;
pub mod replay;
pub mod report;
pub mod scenario;
pub mod sidebyside;

pub use connection::{RedisTarget, connect, connect_cluster, has_redisbloom};

pub use sidebyside::{SideBySide, run as side_by_side};

use crate::experiments::{Experiment, Run, Summary};
use crate::scheme;
use crate::{Ctx, csvio};
use cache::{Cache, Cached, LocalCache, RedisCache};
use db::Db;
use guard::{Guard, InProcess, InRedis, NoGuard, RedisBloom, RedisClassic};
use namespace::Namespace;
use redis_filter::{DEFAULT_SHARD_BLOCKS, RedisFilter};
use scenario::Scenario;

/// Blocks per shard key on a Redis Cluster: 1024 (64 KiB), so a filter of 1e6 keys at 1%
/// spans about 19 keys over the nodes.
pub const CLUSTER_SHARD_BLOCKS: u64 = 1024;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Experiment name.
pub const NAME: &str = "penetration";
/// Target false-positive rate of every filter in the scenario.
pub const FPR: f64 = 0.01;

/// One CSV row: one scheme, one second.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Scheme.
    #[serde(alias = "scheme")] // the column's name before every CSV called it `contender`
    pub contender: String,
    /// Cache used (lru or redis).
    pub cache: String,
    /// Second since the scheme's start.
    pub second: u32,
    /// Share of requests for ids that do not exist, during this second.
    pub attack_share: f64,
    /// Requests answered.
    pub requests: u64,
    /// Database queries.
    pub db_queries: u64,
    /// Database queries that found nothing.
    pub db_empty: u64,
    /// Cache hits.
    pub cache_hits: u64,
    /// Requests the filter answered "absent".
    pub rejections: u64,
    /// Requests for absent ids that the filter let through (its false positives).
    pub false_positives: u64,
    /// Requests for absent ids that reached the filter.
    pub absent_checked: u64,
    /// Requests whose guard or cache could not be checked (treated as "maybe").
    pub degraded: u64,
    /// Valid ids the filter called absent: must be 0.
    pub false_negatives: u64,
    /// Median latency, µs.
    pub p50_us: f64,
    /// 99th-percentile latency, µs.
    pub p99_us: f64,
    /// Filter memory in bytes.
    pub filter_bytes: u64,
    /// The filter's fill ratio at the end of this second (empty: no filter, or its bits
    /// are not visible, as in RedisBloom).
    #[serde(default)]
    pub fill_ratio: Option<f64>,
    /// Its estimated count of keys at the end of this second.
    #[serde(default)]
    pub estimated_len: Option<f64>,
    /// The most keys it holds at the target rate ([`FPR`]).
    #[serde(default)]
    pub capacity: Option<u64>,
    /// The rate it gives now, estimated from its bits.
    #[serde(default)]
    pub estimated_fpr: Option<f64>,
    /// Rebuilds from the database during this second (the Redis-held linebloom filter
    /// is rebuilt at each attack phase change; see [`guard::Guard::rebuild`]).
    #[serde(default)]
    pub rebuilds: u64,
}

impl Row {
    /// The capacity monitor's sample in this row, where the scheme has one.
    pub fn capacity(&self) -> Option<guard::Capacity> {
        Some(guard::Capacity {
            fill_ratio: self.fill_ratio,
            estimated_len: self.estimated_len?,
            capacity: self.capacity?,
            estimated_fpr: self.estimated_fpr,
            target_fpr: FPR,
        })
    }

    /// A row with no requests yet, for `scheme` over `cache`, second `second`.
    pub fn empty(scheme: &str, cache: &str, filter_bytes: u64, second: u32) -> Row {
        Row {
            contender: scheme.into(),
            cache: cache.into(),
            second,
            attack_share: 0.0,
            requests: 0,
            db_queries: 0,
            db_empty: 0,
            cache_hits: 0,
            rejections: 0,
            false_positives: 0,
            absent_checked: 0,
            degraded: 0,
            false_negatives: 0,
            p50_us: 0.0,
            p99_us: 0.0,
            filter_bytes,
            fill_ratio: None,
            estimated_len: None,
            capacity: None,
            estimated_fpr: None,
            rebuilds: 0,
        }
    }
}

/// The attack share at `t` of `total`: 0, 10%, 50%, 90% by quarters.
fn attack_share(t: Duration, total: Duration) -> f64 {
    match (4.0 * t.as_secs_f64() / total.as_secs_f64()) as u32 {
        0 => 0.0,
        1 => 0.1,
        2 => 0.5,
        _ => 0.9,
    }
}

/// Scale parameters: products, seconds per scheme.
fn sizes(ctx: &Ctx) -> (u64, u64) {
    ctx.scale
        .pick((20_000, 2), (1_000_000, 12), (1_000_000, 40))
}

/// Runs one scheme for `secs` seconds, the attack share stepping by quarters, and
/// returns its rows. Each phase change rebuilds the filter where the scheme can.
fn drive(ctx: &Ctx, mut scenario: Scenario, secs: u64) -> anyhow::Result<Vec<Row>> {
    let total = Duration::from_secs(secs);
    let start = Instant::now();
    let mut rows: Vec<Row> = Vec::new();
    let bar = crate::progress::bar(ctx, secs, scenario.scheme());
    let mut second = 0u32;
    let mut phase = attack_share(Duration::ZERO, total);
    loop {
        let elapsed = start.elapsed();
        if elapsed >= total {
            break;
        }
        if elapsed.as_secs() as u32 != second {
            rows.push(scenario.finish_second(second));
            second = elapsed.as_secs() as u32;
            bar.set_position(second as u64);
        }
        let share = attack_share(elapsed, total);
        if share != phase {
            phase = share;
            if let Some(Err(e)) = scenario.rebuild() {
                eprintln!("warning: rebuild of {} failed: {e:#}", scenario.scheme());
            }
        }
        scenario.step(share)?;
    }
    rows.push(scenario.finish_second(second));
    bar.finish_and_clear();
    Ok(rows)
}

/// How one request was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The filter said "certainly absent": answered empty at once.
    Rejected,
    /// Answered from the cache.
    CacheHit,
    /// Answered from the database: a product.
    Found,
    /// The database had nothing.
    Empty,
    /// As `CacheHit`, but the guard or the cache could not be checked.
    DegradedCacheHit,
    /// As `Found`, but the guard or the cache could not be checked.
    DegradedFound,
    /// As `Empty`, but the guard or the cache could not be checked.
    DegradedEmpty,
}

/// Serves one request for `key`: guard, then cache, then database. A guard or cache that
/// cannot be checked makes the request *degraded* and it goes on as "maybe": the answer
/// is never "absent" for a key nobody could check. Only a database failure is an error.
pub fn serve(
    guard: &mut dyn Guard,
    cache: &mut dyn Cache,
    db: &Db,
    key: u64,
    null_caching: bool,
) -> anyhow::Result<Outcome> {
    let mut degraded = false;
    match guard.might_contain(key) {
        Ok(false) => return Ok(Outcome::Rejected),
        Ok(true) => {}
        Err(_) => degraded = true,
    }
    match cache.get(key) {
        Ok(Some(_)) => {
            return Ok(if degraded {
                Outcome::DegradedCacheHit
            } else {
                Outcome::CacheHit
            });
        }
        Ok(None) => {}
        Err(_) => degraded = true,
    }
    let found = db.get(key)?;
    // Cache writes are best effort: a failed write only costs a later miss.
    let _ = match &found {
        Some(name) => cache.set(key, &Cached::Value(name.clone())),
        None if null_caching => cache.set(key, &Cached::Empty),
        None => Ok(()),
    };
    Ok(match (found.is_some(), degraded) {
        (true, false) => Outcome::Found,
        (true, true) => Outcome::DegradedFound,
        (false, false) => Outcome::Empty,
        (false, true) => Outcome::DegradedEmpty,
    })
}

/// The `penetration` experiment.
pub struct Penetration;

impl Experiment for Penetration {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str = "cache penetration: a filter in front of cache and SQLite, live metrics (Redis schemes with --redis)";
    type Row = Row;

    /// Measures: the rows of `data.csv`. Writes `replay.csv`, and `sidebyside.csv`
    /// with `--redis`, beside it.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        measure(ctx)
    }

    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        report::plot(rows, run)
    }

    fn summary(rows: &[Row], run: &Run) -> anyhow::Result<Summary> {
        report::summary(rows, run)
    }
}

/// The scenario for every scheme, `replay.csv`, and `sidebyside.csv` with `--redis`;
/// returns the rows of `data.csv`.
fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let (n, secs) = sizes(ctx);
    // Claimed first, so a prefix in use is refused before anything runs; dropped on an
    // early return, which removes the run's keys on error too.
    let mut ns = match RedisTarget::of(ctx) {
        Some(target) => {
            let prefix = ctx
                .redis_prefix
                .clone()
                .unwrap_or_else(Namespace::default_prefix);
            let ns = Namespace::claim(&target, &prefix)?;
            eprintln!(
                "   Redis keys of this run start with {prefix:?}; all are removed at the end"
            );
            Some((target, ns))
        }
        None => None,
    };
    let dir = ctx.dir(NAME)?;
    // Removed when dropped: at the end, and on every early return with an error.
    let scratch = tempfile::Builder::new()
        .prefix("linebloom-penetration-")
        .tempdir()
        .map_err(|e| anyhow::anyhow!("cannot create a scratch folder for the databases: {e}"))?;
    let work = scratch.path();
    let template = work.join("template.sqlite");
    eprintln!("   loading {n} products into SQLite");
    drop(Db::create(&template, n)?);
    let fresh_db = |name: &str| -> anyhow::Result<Db> {
        let p = work.join(format!("{name}.sqlite"));
        std::fs::copy(&template, &p)?;
        Db::open(&p)
    };
    let redis = ns.as_ref().map(|(target, ns)| (target, ns));
    let mut rows = Vec::new();
    for scenario in schemes(ctx, redis, n, &fresh_db)? {
        rows.extend(drive(ctx, scenario, secs)?);
    }
    eprintln!("   null caching against the filter when attack ids repeat");
    let replayed = replay::run(ctx, n, (secs / 6).max(1), &fresh_db)?;
    replay::write(ctx, &replayed)?;
    if let Some((target, ns)) = &mut ns {
        match target {
            RedisTarget::Single(url) => {
                let sbs = side_by_side(url, ns, n.min(200_000), ctx)?;
                csvio::write(&dir.join("sidebyside.csv"), &sbs)?;
            }
            // RedisBloom's filter is one key on one node: the comparison is single-node.
            RedisTarget::Cluster(_) => {
                let _ = std::fs::remove_file(dir.join("sidebyside.csv"));
            }
        }
        let removed = ns.clear()?;
        eprintln!("   removed this run's {removed} Redis keys");
    } else {
        let _ = std::fs::remove_file(dir.join("sidebyside.csv"));
    }
    drop(scratch);
    Ok(rows)
}

/// Every scheme of the scenario, loaded and ready to run, each with a fresh copy of
/// the database (`fresh_db(tag)`): no protection, null caching and linebloom in process,
/// with an in-process LRU cache; and with `redis`, linebloom held in Redis, RedisBloom
/// (where the server has it) and the classic `SETBIT` filter, with Redis as the cache,
/// every key under the namespace. Each scheme's traffic comes from `ctx.seed`.
pub fn schemes(
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
            scheme::NO_PROTECTION,
            Box::new(NoGuard),
            local(),
            fresh_db("none")?,
            false,
        ),
        scenario(
            scheme::NULL_CACHING,
            Box::new(NoGuard),
            local(),
            fresh_db("null")?,
            true,
        ),
        scenario(
            scheme::IN_PROCESS,
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
    let mut plain = linebloom::BloomFilter::new(linebloom::Params::for_fpr(n, FPR)?);
    plain.insert_batch(&(0..n).collect::<Vec<u64>>());
    // On a cluster, shards of 64 KiB, so the filter spreads over the nodes.
    let shard_blocks = match target {
        RedisTarget::Single(_) => DEFAULT_SHARD_BLOCKS,
        RedisTarget::Cluster(_) => CLUSTER_SHARD_BLOCKS,
    };
    let filter = RedisFilter::store(&mut *con, &ns.key("filter"), &plain, shard_blocks)?;
    out.push(scenario(
        scheme::IN_REDIS,
        Box::new(InRedis { filter, con }),
        cache("inredis")?,
        fresh_db("inredis")?,
        false,
    ));
    if has_redisbloom(target.connect()?.single(), ns) {
        let guard = RedisBloom::load(target.connect()?, &ns.key(scheme::REDISBLOOM), n, FPR)?;
        out.push(scenario(
            scheme::REDISBLOOM,
            Box::new(guard),
            cache(scheme::REDISBLOOM)?,
            fresh_db("rb")?,
            false,
        ));
    } else {
        eprintln!("   RedisBloom is not loaded in {target}: skipping the redisbloom scheme");
    }
    let guard = RedisClassic::load(target.connect()?, &ns.key("classic"), n, FPR)?;
    out.push(scenario(
        scheme::CLASSIC_SETBIT,
        Box::new(guard),
        cache("classic")?,
        fresh_db("classic")?,
        false,
    ));
    Ok(out)
}
