//! `penetration`: the cache-penetration scenario, against real components.
//!
//! A service looks a product up in its cache, then in its database. A flood of requests
//! for products that do not exist misses the cache and lands on the database. The fix
//! under test is a filter in front of both, loaded with every valid id: "certainly
//! absent" answers at once, "maybe" goes on to cache and database.
//!
//! * **Database**: SQLite on disk (rusqlite, bundled), `n` products (1e6 at reference scale).
//! * **Cache**: an in-process LRU with a TTL, or Redis (`--redis URL`) with `SET … PX`.
//! * **Traffic**: one client in a closed loop; valid ids follow a Zipf(1) law, and the
//!   share of ids that do not exist changes over time: 0%, then 10%, 50% and 90% (the
//!   attack), a quarter of the run each. Every 500 requests a new product is added (the
//!   guard first, then the database, so no client ever sees a false "absent"); every 1000
//!   a product is deleted (database, then cache, then the guard where it can remove:
//!   the in-process defence uses a counting filter; Redis-held filters keep deleted ids as
//!   "maybe" until a periodic rebuild, so their requests reach the database).
//! * **Defences**: no protection; null caching (empty results cached with the TTL);
//!   linebloom in process; and with `--redis`: linebloom held in Redis; RedisBloom's
//!   `BF.EXISTS`/`BF.ADD` on RedisBloom and on the linebloom module, and their
//!   `CF.EXISTS`/`CF.ADD`/`CF.DEL` (RedisBloom's cuckoo filter, linebloom's vector
//!   quotient filter), which take deleted products out (each where the server loads the
//!   module); and the classic `SETBIT`/`GETBIT` filter. Each starts from a fresh copy of
//!   the same database.
//!
//! With `--redis`, every key the run creates starts with one prefix (`--redis-prefix`,
//! by default `linebloom:<run id>:`), and all of them are removed at the end and on
//! error; nothing outside the prefix is touched ([`namespace`](crate::support::redis::namespace)).
//!
//! Output: `data.csv`, one row per defence and second (requests, database queries, cache
//! hits, filter rejections, false positives that reached the database, degraded
//! requests, false negatives, p50/p99 latency, and the filter's capacity monitor: fill
//! ratio, estimated keys, capacity at the target rate, estimated rate now); `plot.svg`
//! (database queries per 1000 requests), `dbps.svg` (per second) and `requests.svg`
//! (requests per second), each with the attack phases shaded; `replay.csv`: the
//! in-process defences under a 90% attack whose ids never repeat and under one that
//! replays 1000 ids ([`replay`]); with `--redis` also `sidebyside.csv`: the
//! Redis-held linebloom filter against RedisBloom at equal memory.
//!
//! The parts: [`service`] serves one request through guard, cache and database;
//! [`defences`](mod@defences) loads every defence; [`scenario`] is one defence's traffic and accounting;
//! [`traffic`] steps it through the attack phases, a second per row; [`replay`] and
//! [`sidebyside`] are the two extra comparisons; [`report`] draws the plots and writes
//! the summary from the CSVs. This module runs them in order.

pub mod cache;
pub mod db;
pub mod defences;
pub mod guard;
pub mod replay;
pub mod report;
pub mod row;
pub mod scenario;
pub mod service;
pub mod sidebyside;
pub mod traffic;

pub use crate::support::redis::connection::{
    BloomModules, RedisTarget, bloom_modules, connect, connect_cluster,
};
pub use row::{FPR, NAME, Row};

pub use defences::defences;
pub use service::{Answer, Outcome, serve};
pub use sidebyside::{SideBySide, run as side_by_side};

use crate::Ctx;
use crate::support::csvio;
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::redis::namespace::Namespace;
use db::Db;
use traffic::{drive, sizes};

/// The `penetration` experiment.
pub struct Penetration;

impl Experiment for Penetration {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str = "cache penetration: a filter in front of cache and SQLite, live metrics (Redis defences with --redis)";
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

/// The scenario for every defence, `replay.csv`, and `sidebyside.csv` with `--redis`;
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
            crate::support::progress::note(format!(
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
    crate::support::progress::note(format!("   loading {n} products into SQLite"));
    drop(Db::create(&template, n)?);
    let fresh_db = |name: &str| -> anyhow::Result<Db> {
        let p = work.join(format!("{name}.sqlite"));
        std::fs::copy(&template, &p)?;
        Db::open(&p)
    };
    let redis = ns.as_ref().map(|(target, ns)| (target, ns));
    let mut rows = Vec::new();
    for scenario in defences(ctx, redis, n, &fresh_db)? {
        rows.extend(drive(ctx, scenario, secs)?);
    }
    crate::support::progress::note("   null caching against the filter when attack ids repeat");
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
        crate::support::progress::note(format!("   removed this run's {removed} Redis keys"));
    } else {
        let _ = std::fs::remove_file(dir.join("sidebyside.csv"));
    }
    drop(scratch);
    Ok(rows)
}
