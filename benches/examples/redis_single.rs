//! Single-key calls to a filter held in Redis, one round trip each: linebloom's
//! `RedisFilter::contains` and `insert` through the module (one guarded
//! `LINEBLOOM.MTEST`/`MADD`) and without it (lookups: `STRLEN`, `GETRANGE` and a `GET`
//! of the meta, pipelined; inserts: one guarded script call), against RedisBloom's
//! `BF.EXISTS`/`BF.ADD`, an identical second RedisBloom filter (the control), the same
//! two commands on the module's own `BF` type (what a guard held in that type could
//! gain on a single call), a plain `GET`/`SET` of a short string (what one round
//! trip costs, the floor under every single-key call), and a script that only answers
//! (what any script call costs, the floor under an insert without the module).
//!
//! ```text
//! redis-server --port 6400 --save "" --loadmodule target/release/liblinebloom_redis.so NAMESPACE linebloom \
//!     --loadmodule "$LINEBLOOM_REDISBLOOM_SO" &
//! cargo run --release -p linebloom-benches --example redis_single -- redis://127.0.0.1:6400/ [ROUNDS]
//! ```
//!
//! Every contender holds the same 100,000 keys at 1%; each round runs 2,000 calls of
//! each, queries of non-members then inserts of members, in a start order that rotates
//! every round. Per call: the median over rounds of the wall time (the server's work and
//! the round trip are the point), of this thread's CPU time (the client's share) and of
//! the server's own time in the commands the contender sends (`INFO commandstats`,
//! zeroed before each run and read after it), and the median of the per-round ratios of
//! RedisBloom's time to each contender's.

use linebloom::Params;
use linebloom_lab::support::redis::commandstats;
use linebloom_lab::support::redis::namespace::Namespace;
use linebloom_lab::support::stats::summary;
use linebloom_lab::support::timing::{round_order, thread_cpu_ns};
use linebloom_redis_client::{BatchPath, RedisFilter};
use std::time::Instant;

const KEYS: u64 = 100_000;
/// The linebloom module's command names, loaded beside RedisBloom (`NAMESPACE linebloom`).
const MODULE_PREFIX: &str = "linebloom.";
const CALLS: u64 = 2_000;

/// One single-key call on a connection: a query's answer, or an insert's ().
type Call<'a, T> = Box<dyn FnMut(&mut redis::Connection, u64) -> redis::RedisResult<T> + 'a>;

/// One contender: a name and its single query and insert.
struct Contender<'a> {
    name: &'static str,
    query: Call<'a, bool>,
    insert: Call<'a, ()>,
    /// The commands it sends, for a query and for an insert, as `INFO commandstats`
    /// names them: the server's time for them is its profile.
    sends: [&'static [&'static str]; 2],
}

fn linebloom<'a>(name: &'static str, filter: RedisFilter) -> Contender<'a> {
    let second = filter.clone();
    let sends = commandstats::guard_commands(filter.batch_path());
    Contender {
        name,
        query: Box::new(move |con, k| filter.contains(con, &k).map_err(to_redis)),
        insert: Box::new(move |con, k| second.insert(con, &k).map(drop).map_err(to_redis)),
        sends,
    }
}

fn to_redis(e: linebloom_redis_client::RedisFilterError) -> redis::RedisError {
    redis::RedisError::from((redis::ErrorKind::Client, "linebloom", e.to_string()))
}

/// `BF.EXISTS`/`BF.ADD` on `key`, each command name after `prefix` (`""` for
/// RedisBloom, `"linebloom."` for the linebloom module loaded with `NAMESPACE linebloom`).
fn bf_commands<'a>(
    name: &'static str,
    prefix: &str,
    key: String,
    sends: [&'static [&'static str]; 2],
) -> Contender<'a> {
    let (exists, add) = (format!("{prefix}BF.EXISTS"), format!("{prefix}BF.ADD"));
    let again = key.clone();
    Contender {
        name,
        query: Box::new(move |con, k| redis::cmd(&exists).arg(&key).arg(k).query(con)),
        insert: Box::new(move |con, k| {
            redis::cmd(&add)
                .arg(&again)
                .arg(k)
                .query::<i64>(con)
                .map(drop)
        }),
        sends,
    }
}

/// Single-key calls to a filter in Redis against RedisBloom's and a plain GET/SET.
#[derive(clap::Parser)]
struct Args {
    /// The server, on loopback: `redis://127.0.0.1:PORT/`.
    url: String,
    /// Rounds; the start order rotates every round.
    #[arg(default_value_t = 15)]
    rounds: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { url, rounds } = clap::Parser::parse();
    let mut con = redis::Client::open(url.as_str())?.get_connection()?;
    // Every key under one fresh prefix, removed at the end (and on error, by Drop).
    let mut ns = Namespace::claim_on(&url, &Namespace::default_prefix())?;
    let members: Vec<u64> = (0..KEYS)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) & !1)
        .collect();
    let mut contenders = Vec::new();
    let redisbloom: [&[&str]; 2] = [&["bf.exists"], &["bf.add"]];
    for (name, prefix, key, sends) in [
        ("redisbloom", "", "bf", redisbloom),
        ("redisbloom-control", "", "bf-control", redisbloom),
        (
            "linebloom module, its BF type",
            MODULE_PREFIX,
            "linebl-bf",
            [&["linebloom.bf.exists"], &["linebloom.bf.add"]],
        ),
    ] {
        let key = ns.key(key);
        redis::cmd(&format!("{prefix}BF.RESERVE"))
            .arg(&key)
            .arg(0.01)
            .arg(KEYS)
            .query::<()>(&mut con)?;
        for chunk in members.chunks(1000) {
            redis::cmd(&format!("{prefix}BF.MADD"))
                .arg(&key)
                .arg(chunk)
                .query::<Vec<i64>>(&mut con)?;
        }
        contenders.push(bf_commands(name, prefix, key, sends));
    }
    for (name, path) in [
        ("linebloom module", BatchPath::Module),
        ("linebloom plain commands", BatchPath::Commands),
    ] {
        let params = Params::for_fpr(KEYS, 0.01)?;
        let filter = RedisFilter::create(&mut con, &ns.key(name), params)?;
        filter.set_batch_path(path);
        for chunk in members.chunks(1000) {
            filter.insert_many(&mut con, chunk)?;
        }
        contenders.push(linebloom(name, filter));
    }
    let plain = ns.key("plain");
    redis::cmd("SET")
        .arg(&plain)
        .arg("x")
        .query::<()>(&mut con)?;
    let (get_key, set_key) = (plain.clone(), plain);
    contenders.push(Contender {
        name: "GET / SET (round trip)",
        query: Box::new(move |con, _| {
            redis::cmd("GET")
                .arg(&get_key)
                .query::<Option<String>>(con)
                .map(|v| v.is_some())
        }),
        insert: Box::new(move |con, _| redis::cmd("SET").arg(&set_key).arg("x").query(con)),
        sends: [&["get"], &["set"]],
    });
    // What any script call costs: one that only answers, on one key, as the insert
    // script is called.
    let floor = redis::Script::new("return 1");
    floor.prepare_invoke().load(&mut con)?;
    let (floor_key, floor_again) = (ns.key("script-floor"), floor.clone());
    let floor_key_again = floor_key.clone();
    contenders.push(Contender {
        name: "a script that only answers (a script call's floor)",
        query: Box::new(move |con, _| floor.key(&floor_key).invoke::<i64>(con).map(|n| n == 1)),
        insert: Box::new(move |con, _| floor_again.key(&floor_key_again).invoke(con)),
        sends: [&["evalsha"], &["evalsha"]],
    });

    // samples[op][contender] = (wall µs, CPU µs, server µs) per call, one per round; the
    // server's counters are zeroed before each run and read after it, untimed.
    let n = contenders.len();
    let mut samples = vec![vec![Vec::new(); n]; 2];
    let mut absent = 0u64;
    for round in 0..rounds {
        for i in round_order(round, n) {
            let c = &mut contenders[i];
            for (op, samples) in samples.iter_mut().enumerate() {
                commandstats::reset(&mut con)?;
                let (wall, cpu) = (Instant::now(), thread_cpu_ns());
                for j in 0..CALLS {
                    if op == 0 {
                        absent +=
                            u64::from(!(c.query)(&mut con, (round as u64 * CALLS + j) * 2 + 1)?);
                    } else {
                        (c.insert)(&mut con, members[(j % KEYS) as usize])?;
                    }
                }
                let per = |t: f64| t / CALLS as f64;
                let (wall, cpu) = (wall.elapsed(), thread_cpu_ns() - cpu);
                let server = commandstats::read(&mut con, c.sends[op])?.usec;
                samples[i].push((
                    per(wall.as_secs_f64() * 1e6),
                    per(cpu as f64 / 1e3),
                    per(server as f64),
                ));
            }
        }
    }
    std::hint::black_box(absent);
    println!("{rounds} rounds of {CALLS} single-key calls each, rotating order\n");
    for (op, name) in ["query", "insert"].iter().enumerate() {
        println!(
            "| {name} | µs a call (wall) | client CPU µs | server µs | RedisBloom's time ÷ \
             this one's |"
        );
        println!("|---|---:|---:|---:|---:|");
        for (i, c) in contenders.iter().enumerate() {
            let wall: Vec<f64> = samples[op][i].iter().map(|s| s.0).collect();
            let cpu: Vec<f64> = samples[op][i].iter().map(|s| s.1).collect();
            let server: Vec<f64> = samples[op][i].iter().map(|s| s.2).collect();
            let ratios: Vec<f64> = samples[op][0]
                .iter()
                .zip(&samples[op][i])
                .map(|(b, s)| b.0 / s.0)
                .collect();
            let (r, lo, hi) = summary(&ratios);
            println!(
                "| {} | {:.1} | {:.1} | {:.2} | {r:.3} ({lo:.3}–{hi:.3}) |",
                c.name,
                summary(&wall).0,
                summary(&cpu).0,
                summary(&server).0
            );
        }
        println!();
    }
    println!(
        "server µs: the server's own time per call in the commands each one sends (`INFO \
         commandstats` after each run, zeroed by `CONFIG RESETSTAT` before it; a script's \
         includes the commands it calls), median over rounds"
    );
    ns.clear()?;
    Ok(())
}
