//! The async front against real servers: 64 tasks sharing one multiplexed connection
//! (each a clone of it) and one handle, with string keys; a `ConnectionManager`, also
//! through a restart of Redis under load; an async rebuild and an async first build
//! (eight tasks at once, one read of the source) whose sources are futures;
//! and an async Redis Cluster, with and without the module. The answers are checked
//! against the in-process filter's.
//!
//! Where `redis-server` or the module is missing the test prints `SKIPPED:` and passes,
//! unless `LINEBLOOM_REQUIRE_REDIS=1`.

use linebloom::{BloomFilter, Params};
use linebloom_redis_client::{
    AsyncRedisFilter, BatchPath, BuildOptions, FilterOptions, RebuildOptions, RedisFilter,
};
use linebloom_redis_testing::{Cluster, Modules, Server};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn params() -> Params {
    Params::for_fpr(20_000, 0.01).unwrap()
}

fn key(task: usize, i: usize) -> String {
    format!("task-{task}-item-{i}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_tasks_share_one_multiplexed_connection() {
    let dir = tempfile::tempdir().unwrap();
    for modules in [Modules::NONE, Modules::LINEBLOOM] {
        let Some(server) = Server::start(
            &dir.path().join(format!("{}", modules.linebloom)),
            modules,
            false,
        ) else {
            return;
        };
        let client = redis::Client::open(server.url()).unwrap();
        let con = client.get_multiplexed_async_connection().await.unwrap();
        let filter = AsyncRedisFilter::open_or_create(
            &mut con.clone(),
            "aio",
            params(),
            FilterOptions::default().shard_blocks(64),
        )
        .await
        .unwrap();
        let expected_path = if modules.linebloom {
            BatchPath::Module
        } else {
            BatchPath::Commands
        };
        assert_eq!(filter.batch_path(), expected_path);
        let tasks: Vec<_> = (0..64)
            .map(|task| {
                let (filter, mut con) = (filter.clone(), con.clone());
                tokio::spawn(async move {
                    let mut new = 0;
                    for i in 0..100 {
                        let k = key(task, i);
                        new += usize::from(filter.insert(&mut con, k.as_str()).await.unwrap());
                        assert!(filter.contains(&mut con, k.as_str()).await.unwrap());
                    }
                    let batch: Vec<String> = (100..200).map(|i| key(task, i)).collect();
                    new += filter.insert_many(&mut con, &batch).await.unwrap() as usize;
                    let answers = filter.contains_many(&mut con, &batch).await.unwrap();
                    assert!(answers.iter().all(|&a| a), "task {task}");
                    new
                })
            })
            .collect();
        let mut new = 0;
        for task in tasks {
            new += task.await.unwrap();
        }
        // The same bits as an in-process filter given the same keys.
        let mut local = BloomFilter::new(params());
        for task in 0..64 {
            for i in 0..200 {
                local.insert(key(task, i).as_str());
            }
        }
        let mut con2 = con.clone();
        assert_eq!(filter.load(&mut con2).await.unwrap(), local);
        assert!((12_700..=12_800).contains(&new), "{new} of 12800 new");
        assert_eq!(filter.count(&mut con2).await.unwrap(), new as u64);

        // A ConnectionManager, and the sync handle's twin over the same state.
        let mut manager = client.get_connection_manager().await.unwrap();
        assert!(
            filter
                .contains(&mut manager, key(3, 7).as_str())
                .await
                .unwrap()
        );
        let sync: RedisFilter = filter.clone().into();
        let mut blocking = server.connect();
        let in_thread = tokio::task::spawn_blocking(move || {
            sync.contains(&mut blocking, key(5, 150).as_str()).unwrap()
        });
        assert!(in_thread.await.unwrap());

        // An async rebuild, its source a future.
        let done = filter
            .rebuild(
                &mut manager,
                params(),
                RebuildOptions::default(),
                || async {
                    tokio::task::yield_now().await;
                    Ok::<_, std::io::Error>((0..64).flat_map(|t| (0..200).map(move |i| key(t, i))))
                },
            )
            .await
            .unwrap();
        assert_eq!((done.generation.number, done.keys), (2, 12_800));
        assert_eq!(filter.load(&mut manager).await.unwrap(), local);
        assert!(filter.delete(&mut manager).await.unwrap());

        // Eight tasks start at once with an async build: its source, a future, is
        // read once, and every task answers every key present.
        let reads = Arc::new(AtomicUsize::new(0));
        let starts: Vec<_> = (0..8)
            .map(|_| {
                let (mut con, reads) = (con.clone(), Arc::clone(&reads));
                tokio::spawn(async move {
                    let guard = AsyncRedisFilter::open_or_build(
                        &mut con,
                        "aio-build",
                        params(),
                        FilterOptions::default(),
                        BuildOptions::default(),
                        || async move {
                            reads.fetch_add(1, Ordering::Relaxed);
                            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                            Ok::<_, std::io::Error>((0..1_000).map(|i| key(0, i)))
                        },
                    )
                    .await
                    .unwrap();
                    let keys: Vec<String> = (0..1_000).map(|i| key(0, i)).collect();
                    let answers = guard.contains_many(&mut con, &keys).await.unwrap();
                    assert!(answers.iter().all(|&a| a));
                })
            })
            .collect();
        for start in starts {
            start.await.unwrap();
        }
        assert_eq!(reads.load(Ordering::Relaxed), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_cluster_splits_batches_per_node() {
    let dir = tempfile::tempdir().unwrap();
    for modules in [Modules::LINEBLOOM, Modules::NONE] {
        let Some(cluster) = Cluster::start(
            &dir.path().join(format!("{}", modules.linebloom)),
            3,
            modules,
        ) else {
            return;
        };
        let mut con = cluster
            .client()
            .unwrap()
            .get_async_connection()
            .await
            .unwrap();
        let options = FilterOptions::default().shard_blocks(8);
        let filter = AsyncRedisFilter::create_with(&mut con, "c", params(), options)
            .await
            .unwrap();
        let keys: Vec<u64> = (0..20_000).collect();
        for chunk in keys.chunks(2_000) {
            filter.insert_many(&mut con, chunk).await.unwrap();
        }
        let mut local = BloomFilter::new(params());
        local.insert_batch(&keys);
        assert_eq!(filter.load(&mut con).await.unwrap(), local);
        let probes: Vec<u64> = (0..40_000).collect();
        let answers = filter.contains_many(&mut con, &probes).await.unwrap();
        for (k, a) in probes.iter().zip(answers) {
            assert_eq!(a, local.contains(k), "key {k}");
        }
        let done = filter
            .rebuild(
                &mut con,
                Params::for_fpr(40_000, 0.01).unwrap(),
                RebuildOptions::default(),
                || async { Ok::<_, std::io::Error>(keys.clone()) },
            )
            .await
            .unwrap();
        assert_eq!(done.generation.number, 2);
        assert_eq!(
            filter.contains_many(&mut con, &keys).await.unwrap(),
            vec![true; keys.len()]
        );
    }
}

/// 64 tasks look keys up through one `ConnectionManager` while Redis is killed and
/// started again (its append-only file keeps the filter): calls fail while it is down,
/// never answer "absent", and answer again once it is back, on the same manager.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_manager_keeps_the_guard_up_through_a_restart_of_redis() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let dir = tempfile::tempdir().unwrap();
    for modules in [Modules::NONE, Modules::LINEBLOOM] {
        let folder = dir.path().join(format!("restart-{}", modules.linebloom));
        let Some(mut server) = Server::start(&folder, modules, true) else {
            return;
        };
        let client = redis::Client::open(server.url()).unwrap();
        let mut manager = client.get_connection_manager().await.unwrap();
        let filter = AsyncRedisFilter::create(&mut manager, "restart", params())
            .await
            .unwrap();
        let keys: Arc<Vec<String>> = Arc::new((0..2_000).map(|i| key(0, i)).collect());
        filter.insert_many(&mut manager, &keys).await.unwrap();
        let (stop, answered, failed) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicU64::new(0)),
        );
        let tasks: Vec<_> = (0..64)
            .map(|t| {
                let (filter, mut con, keys) = (filter.clone(), manager.clone(), keys.clone());
                let (stop, answered, failed) = (stop.clone(), answered.clone(), failed.clone());
                tokio::spawn(async move {
                    let mut i = t;
                    while !stop.load(Ordering::Relaxed) {
                        match filter
                            .contains(&mut con, keys[i % keys.len()].as_str())
                            .await
                        {
                            Ok(present) => {
                                assert!(present, "an acknowledged key answered absent");
                                answered.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(_) => {
                                failed.fetch_add(1, Ordering::Relaxed);
                                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                            }
                        }
                        i += 64;
                    }
                })
            })
            .collect();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let before = answered.load(Ordering::Relaxed);
        server.crash();
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        server.restart();
        // Answers resume on the same manager once it has reconnected.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let resumed_from = answered.load(Ordering::Relaxed);
        while answered.load(Ordering::Relaxed) < resumed_from + 1_000 {
            assert!(
                std::time::Instant::now() < deadline,
                "no answers after the restart"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        stop.store(true, Ordering::Relaxed);
        for task in tasks {
            task.await.unwrap();
        }
        let answers = filter.contains_many(&mut manager, &keys).await.unwrap();
        assert!(
            answers.iter().all(|&a| a),
            "every key present after the restart"
        );
        println!(
            "restart ({}): {before} answers before, {} calls failed while Redis was down, \
             then answers again on the same ConnectionManager",
            if modules.linebloom {
                "module"
            } else {
                "no module"
            },
            failed.load(Ordering::Relaxed)
        );
    }
}
