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
//!
//! The parts: [`service`] serves one request through guard, cache and database;
//! [`schemes`](mod@schemes) loads every scheme; [`scenario`] is one scheme's traffic and accounting;
//! [`traffic`] steps it through the attack phases, a second per row; [`replay`] and
//! [`sidebyside`] are the two extra comparisons; [`report`] draws the plots and writes
//! the summary from the CSVs. This module runs them in order.

pub mod cache;
pub mod connection;
pub mod db;
pub mod guard;
pub mod namespace;
pub mod replay;
pub mod report;
pub mod scenario;
pub mod schemes;
pub mod service;
pub mod sidebyside;
pub mod traffic;

pub use connection::{RedisTarget, connect, connect_cluster, has_redisbloom};

pub use schemes::schemes;
pub use service::{Answer, Outcome, serve};
pub use sidebyside::{SideBySide, run as side_by_side};

use crate::experiments::{Experiment, Run, Summary};
use crate::{Ctx, csvio};
use db::Db;
use namespace::Namespace;
use traffic::{drive, sizes};

use serde::{Deserialize, Serialize};

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
            crate::progress::note(format!(
                "   Redis keys of this run start with {prefix:?}; all are removed at the end"
            ));
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
    crate::progress::note(format!("   loading {n} products into SQLite"));
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
    crate::progress::note("   null caching against the filter when attack ids repeat");
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
        crate::progress::note(format!("   removed this run's {removed} Redis keys"));
    } else {
        let _ = std::fs::remove_file(dir.join("sidebyside.csv"));
    }
    drop(scratch);
    Ok(rows)
}
