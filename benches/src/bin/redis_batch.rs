//! Batch queries and inserts against a linebloom filter held in Redis, and what the
//! generation check (which makes rebuilds safe) costs:
//!
//! * queries: the filter's path (`contains_many`: a pipeline of a `GETRANGE` per key,
//!   then a `GET` of the meta), the same without the check (`contains_many_unchecked`), and one
//!   script call per batch (`contains_many_scripted`);
//! * inserts: the filter's path (`insert_many`: a pipeline of a `BITFIELD` per key, then
//!   a `GET` of the meta), one pipelined `BITFIELD` per key without the
//!   check (`insert_many_unchecked`), and one script call per batch that checks the meta
//!   and sets the bits with one `BITFIELD` per shard (`insert_many_scripted`);
//! * both: the linebloom module's path (`lab/redis-module`: one `LINEBLOOM.MTEST` or
//!   `LINEBLOOM.MADD` per shard and batch, then the meta), which the filter takes where
//!   the server loads the module. Without it that row says SKIPPED.
//!
//! Each has a control copy of its baseline (the filter's path) as the noise floor.
//!
//! `cargo run --release -p linebloom-benches --bin redis_batch -- redis://127.0.0.1:PORT/`
//! against `redis-server --loadmodule target/release/liblinebloom_redis.so`.
//!
//! Method: a 1e6-key filter at 1% is stored under a fresh prefix; each round runs every
//! contender once (100 batches of 1000 keys, wall time: the server's work is the point),
//! in a start order that rotates every round; medians over the rounds, and each
//! contender's speed relative to the pipelined baseline. The answers must agree. The
//! filter's keys are deleted at the end.

use linebloom::BloomFilter;
use linebloom_lab::penetration::namespace::Namespace;
use linebloom_redis_client::{BatchPath, DEFAULT_SHARD_BLOCKS, RedisFilter};
use std::time::Instant;

const ROUNDS: usize = 9;
const BATCHES: u64 = 100;
const BATCH: u64 = 1000;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: redis_batch redis://127.0.0.1:PORT/")?;
    let mut con = redis::Client::open(url.as_str())?.get_connection()?;
    // Every key under one fresh prefix, removed at the end (and on error, by Drop).
    let mut ns = Namespace::claim_on(&url, &Namespace::default_prefix())?;
    let prefix = ns.key("bench");
    let n = 1_000_000u64;
    let mut filter = BloomFilter::for_fpr(n, 0.01)?;
    filter.extend((0..n).map(|i| i * 2));
    let mut rf = RedisFilter::store(&mut con, &prefix, &filter, DEFAULT_SHARD_BLOCKS)?;
    let module = rf.batch_path() == BatchPath::Module;
    rf.set_batch_path(BatchPath::Commands);
    let queries: Vec<u64> = (0..BATCHES * BATCH)
        .map(|i| i.wrapping_mul(0x9e37_79b9) | 1)
        .collect();

    let contenders: [&str; 6] = [
        "checked: pipelined GETRANGE, then the meta (the filter's path without the module)",
        "unchecked pipelined GETRANGE",
        "one script call",
        "checked: BITFIELD_RO GET u1 per bit, one per shard, then the meta",
        "checked: LINEBLOOM.MTEST per shard, then the meta (the module)",
        "checked (control)",
    ];
    const QUERY_MODULE: usize = 4;
    let skipped = |c: usize, module_row: usize| c == module_row && !module;
    let mut seconds: Vec<Vec<f64>> = vec![Vec::new(); contenders.len()];
    let mut answers: Vec<Vec<bool>> = vec![Vec::new(); contenders.len()];
    for round in 0..ROUNDS {
        for turn in 0..contenders.len() {
            let c = (round + turn) % contenders.len();
            if skipped(c, QUERY_MODULE) {
                continue;
            }
            let start = Instant::now();
            let mut got = Vec::with_capacity(queries.len());
            for batch in queries.chunks(BATCH as usize) {
                let part = match c {
                    1 => rf.contains_many_unchecked(&mut con, batch)?,
                    2 => rf.contains_many_scripted(&mut con, batch)?,
                    3 => rf.contains_many_bitfield(&mut con, batch)?,
                    QUERY_MODULE => {
                        rf.set_batch_path(BatchPath::Module);
                        let part = rf.contains_many(&mut con, batch);
                        rf.set_batch_path(BatchPath::Commands);
                        part?
                    }
                    _ => rf.contains_many(&mut con, batch)?,
                };
                got.extend(part);
            }
            seconds[c].push(start.elapsed().as_secs_f64());
            answers[c] = got;
        }
    }
    assert!(
        answers
            .iter()
            .enumerate()
            .all(|(c, a)| *a == answers[0] || skipped(c, QUERY_MODULE)),
        "contenders disagree"
    );
    assert!(
        queries
            .iter()
            .zip(&answers[0])
            .all(|(q, &a)| a == filter.contains(q)),
        "Redis answers differ from the in-process filter"
    );
    // Inserts: the checked script against one unchecked BITFIELD per key (pipelined).
    let inserts: Vec<u64> = (0..BATCHES * BATCH)
        .map(|i| i.wrapping_mul(0x2545_f491) * 2)
        .collect();
    let insert_contenders = [
        "checked: pipelined BITFIELD per key, then the meta (the filter's path without the module)",
        "unchecked pipelined BITFIELD per key",
        "checked in one script call per batch",
        "checked: LINEBLOOM.MADD per shard, then the meta (the module)",
        "checked (control)",
    ];
    const INSERT_MODULE: usize = 3;
    let mut insert_seconds: Vec<Vec<f64>> = vec![Vec::new(); insert_contenders.len()];
    for round in 0..ROUNDS {
        for turn in 0..insert_contenders.len() {
            let c = (round + turn) % insert_contenders.len();
            if skipped(c, INSERT_MODULE) {
                continue;
            }
            let start = Instant::now();
            for batch in inserts.chunks(BATCH as usize) {
                match c {
                    1 => rf.insert_many_unchecked(&mut con, batch)?,
                    2 => rf.insert_many_scripted(&mut con, batch)?,
                    INSERT_MODULE => {
                        rf.set_batch_path(BatchPath::Module);
                        let done = rf.insert_many(&mut con, batch);
                        rf.set_batch_path(BatchPath::Commands);
                        done?
                    }
                    _ => rf.insert_many(&mut con, batch)?,
                }
            }
            insert_seconds[c].push(start.elapsed().as_secs_f64());
        }
    }
    let stored = rf.load(&mut con)?;
    assert!(
        inserts.iter().all(|k| stored.contains(k)),
        "an inserted key is missing"
    );

    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let medians: Vec<f64> = seconds.iter_mut().map(median).collect();
    println!("| query contender | queries/s (median of {ROUNDS}) | vs checked |");
    println!("|---|---:|---:|");
    for (c, name) in contenders.iter().enumerate() {
        if skipped(c, QUERY_MODULE) {
            println!("| {name} | SKIPPED (the server has no LINEBLOOM.MTEST) | |");
            continue;
        }
        println!(
            "| {name} | {:.0} | {:.2}x |",
            queries.len() as f64 / medians[c],
            medians[0] / medians[c]
        );
    }
    let insert_medians: Vec<f64> = insert_seconds.iter_mut().map(median).collect();
    println!("| insert contender | inserts/s (median of {ROUNDS}) | vs checked |");
    println!("|---|---:|---:|");
    for (c, name) in insert_contenders.iter().enumerate() {
        if skipped(c, INSERT_MODULE) {
            println!("| {name} | SKIPPED (the server has no LINEBLOOM.MADD) | |");
            continue;
        }
        println!(
            "| {name} | {:.0} | {:.2}x |",
            inserts.len() as f64 / insert_medians[c],
            insert_medians[0] / insert_medians[c]
        );
    }
    ns.clear()?;
    Ok(())
}
