//! Durable inserts against a master and a replica under load, with and without the
//! module: with [`Durability::replicas`], no insert the guard acknowledged answers
//! "absent" on the replica after the master is killed and the replica promoted, nor
//! after the replica is promoted while the master still serves; without it, what
//! asynchronous replication loses is each writer's most recent inserts, and the test
//! measures how recent (the window `PROTOCOL.md` states).
//!
//! Where `redis-server` or the module is missing the test prints `SKIPPED:` and passes,
//! unless `LINEBLOOM_REQUIRE_REDIS=1`.

use linebloom::Params;
use linebloom_redis_client::{Durability, RedisFilter, RedisFilterError};
use linebloom_redis_testing::{Modules, Server};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the master goes away while the writers run.
#[derive(Clone, Copy, Debug)]
enum Failover {
    /// Killed with SIGKILL, then the replica promoted.
    Crash,
    /// The replica promoted while the master still serves.
    Promotion,
}

/// A batch the guard acknowledged: its writer, when, and its keys.
struct Acked {
    writer: u64,
    at: Instant,
    keys: Vec<u64>,
}

/// What a run measured: the acknowledged batches, whether each answers whole on the
/// promoted replica, and when the failover began.
struct Outcome {
    batches: Vec<(Acked, bool)>,
    failover_at: Instant,
}

impl Outcome {
    fn keys(&self) -> usize {
        self.batches.iter().map(|(b, _)| b.keys.len()).sum()
    }
    fn lost_keys(&self) -> usize {
        self.batches
            .iter()
            .filter(|(_, whole)| !whole)
            .map(|(b, _)| b.keys.len())
            .sum()
    }
    /// How long before the failover the oldest lost batch was acknowledged.
    fn window(&self) -> Duration {
        self.batches
            .iter()
            .filter(|(_, whole)| !whole)
            .map(|(b, _)| self.failover_at.saturating_duration_since(b.at))
            .max()
            .unwrap_or_default()
    }
}

/// Four writers insert batches of 100 distinct keys until the failover; then each
/// acknowledged batch is looked up on the promoted replica.
fn run(modules: Modules, failover: Failover, durable: bool) -> Option<Outcome> {
    let dir = tempfile::tempdir().unwrap();
    let mut master = Server::start(&dir.path().join("master"), modules, false)?;
    let replica = Server::replica_of(&dir.path().join("replica"), &master, modules)?;
    let params = Params::for_fpr(2_000_000, 0.01).unwrap();
    let filter = RedisFilter::create(&mut master.connect(), "d", params).unwrap();
    if durable {
        filter.set_durability(Durability::replicas(1, Duration::from_secs(1)));
    }
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4u64)
        .map(|writer| {
            let (filter, acknowledged, stop) = (filter.clone(), acknowledged.clone(), stop.clone());
            let mut con = master.connect();
            std::thread::spawn(move || {
                let mut next = writer << 40;
                while !stop.load(Ordering::Relaxed) {
                    let keys: Vec<u64> = (next..next + 100).collect();
                    next += 100;
                    match filter.insert_many(&mut con, &keys) {
                        Ok(_) => acknowledged.lock().unwrap().push(Acked {
                            writer,
                            at: Instant::now(),
                            keys,
                        }),
                        // Not acknowledged: refused, or the master is gone.
                        Err(RedisFilterError::NotDurable { .. }) => {}
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(800));
    let failover_at = Instant::now();
    match failover {
        Failover::Crash => {
            master.crash();
            let _: () = replica.query(&["REPLICAOF", "NO", "ONE"]).unwrap();
        }
        Failover::Promotion => {
            let _: () = replica.query(&["REPLICAOF", "NO", "ONE"]).unwrap();
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.join().unwrap();
    }
    let batches = std::mem::take(&mut *acknowledged.lock().unwrap());
    let mut con = replica.connect();
    let promoted = RedisFilter::open(&mut con, "d").unwrap();
    let batches = batches
        .into_iter()
        .map(|b| {
            let whole = promoted
                .contains_many(&mut con, &b.keys)
                .unwrap()
                .iter()
                .all(|&p| p);
            (b, whole)
        })
        .collect();
    Some(Outcome {
        batches,
        failover_at,
    })
}

#[test]
fn durable_inserts_survive_a_crash_and_a_promotion_under_load() {
    for modules in [Modules::NONE, Modules::LINEBLOOM] {
        for failover in [Failover::Crash, Failover::Promotion] {
            let Some(outcome) = run(modules, failover, true) else {
                return;
            };
            println!(
                "durable, {failover:?}, module {}: {} of {} acknowledged keys absent",
                modules.linebloom,
                outcome.lost_keys(),
                outcome.keys()
            );
            assert!(outcome.keys() > 1_000, "the writers wrote");
            assert_eq!(
                outcome.lost_keys(),
                0,
                "{failover:?}: an acknowledged durable key was lost"
            );
        }
    }
}

/// Without durability the guard acknowledges a write when the master applied it, and a
/// failover can lose what the replica had not received. Replication keeps each
/// connection's order, so what a writer loses is the tail of what it wrote: once one
/// of its batches is lost, every later one is. The test checks that, and prints how
/// many were lost and how long before the failover the oldest was acknowledged (the
/// window `PROTOCOL.md` states).
#[test]
fn without_durability_a_failover_loses_a_tail_of_recent_inserts() {
    for failover in [Failover::Crash, Failover::Promotion] {
        let Some(outcome) = run(Modules::LINEBLOOM, failover, false) else {
            return;
        };
        println!(
            "not durable, {failover:?}: {} of {} acknowledged keys absent, the oldest \
             acknowledged {:?} before the failover",
            outcome.lost_keys(),
            outcome.keys(),
            outcome.window()
        );
        assert!(outcome.keys() > 1_000, "the writers wrote");
        for writer in 0..4 {
            let whole: Vec<bool> = outcome
                .batches
                .iter()
                .filter(|(b, _)| b.writer == writer)
                .map(|&(_, whole)| whole)
                .collect();
            let first_lost = whole.iter().position(|&w| !w).unwrap_or(whole.len());
            assert!(
                whole[first_lost..].iter().all(|&w| !w),
                "writer {writer}: a batch survived after one was lost"
            );
        }
    }
}

#[test]
fn too_few_replicas_is_not_durable_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(dir.path(), Modules::NONE, false) else {
        return;
    };
    let mut con = server.connect();
    let filter = RedisFilter::create(&mut con, "n", Params::for_fpr(1_000, 0.01).unwrap()).unwrap();
    filter.set_durability(Durability::replicas(1, Duration::from_millis(50)));
    match filter.insert(&mut con, "k") {
        Err(RedisFilterError::NotDurable {
            acked: 0,
            wanted: 1,
        }) => {}
        other => panic!("{other:?}"),
    }
    // The master applied it: it answers present there.
    assert!(filter.contains(&mut con, "k").unwrap());
    filter.set_durability(Durability::default());
    assert!(!filter.insert(&mut con, "k").unwrap());
}
