//! The server's instructions per single-key lookup, counted by callgrind: the guard's
//! `LINEBLOOM.MTEST` with its meta guard (what `contains` sends through the module),
//! RedisBloom's `BF.EXISTS`, the module's own `BF.EXISTS`, and a plain `GET` of a short
//! string (what any command costs the server). Instructions do not vary with the
//! machine's noise as times do, so this shows what the arguments and the module's work
//! cost a command, beside the throughput benches.
//!
//! ```text
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/callgrind.%p redis-server --port 6401 --save "" \
//!     --loadmodule target/release/liblinebloom_redis.so NAMESPACE linebloom --loadmodule "$LINEBLOOM_REDISBLOOM_SO" &
//! cargo run --release -p linebloom-benches --example redis_server_cost -- redis://127.0.0.1:6401/ [COMMANDS]
//! ```
//!
//! Method: each filter holds 1,000 keys at 1%; every contender sends `COMMANDS`
//! (default 20,000) copies of one lookup of a non-member, in pipelines of 32, and its
//! cost is the growth of the server's main-thread instruction count over them
//! (`callgrind_control -e`), divided by the commands: the reading, parsing, running
//! and answering of each, the pipeline's system calls shared among its 32.

use linebloom::{Key as _, Params};
use linebloom_lab::support::redis::namespace::Namespace;
use linebloom_redis_client::{BatchPath, RedisFilter};
use linebloom_redis_wire as wire;

const KEYS: u64 = 1_000;
const PIPELINE: usize = 32;

/// The server's main-thread instructions so far (`callgrind_control -e PID`, the line
/// of thread 1).
fn instructions(pid: &str) -> Result<u64, Box<dyn std::error::Error>> {
    let out = std::process::Command::new("callgrind_control")
        .args(["-e", pid])
        .output()
        .map_err(|e| format!("callgrind_control (from valgrind): {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| {
            let rest = l.trim().strip_prefix("Th 1 ")?;
            rest.trim().replace(',', "").parse::<u64>().ok()
        })
        .ok_or_else(|| {
            format!(
                "no count in callgrind_control's answer (is the server under callgrind?): {text}"
            )
            .into()
        })
}

/// Instructions per command of `n` copies of `cmd`.
fn per_command(
    con: &mut redis::Connection,
    pid: &str,
    cmd: &redis::Cmd,
    n: usize,
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut pipe = redis::pipe();
    for _ in 0..PIPELINE {
        pipe.add_command(cmd.clone());
    }
    // The answer is checked once: a refusal would count an error's cost.
    let _: redis::Value = cmd.query(con)?;
    let rounds = n.div_ceil(PIPELINE);
    let before = instructions(pid)?;
    for _ in 0..rounds {
        let _: Vec<redis::Value> = pipe.query(con)?;
    }
    let after = instructions(pid)?;
    Ok((after - before) as f64 / (rounds * PIPELINE) as f64)
}

/// The server's instructions per single-key lookup.
#[derive(clap::Parser)]
struct Args {
    /// The server, on loopback, run under callgrind: `redis://127.0.0.1:PORT/`.
    url: String,
    /// Commands per contender.
    #[arg(default_value_t = 20_000)]
    commands: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { url, commands } = clap::Parser::parse();
    let mut con = redis::Client::open(url.as_str())?.get_connection()?;
    let info: String = redis::cmd("INFO").arg("server").query(&mut con)?;
    let pid = info
        .lines()
        .find_map(|l| l.strip_prefix("process_id:"))
        .ok_or("INFO server without process_id")?
        .trim()
        .to_string();
    let mut ns = Namespace::claim_on(&url, &Namespace::default_prefix())?;
    let members: Vec<u64> = (0..KEYS).map(|i| i * 2).collect();
    // A non-member: odd.
    let probe = 7u64;

    let mut contenders: Vec<(&str, redis::Cmd)> = Vec::new();
    for (name, key, reserve) in [
        ("RedisBloom BF.EXISTS", "bf", "BF.RESERVE"),
        (
            "the module's BF.EXISTS",
            "module-bf",
            "linebloom.BF.RESERVE",
        ),
    ] {
        let key = ns.key(key);
        redis::cmd(reserve)
            .arg(&key)
            .arg(0.01)
            .arg(KEYS)
            .exec(&mut con)?;
        let add = reserve.replace("RESERVE", "MADD");
        redis::cmd(&add).arg(&key).arg(&members).exec(&mut con)?;
        let mut exists = redis::cmd(&reserve.replace("RESERVE", "EXISTS"));
        exists.arg(&key).arg(probe);
        contenders.push((name, exists));
    }
    let filter = RedisFilter::create(&mut con, &ns.key("linebloom"), Params::for_fpr(KEYS, 0.01)?)?;
    if filter.batch_path() != BatchPath::Module {
        return Err("the server has no linebloom module: load it (see the module docs)".into());
    }
    filter.insert_many(&mut con, &members)?;
    // The command `contains` sends for the probe: its shard, its batch, the guard.
    let g = filter.generation();
    let meta_key = format!("{}:meta", filter.prefix());
    let meta: String = redis::cmd("GET").arg(&meta_key).query(&mut con)?;
    let hash = probe.hash_key(&linebloom::IntFold::with_seed(g.seed));
    let block = linebloom::pattern::block_index(hash, g.params.blocks()) as u64;
    let (shard, block) = (block / g.shard_blocks, block % g.shard_blocks);
    let head = wire::Head {
        k: g.params.k(),
        blocks: g.shard_len(shard),
    }
    .to_string();
    let mut mtest = redis::cmd(wire::MTEST);
    mtest
        .arg(g.shard_key(filter.prefix(), shard))
        .arg([head.as_bytes(), &wire::probe(block, hash)[..]].concat())
        .arg(wire::META)
        .arg(&meta_key)
        .arg(&meta);
    contenders.push(("LINEBLOOM.MTEST with the guard", mtest));
    let mut get = redis::cmd("GET");
    get.arg(&meta_key);
    contenders.push(("GET (a short string)", get));

    println!(
        "{commands} commands per contender in pipelines of {PIPELINE}; the server's \
         main-thread instructions per command (callgrind)\n"
    );
    println!("| command | arguments | instructions per command |");
    println!("|---|---:|---:|");
    for (name, cmd) in &contenders {
        let cost = per_command(&mut con, &pid, cmd, commands)?;
        println!("| {name} | {} | {cost:.0} |", cmd.args_iter().count());
    }
    ns.clear()?;
    Ok(())
}
