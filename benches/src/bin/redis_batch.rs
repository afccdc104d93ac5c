//! Batches of 1,000 keys against a filter held in Redis, side by side with RedisBloom's
//! `BF.MEXISTS` and `BF.MADD` on the same server, and an identical second RedisBloom
//! filter as the control (its ratio to the first is the noise floor):
//!
//! * with the `linebloom-redis` module: `contains_many` and `insert_many` (one
//!   `LINEBLOOM.MTEST` or `MADD` per shard);
//! * without it, as a managed Redis allows: the client's path (lookups: a `STRLEN` per
//!   shard and a `GETRANGE` per run of keys whose blocks lie close together, then the
//!   meta, pipelined; inserts: one script call per shard that checks the shard and sets
//!   the bits);
//! * without it, the alternatives the client does not take, to show what limits it:
//!   for lookups, one script call per shard that reads each key's block and tests its
//!   bits inside Redis (`TEST` below), and one `BITFIELD_RO` per shard with a `GET u1`
//!   per bit; for inserts, one `BITFIELD` per shard with a `SET u1` per bit sent as it
//!   is, and the batch's bits in a shard-long scratch key ORed in by `BITOP`. The
//!   `BITFIELD` and scratch ones skip the checks the client makes (the shard's length,
//!   the meta), so they bound from above what a plain-Redis path could reach; each
//!   insert alternative writes a filter of its own, which must then hold every key.
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
//! for every contender), each time in a start order that rotates every round. Wall
//! time per key (the server's work and the client's share of the two cores are the
//! point); the table gives medians over rounds of the throughput and of the client
//! thread's CPU time per batch, and the median of the per-round ratios of RedisBloom's
//! time to each contender's. Every linebloom contender's answers must agree with each
//! other. Then each contender's server time per batch (`INFO commandstats`).

use linebloom::Params;
use linebloom::pattern::{block_index, for_each_position};
use linebloom_lab::support::redis::commandstats::{self, Totals};
use linebloom_lab::support::redis::namespace::Namespace;
use linebloom_lab::support::stats::summary;
use linebloom_lab::support::timing::{round_order, thread_cpu_ns};
use linebloom_redis_client::{BatchPath, RedisFilter};
use linebloom_redis_wire::redis_bit_offset;
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

/// A batch's keys placed in a filter's live generation, by shard: each key's index in
/// the batch, its block within the shard and its hash.
type ByShard = std::collections::BTreeMap<u64, Vec<(usize, u64, u64)>>;

fn by_shard(filter: &RedisFilter, keys: &[u64]) -> ByShard {
    let g = filter.generation();
    let hasher = linebloom::IntFold::with_seed(g.seed);
    let mut by_shard = ByShard::new();
    for (i, key) in keys.iter().enumerate() {
        let hash = linebloom::Key::hash_key(key, &hasher);
        let block = block_index(hash, g.params.blocks()) as u64;
        by_shard
            .entry(block / g.shard_blocks)
            .or_default()
            .push((i, block % g.shard_blocks, hash));
    }
    by_shard
}

/// Each of a key's `k` bits in its block (0..512, little-endian payload order; `k > 8`
/// may repeat one).
fn bits(hash: u64, k: u32, mut f: impl FnMut(u64)) {
    for_each_position(
        hash,
        k,
        |word, field| f(word as u64 * 64 + u64::from(field)),
    );
}

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
    let k = g.params.k();
    let by_shard = by_shard(filter, keys);
    let mut pipe = redis::pipe();
    for (&shard, members) in &by_shard {
        let mut call = redis::cmd("EVALSHA");
        call.arg(script.get_hash())
            .arg(2)
            .arg(g.shard_key(filter.prefix(), shard))
            .arg(format!("{}:meta", filter.prefix()))
            .arg(meta)
            .arg(k);
        for &(_, block, hash) in members {
            call.arg(block * 64);
            bits(hash, k, |bit| {
                call.arg(bit / 8 + 1).arg(1u8 << (bit % 8));
            });
        }
        pipe.add_command(call);
    }
    let replies: Vec<Vec<u8>> = pipe.query(con)?;
    let mut answers = vec![false; keys.len()];
    for ((_, members), reply) in by_shard.iter().zip(replies) {
        for (&(i, _, _), b) in members.iter().zip(reply) {
            answers[i] = b == b'1';
        }
    }
    Ok(answers)
}

/// Lookups as one `BITFIELD_RO` per shard, a `GET u1` per bit, without the checks the
/// client's path makes (the shard's length, the meta): the fewest commands plain Redis
/// allows, at three arguments a bit.
fn bitfield_contains(
    con: &mut redis::Connection,
    filter: &RedisFilter,
    keys: &[u64],
) -> redis::RedisResult<Vec<bool>> {
    let g = filter.generation();
    let k = g.params.k();
    let by_shard = by_shard(filter, keys);
    let mut pipe = redis::pipe();
    for (&shard, members) in &by_shard {
        let mut call = redis::cmd("BITFIELD_RO");
        call.arg(g.shard_key(filter.prefix(), shard));
        for &(_, block, hash) in members {
            bits(hash, k, |bit| {
                call.arg("GET")
                    .arg("u1")
                    .arg(redis_bit_offset(block, bit as u32));
            });
        }
        pipe.add_command(call);
    }
    let replies: Vec<Vec<u8>> = pipe.query(con)?;
    let mut answers = vec![false; keys.len()];
    for ((_, members), reply) in by_shard.iter().zip(replies) {
        // k replies a key, in the order its bits were asked.
        for (&(i, _, _), got) in members.iter().zip(reply.chunks(k as usize)) {
            answers[i] = got.iter().all(|&bit| bit == 1);
        }
    }
    Ok(answers)
}

/// Inserts as one `BITFIELD` per shard, a `SET u1` per bit, sent as they are: the
/// client's path without its script, and without the checks the script makes (a plain
/// `BITFIELD` re-creates an evicted shard), at four arguments a bit.
fn bitfield_insert(
    con: &mut redis::Connection,
    filter: &RedisFilter,
    keys: &[u64],
) -> redis::RedisResult<()> {
    let g = filter.generation();
    let k = g.params.k();
    let mut pipe = redis::pipe();
    for (shard, members) in by_shard(filter, keys) {
        let mut call = redis::cmd("BITFIELD");
        call.arg(g.shard_key(filter.prefix(), shard));
        for &(_, block, hash) in &members {
            bits(hash, k, |bit| {
                call.arg("SET")
                    .arg("u1")
                    .arg(redis_bit_offset(block, bit as u32))
                    .arg(1);
            });
        }
        pipe.add_command(call).ignore();
    }
    pipe.query(con)
}

/// ORs a scratch key (`KEYS[2]`) into a shard (`KEYS[1]`), keeping the shard's TTL, and
/// removes the scratch key.
const OR_SCRATCH: &str = r#"
local ttl = redis.call('PTTL', KEYS[1])
redis.call('BITOP', 'OR', KEYS[1], KEYS[1], KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
redis.call('UNLINK', KEYS[2])
return 1
"#;

/// Inserts with no command per key: per shard, the batch's bits in a shard-long string
/// sent with `SET`, then ORed in by [`OR_SCRATCH`]. Its cost grows with the shard's
/// bytes, not with the keys.
fn scratch_insert(
    con: &mut redis::Connection,
    filter: &RedisFilter,
    script: &redis::Script,
    keys: &[u64],
) -> redis::RedisResult<()> {
    let g = filter.generation();
    let k = g.params.k();
    let mut pipe = redis::pipe();
    for (shard, members) in by_shard(filter, keys) {
        let key = g.shard_key(filter.prefix(), shard);
        let scratch = format!("{key}:or");
        let mut bytes = vec![0u8; g.shard_len(shard) as usize * 64];
        for &(_, block, hash) in &members {
            bits(hash, k, |bit| {
                bytes[(block * 64 + bit / 8) as usize] |= 1 << (bit % 8);
            });
        }
        pipe.cmd("SET")
            .arg(&scratch)
            .arg(bytes)
            .arg("PX")
            .arg(60_000)
            .ignore();
        pipe.cmd("EVALSHA")
            .arg(script.get_hash())
            .arg(2)
            .arg(&key)
            .arg(&scratch)
            .ignore();
    }
    pipe.query(con)
}

/// A batch call on a connection: lookups' answers, or an insert's ().
type Batch<'a, T> = Box<dyn FnMut(&mut redis::Connection, &[u64]) -> redis::RedisResult<T> + 'a>;

/// One contender: a name, and its batch lookup, batch insert, or both.
struct Contender<'a> {
    name: &'static str,
    contains: Option<Batch<'a, Vec<bool>>>,
    insert: Option<Batch<'a, ()>>,
    /// For a contender that only inserts: its filter, which must then answer "present"
    /// for every key it inserted (checked untimed, through the client's lookups).
    filled: Option<RedisFilter>,
    /// The commands it sends, for lookups and for inserts, as `INFO commandstats` names
    /// them: the server's time for them is its profile.
    sends: [&'static [&'static str]; 2],
}

fn to_redis(e: linebloom_redis_client::RedisFilterError) -> redis::RedisError {
    redis::RedisError::from((redis::ErrorKind::Client, "linebloom", e.to_string()))
}

fn linebloom_contender<'a>(name: &'static str, filter: RedisFilter) -> Contender<'a> {
    let second = filter.clone();
    let sends = commandstats::guard_commands(filter.batch_path());
    Contender {
        name,
        contains: Some(Box::new(move |con, keys| {
            filter.contains_many(con, keys).map_err(to_redis)
        })),
        insert: Some(Box::new(move |con, keys| {
            second.insert_many(con, keys).map(drop).map_err(to_redis)
        })),
        filled: None,
        sends,
    }
}

fn redisbloom<'a>(name: &'static str, key: String) -> Contender<'a> {
    let again = key.clone();
    Contender {
        name,
        contains: Some(Box::new(move |con, keys| {
            redis::cmd("BF.MEXISTS").arg(&key).arg(keys).query(con)
        })),
        insert: Some(Box::new(move |con, keys| {
            redis::cmd("BF.MADD")
                .arg(&again)
                .arg(keys)
                .query::<Vec<bool>>(con)
                .map(drop)
        })),
        filled: None,
        sends: [&["bf.mexists"], &["bf.madd"]],
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
    // The lookup alternatives read the plain path's filter.
    let plain = RedisFilter::open(&mut con, &ns.key("linebloom, no module: the client's path"))?;
    plain.set_batch_path(BatchPath::Commands);
    let meta: String = redis::cmd("GET")
        .arg(format!("{}:meta", plain.prefix()))
        .query(&mut con)?;
    let script = redis::Script::new(TEST);
    script.prepare_invoke().load(&mut con)?;
    let plain_again = plain.clone();
    contenders.push(Contender {
        name: "linebloom, no module: a script per shard",
        contains: Some(Box::new(move |con, keys| {
            scripted_contains(con, &plain, &script, &meta, keys)
        })),
        insert: None,
        filled: None,
        sends: [&["evalsha"], &[]],
    });
    contenders.push(Contender {
        name: "linebloom, no module: a BITFIELD_RO per shard, unchecked",
        contains: Some(Box::new(move |con, keys| {
            bitfield_contains(con, &plain_again, keys)
        })),
        insert: None,
        filled: None,
        sends: [&["bitfield_ro"], &[]],
    });
    // The insert alternatives, each on a filter of its own, loaded as the others.
    let or_scratch = redis::Script::new(OR_SCRATCH);
    or_scratch.prepare_invoke().load(&mut con)?;
    for name in [
        "linebloom, no module: a BITFIELD per shard, unchecked",
        "linebloom, no module: a shard-long scratch key ORed in, unchecked",
    ] {
        let filter = RedisFilter::create(&mut con, &ns.key(name), params)?;
        for chunk in loaded.chunks(10_000) {
            filter.insert_many(&mut con, chunk)?;
        }
        let (writer, script) = (filter.clone(), or_scratch.clone());
        let (insert, sends): (Batch<()>, &'static [&'static str]) = if name.contains("BITFIELD") {
            (
                Box::new(move |con, keys| bitfield_insert(con, &writer, keys)),
                &["bitfield"],
            )
        } else {
            (
                Box::new(move |con, keys| scratch_insert(con, &writer, &script, keys)),
                &["set", "evalsha"],
            )
        };
        contenders.push(Contender {
            name,
            contains: None,
            insert: Some(insert),
            filled: Some(filter),
            sends: [&[], sends],
        });
    }

    let n = contenders.len();
    // seconds[op][contender]: wall seconds per key, one per round; cpu[op][contender]:
    // this thread's CPU µs per batch (the client's share), one per round.
    let mut seconds = vec![vec![Vec::new(); n]; 2];
    let mut cpu = vec![vec![Vec::new(); n]; 2];
    let batches = BATCHES as f64;
    let queries: Vec<u64> = (0..BATCHES * BATCH).map(|i| i * 2 + 1).collect();
    for round in 0..rounds {
        let fresh: Vec<u64> = (0..BATCHES * BATCH)
            .map(|i| (1 << 40) + (round as u64) * BATCHES * BATCH + i)
            .collect();
        let mut answers: Vec<Option<Vec<bool>>> = vec![None; n];
        // Every contender's lookups, then every contender's inserts, so the linebloom
        // filters hold the same keys when they are read.
        for i in round_order(round, n) {
            let Some(contains) = &mut contenders[i].contains else {
                continue;
            };
            let (start, cpu_start) = (Instant::now(), thread_cpu_ns());
            let mut got = Vec::with_capacity(queries.len());
            for batch in queries.chunks(BATCH as usize) {
                got.extend(contains(&mut con, batch)?);
            }
            seconds[0][i].push(start.elapsed().as_secs_f64() / queries.len() as f64);
            cpu[0][i].push((thread_cpu_ns() - cpu_start) as f64 / 1e3 / batches);
            answers[i] = Some(got);
        }
        for i in round_order(round, n) {
            if let Some(insert) = &mut contenders[i].insert {
                let (start, cpu_start) = (Instant::now(), thread_cpu_ns());
                for batch in fresh.chunks(BATCH as usize) {
                    insert(&mut con, batch)?;
                }
                seconds[1][i].push(start.elapsed().as_secs_f64() / fresh.len() as f64);
                cpu[1][i].push((thread_cpu_ns() - cpu_start) as f64 / 1e3 / batches);
            }
        }
        // The linebloom contenders that look up (2..) answer alike, and those that only
        // insert hold every key they inserted.
        for c in &contenders {
            if let Some(filter) = &c.filled {
                let held = filter.contains_many(&mut con, &fresh)?;
                let lost = held.iter().filter(|&&h| !h).count();
                assert_eq!(lost, 0, "{} lost {lost} of {} keys", c.name, fresh.len());
            }
        }
        for i in 3..n {
            let (Some(a), Some(b)) = (answers[i].as_ref(), answers[2].as_ref()) else {
                continue;
            };
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
        println!(
            "| {name} | keys/s (median) | client CPU µs per batch | RedisBloom's time ÷ this \
             one's (median, range) |"
        );
        println!("|---|---:|---:|---:|");
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
                "| {} | {:.0} | {:.0} | {r:.2} ({lo:.2}–{hi:.2}) |",
                c.name,
                1.0 / summary(&seconds[op][i]).0,
                summary(&cpu[op][i]).0
            );
        }
        println!();
    }
    profile(&mut con, &mut contenders, &queries)?;
    ns.clear()?;
    Ok(())
}

/// Batches per contender and operation in the profile pass.
const PROFILE_BATCHES: u64 = 20;

/// The server's side of each contender, untimed by the client: for each operation, a
/// batch, `CONFIG RESETSTAT`, [`PROFILE_BATCHES`] batches, then `INFO commandstats`,
/// summed over the commands it sends (a script's time includes the commands it calls).
fn profile(
    con: &mut redis::Connection,
    contenders: &mut [Contender],
    queries: &[u64],
) -> redis::RedisResult<()> {
    println!(
        "Server side ({PROFILE_BATCHES} batches each after one more, `INFO commandstats` \
         after `CONFIG RESETSTAT`):\n"
    );
    println!("| | operation | commands per batch | server µs per batch |");
    println!("|---|---|---:|---:|");
    // One batch more than profiled: the first warms the server's caches, then the
    // counters are reset.
    let batches = PROFILE_BATCHES as usize + 1;
    let fresh: Vec<u64> = (0..batches as u64 * BATCH).map(|i| (1 << 41) + i).collect();
    for c in contenders.iter_mut() {
        for (op, name) in ["lookups", "inserts"].iter().enumerate() {
            let (keys, mut run): (&[u64], Batch<()>) = match (op, &mut c.contains, &mut c.insert) {
                (0, Some(contains), _) => {
                    (queries, Box::new(|con, keys| contains(con, keys).map(drop)))
                }
                (1, _, Some(insert)) => (&fresh, Box::new(|con, keys| insert(con, keys))),
                _ => continue,
            };
            for (b, batch) in keys.chunks(BATCH as usize).take(batches).enumerate() {
                run(con, batch)?;
                if b == 0 {
                    commandstats::reset(con)?;
                }
            }
            drop(run);
            let Totals { calls, usec } = commandstats::read(con, c.sends[op])?;
            let per = PROFILE_BATCHES as f64;
            println!(
                "| {} | {name} | {:.0} | {:.0} |",
                c.name,
                calls as f64 / per,
                usec as f64 / per
            );
        }
    }
    println!();
    Ok(())
}
