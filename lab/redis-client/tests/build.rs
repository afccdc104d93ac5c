//! A service's start-up that fills the filter from the source of truth
//! (`open_or_build`), against real servers, with the module and without it:
//!
//! * a lost meta, then a restart: the restarted service builds a new filter from its
//!   source, and handles on the lost filter answer errors, never the new one's
//!   "absent";
//! * services that start together build once, and the others wait for the build;
//! * while it builds, lookups answer `Building` (or "maybe present" by choice) and
//!   inserts go in;
//! * a builder whose source fails releases its lease, and one that dies leaves it to
//!   run out: the next caller takes the build over.
//!
//! The meta is lost by a `DEL`, as eviction or an expiry would lose it: the client
//! sees the same missing key either way. Each test prints what it counted. Where
//! `redis-server` or the module is missing the test prints `SKIPPED:` and passes,
//! unless `LINEBLOOM_REQUIRE_REDIS=1`.

use linebloom::Params;
use linebloom_redis_client::{
    BuildOptions, FilterOptions, RebuildOptions, RedisFilter, RedisFilterError, WhileBuilding,
};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, mpsc};
use std::time::{Duration, Instant};
use support::{both_servers, never_absent};

mod support;

fn params() -> Params {
    Params::for_fpr(20_000, 0.01).unwrap()
}

/// Small shards, so a filter has several.
fn options() -> FilterOptions {
    FilterOptions::default().shard_blocks(64)
}

fn build(
    con: &mut redis::Connection,
    prefix: &str,
    lease: Duration,
    source: impl FnOnce() -> Result<Vec<u64>, std::io::Error>,
) -> Result<RedisFilter, RedisFilterError> {
    let build = BuildOptions::default().lease(lease);
    RedisFilter::open_or_build(con, prefix, params(), options(), build, source)
}

#[test]
fn a_lost_meta_then_a_restart_builds_from_the_source_and_old_handles_never_answer_absent() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let mut con = server.connect();
        // The database: 10,000 legal ids at start-up, 2,000 more added while it runs.
        let mut database: Vec<u64> = (0..10_000).collect();
        let first = build(&mut con, "p", Duration::from_secs(60), || {
            Ok(database.clone())
        })
        .unwrap();
        assert!(first.created(), "{name}");
        for id in 10_000..12_000u64 {
            database.push(id);
            first.insert(&mut con, &id).unwrap();
        }
        let other = RedisFilter::open(&mut con, "p").unwrap();
        assert_eq!(never_absent(&first, &mut con, &database, name), 0);

        // The meta is lost: every lookup is an error, never "absent".
        redis::cmd("DEL")
            .arg("p:meta")
            .query::<()>(&mut con)
            .unwrap();
        for handle in [&first, &other] {
            assert_eq!(
                never_absent(handle, &mut con, &database, name),
                database.len()
            );
            assert!(matches!(
                handle.contains(&mut con, &1u64),
                Err(RedisFilterError::NotFound { .. })
            ));
        }

        // The service restarts: it finds no filter and builds one from the database.
        let reads = AtomicUsize::new(0);
        let restarted = build(&mut con, "p", Duration::from_secs(60), || {
            reads.fetch_add(1, Ordering::Relaxed);
            Ok(database.clone())
        })
        .unwrap();
        assert!(restarted.created(), "{name}");
        assert_eq!(reads.load(Ordering::Relaxed), 1);
        let answers = restarted.contains_many(&mut con, &database).unwrap();
        assert!(
            answers.iter().all(|&a| a),
            "{name}: the rebuilt filter lost a key"
        );

        // The old handles see another filter: an error for every key, never its
        // "absent" (it holds every key here, but need not).
        for handle in [&first, &other] {
            assert_eq!(
                never_absent(handle, &mut con, &database, name),
                database.len()
            );
            assert!(matches!(
                handle.contains(&mut con, &1u64),
                Err(RedisFilterError::Replaced { .. })
            ));
            assert!(matches!(
                handle.insert(&mut con, &1u64),
                Err(RedisFilterError::Replaced { .. })
            ));
        }
        // An empty filter created under the prefix by any other path (`open_or_create`
        // after the meta vanished): the old handles' calls are errors, not its "absent".
        redis::cmd("DEL")
            .arg("p:meta")
            .query::<()>(&mut con)
            .unwrap();
        let empty = RedisFilter::open_or_create(&mut con, "p", params(), options()).unwrap();
        assert!(empty.created());
        for handle in [&first, &other, &restarted] {
            assert_eq!(
                never_absent(handle, &mut con, &database, name),
                database.len()
            );
        }
        redis::cmd("DEL")
            .arg("p:meta")
            .query::<()>(&mut con)
            .unwrap();
        let restarted = build(&mut con, "p", Duration::from_secs(60), || {
            Ok(database.clone())
        })
        .unwrap();

        // A rebuild of the new filter is its own generation: handles opened on it
        // follow it.
        let reopened = RedisFilter::open(&mut con, "p").unwrap();
        restarted
            .rebuild(&mut con, params(), RebuildOptions::default(), || {
                Ok::<_, std::io::Error>(database.clone())
            })
            .unwrap();
        assert!(
            reopened
                .contains_many(&mut con, &database)
                .unwrap()
                .iter()
                .all(|&a| a)
        );
        assert_eq!(reopened.generation().number, 2);
        println!(
            "{name}: {} keys: 0 absent through the old handles, whose every call errs; \
             the restarted service read its source once and holds them all",
            database.len()
        );
    }
}

#[test]
fn services_that_start_together_build_once_and_the_others_wait() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let database: Arc<Vec<u64>> = Arc::new((0..10_000).collect());
        let reads = Arc::new(AtomicUsize::new(0));
        let services = 8;
        let barrier = Arc::new(Barrier::new(services));
        let started = Instant::now();
        let handles: Vec<_> = (0..services)
            .map(|_| {
                let (database, reads, barrier) = (
                    Arc::clone(&database),
                    Arc::clone(&reads),
                    Arc::clone(&barrier),
                );
                let mut con = server.connect();
                std::thread::spawn(move || {
                    barrier.wait();
                    let filter = build(&mut con, "t", Duration::from_secs(60), || {
                        reads.fetch_add(1, Ordering::Relaxed);
                        // A slow database: the others start while it is read.
                        std::thread::sleep(Duration::from_millis(300));
                        Ok(database.to_vec())
                    })
                    .unwrap();
                    let answers = filter.contains_many(&mut con, &database[..]).unwrap();
                    assert!(answers.iter().all(|&a| a));
                    filter.created()
                })
            })
            .collect();
        let created: usize = handles
            .into_iter()
            .map(|h| usize::from(h.join().unwrap()))
            .sum();
        assert_eq!(created, 1, "{name}: one service creates the filter");
        assert_eq!(reads.load(Ordering::Relaxed), 1, "{name}: built once");
        println!(
            "{name}: {services} services started together; the source was read once, \
             each answered all {} keys present, in {:?}",
            database.len(),
            started.elapsed()
        );
    }
}

#[test]
fn lookups_wait_for_the_build_and_inserts_meanwhile_stay() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let (called_tx, called) = mpsc::channel();
        let (go, go_rx) = mpsc::channel::<()>();
        let mut builder_con = server.connect();
        let builder = std::thread::spawn(move || {
            build(&mut builder_con, "w", Duration::from_secs(60), move || {
                called_tx.send(()).unwrap();
                go_rx.recv().unwrap();
                Ok((0..5_000).collect())
            })
        });
        called.recv().unwrap();

        // The filter is being built: it exists, but answers no lookup.
        let mut con = server.connect();
        let during = RedisFilter::open(&mut con, "w").unwrap();
        assert!(!during.created());
        let never_inserted = 1_000_000u64;
        for key in [0u64, never_inserted] {
            assert!(
                matches!(
                    during.contains(&mut con, &key),
                    Err(RedisFilterError::Building { .. })
                ),
                "{name}"
            );
        }
        assert!(matches!(
            during.contains_many(&mut con, &[1u64, 2, 3]),
            Err(RedisFilterError::Building { .. })
        ));
        assert!(matches!(
            during.load(&mut con),
            Err(RedisFilterError::Building { .. })
        ));
        assert!(matches!(
            during.rebuild(&mut con, params(), RebuildOptions::default(), || {
                Ok::<_, std::io::Error>(Vec::<u64>::new())
            }),
            Err(RedisFilterError::Building { .. })
        ));
        assert!(during.info(&mut con).unwrap().building_until_ms.is_some());
        let maybe = RedisFilter::open(&mut con, "w").unwrap();
        maybe.set_while_building(WhileBuilding::MaybePresent);
        assert_eq!(
            maybe.contains_many(&mut con, &[never_inserted, 0]).unwrap(),
            [true, true]
        );
        // Inserts during the build go in, and stay.
        let late: Vec<u64> = (5_000..6_000).collect();
        during.insert_many(&mut con, &late).unwrap();
        during.insert(&mut con, &6_000u64).unwrap();

        go.send(()).unwrap();
        let built = builder.join().unwrap().unwrap();
        assert!(built.created());
        let all: Vec<u64> = (0..=6_000).collect();
        for handle in [&during, &maybe, &built] {
            assert!(
                handle
                    .contains_many(&mut con, &all)
                    .unwrap()
                    .iter()
                    .all(|&a| a),
                "{name}: a key of the source or inserted during the build is absent"
            );
            assert!(handle.info(&mut con).unwrap().building_until_ms.is_none());
        }
        // Once live, "maybe present" is the filter's own answer again.
        let absent = maybe
            .contains_many(&mut con, &(2_000_000u64..2_010_000).collect::<Vec<_>>())
            .unwrap();
        assert!(absent.iter().filter(|&&a| a).count() < 500, "{name}");
        println!("{name}: lookups during the build were errors; 6,001 keys present after it");
    }
}

#[test]
fn a_failed_or_dead_builder_leaves_the_build_to_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let Some(servers) = both_servers(dir.path(), &[]) else {
        return;
    };
    for (name, server) in &servers {
        let mut con = server.connect();
        let keys: Vec<u64> = (0..5_000).collect();

        // A source that fails: the error is the caller's, and the lease is released,
        // so the next caller builds at once (well inside the 60 s lease).
        let failed = build(&mut con, "f", Duration::from_secs(60), || {
            Err(std::io::Error::other("the database is down"))
        });
        match failed {
            Err(RedisFilterError::Source(e)) => assert_eq!(e.to_string(), "the database is down"),
            other => panic!("{name}: {:?}", other.map(|_| ())),
        }
        let started = Instant::now();
        let next = build(&mut con, "f", Duration::from_secs(60), || Ok(keys.clone())).unwrap();
        assert!(started.elapsed() < Duration::from_secs(5), "{name}");
        assert!(!next.created(), "{name}: it took the build over");
        assert!(
            next.contains_many(&mut con, &keys)
                .unwrap()
                .iter()
                .all(|&a| a)
        );

        // A builder that dies mid-build (its thread panics in the source): its lease
        // of 1 s runs out, and a service that was waiting for it takes over.
        let lease = Duration::from_secs(1);
        let mut dying_con = server.connect();
        let (reading_tx, reading) = mpsc::channel();
        let dying = std::thread::spawn(move || {
            let _ = build(&mut dying_con, "d", lease, move || {
                reading_tx.send(()).unwrap();
                panic!("the builder died");
            });
        });
        reading.recv().unwrap();
        let started = Instant::now();
        let waiter = build(&mut con, "d", lease, || Ok(keys.clone())).unwrap();
        let waited = started.elapsed();
        assert!(dying.join().is_err());
        assert!(!waiter.created());
        assert!(
            waiter
                .contains_many(&mut con, &keys)
                .unwrap()
                .iter()
                .all(|&a| a)
        );
        assert!(
            waited < lease + Duration::from_secs(3),
            "{name}: {waited:?}"
        );
        println!(
            "{name}: a failed source released its lease; a dead builder's 1 s lease \
             was taken over after {waited:?}"
        );
    }
}
