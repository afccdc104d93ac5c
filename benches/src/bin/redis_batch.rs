//! Batch queries against a linebloom filter held in Redis: one pipelined `GETRANGE` per
//! key (`contains_many`) against one script call per batch (`contains_many_scripted`),
//! with a control copy of the pipelined version as the noise floor.
//!
//! `cargo run --release -p linebloom-benches --bin redis_batch -- redis://127.0.0.1:PORT/`
//!
//! Method: a 1e6-key filter at 1% is stored under a fresh prefix; each round runs every
//! contender once (100 batches of 1000 keys, wall time: the server's work is the point),
//! in a start order that rotates every round; medians over the rounds, and each
//! contender's speed relative to the pipelined baseline. The answers must agree. The
//! filter's keys are deleted at the end.

use linebloom::BloomFilter;
use linebloom_lab::penetration::namespace::Namespace;
use linebloom_lab::penetration::redis_filter::{DEFAULT_SHARD_BLOCKS, RedisFilter};
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
    let mut ns = Namespace::claim(&url, &Namespace::default_prefix())?;
    let prefix = ns.key("bench");
    let n = 1_000_000u64;
    let mut filter = BloomFilter::for_fpr(n, 0.01)?;
    filter.extend((0..n).map(|i| i * 2));
    let rf = RedisFilter::store(&mut con, &prefix, &filter, DEFAULT_SHARD_BLOCKS)?;
    let queries: Vec<u64> = (0..BATCHES * BATCH)
        .map(|i| i.wrapping_mul(0x9e37_79b9) | 1)
        .collect();

    type Contender = (&'static str, bool);
    let contenders: [Contender; 3] = [
        ("pipelined GETRANGE", false),
        ("one script call", true),
        ("pipelined (control)", false),
    ];
    let mut seconds: Vec<Vec<f64>> = vec![Vec::new(); contenders.len()];
    let mut answers: Vec<Vec<bool>> = vec![Vec::new(); contenders.len()];
    for round in 0..ROUNDS {
        for turn in 0..contenders.len() {
            let c = (round + turn) % contenders.len();
            let start = Instant::now();
            let mut got = Vec::with_capacity(queries.len());
            for batch in queries.chunks(BATCH as usize) {
                let part = if contenders[c].1 {
                    rf.contains_many_scripted(&mut con, batch)?
                } else {
                    rf.contains_many(&mut con, batch)?
                };
                got.extend(part);
            }
            seconds[c].push(start.elapsed().as_secs_f64());
            answers[c] = got;
        }
    }
    assert!(
        answers.iter().all(|a| *a == answers[0]),
        "contenders disagree"
    );
    assert!(
        queries
            .iter()
            .zip(&answers[0])
            .all(|(q, &a)| a == filter.contains(q)),
        "Redis answers differ from the in-process filter"
    );
    // Inserts: one BITFIELD per key (pipelined) against one BITFIELD per shard and batch.
    let inserts: Vec<u64> = (0..BATCHES * BATCH)
        .map(|i| i.wrapping_mul(0x2545_f491) * 2)
        .collect();
    let insert_contenders = [
        "pipelined BITFIELD per key",
        "one BITFIELD per batch",
        "pipelined (control)",
    ];
    let mut insert_seconds: Vec<Vec<f64>> = vec![Vec::new(); insert_contenders.len()];
    for round in 0..ROUNDS {
        for turn in 0..insert_contenders.len() {
            let c = (round + turn) % insert_contenders.len();
            let start = Instant::now();
            for batch in inserts.chunks(BATCH as usize) {
                if c == 1 {
                    rf.insert_many_merged(&mut con, batch)?;
                } else {
                    rf.insert_many(&mut con, batch)?;
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
        v[v.len() / 2]
    };
    let medians: Vec<f64> = seconds.iter_mut().map(median).collect();
    println!("| contender | queries/s (median of {ROUNDS}) | vs pipelined |");
    println!("|---|---:|---:|");
    for (c, &(name, _)) in contenders.iter().enumerate() {
        println!(
            "| {name} | {:.0} | {:.2}x |",
            queries.len() as f64 / medians[c],
            medians[0] / medians[c]
        );
    }
    let insert_medians: Vec<f64> = insert_seconds.iter_mut().map(median).collect();
    println!("| insert contender | inserts/s (median of {ROUNDS}) | vs pipelined |");
    println!("|---|---:|---:|");
    for (c, name) in insert_contenders.iter().enumerate() {
        println!(
            "| {name} | {:.0} | {:.2}x |",
            inserts.len() as f64 / insert_medians[c],
            insert_medians[0] / insert_medians[c]
        );
    }
    ns.clear()?;
    Ok(())
}
