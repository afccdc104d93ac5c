//! The client's instructions per single-key call, counted by callgrind: linebloom's
//! `AsyncRedisFilter::contains` and `insert` (through the module) against redis-rs's
//! `bf_exists` and `bf_add` (RedisBloom's `BF.EXISTS` and `BF.ADD`), each sent by 64
//! tasks over one multiplexed connection, as a web service sends them. The other half
//! of a call, the server's, is `redis_server_cost`'s; the throughput this adds up to
//! is `redis_tasks`'s. Instructions do not move with the machine's noise as times do.
//!
//! ```text
//! redis-server --port 6400 --save "" --loadmodule target/release/liblinebloom_redis.so NAMESPACE linebloom \
//!     --loadmodule "$LINEBLOOM_REDISBLOOM_SO" &
//! cargo run --release -p linebloom-benches --example redis_client_cost -- redis://127.0.0.1:6400/ [CALLS]
//! ```
//!
//! Method: each filter is made for 100,000 keys at 1%. For each contender this program
//! runs itself twice under `valgrind --tool=callgrind` (which runs the client's threads
//! one at a time), on a current-thread tokio runtime with 64 tasks: once with no calls
//! and once with `CALLS` (default 12,800) calls, each task its own keys; the cost is the
//! difference of the two runs' instruction totals, divided by the calls (the connection
//! and set-up cancel out).

use linebloom::Params;
use linebloom_lab::support::redis::namespace::Namespace;
use linebloom_redis_client::{AsyncRedisFilter, BatchPath};
use redis::AsyncCommands;

const TASKS: u64 = 64;
/// Each redis-rs call (the base), then linebloom's call of the same kind.
const PAIRS: [[&str; 2]; 2] = [["bf_exists", "contains"], ["bf_add", "insert"]];

/// The call a worker makes, chosen once, before the measured calls.
#[derive(Clone, Copy)]
enum Call {
    BfExists,
    Contains,
    BfAdd,
    Insert,
}

/// The client's instructions per call.
#[derive(clap::Parser)]
struct Args {
    /// The server, on loopback: `redis://127.0.0.1:PORT/`.
    url: String,
    /// Calls per contender (a multiple of 64).
    #[arg(default_value_t = 12_800)]
    calls: u64,
    /// Run as the measured worker (set by this program itself): the contender, the
    /// RedisBloom key and the linebloom prefix.
    #[arg(long, num_args = 3, value_names = ["CONTENDER", "BF_KEY", "PREFIX"])]
    worker: Option<Vec<String>>,
}

/// `calls` calls of `contender`, spread over 64 tasks on one connection.
async fn work(
    url: &str,
    contender: &str,
    bf: &str,
    prefix: &str,
    calls: u64,
) -> redis::RedisResult<()> {
    let client = redis::Client::open(url)?;
    let mut con = client.get_multiplexed_async_connection().await?;
    let filter = AsyncRedisFilter::open(&mut con, prefix)
        .await
        .map_err(|e| redis::RedisError::from((redis::ErrorKind::Client, "open", e.to_string())))?;
    let call = match contender {
        "bf_exists" => Call::BfExists,
        "contains" => Call::Contains,
        "bf_add" => Call::BfAdd,
        "insert" => Call::Insert,
        _ => return Err((redis::ErrorKind::Client, "no such contender").into()),
    };
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let (mut con, filter, bf) = (con.clone(), filter.clone(), bf.to_string());
            tokio::spawn(async move {
                let mut yes = 0u64;
                for i in 0..calls / TASKS {
                    let key = (t << 32) | i;
                    let answer = match call {
                        Call::BfExists => con.bf_exists(&bf, key).await.expect("BF.EXISTS"),
                        Call::Contains => filter.contains(&mut con, &key).await.expect("contains"),
                        Call::BfAdd => con.bf_add(&bf, key).await.expect("BF.ADD"),
                        Call::Insert => filter.insert(&mut con, &key).await.expect("insert"),
                    };
                    yes += u64::from(answer);
                }
                yes
            })
        })
        .collect();
    let mut yes = 0;
    for task in tasks {
        yes += task.await.expect("a task");
    }
    std::hint::black_box(yes);
    Ok(())
}

/// The instruction total of one run of this program as a worker under callgrind.
fn instructions(
    url: &str,
    worker: [&str; 3],
    calls: u64,
    out: &std::path::Path,
) -> Result<u64, Box<dyn std::error::Error>> {
    let exe = std::env::current_exe()?;
    let status = std::process::Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(&exe)
        .args([url, &calls.to_string(), "--worker"])
        .args(worker)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("valgrind (callgrind) is needed: {e}"))?;
    if !status.success() {
        return Err(format!("the worker under callgrind failed: {status}").into());
    }
    let text = std::fs::read_to_string(out)?;
    let total = text
        .lines()
        .find_map(|l| l.strip_prefix("totals:"))
        .ok_or("no totals in callgrind's output")?;
    Ok(total.trim().parse()?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { url, calls, worker } = clap::Parser::parse();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    if let Some(w) = worker {
        return Ok(runtime.block_on(work(&url, &w[0], &w[1], &w[2], calls))?);
    }
    if calls % TASKS != 0 || calls == 0 {
        return Err(format!("CALLS must be a positive multiple of {TASKS}").into());
    }
    let mut ns = Namespace::claim_on(&url, &Namespace::default_prefix())?;
    let (bf, prefix) = (ns.key("bf"), ns.key("linebloom"));
    runtime.block_on(async {
        let mut con = redis::Client::open(url.as_str())?
            .get_multiplexed_async_connection()
            .await?;
        redis::cmd("BF.RESERVE")
            .arg(&bf)
            .arg(0.01)
            .arg(100_000)
            .exec_async(&mut con)
            .await?;
        let filter =
            AsyncRedisFilter::create(&mut con, &prefix, Params::for_fpr(100_000, 0.01)?).await?;
        if filter.batch_path() != BatchPath::Module {
            return Err("the server has no linebloom module: load it (see the module docs)".into());
        }
        Ok::<_, Box<dyn std::error::Error>>(())
    })?;
    let dir = tempfile::tempdir()?;
    println!(
        "{calls} calls per contender by {TASKS} tasks on one multiplexed connection; the \
         client's instructions per call (callgrind)\n"
    );
    println!("| call | instructions per call | ÷ redis-rs's call |");
    println!("|---|---:|---:|");
    for pair in PAIRS {
        let mut base = None;
        for contender in pair {
            let worker = [contender, bf.as_str(), prefix.as_str()];
            let out = dir.path().join(format!("callgrind.{contender}"));
            let idle = instructions(&url, worker, 0, &out)?;
            let busy = instructions(&url, worker, calls, &out)?;
            let cost = busy.saturating_sub(idle) as f64 / calls as f64;
            let base = *base.get_or_insert(cost);
            println!("| {contender} | {cost:.0} | {:.2} |", cost / base);
        }
    }
    ns.clear()?;
    Ok(())
}
