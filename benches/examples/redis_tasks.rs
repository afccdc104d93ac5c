//! Many async tasks sharing one multiplexed connection, each sending single-key lookups
//! one at a time: linebloom's `AsyncRedisFilter::contains` through the module against
//! redis-rs's `bf_exists` (RedisBloom's `BF.EXISTS`) on the same server, an identical
//! second RedisBloom filter as the control, and the same `LINEBLOOM.MTEST` command built
//! once and sent as it is (what the server and the command's size cost, without the
//! client's work per call). What a web service does: every request task asks the guard
//! about one id.
//!
//! ```text
//! redis-server --port 6400 --save "" --loadmodule target/release/liblinebloom_redis.so NAMESPACE linebloom \
//!     --loadmodule "$LINEBLOOM_REDISBLOOM_SO" &
//! cargo run --release -p linebloom-benches --example redis_tasks -- redis://127.0.0.1:6400/ [ROUNDS] [TASKS]
//! ```
//!
//! Method: each filter holds 100,000 keys at 1%; each round runs every contender for
//! 1.5 s (64 tasks on a two-thread tokio runtime, each task a clone of the one
//! multiplexed connection), in a start order that rotates every round; the table gives
//! the median lookups per second and the median of the per-round ratios of each
//! contender's throughput to RedisBloom's (wall time: the server and the client share
//! the machine's two cores, as they would on one host), and where the CPU went: the
//! client's (this process, every thread) and the server's (`INFO cpu`, its network I/O
//! included) microseconds per lookup, medians over rounds.

use linebloom::Params;
use linebloom_lab::support::redis::commandstats::server_cpu_seconds;
use linebloom_lab::support::redis::namespace::Namespace;
use linebloom_lab::support::stats::summary;
use linebloom_lab::support::timing::{process_cpu_ns, round_order};
use linebloom_redis_client::{AsyncRedisFilter, BatchPath};
use linebloom_redis_wire as wire;
use redis::AsyncCommands;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const KEYS: u64 = 100_000;
const PER_RUN: Duration = Duration::from_millis(1500);

#[derive(Clone)]
enum Contender {
    RedisBloom(String),
    Linebloom(AsyncRedisFilter),
    Raw(redis::Cmd),
}

impl Contender {
    async fn contains(&self, con: &mut redis::aio::MultiplexedConnection, key: u64) -> bool {
        match self {
            Contender::RedisBloom(bf) => con.bf_exists(bf, key).await.expect("BF.EXISTS"),
            Contender::Linebloom(filter) => filter.contains(con, &key).await.expect("contains"),
            Contender::Raw(cmd) => {
                let v: redis::Value = cmd.query_async(con).await.expect("raw");
                v != redis::Value::Nil
            }
        }
    }
}

/// One run's lookups per second, and the client's and the server's CPU microseconds
/// per lookup.
struct Run {
    rate: f64,
    client_us: f64,
    server_us: f64,
}

/// `tasks` tasks asking one key at a time for `PER_RUN`; `stats` reads the server's CPU
/// time.
async fn throughput(
    c: &Contender,
    con: &redis::aio::MultiplexedConnection,
    stats: &mut redis::Connection,
    tasks: usize,
    round: u64,
) -> redis::RedisResult<Run> {
    let done = Arc::new(AtomicU64::new(0));
    let server = server_cpu_seconds(stats)?;
    let client = process_cpu_ns();
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks as u64)
        .map(|t| {
            let (c, mut con, done) = (c.clone(), con.clone(), Arc::clone(&done));
            tokio::spawn(async move {
                let mut n = 0u64;
                let mut absent = 0u64;
                while start.elapsed() < PER_RUN {
                    // Non-members (odd keys), different per task and round.
                    let key = ((round << 40) | (t << 32) | n) * 2 + 1;
                    absent += u64::from(!c.contains(&mut con, key).await);
                    n += 1;
                }
                std::hint::black_box(absent);
                done.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();
    for h in handles {
        h.await.expect("a task");
    }
    let wall = start.elapsed().as_secs_f64();
    let client_ns = process_cpu_ns() - client;
    let server = server_cpu_seconds(stats)? - server;
    let n = done.load(Ordering::Relaxed) as f64;
    Ok(Run {
        rate: n / wall,
        client_us: client_ns as f64 / 1e3 / n,
        server_us: server * 1e6 / n,
    })
}

/// Async tasks on one multiplexed connection against redis-rs's `bf_exists`.
#[derive(clap::Parser)]
struct Args {
    /// The server, on loopback: `redis://127.0.0.1:PORT/`.
    url: String,
    /// Rounds; the start order rotates every round.
    #[arg(default_value_t = 9)]
    rounds: usize,
    /// Concurrent tasks.
    #[arg(default_value_t = 64)]
    tasks: usize,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { url, rounds, tasks } = clap::Parser::parse();
    let client = redis::Client::open(url.as_str())?;
    let mut con = client.get_multiplexed_async_connection().await?;
    let mut stats = client.get_connection()?;
    // Every key under one fresh prefix, removed at the end.
    let mut ns = Namespace::claim_on(&url, &Namespace::default_prefix())?;
    let members: Vec<u64> = (0..KEYS).map(|i| i * 2).collect();
    let mut contenders = Vec::new();
    for (name, key) in [("RedisBloom", "bf"), ("RedisBloom (control)", "bf-control")] {
        let key = ns.key(key);
        redis::cmd("BF.RESERVE")
            .arg(&key)
            .arg(0.01)
            .arg(KEYS)
            .exec_async(&mut con)
            .await?;
        for chunk in members.chunks(10_000) {
            let _: Vec<bool> = con.bf_madd(&key, chunk).await?;
        }
        contenders.push((name, Contender::RedisBloom(key)));
    }
    let filter =
        AsyncRedisFilter::create(&mut con, &ns.key("linebloom"), Params::for_fpr(KEYS, 0.01)?)
            .await?;
    if filter.batch_path() != BatchPath::Module {
        return Err("the server has no linebloom module: load it (see the module docs)".into());
    }
    for chunk in members.chunks(10_000) {
        filter.insert_many(&mut con, chunk).await?;
    }
    let g = filter.generation();
    let meta: String = redis::cmd("GET")
        .arg(format!("{}:meta", filter.prefix()))
        .query_async(&mut con)
        .await?;
    // The command `contains` sends for a key in block 0, built once.
    let mut raw = redis::cmd(wire::MTEST);
    let head = wire::Head {
        k: g.params.k(),
        blocks: g.shard_len(0),
    }
    .to_string();
    raw.arg(g.shard_key(filter.prefix(), 0))
        .arg([head.as_bytes(), &wire::probe(0, 0x0505_0505_0505_0505)[..]].concat())
        .arg(wire::META)
        .arg(format!("{}:meta", filter.prefix()))
        .arg(meta);
    contenders.push(("linebloom, module", Contender::Linebloom(filter)));
    contenders.push(("LINEBLOOM.MTEST built once", Contender::Raw(raw)));

    let mut runs: Vec<Vec<Run>> = contenders.iter().map(|_| Vec::new()).collect();
    for round in 0..rounds {
        for i in round_order(round, contenders.len()) {
            let run = throughput(&contenders[i].1, &con, &mut stats, tasks, round as u64);
            runs[i].push(run.await?);
        }
    }
    let column = |i: usize, f: fn(&Run) -> f64| runs[i].iter().map(f).collect::<Vec<f64>>();
    println!(
        "{rounds} rounds of {} s, {tasks} tasks on one multiplexed connection, rotating order\n",
        PER_RUN.as_secs_f64()
    );
    println!(
        "| contender | lookups/s (median) | throughput ÷ RedisBloom's (median, range) \
         | client CPU µs/lookup | server CPU µs/lookup |"
    );
    println!("|---|---:|---:|---:|---:|");
    let base = column(0, |r| r.rate);
    for (i, (name, _)) in contenders.iter().enumerate() {
        let rates = column(i, |r| r.rate);
        let ratios: Vec<f64> = rates.iter().zip(&base).map(|(r, b)| r / b).collect();
        let (r, lo, hi) = summary(&ratios);
        println!(
            "| {name} | {:.0} | {r:.3} ({lo:.3}–{hi:.3}) | {:.2} | {:.2} |",
            summary(&rates).0,
            summary(&column(i, |r| r.client_us)).0,
            summary(&column(i, |r| r.server_us)).0,
        );
    }
    ns.clear()?;
    Ok(())
}
