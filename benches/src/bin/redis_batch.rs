//! Batches of 1,000 keys against a filter held in Redis, side by side with RedisBloom's
//! `BF.MEXISTS` and `BF.MADD` on the same server, and an identical second RedisBloom
//! filter as the control (its ratio to the first is the noise floor):
//!
//! * with the `linebloom-redis` module: `contains_many` and `insert_many` (one
//!   `LINEBLOOM.MTEST` or `MADD` per shard);
//! * without it, as a managed Redis allows: the client's path (lookups: a `STRLEN` per
//!   shard and a `GETRANGE` per key, then the meta, pipelined; inserts: one script call
//!   per shard that checks the shard and sets the bits), and, for lookups, the
//!   alternative the client does not take, one script call per shard that reads each
//!   key's block and tests its bits inside Redis (`TEST` below).
//!
//! ```text
//! redis-server --port 6400 --save "" --loadmodule target/release/liblinebloom_redis.so NAMESPACE linebloom \
//!     --loadmodule "$LINEBLOOM_REDISBLOOM_SO" &
//! cargo run --release -p linebloom-benches --bin redis_batch -- redis://127.0.0.1:6400/ [ROUNDS]
//! ```
//!
//! Method: every filter is sized for 2e6 keys at 1% and holds 1e6; each round runs
//! every contender's 100 batches of 1,000 lookups of non-members, then every
//! contender's 100 batches of 1,000 inserts of keys new to that round (the same keys
//! for every contender), each time in a start order that rotates every round. Wall time per key (the server's work and
//! the client's share of the two cores are the point); the table gives medians over
//! rounds and the median of the per-round ratios of RedisBloom's time to each
//! contender's. Every linebloom contender's answers must agree with each other.

use linebloom::Params;
use linebloom::pattern::{location, pattern};
use linebloom_lab::support::redis::namespace::Namespace;
use linebloom_lab::support::stats::summary;
use linebloom_lab::support::timing::round_order;
use linebloom_redis_client::{BatchPath, RedisFilter};
use std::time::Instant;

const BATCHES: u64 = 100;
const BATCH: u64 = 1_000;
const CAPACITY: u64 = 2_000_000;
const LOADED: u64 = 1_000_000;

/// The alternative lookup without the module: per shard, one script call that reads
/// each key's block with `GETRANGE` and tests its bits with Lua's `bit` library.
/// `KEYS[1]` the shard, `KEYS[2]` the meta; `ARGV[1]` the meta expected, `ARGV[2]`
/// `k`, then per key the block's byte offset and `k` pairs (byte within the block,
/// 1-based; mask). Replies one byte per key, `1` or `0`.
const TEST: &str = r#"
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
    return redis.error_reply('LBSTALE the meta changed')
end
local k = tonumber(ARGV[2])
local out = {}
local band, byte = bit.band, string.byte
for i = 3, #ARGV, 2 * k + 1 do
    local at = tonumber(ARGV[i])
    local line = redis.call('GETRANGE', KEYS[1], at, at + 63)
    if #line ~= 64 then
        return redis.error_reply('LBLENGTH ' .. KEYS[1])
    end
    local present = '1'
    for j = i + 1, i + 2 * k, 2 do
        if band(byte(line, tonumber(ARGV[j])), tonumber(ARGV[j + 1])) == 0 then
            present = '0'
            break
        end
    end
    out[#out + 1] = present
end
return table.concat(out)
"#;

/// The `TEST` script's answers for one batch, one call per shard of the filter's live
/// generation.
fn scripted_contains(
    con: &mut redis::Connection,
    filter: &RedisFilter,
    script: &redis::Script,
    meta: &str,
    keys: &[u64],
) -> redis::RedisResult<Vec<bool>> {
    let g = filter.generation();
    let hasher = linebloom::IntFold::with_seed(g.seed);
    let k = g.params.k();
    let mut by_shard: std::collections::BTreeMap<u64, Vec<usize>> = Default::default();
    let mut probes = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        let hash = linebloom::Key::hash_key(key, &hasher);
        let block = location(hash, g.params.blocks(), k).block as u64;
        by_shard.entry(block / g.shard_blocks).or_default().push(i);
        probes.push((block % g.shard_blocks, pattern(hash, k)));
    }
    let mut pipe = redis::pipe();
    for (&shard, members) in &by_shard {
        let mut call = redis::cmd("EVALSHA");
        call.arg(script.get_hash())
            .arg(2)
            .arg(g.shard_key(filter.prefix(), shard))
            .arg(format!("{}:meta", filter.prefix()))
            .arg(meta)
            .arg(k);
        for &i in members {
            let (block, mask) = &probes[i];
            call.arg(block * 64);
            let mut pairs = 0;
            for (w, word) in mask.0.iter().enumerate() {
                let mut bits = *word;
                while bits != 0 {
                    let bit = bits.trailing_zeros() as usize;
                    call.arg(w * 8 + bit / 8 + 1).arg(1u8 << (bit % 8));
                    bits &= bits - 1;
                    pairs += 1;
                }
            }
            // Fewer set bits than k (k > 8 may repeat a bit): pad with a bit of the
            // same byte, which is set too.
            for _ in pairs..k {
                let first = mask.0.iter().position(|&w| w != 0).unwrap_or(0);
                let bit = mask.0[first].trailing_zeros() as usize;
                call.arg(first * 8 + bit / 8 + 1).arg(1u8 << (bit % 8));
            }
        }
        pipe.add_command(call);
    }
    let replies: Vec<Vec<u8>> = pipe.query(con)?;
    let mut answers = vec![false; keys.len()];
    for ((_, members), reply) in by_shard.iter().zip(replies) {
        for (&i, b) in members.iter().zip(reply) {
            answers[i] = b == b'1';
        }
    }
    Ok(answers)
}

/// A batch call on a connection: lookups' answers, or an insert's ().
type Batch<'a, T> = Box<dyn FnMut(&mut redis::Connection, &[u64]) -> redis::RedisResult<T> + 'a>;

/// One contender: a name, and its batch lookup and batch insert.
struct Contender<'a> {
    name: &'static str,
    contains: Batch<'a, Vec<bool>>,
    insert: Option<Batch<'a, ()>>,
}

fn to_redis(e: linebloom_redis_client::RedisFilterError) -> redis::RedisError {
    redis::RedisError::from((redis::ErrorKind::Client, "linebloom", e.to_string()))
}

fn linebloom_contender<'a>(name: &'static str, filter: RedisFilter) -> Contender<'a> {
    let second = filter.clone();
    Contender {
        name,
        contains: Box::new(move |con, keys| filter.contains_many(con, keys).map_err(to_redis)),
        insert: Some(Box::new(move |con, keys| {
            second.insert_many(con, keys).map(drop).map_err(to_redis)
        })),
    }
}

fn redisbloom<'a>(name: &'static str, key: String) -> Contender<'a> {
    let again = key.clone();
    Contender {
        name,
        contains: Box::new(move |con, keys| {
            redis::cmd("BF.MEXISTS").arg(&key).arg(keys).query(con)
        }),
        insert: Some(Box::new(move |con, keys| {
            redis::cmd("BF.MADD")
                .arg(&again)
                .arg(keys)
                .query::<Vec<bool>>(con)
                .map(drop)
        })),
    }
}

/// Batches in Redis with and without the module against RedisBloom.
#[derive(clap::Parser)]
struct Args {
    /// The server, on loopback: `redis://127.0.0.1:PORT/`.
    url: String,
    /// Rounds; the start order rotates every round.
    #[arg(default_value_t = 7)]
    rounds: usize,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { url, rounds } = clap::Parser::parse();
    let mut con = redis::Client::open(url.as_str())?.get_connection()?;
    // Every key under one fresh prefix, removed at the end (and on error, by Drop).
    let mut ns = Namespace::claim_on(&url, &Namespace::default_prefix())?;
    let loaded: Vec<u64> = (0..LOADED).map(|i| i * 2).collect();
    let mut contenders = Vec::new();
    for (name, key) in [("RedisBloom", "bf"), ("RedisBloom (control)", "bf-control")] {
        let key = ns.key(key);
        redis::cmd("BF.RESERVE")
            .arg(&key)
            .arg(0.01)
            .arg(CAPACITY)
            .query::<()>(&mut con)?;
        for chunk in loaded.chunks(10_000) {
            redis::cmd("BF.MADD")
                .arg(&key)
                .arg(chunk)
                .query::<Vec<bool>>(&mut con)?;
        }
        contenders.push(redisbloom(name, key));
    }
    let params = Params::for_fpr(CAPACITY, 0.01)?;
    let mut module = false;
    for (name, path) in [
        ("linebloom, module", BatchPath::Module),
        (
            "linebloom, no module: the client's path",
            BatchPath::Commands,
        ),
    ] {
        let filter = RedisFilter::create(&mut con, &ns.key(name), params)?;
        module |= filter.batch_path() == BatchPath::Module;
        filter.set_batch_path(path);
        for chunk in loaded.chunks(10_000) {
            filter.insert_many(&mut con, chunk)?;
        }
        contenders.push(linebloom_contender(name, filter));
    }
    if !module {
        return Err("the server has no linebloom module: load it (see the module docs)".into());
    }
    // The script candidate reads the plain path's filter.
    let plain = RedisFilter::open(&mut con, &ns.key("linebloom, no module: the client's path"))?;
    plain.set_batch_path(BatchPath::Commands);
    let meta: String = redis::cmd("GET")
        .arg(format!("{}:meta", plain.prefix()))
        .query(&mut con)?;
    let script = redis::Script::new(TEST);
    script.prepare_invoke().load(&mut con)?;
    contenders.push(Contender {
        name: "linebloom, no module: a script per shard",
        contains: Box::new(move |con, keys| scripted_contains(con, &plain, &script, &meta, keys)),
        insert: None,
    });

    let n = contenders.len();
    // seconds[op][contender]: wall seconds per key, one per round.
    let mut seconds = vec![vec![Vec::new(); n]; 2];
    let queries: Vec<u64> = (0..BATCHES * BATCH).map(|i| i * 2 + 1).collect();
    for round in 0..rounds {
        let fresh: Vec<u64> = (0..BATCHES * BATCH)
            .map(|i| (1 << 40) + (round as u64) * BATCHES * BATCH + i)
            .collect();
        let mut answers: Vec<Option<Vec<bool>>> = vec![None; n];
        // Every contender's lookups, then every contender's inserts, so the linebloom
        // filters hold the same keys when they are read.
        for i in round_order(round, n) {
            let c = &mut contenders[i];
            let start = Instant::now();
            let mut got = Vec::with_capacity(queries.len());
            for batch in queries.chunks(BATCH as usize) {
                got.extend((c.contains)(&mut con, batch)?);
            }
            seconds[0][i].push(start.elapsed().as_secs_f64() / queries.len() as f64);
            answers[i] = Some(got);
        }
        for i in round_order(round, n) {
            if let Some(insert) = &mut contenders[i].insert {
                let start = Instant::now();
                for batch in fresh.chunks(BATCH as usize) {
                    insert(&mut con, batch)?;
                }
                seconds[1][i].push(start.elapsed().as_secs_f64() / fresh.len() as f64);
            }
        }
        // The linebloom contenders (2..) answer alike.
        for i in 3..n {
            let (a, b) = (answers[i].as_ref().unwrap(), answers[2].as_ref().unwrap());
            let differ = a.iter().zip(b).filter(|(x, y)| x != y).count();
            assert_eq!(
                differ,
                0,
                "{} disagrees on {differ} of {} keys",
                contenders[i].name,
                a.len()
            );
        }
    }
    println!(
        "{rounds} rounds of {BATCHES} batches of {BATCH} keys, rotating order; filters for \
         {CAPACITY} keys at 1% holding {LOADED}\n"
    );
    for (op, name) in ["lookups (non-members)", "inserts (new keys)"]
        .iter()
        .enumerate()
    {
        println!("| {name} | keys/s (median) | RedisBloom's time ÷ this one's (median, range) |");
        println!("|---|---:|---:|");
        for (i, c) in contenders.iter().enumerate() {
            if seconds[op][i].is_empty() {
                continue;
            }
            let ratios: Vec<f64> = seconds[op][0]
                .iter()
                .zip(&seconds[op][i])
                .map(|(b, s)| b / s)
                .collect();
            let (r, lo, hi) = summary(&ratios);
            println!(
                "| {} | {:.0} | {r:.2} ({lo:.2}–{hi:.2}) |",
                c.name,
                1.0 / summary(&seconds[op][i]).0
            );
        }
        println!();
    }
    ns.clear()?;
    Ok(())
}
