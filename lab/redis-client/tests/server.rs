//! The client against a real `redis-server` on a loopback port (feature `test-server`,
//! which the workspace's test command enables with `--all-features`): a filter stored,
//! opened, queried and extended on both batch paths with the in-process filter's exact
//! bits; a rebuild that drops a deleted key and rotates to a larger shape; the capacity
//! monitor; and a missing filter refused by name.
//!
//! Where `redis-server` or the linebloom module is missing the test prints `SKIPPED:`
//! and passes, unless `LINEBLOOM_REQUIRE_REDIS=1`. The lab's `tests/redis.rs` and
//! `tests/redis_cluster.rs` cover concurrency, crashes, persistence, ACLs and the
//! cluster.

#![cfg(feature = "test-server")]

use linebloom::{BloomFilter, Params};
use linebloom_redis_client::testing::{Modules, Server};
use linebloom_redis_client::{BatchPath, RedisFilter, RedisFilterError};
use std::time::Duration;

fn filter_with(keys: &[u64], params: Params) -> BloomFilter {
    let mut f = BloomFilter::new(params);
    f.insert_batch(keys);
    f
}

#[test]
fn both_batch_paths_hold_the_in_process_bits_and_rebuild_without_the_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(dir.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = server.connect();
    let params = Params::for_fpr(5_000, 0.01).unwrap();
    let keys: Vec<u64> = (0..5_000).map(|i| i * 7 + 1).collect();
    let local = filter_with(&keys, params);
    for path in [BatchPath::Commands, BatchPath::Module] {
        let prefix = format!("t:{path:?}");
        // Shards of 8 blocks, so a batch spans several keys.
        let mut rf = RedisFilter::store(&mut con, &prefix, &local, 8).unwrap();
        assert_eq!(
            rf.batch_path(),
            BatchPath::Module,
            "the module was detected"
        );
        rf.set_batch_path(path);
        let probes: Vec<u64> = (0..20_000).collect();
        let answers = rf.contains_many(&mut con, &probes).unwrap();
        for (k, a) in probes.iter().zip(answers) {
            assert_eq!(a, local.contains(k), "{path:?}: key {k}");
        }
        // A single key on each path, and a batch of new keys: the same bits as in process.
        rf.insert(&mut con, 1_000_000).unwrap();
        assert!(rf.contains(&mut con, 1_000_000).unwrap());
        rf.insert_many(&mut con, &[1_000_001, 1_000_002]).unwrap();
        let mut expected = local.clone();
        expected.insert_batch(&[1_000_000u64, 1_000_001, 1_000_002]);
        let mut opened = RedisFilter::open(&mut con, &prefix).unwrap();
        assert_eq!(opened.load(&mut con).unwrap(), expected, "{path:?}");

        // The capacity monitor reads the bits it holds.
        let capacity = rf.capacity(&mut con, 0.01).unwrap();
        assert_eq!(capacity.fill_ratio, Some(expected.fill_ratio()));
        assert!(!capacity.over_target(), "{capacity:?}");

        // A rebuild from a source without key 1 and twice the shape: the new generation
        // holds exactly the source, and every handle follows it.
        let source: Vec<u64> = keys[1..].to_vec();
        let larger = Params::for_fpr(10_000, 0.01).unwrap();
        let done = rf
            .rebuild(&mut con, larger, Duration::ZERO, || {
                Ok::<_, std::convert::Infallible>(source.clone())
            })
            .unwrap();
        assert_eq!(done.generation.number, 2);
        assert_eq!(done.keys, source.len() as u64);
        assert_eq!(
            opened.load(&mut con).unwrap(),
            filter_with(&source, larger),
            "{path:?}: the other handle reads the new generation"
        );
        assert_eq!(opened.params(), larger);
    }
}

#[test]
fn a_missing_filter_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(dir.path(), Modules::NONE, false) else {
        return;
    };
    let mut con = server.connect();
    match RedisFilter::open(&mut con, "nothing-here") {
        Err(RedisFilterError::Missing(key)) => assert_eq!(key, "nothing-here:meta"),
        other => panic!("{:?}", other.map(|f| f.params())),
    }
    // Without the module, a handle sends plain commands.
    let params = Params::new(4, 8).unwrap();
    let rf = RedisFilter::create(&mut con, "small", params, 2).unwrap();
    assert_eq!(rf.batch_path(), BatchPath::Commands);
}
