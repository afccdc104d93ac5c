//! The Redis-held linebloom filter against RedisBloom on the same server: batched and
//! single-key queries and inserts, and the measured false-positive rate.
//!
//! Contenders, loaded with the same `n` keys:
//!
//! * `redisbloom`: `BF.RESERVE key 0.01 n` (its own sizing for 1%), `BF.MADD`/`BF.MEXISTS`
//!   batches and `BF.ADD`/`BF.EXISTS` single keys;
//! * `linebloom-in-redis` at *equal memory*: as many 64-byte blocks as RedisBloom's
//!   reported size;
//! * `linebloom-in-redis` *sized for 1%*: linebloom's own sizing (`Params::for_fpr`);
//! * [`ROUND_TRIP`], a plain `GET`/`SET` of a short string on its own connection: what
//!   one round trip costs, the bound on every single-key figure.
//!
//! Where the server has the linebloom module (`lab/redis-module`), the linebloom filters
//! send batches through it (one `LINEBLOOM.MTEST`/`LINEBLOOM.MADD` per shard), and the
//! equal-memory filter runs a second time without it (pipelined `GETRANGE` lookups,
//! one insert script per shard), so the table shows what the module buys. The
//! `batches` column says which.
//!
//! Method: every contender is loaded with its `n` keys in batches of 1000. Then, in
//! `ROUNDS` rounds whose start order rotates, each contender answers 1e5 non-members in
//! batches of 1000 and `SINGLE` non-members one round trip each, re-inserts up to
//! `REINSERT` of its keys in batches of 1000, and `SINGLE` of them one at a time (setting
//! bits already set costs a filter the same work: hash, address, write); medians over
//! the rounds. Wall time: the server's work is the point. An identical second
//! RedisBloom filter runs as a control; its ratio to the first is the noise floor the
//! report prints. The rate counts every "present" among the 1e5 non-members of the last
//! round.

use super::row::FPR;
use crate::Ctx;
use crate::contenders::looks;
use crate::support::redis::connection::{bloom_modules, connect};
use crate::support::redis::namespace::Namespace;
use linebloom_redis_client::{BatchPath, RedisFilter};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Rounds of the query and single-key measurements.
const ROUNDS: usize = 5;
/// Single-key operations per contender and round.
const SINGLE: usize = 2_000;
/// Keys per batch.
const BATCH: usize = 1_000;
/// Keys re-inserted in batches per contender and round.
const REINSERT: usize = 100_000;
/// The control copy's sizing label.
const CONTROL: &str = "reserve 1% (control)";

/// One contender's row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SideBySide {
    /// Defence.
    #[serde(alias = "scheme")]
    pub contender: String,
    /// How it was sized: `reserve 1%`, `equal memory` or `for 1%`.
    #[serde(default)]
    pub sizing: String,
    /// How batches reached the server: `BF.MADD/BF.MEXISTS`, or a linebloom
    /// [`BatchPath`] name (`linebloom module`, `pipelined commands`).
    #[serde(default)]
    pub batches: String,
    /// Filter bytes in Redis.
    pub bytes: u64,
    /// Keys loaded.
    pub n: u64,
    /// Measured false-positive rate.
    pub fpr: f64,
    /// Non-member probes.
    pub probes: u64,
    /// Batched queries per second (batches of 1000; median over rounds).
    pub query_ops_per_s: f64,
    /// Batched inserts per second (batches of 1000; median over rounds).
    pub insert_ops_per_s: f64,
    /// Single-key queries per second (one round trip each; median over rounds).
    #[serde(default)]
    pub single_query_ops_per_s: f64,
    /// Single-key inserts per second (one round trip each; median over rounds).
    #[serde(default)]
    pub single_insert_ops_per_s: f64,
}

/// A contender's operations on its connection.
enum Contender {
    RedisBloom {
        key: String,
        con: redis::Connection,
    },
    Linebloom {
        filter: RedisFilter,
        con: redis::Connection,
    },
    /// A plain `GET`/`SET` of one short string: what one round trip costs, the bound on
    /// every single-key call (no batches, no filter).
    RoundTrip {
        key: String,
        con: redis::Connection,
    },
}

impl Contender {
    fn insert_batch(&mut self, keys: &[u64]) -> anyhow::Result<()> {
        match self {
            Contender::RedisBloom { key, con } => redis::cmd("BF.MADD")
                .arg(&*key)
                .arg(keys)
                .query::<()>(con)?,
            Contender::Linebloom { filter, con } => {
                filter.insert_many(con, keys)?;
            }
            Contender::RoundTrip { .. } => {}
        }
        Ok(())
    }
    fn insert_one(&mut self, k: u64) -> anyhow::Result<()> {
        match self {
            Contender::RedisBloom { key, con } => {
                redis::cmd("BF.ADD").arg(&*key).arg(k).query::<()>(con)?
            }
            Contender::Linebloom { filter, con } => {
                filter.insert(con, &k)?;
            }
            Contender::RoundTrip { key, con } => {
                redis::cmd("SET").arg(&*key).arg(k).query::<()>(con)?
            }
        }
        Ok(())
    }
    fn query_batch(&mut self, keys: &[u64]) -> anyhow::Result<Vec<bool>> {
        Ok(match self {
            Contender::RedisBloom { key, con } => {
                redis::cmd("BF.MEXISTS").arg(&*key).arg(keys).query(con)?
            }
            Contender::Linebloom { filter, con } => filter.contains_many(con, keys)?,
            Contender::RoundTrip { .. } => Vec::new(),
        })
    }
    fn query_one(&mut self, k: u64) -> anyhow::Result<bool> {
        Ok(match self {
            Contender::RedisBloom { key, con } => {
                redis::cmd("BF.EXISTS").arg(&*key).arg(k).query(con)?
            }
            Contender::Linebloom { filter, con } => filter.contains(con, &k)?,
            Contender::RoundTrip { key, con } => redis::cmd("GET")
                .arg(&*key)
                .query::<Option<String>>(con)?
                .is_some(),
        })
    }
}

/// A contender, with what its row says about it.
struct Entry {
    defence: &'static str,
    sizing: &'static str,
    batches: &'static str,
    bytes: u64,
    contender: Contender,
}

/// Operations per second of `ops` operations that took `seconds`, median over rounds;
/// NaN where nothing was measured (the round trip's batches).
fn median_rate(ops: usize, seconds: &mut [f64]) -> f64 {
    seconds.sort_by(f64::total_cmp);
    seconds
        .get(seconds.len() / 2)
        .map_or(f64::NAN, |&s| ops as f64 / s)
}

/// The reference row's name: a plain `GET`/`SET`, one round trip.
pub const ROUND_TRIP: &str = "round trip (GET / SET)";

/// Runs the comparison for `n` keys on the server at `url`, every key under `ns`.
/// Without RedisBloom in the server, only linebloom sized for 1% is measured.
pub fn run(url: &str, ns: &Namespace, n: u64, ctx: &Ctx) -> anyhow::Result<Vec<SideBySide>> {
    let keys: Vec<u64> = (0..n).collect();
    let probes: Vec<u64> = crate::support::keys::non_members(ctx, 100_000, 99);
    let mut contenders: Vec<Entry> = Vec::new();
    let load = |c: &mut Contender| -> anyhow::Result<()> {
        for chunk in keys.chunks(BATCH) {
            c.insert_batch(chunk)?;
        }
        Ok(())
    };
    if bloom_modules(&mut connect(url)?).redisbloom {
        let redisbloom = |name: &str, sizing| -> anyhow::Result<Entry> {
            let key = ns.key(name);
            let mut con = connect(url)?;
            redis::cmd("BF.RESERVE")
                .arg(&key)
                .arg(FPR)
                .arg(n)
                .query::<()>(&mut con)?;
            let mut c = Contender::RedisBloom {
                key: key.clone(),
                con,
            };
            load(&mut c)?;
            let size: Vec<u64> = redis::cmd("BF.INFO")
                .arg(&key)
                .arg("SIZE")
                .query(&mut connect(url)?)?;
            let bytes = *size
                .first()
                .ok_or_else(|| anyhow::anyhow!("BF.INFO SIZE returned nothing"))?;
            Ok(Entry {
                defence: looks::REDISBLOOM,
                sizing,
                batches: "BF.MADD/BF.MEXISTS",
                bytes,
                contender: c,
            })
        };
        let first = redisbloom("sbs:redisbloom", "reserve 1%")?;
        let bytes = first.bytes;
        contenders.push(first);
        contenders.push(redisbloom("sbs:redisbloom-control", CONTROL)?);
        let params = linebloom::Params::for_bits_per_key(n, bytes as f64 * 8.0 / n as f64)?;
        let mut con = connect(url)?;
        let filter = RedisFilter::create(&mut con, &ns.key("sbs:equal-memory"), params)?;
        let module = filter.batch_path() == BatchPath::Module;
        let linebloom = |filter: RedisFilter, con, sizing| -> anyhow::Result<Entry> {
            let batches = filter.batch_path().name();
            let mut c = Contender::Linebloom { filter, con };
            load(&mut c)?;
            Ok(Entry {
                defence: looks::IN_REDIS,
                sizing,
                batches,
                bytes: params.bytes() as u64,
                contender: c,
            })
        };
        contenders.push(linebloom(filter, con, "equal memory")?);
        if module {
            // The same filter without the module, for what the module buys.
            let mut con = connect(url)?;
            let filter =
                RedisFilter::create(&mut con, &ns.key("sbs:equal-memory-commands"), params)?;
            filter.set_batch_path(BatchPath::Commands);
            contenders.push(linebloom(filter, con, "equal memory")?);
        }
    }
    let params = linebloom::Params::for_fpr(n, FPR)?;
    let mut con = connect(url)?;
    let filter = RedisFilter::create(&mut con, &ns.key("sbs:for-p"), params)?;
    let batches = filter.batch_path().name();
    let mut c = Contender::Linebloom { filter, con };
    load(&mut c)?;
    contenders.push(Entry {
        defence: looks::IN_REDIS,
        sizing: "for 1%",
        batches,
        bytes: params.bytes() as u64,
        contender: c,
    });

    let key = ns.key("sbs:round-trip");
    let mut con = connect(url)?;
    redis::cmd("SET").arg(&key).arg(0).query::<()>(&mut con)?;
    contenders.push(Entry {
        defence: ROUND_TRIP,
        sizing: "—",
        batches: "—",
        bytes: 0,
        contender: Contender::RoundTrip { key, con },
    });

    let m = contenders.len();
    let (mut batched, mut batched_i, mut single_q, mut single_i) = (
        vec![Vec::new(); m],
        vec![Vec::new(); m],
        vec![Vec::new(); m],
        vec![Vec::new(); m],
    );
    let reinserted = &keys[..REINSERT.min(keys.len())];
    let mut positives = vec![0u64; m];
    for round in 0..ROUNDS {
        for turn in 0..m {
            let i = (round + turn) % m;
            let c = &mut contenders[i].contender;
            if !matches!(c, Contender::RoundTrip { .. }) {
                let t = Instant::now();
                let mut fp = 0;
                for chunk in probes.chunks(BATCH) {
                    fp += c.query_batch(chunk)?.iter().filter(|&&x| x).count() as u64;
                }
                batched[i].push(t.elapsed().as_secs_f64());
                positives[i] = fp;
                let t = Instant::now();
                for chunk in reinserted.chunks(BATCH) {
                    c.insert_batch(chunk)?;
                }
                batched_i[i].push(t.elapsed().as_secs_f64());
            }
            let t = Instant::now();
            for &p in &probes[..SINGLE] {
                c.query_one(p)?;
            }
            single_q[i].push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            for &k in &keys[..SINGLE.min(keys.len())] {
                c.insert_one(k)?;
            }
            single_i[i].push(t.elapsed().as_secs_f64());
        }
    }
    Ok(contenders
        .into_iter()
        .enumerate()
        .map(|(i, e)| SideBySide {
            contender: e.defence.into(),
            sizing: e.sizing.into(),
            batches: e.batches.into(),
            bytes: e.bytes,
            n,
            fpr: if e.defence == ROUND_TRIP {
                f64::NAN
            } else {
                positives[i] as f64 / probes.len() as f64
            },
            probes: probes.len() as u64,
            query_ops_per_s: median_rate(probes.len(), &mut batched[i]),
            insert_ops_per_s: median_rate(reinserted.len(), &mut batched_i[i]),
            single_query_ops_per_s: median_rate(SINGLE, &mut single_q[i]),
            single_insert_ops_per_s: median_rate(SINGLE.min(keys.len()), &mut single_i[i]),
        })
        .collect())
}

/// One figure of a row.
type Figure = fn(&SideBySide) -> f64;

/// The report's table of `rows`, and a note in `notes` for every figure where
/// RedisBloom leads linebloom at equal memory.
pub fn table(rows: &[SideBySide], notes: &mut Vec<String>) -> String {
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            // A figure the row has no measure of (the round trip's batches) is a dash.
            let or_dash = |v: f64, digits: usize| {
                if v.is_finite() {
                    format!("{v:.digits$}")
                } else {
                    "—".into()
                }
            };
            vec![
                r.contender.clone(),
                r.sizing.clone(),
                r.batches.clone(),
                format!("{:.2}", r.bytes as f64 / (1 << 20) as f64),
                or_dash(r.fpr, 5),
                or_dash(r.query_ops_per_s, 0),
                or_dash(r.insert_ops_per_s, 0),
                or_dash(r.single_query_ops_per_s, 0),
                or_dash(r.single_insert_ops_per_s, 0),
            ]
        })
        .collect();
    let mut text = format!(
        "\nSide by side in one Redis server ([`sidebyside.csv`](penetration/sidebyside.csv); \
         {} keys, 1e5 non-member probes; batches of {BATCH}; medians of {ROUNDS} rounds \
         in rotating order):\n\n",
        rows.first().map_or(0, |r| r.n)
    );
    text.push_str(&crate::support::table::markdown_table(
        &[
            "defence",
            "sized",
            "batches",
            "MiB",
            "measured FPR",
            "queries/s (batched)",
            "inserts/s (batched)",
            "queries/s (single key)",
            "inserts/s (single key)",
        ],
        &cells,
    ));
    // linebloom's best way of sending batches: the first equal-memory row (the module's,
    // where the server had it).
    let equal = rows.iter().find(|r| r.sizing == "equal memory");
    let rb = rows
        .iter()
        .find(|r| r.contender == looks::REDISBLOOM && r.sizing != CONTROL);
    let control = rows.iter().find(|r| r.sizing == CONTROL);
    if let (Some(rb), Some(control)) = (rb, control) {
        text.push_str(&format!(
            "\nNoise floor: an identical second RedisBloom filter ran at {:.2}x the first on \
             batched queries and {:.2}x on batched inserts.\n",
            control.query_ops_per_s / rb.query_ops_per_s,
            control.insert_ops_per_s / rb.insert_ops_per_s
        ));
    }
    if let Some(trip) = rows.iter().find(|r| r.contender == ROUND_TRIP) {
        text.push_str(&format!(
            "\nEvery single-key call is one round trip: on the same connection a plain `GET` \
             ran at {:.0} and a `SET` at {:.0} per second, the most any single-key column can \
             reach here.\n",
            trip.single_query_ops_per_s, trip.single_insert_ops_per_s
        ));
    }
    if let (Some(lb), Some(rb)) = (equal, rb) {
        if rb.fpr < lb.fpr {
            notes.push(format!(
                "RedisBloom had the lower FPR at equal memory ({:.5} vs {:.5})",
                rb.fpr, lb.fpr
            ));
        }
        let figures: [(&str, Figure); 4] = [
            ("batched queries", |r| r.query_ops_per_s),
            ("batched inserts", |r| r.insert_ops_per_s),
            ("single-key queries", |r| r.single_query_ops_per_s),
            ("single-key inserts", |r| r.single_insert_ops_per_s),
        ];
        for (what, pick) in figures {
            if pick(rb) > pick(lb) {
                // How far the control landed from RedisBloom on this figure.
                let noise = control.map_or(String::new(), |c| {
                    let spread = (pick(c) / pick(rb) - 1.0).abs();
                    if pick(rb) / pick(lb) <= 1.0 + spread {
                        format!(", within the control's {:.2}x", pick(c) / pick(rb))
                    } else {
                        String::new()
                    }
                });
                notes.push(format!(
                    "RedisBloom ran more {what} per second in Redis ({:.0} vs {:.0}: {:.2}x{noise})",
                    pick(rb),
                    pick(lb),
                    pick(rb) / pick(lb)
                ));
            }
        }
    }
    text
}
