//! What the module's `META` guard saves a server that answers many single-key queries:
//! eight clients, each sending one query at a time, either as the pipeline the client
//! sent before the guard (`LINEBLOOM.MTEST`, then a `GET` of the meta) or as one
//! guarded `LINEBLOOM.MTEST … META <key> <value>`, plus a control copy of the pipeline.
//! Each round runs the three for 1.5 s each, in a start order that rotates every round;
//! the table gives the median queries per second over 6 rounds (wall time: the server's
//! work is the point).
//!
//! ```text
//! redis-server --port 6400 --save "" --loadmodule target/release/liblinebloom_redis.so &
//! cargo run --release -p linebloom-benches --example redis_guard -- redis://127.0.0.1:6400/
//! ```
//!
//! On the 2-core AMD EPYC VM of 2026-12-01, four runs read the guarded query at 1.09,
//! 0.90, 1.07 and 0.96× the pipeline, with the control at 1.00, 1.02, 0.98 and 0.90:
//! no difference beyond the noise there, where the eight clients and the server share
//! two cores and the clients' work dominates. The guard saves the server one command
//! (its parse, dispatch and reply) for a key lookup and a short compare; a server
//! whose clients run elsewhere is where that would show.

use linebloom_lab::support::redis::namespace::Namespace;
use linebloom_lab::support::stats::summary;
use linebloom_lab::support::timing::round_order;
use linebloom_redis_wire as wire;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const CLIENTS: usize = 8;
const ROUNDS: usize = 6;
const PER_RUN: Duration = Duration::from_millis(1500);

/// The module's META guard against a separate GET of the meta.
#[derive(clap::Parser)]
struct Args {
    /// The server, on loopback: `redis://127.0.0.1:PORT/`.
    url: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { url } = clap::Parser::parse();
    let client = redis::Client::open(url.as_str())?;
    let mut con = client.get_connection()?;
    // Every key under one fresh prefix, removed at the end (and on error, by Drop).
    let mut ns = Namespace::claim_on(&url, &Namespace::default_prefix())?;
    let (meta_key, shard) = (ns.key("g:meta"), ns.key("g:{1:0}"));
    let meta = "linebloom-v2 1 1024 8 0 1048576";
    redis::cmd("SET")
        .arg(&meta_key)
        .arg(meta)
        .query::<()>(&mut con)?;
    // A zeroed shard of 1024 blocks (SETRANGE of its last byte).
    redis::cmd("SETRANGE")
        .arg(&shard)
        .arg(1024 * 64 - 1)
        .arg(&[0u8][..])
        .query::<()>(&mut con)?;
    // One probe: block 5, any hash.
    let probe = wire::probe(5, 0x0123_4567_89ab_cdef);
    let query = |guarded: bool| {
        let mut pipe = redis::pipe();
        let mut mtest = redis::cmd(wire::MTEST);
        let head = wire::Head { k: 8, blocks: 1024 }.to_string();
        mtest
            .arg(&shard)
            .arg([head.as_bytes(), &probe[..]].concat());
        if guarded {
            mtest.arg(wire::META).arg(&meta_key).arg(meta);
            pipe.add_command(mtest);
        } else {
            pipe.add_command(mtest);
            pipe.cmd("GET").arg(&meta_key);
        }
        pipe
    };
    let names = ["MTEST, then GET of the meta", "MTEST … META", "control"];
    let mut rates = vec![Vec::new(); names.len()];
    for round in 0..ROUNDS {
        for which in round_order(round, names.len()) {
            let pipe = query(which == 1);
            let done = AtomicU64::new(0);
            let start = Instant::now();
            std::thread::scope(|s| {
                for _ in 0..CLIENTS {
                    s.spawn(|| {
                        let mut con = client.get_connection().expect("connect");
                        let mut n = 0u64;
                        while start.elapsed() < PER_RUN {
                            let replies: Vec<redis::Value> = pipe.query(&mut con).expect("query");
                            assert!(!replies.is_empty());
                            n += 1;
                        }
                        done.fetch_add(n, Ordering::Relaxed);
                    });
                }
            });
            rates[which].push(done.into_inner() as f64 / start.elapsed().as_secs_f64());
        }
    }
    println!("{CLIENTS} clients, one query at a time each; median over {ROUNDS} rounds");
    println!("| path | queries/s | vs the pipeline |");
    println!("|---|---:|---:|");
    let base = summary(&rates[0]).0;
    for (name, r) in names.iter().zip(&rates) {
        let median = summary(r).0;
        println!("| {name} | {median:.0} | {:.2} |", median / base);
    }
    ns.clear()?;
    Ok(())
}
