//! The client against a real `redis-server` on a loopback port: a filter stored,
//! opened, queried and extended on both batch paths with the in-process filter's exact
//! bits, with string, byte and integer keys; lookups without the module at every
//! density of a batch; a rebuild that drops a deleted key and
//! rotates to a larger shape; the count, `info` and the capacity monitor; and a missing
//! filter refused by name.
//!
//! Where `redis-server` or the linebloom module is missing the test prints `SKIPPED:`
//! and passes, unless `LINEBLOOM_REQUIRE_REDIS=1`. `tests/guarantees.rs` covers the
//! rule that an acknowledged key never answers "absent"; `tests/aio.rs` the async
//! front; the lab's `tests/redis.rs` and `tests/redis_cluster.rs` concurrency,
//! persistence, ACLs and the cluster.

use linebloom::{BloomFilter, Params};
use linebloom_redis_client::{
    BatchPath, FilterOptions, RebuildOptions, RedisFilter, RedisFilterError,
};
use linebloom_redis_testing::{Modules, Server};

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
        let options = FilterOptions::default().shard_blocks(8);
        let rf = RedisFilter::store(&mut con, &prefix, &local, options).unwrap();
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
        // Single keys and a batch of new keys, of every key type: the same bits as
        // in process, and each insert says whether it was new.
        let mut expected = local.clone();
        assert!(rf.insert(&mut con, &1_000_000u64).unwrap());
        assert!(
            !rf.insert(&mut con, &1_000_000u64).unwrap(),
            "{path:?}: not new twice"
        );
        assert!(rf.contains(&mut con, &1_000_000u64).unwrap());
        expected.insert(&1_000_000u64);
        assert_eq!(
            rf.insert_many(&mut con, &[1_000_001u64, 1_000_002, 1_000_001])
                .unwrap(),
            2
        );
        expected.insert_batch(&[1_000_001u64, 1_000_002]);
        assert!(rf.insert(&mut con, "sku-17").unwrap());
        assert!(rf.contains(&mut con, "sku-17").unwrap());
        expected.insert("sku-17");
        let bytes: &[u8] = b"\x00\xffbinary";
        assert!(rf.insert(&mut con, bytes).unwrap());
        expected.insert(bytes);
        assert_eq!(
            rf.insert_many(&mut con, &["a".to_string(), "b".to_string()])
                .unwrap(),
            2
        );
        expected.insert("a");
        expected.insert("b");
        let opened = RedisFilter::open(&mut con, &prefix).unwrap();
        assert_eq!(opened.load(&mut con).unwrap(), expected, "{path:?}");

        // The count: the stored filter's estimate, then one per new key.
        let count = rf.count(&mut con).unwrap();
        let estimate = linebloom::Filter::estimated_len(&local).round() as u64;
        assert_eq!(count, estimate + 7, "{path:?}");
        let info = rf.info(&mut con).unwrap();
        assert_eq!(info.count, count);
        assert_eq!(info.generation, rf.generation());
        assert_eq!(info.batch_path, path);
        assert_eq!(info.ttl, None);
        assert!((info.expected_fpr - params.expected_fpr(count)).abs() < 1e-12);

        // The capacity monitor reads the bits it holds.
        let capacity = rf.measure(&mut con, 0.01).unwrap();
        assert_eq!(capacity.fill_ratio, Some(expected.fill_ratio()));
        assert!(!capacity.over_target(), "{capacity:?}");

        // A rebuild from a source without key 1 and twice the shape: the new generation
        // holds exactly the source, and every handle follows it.
        let source: Vec<u64> = keys[1..].to_vec();
        let larger = Params::for_fpr(10_000, 0.01).unwrap();
        let done = rf
            .rebuild(&mut con, larger, RebuildOptions::default(), || {
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
        // The old generation's keys are gone: only the new one's and the meta remain.
        let left: Vec<String> = server.query(&["KEYS", &format!("{prefix}:*")]).unwrap();
        let gen2 = rf.generation();
        let mut expected_keys: Vec<String> = (0..gen2.shards())
            .flat_map(|s| {
                let shard = gen2.shard_key(&prefix, s);
                [format!("{shard}:n"), shard]
            })
            .chain([format!("{prefix}:meta")])
            .collect();
        expected_keys.sort();
        let mut left = left;
        left.sort();
        assert_eq!(left, expected_keys, "{path:?}");
        // Delete removes every key.
        assert!(rf.delete(&mut con).unwrap());
        let left: Vec<String> = server.query(&["KEYS", &format!("{prefix}:*")]).unwrap();
        assert!(left.is_empty(), "{left:?}");
        assert!(matches!(
            opened.contains(&mut con, &1u64),
            Err(RedisFilterError::NotFound { .. })
        ));
        assert!(!rf.delete(&mut con).unwrap(), "nothing left to delete");
    }
}

#[test]
fn lookups_without_the_module_answer_alike_at_every_density() {
    // Without the module, a batch reads the blocks of keys close together in one
    // `GETRANGE` of the span between them: batches from a few keys (every key its own
    // read) to more keys than blocks (a shard read whole), over two shards, answer as
    // the in-process filter does.
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(dir.path(), Modules::NONE, false) else {
        return;
    };
    let mut con = server.connect();
    let params = Params::for_fpr(100_000, 0.01).unwrap();
    let members: Vec<u64> = (0..100_000).map(|i| i * 2).collect();
    let local = filter_with(&members, params);
    let options = FilterOptions::default().shard_blocks(params.blocks() as u64 / 2 + 1);
    let rf = RedisFilter::store(&mut con, "t:density", &local, options).unwrap();
    assert_eq!(rf.batch_path(), BatchPath::Commands);
    assert_eq!(rf.generation().shards(), 2);
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for batch in [1usize, 7, 100, 1_000, 3_000, 20_000] {
        let probes: Vec<u64> = (0..batch)
            .map(|_| {
                rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (rng >> 33) % 400_000
            })
            .collect();
        let answers = rf.contains_many(&mut con, &probes).unwrap();
        for (k, a) in probes.iter().zip(&answers) {
            assert_eq!(*a, local.contains(k), "batch of {batch}: key {k}");
        }
        // Members among them answer present.
        assert!(
            probes
                .iter()
                .zip(&answers)
                .all(|(k, a)| *a || k % 2 == 1 || *k >= 200_000)
        );
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
        Err(RedisFilterError::NotFound { prefix }) => assert_eq!(prefix, "nothing-here"),
        other => panic!("{other:?}"),
    }
    // Without the module, a handle sends plain commands.
    let params = Params::new(4, 8).unwrap();
    let rf = RedisFilter::create_with(
        &mut con,
        "small",
        params,
        FilterOptions::default().shard_blocks(2),
    )
    .unwrap();
    assert_eq!(rf.batch_path(), BatchPath::Commands);
    assert!(rf.insert(&mut con, "x").unwrap());
    assert!(rf.contains(&mut con, "x").unwrap());
    assert_eq!(rf.count(&mut con).unwrap(), 1);
}
