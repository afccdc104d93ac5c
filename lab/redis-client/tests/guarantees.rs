//! The guard's one rule against real servers: **a key the filter acknowledged answers
//! "present" or an error, never "absent"**, in each way a service can break it (the
//! cases L1–L9 of the issue that asked for them), with the module and without it:
//!
//! * L1: a second service `create`s (or `store`s) a live filter's prefix;
//! * L2: two services start together, with `create` or `open_or_create`;
//! * L3: two `create`s of different sizes race on one prefix;
//! * L4: Redis evicts a shard under `maxmemory` (`allkeys-lru`, `allkeys-random`), or
//!   it expires, and inserts go on;
//! * L5: a replica without the module serves reads, then takes over from the master
//!   (in `replicas.rs`);
//! * L6: the reply to a rebuild's switch is lost (a proxy cuts the connection);
//! * L7: a rebuild's source fails, or its process dies mid-rebuild;
//! * L8: another service writes generation 1 again, or a shard is replaced by one of
//!   another length;
//! * L9: arguments that cannot describe a filter.
//!
//! Each test prints what it counted. Where `redis-server` or the module is missing the
//! test prints `SKIPPED:` and passes, unless `LINEBLOOM_REQUIRE_REDIS=1`.

use linebloom_redis_client::{
    EvictionRisk, FilterOptions, RebuildOptions, RedisFilter, RedisFilterError,
};
use linebloom_redis_testing::{Modules, Proxy, Server};
use support::{both_servers, never_absent, params};

mod support;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

#[test]
fn l1_a_second_create_or_store_is_refused_and_the_live_filter_stays() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let mut con = server.connect();
        let a = RedisFilter::create(&mut con, "svc:p", params(10_000)).unwrap();
        let keys: Vec<u64> = (0..10_000).collect();
        // A key whose bits were all set already (a false positive) is not new.
        let new = a.insert_many(&mut con, &keys).unwrap();
        assert!((9_900..=10_000).contains(&new), "{name}: {new}");
        // Service B starts and creates the same prefix: refused, nothing touched.
        let mut con_b = server.connect();
        for attempt in [
            RedisFilter::create(&mut con_b, "svc:p", params(10_000)),
            RedisFilter::create(&mut con_b, "svc:p", params(1_000)),
            RedisFilter::store(
                &mut con_b,
                "svc:p",
                &linebloom::BloomFilter::new(params(10_000)),
                FilterOptions::default(),
            ),
        ] {
            assert!(
                matches!(attempt, Err(RedisFilterError::AlreadyExists { .. })),
                "{name}: {attempt:?}"
            );
        }
        // Through A's live handle, a new handle and B's connection: all present.
        let opened = RedisFilter::open(&mut con_b, "svc:p").unwrap();
        assert_eq!(never_absent(&a, &mut con, &keys, name), 0);
        assert_eq!(never_absent(&opened, &mut con_b, &keys, name), 0);
        // The refused calls left no key behind: one shard, its count, the meta.
        let left: Vec<String> = server.query(&["KEYS", "svc:p:*"]).unwrap();
        assert_eq!(left.len(), 3, "{name}: {left:?}");
        println!("L1 {name}: 3 refused creates, 10000 of 10000 keys present");
    }
}

#[test]
fn l2_services_that_start_together_share_one_filter() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let url = server.url();
        let (mut acknowledged, mut refused) = (0usize, 0usize);
        for trial in 0..50 {
            let prefix = format!("l2:{trial}");
            for open_first in [false, true] {
                let prefix = format!("{prefix}:{open_first}");
                let barrier = Arc::new(Barrier::new(2));
                let services: Vec<_> = (0..2u64)
                    .map(|service| {
                        let (url, prefix, barrier) =
                            (url.clone(), prefix.clone(), Arc::clone(&barrier));
                        std::thread::spawn(move || {
                            let mut con =
                                redis::Client::open(url).unwrap().get_connection().unwrap();
                            barrier.wait();
                            let filter = if open_first {
                                RedisFilter::open_or_create(
                                    &mut con,
                                    &prefix,
                                    params(1_000),
                                    FilterOptions::default(),
                                )
                            } else {
                                RedisFilter::create(&mut con, &prefix, params(1_000))
                            };
                            let Ok(filter) = filter else {
                                return (Vec::new(), 1);
                            };
                            let keys: Vec<u64> = (0..200).map(|i| service << 32 | i).collect();
                            filter.insert_many(&mut con, &keys).unwrap();
                            (keys, 0)
                        })
                    })
                    .collect();
                let mut keys = Vec::new();
                for service in services {
                    let (mut k, r) = service.join().unwrap();
                    keys.append(&mut k);
                    refused += r;
                }
                acknowledged += keys.len();
                let mut con = server.connect();
                let filter = RedisFilter::open(&mut con, &prefix).unwrap();
                assert_eq!(never_absent(&filter, &mut con, &keys, name), 0);
                if open_first {
                    assert_eq!(keys.len(), 400, "{name}: open_or_create never fails");
                }
            }
        }
        println!(
            "L2 {name}: 100 starts of two services, {acknowledged} acknowledged keys present, \
             {refused} creates refused"
        );
        assert_eq!(
            refused, 50,
            "{name}: of two creates at once, exactly one wins"
        );
    }
}

#[test]
fn l3_creates_of_two_sizes_leave_one_whole_filter() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let url = server.url();
        let mut sizes_won = [0usize; 2];
        for trial in 0..30 {
            let prefix = format!("l3:{trial}");
            let barrier = Arc::new(Barrier::new(2));
            let racers: Vec<_> = [100_000u64, 1_000_000]
                .into_iter()
                .map(|n| {
                    let (url, prefix, barrier) =
                        (url.clone(), prefix.clone(), Arc::clone(&barrier));
                    std::thread::spawn(move || {
                        let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
                        barrier.wait();
                        RedisFilter::create(&mut con, &prefix, params(n)).map(|f| f.params())
                    })
                })
                .collect();
            let results: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
            let won: Vec<usize> = (0..2).filter(|&i| results[i].is_ok()).collect();
            assert_eq!(won.len(), 1, "{name}: {results:?}");
            sizes_won[won[0]] += 1;
            // Whoever won, the meta and its shards agree: open checks every length.
            let mut con = server.connect();
            let opened = RedisFilter::open(&mut con, &prefix).unwrap();
            assert_eq!(
                Ok(opened.params()),
                results[won[0]].as_ref().map(|p| *p).map_err(|_| ())
            );
            let left: Vec<String> = server.query(&["KEYS", &format!("{prefix}:*")]).unwrap();
            assert_eq!(
                left.len(),
                3,
                "{name}: the loser's shards were removed: {left:?}"
            );
            opened.delete(&mut con).unwrap();
        }
        println!(
            "L3 {name}: 30 races, 100k won {} and 1M won {}",
            sizes_won[0], sizes_won[1]
        );
    }
}

#[test]
fn l4_an_evicted_or_expired_shard_is_an_error_and_never_recreated() {
    for policy in ["allkeys-lru", "allkeys-random"] {
        let dir = tempfile::tempdir().unwrap();
        let Some(servers) = both_servers(dir.path(), &["--maxmemory-policy", policy]) else {
            return;
        };
        for (name, server) in &servers {
            let mut con = server.connect();
            // Shards of 16 blocks (1 KiB), so eviction takes some and leaves others.
            let options = FilterOptions::default().shard_blocks(16);
            let filter = RedisFilter::create_with(&mut con, "l4", params(10_000), options).unwrap();
            let keys: Vec<u64> = (0..10_000).collect();
            filter.insert_many(&mut con, &keys).unwrap();
            // Cap the memory just above what is used, then fill it with other keys
            // until Redis has evicted some shards.
            let used: String = server.query(&["INFO", "memory"]).unwrap();
            let used: u64 = used
                .lines()
                .find_map(|l| l.strip_prefix("used_memory:"))
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            let _: () = server
                .query(&[
                    "CONFIG",
                    "SET",
                    "maxmemory",
                    &(used + (1 << 20)).to_string(),
                ])
                .unwrap();
            let warned = RedisFilter::open(&mut con, "l4").unwrap();
            let gen_ = filter.generation();
            let shards: Vec<String> = (0..gen_.shards())
                .map(|s| gen_.shard_key("l4", s))
                .collect();
            assert_eq!(
                warned.eviction_risk(),
                Some(EvictionRisk::AllKeys {
                    policy: policy.to_string()
                }),
                "{name}: the eviction risk is reported"
            );
            let gone = |con: &mut redis::Connection| {
                shards
                    .iter()
                    .filter(|s| !redis::cmd("EXISTS").arg(s).query::<bool>(con).unwrap())
                    .count()
            };
            let junk = vec![b'x'; 4096];
            let start = Instant::now();
            let mut i = 0u64;
            while gone(&mut con) < shards.len() / 10 && start.elapsed() < Duration::from_secs(20) {
                for _ in 0..200 {
                    let _: () = redis::cmd("SET")
                        .arg(format!("junk:{i}"))
                        .arg(&junk[..])
                        .query(&mut con)
                        .unwrap();
                    i += 1;
                }
            }
            let evicted: Vec<&String> = shards
                .iter()
                .filter(|s| !redis::cmd("EXISTS").arg(s).query::<bool>(&mut con).unwrap())
                .collect();
            assert!(!evicted.is_empty(), "{name} {policy}: no shard was evicted");
            // Inserts go on: keys in evicted shards are errors, and no write re-creates
            // a shard.
            let more: Vec<u64> = (10_000..12_000).collect();
            let (mut ok, mut failed) = (0, 0);
            for key in &more {
                match filter.insert(&mut con, key) {
                    Ok(_) => ok += 1,
                    // A missing shard, or the meta itself evicted.
                    Err(RedisFilterError::Missing { .. } | RedisFilterError::NotFound { .. }) => {
                        failed += 1
                    }
                    Err(e) => panic!("{name}: {e}"),
                }
            }
            // Memory stays at the cap, so more shards may be evicted meanwhile; none of
            // those already gone may come back.
            for shard in &evicted {
                let back: bool = redis::cmd("EXISTS").arg(shard).query(&mut con).unwrap();
                assert!(!back, "{name}: a write re-created shard {shard}");
            }
            let evicted = evicted.len();
            let errors = never_absent(&filter, &mut con, &keys, name);
            println!(
                "L4 {name} {policy}: {evicted} of {} shards evicted; 2000 more inserts: {ok} \
                 acknowledged, {failed} refused (missing shard); of 10000 old keys {} present, \
                 {errors} errors, 0 absent",
                shards.len(),
                10_000 - errors
            );
            assert!(
                errors > 0 && failed > 0,
                "{name}: the evicted shards' keys are errors"
            );
            let _: () = server.query(&["CONFIG", "SET", "maxmemory", "0"]).unwrap();
            let _: () = server.query(&["FLUSHALL"]).unwrap();
        }
    }
    // A shard that expires: the same.
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let mut con = server.connect();
        let filter = RedisFilter::create(&mut con, "l4x", params(10_000)).unwrap();
        let keys: Vec<u64> = (0..10_000).collect();
        filter.insert_many(&mut con, &keys).unwrap();
        let shard = filter.generation().shard_key("l4x", 0);
        let _: () = server.query(&["PEXPIRE", &shard, "1"]).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(matches!(
            filter.insert(&mut con, &99_999u64),
            Err(RedisFilterError::Missing { .. })
        ));
        assert!(matches!(
            filter.contains_many(&mut con, &keys),
            Err(RedisFilterError::Missing { .. })
        ));
        let exists: bool = server.query(&["EXISTS", &shard]).unwrap();
        assert!(!exists, "{name}: the expired shard was re-created");
        println!("L4 {name}: an expired shard: inserts and lookups are errors, nothing re-created");
    }
}

#[test]
fn l6_a_lost_switch_reply_removes_nothing_and_can_be_verified() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let mut con = server.connect();
        let filter = RedisFilter::create(&mut con, "l6", params(10_000)).unwrap();
        let keys: Vec<u64> = (0..10_000).collect();
        filter.insert_many(&mut con, &keys).unwrap();
        let source = || Ok::<_, std::convert::Infallible>(keys.clone());
        // A first rebuild, so the server knows the scripts (a first `EVALSHA` is
        // refused with `NOSCRIPT` and sent again as `EVAL`).
        filter
            .rebuild(&mut con, params(10_000), RebuildOptions::default(), source)
            .unwrap();
        // The rebuild's connection goes through a proxy that cuts it right after
        // forwarding the switch (the only command that writes "live 3").
        let proxy = Proxy::start(server.port());
        let mut cut = redis::Client::open(proxy.url())
            .unwrap()
            .get_connection()
            .unwrap();
        proxy.cut_reply_of(b" live 3 ");
        let result = filter.rebuild(&mut cut, params(10_000), RebuildOptions::default(), source);
        assert_eq!(
            proxy.cuts(),
            1,
            "{name}: the switch went through the proxy ({result:?})"
        );
        match result {
            Err(RedisFilterError::SwitchUnconfirmed { generation, .. }) => {
                assert_eq!(generation, 3)
            }
            other => panic!("{name}: {other:?}"),
        }
        // On a working connection the handle tells that the switch happened, and
        // nothing it made live was removed.
        filter.refresh(&mut con).unwrap();
        assert_eq!(filter.generation().number, 3, "{name}");
        let opened = RedisFilter::open(&mut con, "l6").unwrap();
        assert_eq!(never_absent(&opened, &mut con, &keys, name), 0);
        assert!(filter.insert(&mut con, &10_001u64).unwrap());
        assert_eq!(never_absent(&filter, &mut con, &keys, name), 0);
        // The old generation, left behind by the lost reply, is named retired; the
        // next rebuild removes it.
        let before: Vec<String> = server.query(&["KEYS", "l6:*"]).unwrap();
        filter
            .rebuild(&mut con, params(10_000), RebuildOptions::default(), source)
            .unwrap();
        let after: Vec<String> = server.query(&["KEYS", "l6:*"]).unwrap();
        assert_eq!(
            (before.len(), after.len()),
            (5, 3),
            "{name}: {before:?} -> {after:?}"
        );
        assert_eq!(never_absent(&filter, &mut con, &keys, name), 0);
        println!(
            "L6 {name}: switch reply lost, generation 3 verified live, 10000 of 10000 present"
        );
    }
}

#[test]
fn l7_a_failed_or_dead_rebuild_never_wedges_the_filter() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let mut con = server.connect();
        let filter = RedisFilter::create(&mut con, "l7", params(10_000)).unwrap();
        let keys: Vec<u64> = (0..5_000).collect();
        filter.insert_many(&mut con, &keys).unwrap();
        // A source that fails: the rebuild cancels itself and keeps the caller's error.
        let failed = filter.rebuild(&mut con, params(10_000), RebuildOptions::default(), || {
            Err::<Vec<u64>, _>(std::io::Error::other("the database is down"))
        });
        match failed {
            Err(RedisFilterError::Source(e)) => {
                assert!(e.downcast_ref::<std::io::Error>().is_some(), "{name}: {e}");
            }
            other => panic!("{name}: {other:?}"),
        }
        assert_eq!(filter.info(&mut con).unwrap().rebuilding, None, "{name}");
        // A source that panics, as a process that dies: the rebuild's generation stays
        // under its lease...
        let lease = Duration::from_millis(600);
        let options = RebuildOptions::default().lease(lease);
        let dying = filter.clone();
        let url = server.url();
        let died = std::thread::spawn(move || {
            let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
            let _ = dying.rebuild(
                &mut con,
                params(10_000),
                options,
                || -> Result<Vec<u64>, std::io::Error> { panic!("the rebuilding process dies") },
            );
        })
        .join();
        assert!(died.is_err(), "the rebuild's thread panicked");
        let info = filter.info(&mut con).unwrap();
        let pending = info
            .rebuilding
            .expect("the dead rebuild's generation is pending");
        match filter.rebuild(&mut con, params(10_000), options, || {
            Ok::<_, std::io::Error>(keys.clone())
        }) {
            Err(RedisFilterError::RebuildInProgress { generation, .. }) => {
                assert_eq!(generation, pending.next.number);
            }
            other => panic!("{name}: {other:?}"),
        }
        // ...inserts meanwhile reach both generations...
        let during: Vec<u64> = (5_000..6_000).collect();
        filter.insert_many(&mut con, &during).unwrap();
        // ...and once the lease runs out the next rebuild takes over.
        std::thread::sleep(lease);
        let all: Vec<u64> = (0..6_000).collect();
        let done = filter
            .rebuild(&mut con, params(10_000), options, || {
                Ok::<_, std::io::Error>(all.clone())
            })
            .unwrap();
        assert_ne!(
            done.generation, pending.next,
            "{name}: a generation of its own"
        );
        assert_eq!(never_absent(&filter, &mut con, &all, name), 0);
        // A forced cancel clears a rebuild at once.
        let url = server.url();
        let dying = filter.clone();
        let _ = std::thread::spawn(move || {
            let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
            let _ = dying.rebuild(
                &mut con,
                params(10_000),
                RebuildOptions::default(),
                || -> Result<Vec<u64>, std::io::Error> { panic!("dies again") },
            );
        })
        .join();
        let cancelled = filter.cancel_rebuild(&mut con, false);
        assert!(
            matches!(cancelled, Err(RedisFilterError::RebuildInProgress { .. })),
            "{name}"
        );
        let cancelled = filter.cancel_rebuild(&mut con, true).unwrap();
        assert!(cancelled.is_some(), "{name}");
        assert_eq!(filter.info(&mut con).unwrap().rebuilding, None);
        assert_eq!(never_absent(&filter, &mut con, &all, name), 0);
        // Only the live generation's keys are left (the cancelled one is removed).
        let left: Vec<String> = server.query(&["KEYS", "l7:*"]).unwrap();
        assert_eq!(left.len(), 3, "{name}: {left:?}");
        println!("L7 {name}: a failed, a dead and a cancelled rebuild; 6000 of 6000 keys present");
    }
}

#[test]
fn l8_a_foreign_write_of_a_shard_is_an_error_for_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let mut con = server.connect();
        let filter = RedisFilter::create(&mut con, "l8", params(1_000)).unwrap();
        let keys: Vec<u64> = (0..1_000).collect();
        filter.insert_many(&mut con, &keys).unwrap();
        let shard = filter.generation().shard_key("l8", 0);
        let bytes = filter.params().bytes();
        // Zeros of twice the length, of one block less, and another type: each refused
        // by open, lookups and inserts, and nothing written.
        for (what, replace) in [
            (
                "twice the length",
                vec!["SET".to_string(), shard.clone(), "\0".repeat(2 * bytes)],
            ),
            (
                "one block short",
                vec!["SET".to_string(), shard.clone(), "\0".repeat(bytes - 64)],
            ),
            (
                "a list",
                vec!["RPUSH".to_string(), shard.clone(), "x".into()],
            ),
        ] {
            let saved: Vec<u8> = redis::cmd("DUMP").arg(&shard).query(&mut con).unwrap();
            let _: () = redis::cmd("DEL").arg(&shard).query(&mut con).unwrap();
            let mut cmd = redis::Cmd::new();
            for a in &replace {
                cmd.arg(a.as_bytes());
            }
            let _: redis::Value = cmd.query(&mut con).unwrap();
            let expect = |r: Result<_, RedisFilterError>| match r {
                Err(RedisFilterError::ShardLength { .. } | RedisFilterError::WrongType { .. }) => {}
                Err(e) => panic!("{name} {what}: {e}"),
                Ok(_) => panic!("{name} {what}: answered"),
            };
            expect(RedisFilter::open(&mut con, "l8").map(|_| ()));
            expect(filter.contains_many(&mut con, &keys).map(|_| ()));
            expect(filter.insert(&mut con, &5_000u64).map(|_| ()));
            let _: () = redis::cmd("DEL").arg(&shard).query(&mut con).unwrap();
            let _: () = redis::cmd("RESTORE")
                .arg(&shard)
                .arg(0)
                .arg(saved)
                .query(&mut con)
                .unwrap();
        }
        // Another service's `store` of generation 1 with other params or seed is
        // refused, so A's handle keeps answering from its own shards.
        let other =
            linebloom::BloomFilter::with_hasher(params(500), linebloom::IntFold::with_seed(9));
        assert!(matches!(
            RedisFilter::store(&mut con, "l8", &other, FilterOptions::default()),
            Err(RedisFilterError::AlreadyExists { .. })
        ));
        assert_eq!(never_absent(&filter, &mut con, &keys, name), 0);
        println!("L8 {name}: 3 foreign shard writes refused by every call; 1000 of 1000 present");
    }
}

#[test]
fn l9_bad_arguments_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(dir.path(), Modules::NONE, false) else {
        return;
    };
    let mut con = server.connect();
    for options in [
        FilterOptions::default().shard_blocks(0),
        FilterOptions::default().shard_blocks(linebloom_redis_client::MAX_SHARD_BLOCKS + 1),
        FilterOptions::default().ttl(Duration::ZERO),
    ] {
        let result = RedisFilter::create_with(&mut con, "l9", params(1_000), options);
        assert!(
            matches!(result, Err(RedisFilterError::InvalidArgument(_))),
            "{options:?}: {result:?}"
        );
        let result = RedisFilter::open_or_create(&mut con, "l9", params(1_000), options);
        assert!(matches!(result, Err(RedisFilterError::InvalidArgument(_))));
    }
    let keys: Vec<String> = server.query(&["KEYS", "*"]).unwrap();
    assert!(keys.is_empty(), "{keys:?}");
    // A meta that is not one: refused by name.
    let _: () = server
        .query(&["SET", "bad:meta", "linebloom-v2 1 10 8 3 100"])
        .unwrap();
    assert!(matches!(
        RedisFilter::open(&mut con, "bad"),
        Err(RedisFilterError::BadMeta { .. })
    ));
}

#[test]
fn a_ttl_covers_the_whole_filter_and_its_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let mut con = server.connect();
        let options = FilterOptions::default()
            .shard_blocks(4)
            .ttl(Duration::from_secs(100));
        let filter = RedisFilter::create_with(&mut con, "ttl", params(1_000), options).unwrap();
        filter
            .insert_many(&mut con, &(0..1_000u64).collect::<Vec<_>>())
            .unwrap();
        let ttls = |con: &mut redis::Connection| -> Vec<(String, i64)> {
            let keys: Vec<String> = redis::cmd("KEYS").arg("ttl:*").query(con).unwrap();
            keys.into_iter()
                .map(|k| {
                    let ttl = redis::cmd("PTTL").arg(&k).query(con).unwrap();
                    (k, ttl)
                })
                .collect()
        };
        let all_above = |ttls: Vec<(String, i64)>, ms: i64| ttls.iter().all(|(_, t)| *t > ms);
        assert!(
            all_above(ttls(&mut con), 90_000),
            "{name}: {:?}",
            ttls(&mut con)
        );
        assert!(filter.info(&mut con).unwrap().ttl.is_some());
        filter
            .rebuild(&mut con, params(2_000), RebuildOptions::default(), || {
                Ok::<_, std::io::Error>(0..1_000u64)
            })
            .unwrap();
        assert!(
            all_above(ttls(&mut con), 90_000),
            "{name}: the new generation keeps it: {:?}",
            ttls(&mut con)
        );
        filter.persist(&mut con).unwrap();
        assert!(ttls(&mut con).iter().all(|(_, t)| *t == -1), "{name}");
        filter.expire(&mut con, Duration::from_millis(50)).unwrap();
        std::thread::sleep(Duration::from_millis(120));
        assert!(matches!(
            filter.contains(&mut con, &1u64),
            Err(RedisFilterError::NotFound { .. })
        ));
        let left: Vec<String> = server.query(&["KEYS", "ttl:*"]).unwrap();
        assert!(left.is_empty(), "{name}: {left:?}");
    }
}
