//! Integration tests against a real `redis-server` on a loopback port: the Redis-held
//! filter under concurrency, across a restart with persistence, with the server killed
//! mid-run, with bad keys, and side by side with RedisBloom.
//!
//! Each test starts its own server through `linebloom_redis_testing` (a child
//! process on a free 127.0.0.1 port, stopped by PID when the test ends) that loads the
//! linebloom module (`lab/redis-module`), and the tests of the Redis-held filter run
//! once per batch path (plain commands, then the module). `redis-server` must be on
//! PATH, the module built, and RedisBloom's module at `$LINEBLOOM_REDISBLOOM_SO`; where
//! one is missing the test says so in the log and skips, unless
//! `LINEBLOOM_REQUIRE_REDIS=1` (set by `.ci/run`), which turns a missing piece into a
//! failure.

use linebloom::{BloomFilter, Params};
use linebloom_lab::experiments::penetration::cache::LocalCache;
use linebloom_lab::experiments::penetration::db::Db;
use linebloom_lab::experiments::penetration::guard::{Guard, InRedis};
use linebloom_lab::experiments::penetration::{self, Answer, Outcome, connect, serve};
use linebloom_lab::support::redis::namespace::Namespace;
use linebloom_redis_client::{
    BatchPath, FilterOptions, RebuildOptions, RedisFilter, RedisFilterError,
};
use linebloom_redis_testing::{Modules, Server};
use std::time::Duration;

/// Each test of the Redis-held filter runs once per way of sending batches: the server
/// loads the module, so a handle detects [`BatchPath::Module`] and the test sets the
/// other one for the first round.
const PATHS: [BatchPath; 2] = [BatchPath::Commands, BatchPath::Module];

/// Options with shards of `blocks` blocks.
fn shards(blocks: u64) -> FilterOptions {
    FilterOptions::default().shard_blocks(blocks)
}

fn filter_with(n: u64) -> BloomFilter {
    let mut f = BloomFilter::new(Params::for_fpr(n, 0.01).unwrap());
    f.insert_batch(&(0..n).collect::<Vec<u64>>());
    f
}

#[test]
fn loading_and_reading_back_give_the_same_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = connect(&server.url()).unwrap();
    let f = filter_with(20_000);
    for path in PATHS {
        let prefix = format!("t{path:?}");
        // Small shards, so the filter spans several keys and a batch several commands.
        let rf = RedisFilter::store(&mut con, &prefix, &f, shards(64)).unwrap();
        assert_eq!(
            rf.batch_path(),
            BatchPath::Module,
            "the module was detected"
        );
        rf.set_batch_path(path);
        let back = rf.load(&mut con).unwrap();
        assert_eq!(back, f);
        let probes: Vec<u64> = (0..40_000).collect();
        let remote = rf.contains_many(&mut con, &probes).unwrap();
        for (k, r) in probes.iter().zip(remote) {
            assert_eq!(r, f.contains(k), "{path:?}: key {k}");
        }
        // Inserts (the insert script, or the module's LINEBLOOM.MADD) set exactly the
        // in-process bits.
        let mut local = f.clone();
        let extra: Vec<u64> = (1_000_000..1_002_000).collect();
        rf.insert_many(&mut con, &extra).unwrap();
        local.insert_batch(&extra);
        assert_eq!(
            RedisFilter::open(&mut con, &prefix)
                .unwrap()
                .load(&mut con)
                .unwrap(),
            local,
            "{path:?}"
        );
    }
}

#[test]
fn the_capacity_monitor_reads_the_same_bits_as_the_filter() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = connect(&server.url()).unwrap();
    let mut local = filter_with(20_000);
    // Several shards, so the BITCOUNTs are summed. (Inserts take the module's path.)
    let rf = RedisFilter::store(&mut con, "m", &local, shards(100)).unwrap();
    let c = rf.measure(&mut con, 0.01).unwrap();
    // The same bits give exactly the in-process estimates.
    assert_eq!(c.fill_ratio, Some(local.fill_ratio()));
    assert_eq!(c.estimated_len, local.estimated_len());
    assert_eq!(c.capacity, local.params().capacity_at(0.01));
    assert!(c.capacity >= 20_000);
    // Estimate within 2% of the 20,000 keys (its relative error here is about 0.3%).
    assert!((c.estimated_len / 20_000.0 - 1.0).abs() < 0.02, "{c:?}");
    assert!(!c.over_target(), "{c:?}");
    // Three times the keys it was sized for: the alarm goes off.
    let extra: Vec<u64> = (20_000..60_000).collect();
    rf.insert_many(&mut con, &extra).unwrap();
    local.insert_batch(&extra);
    let c = rf.measure(&mut con, 0.01).unwrap();
    assert_eq!(c.estimated_len, local.estimated_len());
    assert!((c.estimated_len / 60_000.0 - 1.0).abs() < 0.02, "{c:?}");
    assert!(c.over_target() && c.estimated_fpr.unwrap() > 0.05, "{c:?}");
}

#[test]
fn concurrent_clients_lose_no_insert() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = connect(&server.url()).unwrap();
    for path in PATHS {
        let prefix = format!("c{path:?}");
        // A small filter, so the 8 clients hit the same blocks and bytes all the time.
        RedisFilter::create_with(&mut con, &prefix, Params::new(64, 8).unwrap(), shards(16))
            .unwrap();
        std::thread::scope(|s| {
            for t in 0..8u64 {
                let (url, prefix) = (server.url(), &prefix);
                s.spawn(move || {
                    let mut con = connect(&url).unwrap();
                    let f = RedisFilter::open(&mut con, prefix).unwrap();
                    f.set_batch_path(path);
                    let keys: Vec<u64> = (0..2_000).map(|i| t * 1_000_000 + i).collect();
                    for chunk in keys.chunks(100) {
                        f.insert_many(&mut con, chunk).unwrap();
                    }
                });
            }
        });
        let f = RedisFilter::open(&mut con, &prefix).unwrap();
        f.set_batch_path(path);
        for t in 0..8u64 {
            let keys: Vec<u64> = (0..2_000).map(|i| t * 1_000_000 + i).collect();
            assert!(
                f.contains_many(&mut con, &keys).unwrap().iter().all(|&x| x),
                "{path:?}: client {t} lost keys"
            );
        }
    }
}

#[test]
fn the_filter_survives_a_restart_with_persistence() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(mut server) = Server::start(tmp.path(), Modules::LINEBLOOM, true) else {
        return;
    };
    let mut con = connect(&server.url()).unwrap();
    let f = filter_with(10_000);
    let probes: Vec<u64> = (0..30_000).chain([777_777, 888_888]).collect();
    let mut before = Vec::new();
    for path in PATHS {
        // The module's inserts reach the AOF as the plain commands they replicate.
        let rf = RedisFilter::store(&mut con, &format!("p{path:?}"), &f, shards(50)).unwrap();
        rf.set_batch_path(path);
        rf.insert_many(&mut con, &[777_777, 888_888]).unwrap();
        before.push(rf.contains_many(&mut con, &probes).unwrap());
    }
    drop(con);
    server.restart();
    let mut con = connect(&server.url()).unwrap();
    for (path, before) in PATHS.into_iter().zip(before) {
        let rf = RedisFilter::open(&mut con, &format!("p{path:?}"))
            .expect("filter is back after the restart");
        rf.set_batch_path(path);
        assert_eq!(
            rf.contains_many(&mut con, &probes).unwrap(),
            before,
            "{path:?}"
        );
        assert!(
            rf.contains(&mut con, &777_777u64).unwrap()
                && rf.contains(&mut con, &888_888u64).unwrap()
        );
    }
}

#[test]
fn a_dead_server_degrades_and_never_answers_absent() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(mut server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = connect(&server.url()).unwrap();
    let n = 2_000;
    let filter = RedisFilter::store(&mut con, "d", &filter_with(n), shards(1 << 20)).unwrap();
    let mut guard = InRedis {
        filter,
        con: Box::new(con),
    };
    let db = Db::create(&tmp.path().join("d.sqlite"), n).unwrap();
    let mut cache = LocalCache::new(100, Duration::from_secs(60));
    assert_eq!(
        serve(&mut guard, &mut cache, &db, 5, false).unwrap(),
        Outcome {
            answer: Answer::Found,
            degraded: false
        }
    );
    server.crash();
    // The guard cannot check: an error, never "absent".
    assert!(guard.might_contain(6).is_err());
    // The pipeline goes on to the database and reports the request as degraded.
    for key in 7..50 {
        assert_eq!(
            serve(&mut guard, &mut cache, &db, key, false).unwrap(),
            Outcome {
                answer: Answer::Found,
                degraded: true
            }
        );
    }
    assert_eq!(
        serve(&mut guard, &mut cache, &db, n + 99, false).unwrap(),
        Outcome {
            answer: Answer::Empty,
            degraded: true
        }
    );
}

#[test]
fn bad_keys_give_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = connect(&server.url()).unwrap();
    // Missing filter.
    assert!(matches!(
        RedisFilter::open(&mut con, "nothing-here"),
        Err(RedisFilterError::NotFound { .. })
    ));
    // Wrong type where the meta key should be.
    redis::cmd("LPUSH")
        .arg("w:meta")
        .arg("x")
        .query::<()>(&mut con)
        .unwrap();
    let err = RedisFilter::open(&mut con, "w").expect_err("wrong type");
    assert!(
        matches!(&err, RedisFilterError::WrongType { key } if key == "w:meta"),
        "{err}"
    );
    for path in PATHS {
        // Truncated payload: the open check and the per-key check both refuse, naming
        // the shard and both sizes.
        let prefix = format!("t{path:?}");
        let rf =
            RedisFilter::store(&mut con, &prefix, &filter_with(5_000), shards(1 << 20)).unwrap();
        rf.set_batch_path(path);
        let shard = rf.generation().shard_key(&prefix, 0);
        let full: Vec<u8> = redis::cmd("GET").arg(&shard).query(&mut con).unwrap();
        let half = &full[..full.len() / 2];
        redis::cmd("SET")
            .arg(&shard)
            .arg(half)
            .query::<()>(&mut con)
            .unwrap();
        let short = |e: &RedisFilterError| {
            matches!(e, RedisFilterError::ShardLength { key, held, needed }
                if *key == shard && *held == half.len() as u64 && *needed == full.len() as u64)
        };
        let err = RedisFilter::open(&mut con, &prefix).expect_err("truncated");
        assert!(short(&err), "{path:?}: {err}");
        let keys: Vec<u64> = (0..5_000).collect();
        let err = rf
            .contains_many(&mut con, &keys)
            .expect_err("truncated blocks are an error");
        assert!(short(&err), "{path:?}: {err}");
        // Inserts refuse too, and write nothing.
        let err = rf.insert_many(&mut con, &keys).expect_err("truncated");
        assert!(short(&err), "{path:?}: {err}");
        let after: Vec<u8> = redis::cmd("GET").arg(&shard).query(&mut con).unwrap();
        assert_eq!(after, half, "{path:?}: a refused batch wrote bits");
        // The shard deleted under a live handle: an error, not "absent", and no write
        // re-creates it.
        redis::cmd("DEL").arg(&shard).query::<()>(&mut con).unwrap();
        let err = rf.contains(&mut con, &1u64).expect_err("missing shard");
        assert!(
            matches!(&err, RedisFilterError::Missing { key } if *key == shard),
            "{path:?}: {err}"
        );
        assert!(rf.insert(&mut con, &1u64).is_err());
        let exists: bool = redis::cmd("EXISTS").arg(&shard).query(&mut con).unwrap();
        assert!(!exists, "{path:?}: a write re-created the shard");
    }
    // A bad meta.
    redis::cmd("SET")
        .arg("b:meta")
        .arg("not a filter")
        .query::<()>(&mut con)
        .unwrap();
    assert!(matches!(
        RedisFilter::open(&mut con, "b"),
        Err(RedisFilterError::BadMeta { .. })
    ));
}

#[test]
fn side_by_side_with_redisbloom() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::BOTH, false) else {
        return;
    };
    let ctx = linebloom_lab::Ctx {
        seed: 1,
        redis: Some(server.url()),
        ..linebloom_lab::Ctx::tiny(tmp.path().to_path_buf())
    };
    let ns = Namespace::claim_on(&server.url(), "sbs-test:").unwrap();
    let rows = penetration::side_by_side(&server.url(), &ns, 50_000, &ctx).unwrap();
    drop(ns);
    for r in &rows {
        println!("{r:?}");
    }
    let lb = rows.iter().find(|r| r.sizing == "equal memory").unwrap();
    let for_p = rows.iter().find(|r| r.sizing == "for 1%").unwrap();
    assert!(for_p.fpr < 0.02, "{}", for_p.fpr);
    assert!(
        rows.iter()
            .all(|r| r.single_query_ops_per_s > 0.0 && r.single_insert_ops_per_s > 0.0)
    );
    let rb = rows
        .iter()
        .find(|r| r.contender == "redisbloom")
        .expect("RedisBloom row");
    assert_eq!(
        lb.bytes / 64,
        rb.bytes.div_ceil(64),
        "equal memory (to the block)"
    );
    // Both sized for 1%: each must measure below 2% on 1e5 probes (binomial 5σ ≈ 0.16%).
    assert!(lb.fpr < 0.02 && rb.fpr < 0.02, "{} {}", lb.fpr, rb.fpr);
    // The equal-memory filter ran through the module and as plain commands: the same
    // keys in the same shape give the same bits, so the same answers.
    let paths: Vec<_> = rows.iter().filter(|r| r.sizing == "equal memory").collect();
    let batches: Vec<&str> = paths.iter().map(|r| r.batches.as_str()).collect();
    assert_eq!(batches, ["linebloom module", "pipelined commands"]);
    assert_eq!(paths[0].fpr, paths[1].fpr);
    assert!(rows.iter().any(|r| r.sizing == "reserve 1% (control)"));

    // And the whole scenario with every Redis defence, at the test scale, in a server that
    // holds a user's keys, some of them named like the lab's keys of earlier versions.
    let mut con = connect(&server.url()).unwrap();
    let foreign = foreign_keys(&mut con);
    // The registry's run: measure, data.csv, provenance.json and the plots.
    let scenario = linebloom_lab::drivers::registry::find(penetration::NAME).unwrap();
    scenario.run(&ctx).unwrap();
    assert_untouched(&mut con, &foreign);
    let data: Vec<penetration::Row> =
        linebloom_lab::support::csvio::read(&tmp.path().join("penetration/data.csv")).unwrap();
    for s in [
        "no-protection",
        "null-caching",
        "linebloom-in-process",
        "linebloom-in-redis",
        "redisbloom",
        "linebloom-module-bf",
        "redisbloom-cuckoo",
        "linebloom-module-cf",
        "classic-setbit-redis",
    ] {
        assert!(data.iter().any(|r| r.contender == s), "{s} missing");
    }
    assert!(
        data.iter().all(|r| r.false_negatives == 0),
        "a filter rejected a valid id"
    );
    // Every filter defence recorded its capacity monitor each second; the in-process and
    // Redis-held linebloom filters, loaded with their n keys, report about n.
    for s in [
        "linebloom-in-process",
        "linebloom-in-redis",
        "redisbloom",
        "linebloom-module-bf",
        "redisbloom-cuckoo",
        "linebloom-module-cf",
        "classic-setbit-redis",
    ] {
        let rows: Vec<_> = data.iter().filter(|r| r.contender == s).collect();
        assert!(
            rows.iter()
                .all(|r| r.capacity.is_some() && r.estimated_len.is_some()),
            "{s}"
        );
    }
    // The scenario adds one product every 500 requests, so a defence holds between
    // 20,000 and 20,000 + requests/500 keys; the estimates (relative error about 0.3%
    // here) must fall within 3% of that range.
    for s in ["linebloom-in-process", "linebloom-in-redis"] {
        let mut requests = 0;
        for r in data.iter().filter(|r| r.contender == s) {
            requests += r.requests;
            let (low, high) = (20_000.0, 20_000.0 + (requests / 500) as f64);
            let n = r.estimated_len.unwrap();
            assert!(
                n > 0.97 * low && n < 1.03 * high,
                "{s}: {n} not in [{low}, {high}]"
            );
            assert!(r.fill_ratio.is_some() && r.estimated_fpr.is_some());
        }
    }
    // The linebloom filters were rebuilt at each of the three phase changes, with no
    // false negative (checked above); RedisBloom cannot be rebuilt.
    for s in ["linebloom-in-redis", "linebloom-in-process", "redisbloom"] {
        let rebuilds: u64 = data
            .iter()
            .filter(|r| r.contender == s)
            .map(|r| r.rebuilds)
            .sum();
        assert_eq!(rebuilds, if s == "redisbloom" { 0 } else { 3 }, "{s}");
    }
    let summary = scenario.summary(&ctx.out).unwrap();
    assert!(summary.table.contains("Side by side"));
    assert!(summary.table.contains("Capacity monitor"));
    // Every row of every table has as many cells as its header; the Redis-held
    // filter's capacity row counts its three rebuilds.
    let mut header_cells = 0;
    for line in summary.table.lines().filter(|l| l.starts_with('|')) {
        let cells = line.matches('|').count();
        if line.starts_with("| defence") {
            header_cells = cells;
        }
        assert_eq!(cells, header_cells, "{line}");
    }
    assert!(
        summary
            .table
            .lines()
            .any(|l| l.starts_with("| linebloom-in-redis | 0.") && l.ends_with("| 3 |")),
        "{}",
        summary.table
    );
}

/// Writes a user's keys: strings, a hash, a key with a TTL, keys named like the lab's keys
/// of earlier versions (`lbfilter`, `lbbf`, `lbcache:*`), and one under another
/// `linebloom:` run's prefix. Returns (key, DUMP of its value).
fn foreign_keys(con: &mut redis::Connection) -> Vec<(String, Vec<u8>)> {
    let mut pipe = redis::pipe();
    for key in [
        "user:1",
        "lbfilter",
        "lbfilter:meta",
        "lbbf",
        "lbclassic",
        "lbcache:inredis:5",
        "linebloom:other-run:filter:meta",
        "linebloom:",
    ] {
        pipe.cmd("SET")
            .arg(key)
            .arg(format!("value of {key}"))
            .ignore();
    }
    pipe.cmd("HSET")
        .arg("user:2")
        .arg("name")
        .arg("ada")
        .ignore();
    pipe.cmd("SET")
        .arg("session:9")
        .arg("x")
        .arg("EX")
        .arg(3600)
        .ignore();
    pipe.query::<()>(con).unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(con).unwrap();
    keys.into_iter()
        .map(|k| {
            let dump: Vec<u8> = redis::cmd("DUMP").arg(&k).query(con).unwrap();
            (k, dump)
        })
        .collect()
}

/// Exactly the `foreign` keys are in the server, with the same values.
fn assert_untouched(con: &mut redis::Connection, foreign: &[(String, Vec<u8>)]) {
    let mut now: Vec<String> = redis::cmd("KEYS").arg("*").query(con).unwrap();
    now.sort();
    let mut before: Vec<String> = foreign.iter().map(|(k, _)| k.clone()).collect();
    before.sort();
    assert_eq!(now, before, "keys left behind, or foreign keys removed");
    for (k, dump) in foreign {
        let d: Vec<u8> = redis::cmd("DUMP").arg(k).query(con).unwrap();
        assert_eq!(&d, dump, "foreign key {k} changed");
    }
}

#[test]
fn the_lab_touches_only_its_own_prefix_and_removes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = connect(&server.url()).unwrap();
    let foreign = foreign_keys(&mut con);
    // A prefix with glob characters matches only itself.
    let mut ns = Namespace::claim_on(&server.url(), "run[1]*:").unwrap();
    RedisFilter::store(&mut con, &ns.key("filter"), &filter_with(1_000), shards(4)).unwrap();
    assert!(ns.keys().unwrap().len() > 2);
    // A second claim of a prefix in use is refused, and clears nothing.
    let err = Namespace::claim_on(&server.url(), "run[1]*:")
        .err()
        .expect("in use");
    assert!(err.to_string().contains("already has"), "{err}");
    assert!(ns.keys().unwrap().len() > 2);
    assert!(ns.clear().unwrap() > 2);
    assert_untouched(&mut con, &foreign);
    // An empty prefix would match every key: refused.
    assert!(Namespace::claim_on(&server.url(), "").is_err());
    // Dropped without `clear` (an error path): its keys go too.
    {
        let ns = Namespace::claim_on(&server.url(), "dropped:").unwrap();
        RedisFilter::store(&mut con, &ns.key("f"), &filter_with(1_000), shards(4)).unwrap();
    }
    assert_untouched(&mut con, &foreign);
    // A run given a prefix in use is refused before it writes anything.
    let ctx = linebloom_lab::Ctx {
        seed: 1,
        redis: Some(server.url()),
        redis_prefix: Some("user:".into()),
        ..linebloom_lab::Ctx::tiny(tmp.path().to_path_buf())
    };
    let err = linebloom_lab::drivers::registry::find(penetration::NAME)
        .unwrap()
        .run(&ctx)
        .expect_err("prefix in use");
    assert!(err.to_string().contains("already has"), "{err}");
    assert_untouched(&mut con, &foreign);
}

/// Rebuilds and rotations while other clients query and insert: every key the
/// "database" holds is answered "present" throughout (R4: zero false "absent"), and
/// only the live generation's keys remain afterwards.
#[test]
fn rebuilds_and_rotations_leave_no_gap() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let url = server.url();
    let mut con = connect(&url).unwrap();
    for path in PATHS {
        let prefix = &format!("r{path:?}");
        let base = 20_000u64;
        // Small shards, so a generation spans several keys.
        let rf = RedisFilter::store(&mut con, prefix, &filter_with(base), shards(64)).unwrap();
        rf.set_batch_path(path);
        // The "database": products 0..base, and the writer's products NEW..NEW+acked. The
        // writer inserts into the filter first, then acknowledges (the database insert).
        // The protocol assumes no writer sits between the two for longer than the grace
        // period; on a loaded machine a thread can stall longer than that (it did, under
        // a parallel CI build), so the test makes the assumption hold whatever the load:
        // the writer's pair and the rebuild's read of the database take one lock, as a
        // database transaction would.
        const NEW: u64 = 1 << 40;
        let db = std::sync::Mutex::new(());
        let acked = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let (queries, false_absent) = (AtomicU64::new(0), AtomicU64::new(0));
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut con = connect(&url).unwrap();
                let f = RedisFilter::open(&mut con, prefix).unwrap();
                f.set_batch_path(path);
                let mut next = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let batch: Vec<u64> = (next..next + 50).map(|i| NEW + i).collect();
                    let _transaction = db.lock().unwrap();
                    f.insert_many(&mut con, &batch).unwrap();
                    next += 50;
                    acked.store(next, Ordering::Release);
                }
            });
            for reader in 0..2u64 {
                let (url, stop, acked) = (&url, &stop, &acked);
                let (queries, false_absent) = (&queries, &false_absent);
                s.spawn(move || {
                    let mut con = connect(url).unwrap();
                    let f = RedisFilter::open(&mut con, prefix).unwrap();
                    f.set_batch_path(path);
                    let mut i = reader;
                    while !stop.load(Ordering::Relaxed) {
                        let done = acked.load(Ordering::Acquire);
                        // Old products and every acknowledged new one.
                        let mut batch: Vec<u64> =
                            (0..100).map(|j| (i * 7919 + j * 131) % base).collect();
                        batch.extend((0..done.min(100)).map(|j| NEW + (i * 31 + j * 17) % done));
                        let answers = f.contains_many(&mut con, &batch).unwrap();
                        let missed = answers.iter().filter(|&&a| !a).count() as u64;
                        false_absent.fetch_add(missed, Ordering::Relaxed);
                        queries.fetch_add(batch.len() as u64, Ordering::Relaxed);
                        i += 2;
                    }
                });
            }
            // Same shape (clears deleted keys), then rotation to larger and back to the same.
            for round in 0..6u64 {
                std::thread::sleep(Duration::from_millis(100));
                let keys_now = base + acked.load(Ordering::Acquire);
                let params = if round % 2 == 0 {
                    rf.params()
                } else {
                    Params::for_fpr(4 * keys_now, 0.01).unwrap()
                };
                let rebuilt = rf
                    .rebuild(
                        &mut con,
                        params,
                        RebuildOptions::default().grace(Duration::from_millis(20)),
                        || {
                            let _transaction = db.lock().unwrap();
                            let done = acked.load(Ordering::Acquire);
                            Ok::<_, String>((0..base).chain((0..done).map(|i| NEW + i)))
                        },
                    )
                    .unwrap();
                assert_eq!(rebuilt.generation.number, round + 2);
                assert_eq!(rebuilt.generation.params, params);
            }
            stop.store(true, Ordering::Relaxed);
        });
        let (q, missed) = (queries.into_inner(), false_absent.into_inner());
        println!("{path:?}: {q} queries during 6 rebuilds, {missed} false absent");
        assert!(q > 10_000, "the readers ran only {q} queries");
        assert_eq!(missed, 0, "{path:?}: false \"absent\" during a rebuild");
        // Everything acknowledged is in the final generation.
        let done = acked.into_inner();
        let all: Vec<u64> = (0..base).chain((0..done).map(|i| NEW + i)).collect();
        assert!(rf.contains_many(&mut con, &all).unwrap().iter().all(|&a| a));
        // Only the meta and the live generation's shards are left.
        let mut keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{prefix}:*"))
            .query(&mut con)
            .unwrap();
        keys.sort();
        let live = rf.generation();
        let mut expected: Vec<String> = (0..live.shards())
            .flat_map(|s| {
                let shard = live.shard_key(prefix, s);
                [format!("{shard}:n"), shard]
            })
            .chain([format!("{prefix}:meta")])
            .collect();
        expected.sort();
        assert_eq!(keys, expected);
    }
}

#[test]
fn a_failed_rebuild_leaves_the_live_generation_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = connect(&server.url()).unwrap();
    let f = filter_with(5_000);
    let rf = RedisFilter::store(&mut con, "a", &f, shards(32)).unwrap();
    let bigger = Params::for_fpr(50_000, 0.01).unwrap();
    let err = rf
        .rebuild(&mut con, bigger, RebuildOptions::default(), || {
            Err::<Vec<u64>, _>("the database is down")
        })
        .expect_err("source failed");
    assert!(err.to_string().contains("database is down"), "{err}");
    assert_eq!(rf.generation().number, 1);
    let other = RedisFilter::open(&mut con, "a").unwrap();
    assert_eq!(other.generation().number, 1);
    assert_eq!(other.load(&mut con).unwrap(), f);
    // The half-built generation is gone; inserts go to generation 1 only again.
    let leftovers: Vec<String> = redis::cmd("KEYS").arg("a:{2.*").query(&mut con).unwrap();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(other.info(&mut con).unwrap().rebuilding, None);
    rf.insert_many(&mut con, &[99_999_999u64]).unwrap();
    assert!(other.contains(&mut con, &99_999_999u64).unwrap());
}
