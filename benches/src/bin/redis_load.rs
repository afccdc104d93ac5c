//! Loading a filter held in Redis with a million keys, the start-up of a guard: the
//! client's `open_or_build` (the filter built in process from the source and ORed into
//! its shards, one `SET` and one script call per shard) and `insert_many` in batches of
//! 1,000 (with the module and without it), side by side with RedisBloom's `BF.RESERVE`
//! and `BF.MADD` of 1,000 keys a call on the same server, and an identical second
//! RedisBloom load as the control (its ratio to the first is the noise floor).
//!
//! ```text
//! redis-server --port 6400 --save "" --loadmodule target/release/liblinebloom_redis.so NAMESPACE linebloom \
//!     --loadmodule "$LINEBLOOM_REDISBLOOM_SO" &
//! cargo run --release -p linebloom-benches --bin redis_load -- redis://127.0.0.1:6400/ [ROUNDS]
//! ```
//!
//! Method: each round, in a start order that rotates every round, every contender makes
//! an empty filter for 1e6 keys at 1% and loads the same 1e6 keys into it, timed from
//! the first command to the last reply (wall time: the server's work and the client's
//! share of the two cores are the point); then each filter is checked to hold every key
//! and is deleted. The table gives medians over rounds and the median of the per-round
//! ratios of RedisBloom's time to each contender's.

use linebloom::Params;
use linebloom_lab::support::redis::namespace::Namespace;
use linebloom_lab::support::stats::summary;
use linebloom_lab::support::timing::round_order;
use linebloom_redis_client::{BatchPath, BuildOptions, FilterOptions, RedisFilter};
use std::time::Instant;

const KEYS: u64 = 1_000_000;
const BATCH: usize = 1_000;

/// How a contender loads: into the filter named `key`, every key of `keys`.
type Load = fn(&mut redis::Connection, &str, &[u64]) -> Result<(), Box<dyn std::error::Error>>;

fn redisbloom(
    con: &mut redis::Connection,
    key: &str,
    keys: &[u64],
) -> Result<(), Box<dyn std::error::Error>> {
    redis::cmd("BF.RESERVE")
        .arg(key)
        .arg(0.01)
        .arg(KEYS)
        .query::<()>(con)?;
    for batch in keys.chunks(BATCH) {
        redis::cmd("BF.MADD")
            .arg(key)
            .arg(batch)
            .query::<Vec<bool>>(con)?;
    }
    Ok(())
}

fn params() -> Params {
    Params::for_fpr(KEYS, 0.01).expect("a valid shape")
}

fn built(
    con: &mut redis::Connection,
    key: &str,
    keys: &[u64],
) -> Result<(), Box<dyn std::error::Error>> {
    let filter = RedisFilter::open_or_build(
        con,
        key,
        params(),
        FilterOptions::default(),
        BuildOptions::default(),
        || Ok::<_, std::convert::Infallible>(keys.iter().copied()),
    )?;
    assert!(filter.created());
    Ok(())
}

fn inserted(
    con: &mut redis::Connection,
    key: &str,
    keys: &[u64],
    path: BatchPath,
) -> Result<(), Box<dyn std::error::Error>> {
    let filter = RedisFilter::create(con, key, params())?;
    filter.set_batch_path(path);
    for batch in keys.chunks(BATCH) {
        filter.insert_many(con, batch)?;
    }
    Ok(())
}

/// Does the filter under `key` hold every key? (RedisBloom's or linebloom's.)
fn holds_all(
    con: &mut redis::Connection,
    key: &str,
    keys: &[u64],
    redisbloom: bool,
) -> Result<bool, Box<dyn std::error::Error>> {
    let filter = (!redisbloom)
        .then(|| RedisFilter::open(con, key))
        .transpose()?;
    for batch in keys.chunks(10_000) {
        let answers: Vec<bool> = match &filter {
            Some(f) => f.contains_many(con, batch)?,
            None => redis::cmd("BF.MEXISTS").arg(key).arg(batch).query(con)?,
        };
        if !answers.iter().all(|&a| a) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Loading a million keys into a filter in Redis, against RedisBloom.
#[derive(clap::Parser)]
struct Args {
    /// The server, on loopback: `redis://127.0.0.1:PORT/`.
    url: String,
    /// Rounds; the start order rotates every round.
    #[arg(default_value_t = 5)]
    rounds: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { url, rounds } = clap::Parser::parse();
    let mut con = redis::Client::open(url.as_str())?.get_connection()?;
    let mut ns = Namespace::claim_on(&url, &Namespace::default_prefix())?;
    let probe = RedisFilter::create(&mut con, &ns.key("probe"), params())?;
    if probe.batch_path() != BatchPath::Module {
        return Err("the server has no linebloom module: load it (see the module docs)".into());
    }
    probe.delete(&mut con)?;
    let contenders: [(&str, bool, Load); 5] = [
        ("RedisBloom: BF.RESERVE, BF.MADD of 1,000", true, redisbloom),
        ("RedisBloom (control)", true, redisbloom),
        ("linebloom: open_or_build", false, built),
        (
            "linebloom: insert_many of 1,000, module",
            false,
            |c, k, keys| inserted(c, k, keys, BatchPath::Module),
        ),
        (
            "linebloom: insert_many of 1,000, no module",
            false,
            |c, k, keys| inserted(c, k, keys, BatchPath::Commands),
        ),
    ];
    let keys: Vec<u64> = (0..KEYS).collect();
    let n = contenders.len();
    let mut seconds = vec![Vec::new(); n];
    for round in 0..rounds {
        for i in round_order(round, n) {
            let (name, is_redisbloom, load) = contenders[i];
            let key = ns.key(&format!("load-{i}"));
            let start = Instant::now();
            load(&mut con, &key, &keys)?;
            seconds[i].push(start.elapsed().as_secs_f64());
            assert!(
                holds_all(&mut con, &key, &keys, is_redisbloom)?,
                "{name} lost a key"
            );
            if is_redisbloom {
                redis::cmd("DEL").arg(&key).query::<()>(&mut con)?;
            } else {
                RedisFilter::open(&mut con, &key)?.delete(&mut con)?;
            }
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }
    println!(
        "{rounds} rounds, rotating order; each loads {KEYS} keys into an empty filter for \
         {KEYS} at 1%\n"
    );
    println!("| load | seconds (median) | RedisBloom's time ÷ this one's (median, range) |");
    println!("|---|---:|---:|");
    for (i, (name, ..)) in contenders.iter().enumerate() {
        let ratios: Vec<f64> = seconds[0]
            .iter()
            .zip(&seconds[i])
            .map(|(b, s)| b / s)
            .collect();
        let (r, lo, hi) = summary(&ratios);
        println!(
            "| {name} | {:.3} | {r:.2} ({lo:.2}–{hi:.2}) |",
            summary(&seconds[i]).0
        );
    }
    ns.clear()?;
    Ok(())
}
