//! The Redis-held filter sharded over a real Redis Cluster: three masters on loopback
//! ports (`redis-server --cluster-enabled yes`, joined by `redis-cli --cluster create`),
//! started by each test in its own folders through `linebloom_redis_client::testing`
//! and stopped by PID when it ends.
//!
//! Checked: 1e6 ids inserted and queried through batches that cross nodes, with zero
//! false negatives and the same bits as the in-process filter; a rebuild that rotates
//! to a larger filter; one node killed (its shards answer "degraded", never "absent",
//! and the other nodes keep answering); and the whole cluster restarted from its
//! append-only files with nothing lost.
//!
//! Every node loads the linebloom module (`lab/redis-module`), so the filter sends its
//! batches as one `LINEBLOOM.*` command per shard, split per node; the dead-node and
//! restart tests run again with plain commands.
//!
//! `redis-server` and `redis-cli` must be on PATH; where they are missing the tests say
//! so and skip, unless `LINEBLOOM_REQUIRE_REDIS=1` (set by `.ci/run`).

use linebloom::{BloomFilter, Params};
use linebloom_redis_client::{BatchPath, FilterOptions, RebuildOptions, RedisFilter};
use linebloom_redis_testing::{Cluster, Modules};

/// 1e6 ids at 1%, in shards of 1024 blocks (64 KiB), so the filter spans about 19 keys
/// over the three nodes.
const N: u64 = 1_000_000;
const SHARD_BLOCKS: u64 = 1024;

#[test]
fn a_million_ids_over_three_nodes_with_no_false_negative() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path(), 3, Modules::LINEBLOOM) else {
        return;
    };
    let mut con = cluster.connect();
    let params = Params::for_fpr(N, 0.01).unwrap();
    let options = FilterOptions::default().shard_blocks(SHARD_BLOCKS);
    let rf = RedisFilter::create_with(&mut con, "c", params, options).unwrap();
    assert_eq!(
        rf.batch_path(),
        BatchPath::Module,
        "the module was detected"
    );
    // The shards are spread over every node.
    for (i, node) in cluster.nodes.iter().enumerate() {
        let keys: i64 = node.query(&["DBSIZE"]).unwrap();
        assert!(
            keys >= 2,
            "node {i} holds {keys} keys: the shards did not spread"
        );
    }
    let ids: Vec<u64> = (0..N)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    // Batches of 1000 keys, each touching every shard, so every batch crosses nodes.
    for batch in ids.chunks(1000) {
        rf.insert_many(&mut con, batch).unwrap();
    }
    let mut local = BloomFilter::new(params);
    local.insert_batch(&ids);
    assert_eq!(
        rf.load(&mut con).unwrap(),
        local,
        "the cluster holds other bits"
    );
    let mut present = 0u64;
    for batch in ids.chunks(1000) {
        present += rf
            .contains_many(&mut con, batch)
            .unwrap()
            .iter()
            .filter(|&&p| p)
            .count() as u64;
    }
    assert_eq!(present, N, "{} false negatives", N - present);
    // The rate on 1e5 non-members: sized for 1%, so at most 1.3% (binomial: 1% of 1e5
    // has σ ≈ 0.031%, so 1.3% is about 10σ of slack).
    let others: Vec<u64> = (0..100_000u64).map(|i| (i << 32) | 0xdead).collect();
    let mut fp = 0;
    for batch in others.chunks(1000) {
        fp += rf
            .contains_many(&mut con, batch)
            .unwrap()
            .iter()
            .filter(|&&p| p)
            .count();
    }
    assert!(fp < 1_300, "{fp} false positives in 1e5");
    // A rotation to a filter four times larger, on the cluster.
    let done = rf
        .rebuild(
            &mut con,
            Params::for_fpr(4 * N, 0.01).unwrap(),
            RebuildOptions::default(),
            || Ok::<_, String>(ids.clone()),
        )
        .unwrap();
    assert_eq!(done.generation.number, 2);
    for batch in ids.chunks(5000) {
        assert!(
            rf.contains_many(&mut con, batch)
                .unwrap()
                .iter()
                .all(|&p| p)
        );
    }
}

#[test]
fn a_dead_node_degrades_its_shards_and_the_others_keep_answering() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(mut cluster) = Cluster::start(tmp.path(), 3, Modules::LINEBLOOM) else {
        return;
    };
    let mut con = cluster.connect();
    let n = 20_000u64;
    let mut f = BloomFilter::new(Params::for_fpr(n, 0.01).unwrap());
    f.extend(0..n);
    // Shards of 16 blocks: about 12 keys over the three nodes.
    let rf =
        RedisFilter::store(&mut con, "k", &f, FilterOptions::default().shard_blocks(16)).unwrap();
    // Kill a node that does not serve the meta (without the meta nothing can be checked).
    let meta_node = cluster.node_of("k:meta");
    let victim = (meta_node + 1) % 3;
    cluster.nodes[victim].crash();
    for path in [BatchPath::Commands, BatchPath::Module] {
        rf.set_batch_path(path);
        let (mut answered, mut degraded) = (0, 0);
        for key in 0..150u64 {
            match rf.contains(&mut con, &key) {
                Ok(present) => {
                    assert!(
                        present,
                        "{path:?}: key {key} answered absent after a node died"
                    );
                    answered += 1;
                }
                Err(_) => degraded += 1,
            }
        }
        println!("{path:?}: {answered} answered, {degraded} degraded");
        assert!(answered > 0, "{path:?}: the live nodes stopped answering");
        assert!(degraded > 0, "{path:?}: no key lives on the dead node?");
        // A batch that crosses the dead node is an error as a whole, never "absent".
        let all: Vec<u64> = (0..150).collect();
        assert!(rf.contains_many(&mut con, &all).is_err(), "{path:?}");
    }
}

#[test]
fn the_cluster_restarted_from_its_append_only_files_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(mut cluster) = Cluster::start(tmp.path(), 3, Modules::LINEBLOOM) else {
        return;
    };
    let mut con = cluster.connect();
    let n = 50_000u64;
    let mut f = BloomFilter::new(Params::for_fpr(n, 0.01).unwrap());
    f.extend(0..n);
    // One filter per batch path; the module's inserts reach each node's append-only
    // file as the plain commands they replicate, replayed when the node restarts.
    let paths = [BatchPath::Commands, BatchPath::Module];
    let extra: Vec<u64> = (1 << 40..(1 << 40) + 2_000).collect();
    let probes: Vec<u64> = (0..2 * n).chain(extra.iter().copied()).collect();
    let mut before = Vec::new();
    for path in paths {
        let rf = RedisFilter::store(
            &mut con,
            &format!("p{path:?}"),
            &f,
            FilterOptions::default().shard_blocks(64),
        )
        .unwrap();
        rf.set_batch_path(path);
        rf.insert_many(&mut con, &extra).unwrap();
        let mut answers = Vec::new();
        for batch in probes.chunks(2000) {
            answers.extend(rf.contains_many(&mut con, batch).unwrap());
        }
        before.push(answers);
    }
    drop(con);
    cluster.restart();
    let mut con = cluster.connect();
    for (path, before) in paths.into_iter().zip(before) {
        let rf = RedisFilter::open(&mut con, &format!("p{path:?}"))
            .expect("the filter is back after the restart");
        rf.set_batch_path(path);
        let mut after = Vec::new();
        for batch in probes.chunks(2000) {
            after.extend(rf.contains_many(&mut con, batch).unwrap());
        }
        assert_eq!(after, before, "{path:?}");
        assert!(after[..n as usize].iter().all(|&p| p));
        assert!(after[2 * n as usize..].iter().all(|&p| p), "{path:?}");
    }
}

#[test]
fn the_penetration_scenario_runs_on_the_cluster_and_leaves_it_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path(), 3, Modules::LINEBLOOM) else {
        return;
    };
    let mut con = cluster.connect();
    // A user's keys, spread over the nodes.
    let foreign: Vec<String> = (0..30).map(|i| format!("user:{i}")).collect();
    for k in &foreign {
        redis::cmd("SET")
            .arg(k)
            .arg("x")
            .query::<()>(&mut con)
            .unwrap();
    }
    let urls: Vec<String> = cluster.nodes.iter().map(|n| n.url()).collect();
    let ctx = linebloom_lab::Ctx {
        seed: 3,
        // One seed node is enough: the lab finds the others.
        redis_cluster: vec![urls[0].clone()],
        ..linebloom_lab::Ctx::tiny(tmp.path().join("results"))
    };
    linebloom_lab::drivers::registry::find(linebloom_lab::experiments::penetration::NAME)
        .unwrap()
        .run(&ctx)
        .unwrap();
    let data: Vec<linebloom_lab::experiments::penetration::Row> =
        linebloom_lab::support::csvio::read(&ctx.out.join("penetration/data.csv")).unwrap();
    let inredis: Vec<_> = data
        .iter()
        .filter(|r| r.contender == "linebloom-in-redis")
        .collect();
    assert!(!inredis.is_empty());
    assert!(inredis.iter().all(|r| r.cache == "redis-cluster"));
    assert_eq!(inredis.iter().map(|r| r.rebuilds).sum::<u64>(), 3);
    assert!(data.iter().all(|r| r.false_negatives == 0));
    assert!(data.iter().any(|r| r.contender == "classic-setbit-redis"));
    // Only the user's keys are left, on every node.
    let mut left: Vec<String> = Vec::new();
    for node in &cluster.nodes {
        left.extend(node.query::<Vec<String>>(&["KEYS", "*"]).unwrap());
    }
    left.sort();
    let mut expected = foreign.clone();
    expected.sort();
    assert_eq!(left, expected);
}

#[test]
fn a_module_guard_across_slots_is_refused_with_crossslot() {
    // The module declares the guard's meta key to Redis, so a cluster routes on both
    // keys and refuses a call whose keys sit in different slots before it runs; the
    // client therefore sends no guard on a cluster (shards spread over the slots on
    // purpose).
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path(), 3, Modules::LINEBLOOM) else {
        return;
    };
    let slot = |key: &str| -> i64 {
        cluster.nodes[0]
            .query(&["CLUSTER", "KEYSLOT", key])
            .unwrap()
    };
    let (shard, meta) = ("lb:{0:0}", "lb:meta");
    assert_ne!(slot(shard), slot(meta), "the test needs two slots");
    // Block 0, hash 0: all zero bytes in the wire encoding.
    let batch = format!(
        "{}{}",
        linebloom_redis_wire::Head { k: 8, blocks: 1 },
        "\0".repeat(linebloom_redis_wire::PROBE_BYTES)
    );
    for node in &cluster.nodes {
        for name in ["LINEBLOOM.MTEST", "LINEBLOOM.MADD"] {
            let err = node
                .query::<redis::Value>(&[name, shard, &batch, "META", meta, "v"])
                .expect_err("keys in two slots");
            assert_eq!(
                err.code(),
                Some("CROSSSLOT"),
                "{name} on {}: {err}",
                node.port()
            );
        }
    }
}
