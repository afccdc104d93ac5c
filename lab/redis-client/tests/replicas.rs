//! The guard's rule through replication, against real servers (case L5 of
//! `guarantees.rs`): a replica without the module holds the same bits and serves reads,
//! then takes over from the master; every handle stays up through a failover to a server
//! without the module; an append-only file written with the module replays without it.
//!
//! Each test prints what it counted. Where `redis-server` or the module is missing the
//! test prints `SKIPPED:` and passes, unless `LINEBLOOM_REQUIRE_REDIS=1`.

use linebloom_redis_client::{BatchPath, RedisFilter};
use linebloom_redis_testing::{Modules, Server};
use support::{never_absent, params};

mod support;

#[test]
fn l5_replicas_without_the_module_hold_the_same_bits_and_take_over() {
    let dir = tempfile::tempdir().unwrap();
    let Some(master) = Server::start(&dir.path().join("master"), Modules::LINEBLOOM, false) else {
        return;
    };
    let Some(with) = Server::replica_of(&dir.path().join("with"), &master, Modules::LINEBLOOM)
    else {
        return;
    };
    let Some(mut without) = Server::replica_of(&dir.path().join("without"), &master, Modules::NONE)
    else {
        return;
    };
    let mut con = master.connect();
    let filter = RedisFilter::create(&mut con, "l5", params(10_000)).unwrap();
    assert_eq!(filter.batch_path(), BatchPath::Module);
    let keys: Vec<u64> = (0..10_000).collect();
    for chunk in keys.chunks(1_000) {
        filter.insert_many(&mut con, chunk).unwrap();
    }
    for key in &keys[..100] {
        filter.insert(&mut con, &(key + 1_000_000)).unwrap();
    }
    let acked: i64 = redis::cmd("WAIT")
        .arg(2)
        .arg(5_000)
        .query(&mut con)
        .unwrap();
    assert_eq!(acked, 2);
    let master_bits = filter.load(&mut con).unwrap();
    for (name, replica) in [("with the module", &with), ("without the module", &without)] {
        // The writes arrived as plain commands, and none failed.
        let stats: String = replica.query(&["INFO", "commandstats"]).unwrap();
        assert!(stats.contains("cmdstat_setrange:"), "{name}: {stats}");
        assert!(!stats.contains("cmdstat_linebloom"), "{name}: {stats}");
        for line in stats.lines().filter(|l| l.starts_with("cmdstat_")) {
            assert!(
                line.contains("rejected_calls=0,failed_calls=0"),
                "{name}: the replica refused replicated commands: {line}"
            );
        }
        let mut rcon = replica.connect();
        let read = RedisFilter::open(&mut rcon, "l5").unwrap();
        assert_eq!(read.load(&mut rcon).unwrap(), master_bits, "{name}");
        assert_eq!(never_absent(&read, &mut rcon, &keys, name), 0);
        assert_eq!(
            read.count(&mut rcon).unwrap(),
            filter.count(&mut con).unwrap(),
            "{name}"
        );
        println!("L5 replica {name}: 10000 of 10000 keys present, the master's bits and count");
    }
    // Failover to the replica without the module: the handle goes on with plain
    // commands, every key still present, inserts still work.
    let mut master = master;
    master.stop();
    let _: () = without.query(&["REPLICAOF", "NO", "ONE"]).unwrap();
    let mut con = without.connect();
    assert!(filter.insert(&mut con, &777_777_777u64).unwrap());
    assert_eq!(filter.batch_path(), BatchPath::Commands);
    assert_eq!(never_absent(&filter, &mut con, &keys, "after failover"), 0);
    assert!(filter.contains(&mut con, &777_777_777u64).unwrap());
    without.stop();
    println!("L5 failover to the replica without the module: 10000 of 10000 keys present");
}

/// A failover to a server without the module, met by many handles at once: each one's
/// first call after it goes to the module, which the new server does not know. Its
/// "unknown command" error quotes the call's first arguments, probes included; they
/// are ASCII, so every handle reads the error, goes on with plain commands, and keeps
/// its connection.
#[test]
fn l5_a_failover_to_a_server_without_the_module_keeps_every_handle_up() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut server) = Server::start(dir.path(), Modules::LINEBLOOM, true) else {
        return;
    };
    let mut con = server.connect();
    let filter = RedisFilter::create(&mut con, "l5f", params(10_000)).unwrap();
    let keys: Vec<u64> = (0..2_000).map(|i| i * 7_919).collect();
    filter.insert_many(&mut con, &keys).unwrap();
    // Handles opened on the module path, 200 for lookups and 200 for inserts.
    let handles: Vec<RedisFilter> = (0..400)
        .map(|_| RedisFilter::open(&mut con, "l5f").unwrap())
        .collect();
    assert!(handles.iter().all(|h| h.batch_path() == BatchPath::Module));
    drop(con);
    server.restart_without_modules();
    let mut con = server.connect();
    let (mut present, mut inserted) = (0, 0);
    for (i, handle) in handles.iter().enumerate() {
        // A key whose probe bytes would not be UTF-8 as raw little-endian words.
        let key = keys[i % keys.len()];
        if i < 200 {
            present += usize::from(handle.contains(&mut con, &key).unwrap());
        } else {
            let new = 0x8080_8080_8080_8080u64 + i as u64;
            handle.insert(&mut con, &new).unwrap();
            inserted += usize::from(handle.contains(&mut con, &new).unwrap());
        }
        assert_eq!(handle.batch_path(), BatchPath::Commands);
        let pong: String = redis::cmd("PING").query(&mut con).unwrap();
        assert_eq!(
            pong, "PONG",
            "the connection survived handle {i}'s first call"
        );
    }
    assert_eq!((present, inserted), (200, 200));
    println!("L5 failover without the module: 400 handles fell back, 0 connections lost");
}

#[test]
fn l5_an_append_only_file_replays_without_the_module() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut server) = Server::start(dir.path(), Modules::LINEBLOOM, true) else {
        return;
    };
    let mut con = server.connect();
    let filter = RedisFilter::create(&mut con, "aof", params(10_000)).unwrap();
    assert_eq!(filter.batch_path(), BatchPath::Module);
    let keys: Vec<u64> = (0..10_000).collect();
    for chunk in keys.chunks(1_000) {
        filter.insert_many(&mut con, chunk).unwrap();
    }
    filter.insert(&mut con, &777u64).unwrap();
    let bits = filter.load(&mut con).unwrap();
    let count = filter.count(&mut con).unwrap();
    drop(con);
    server.restart_without_modules();
    let mut con = server.connect();
    let opened = RedisFilter::open(&mut con, "aof").unwrap();
    assert_eq!(opened.batch_path(), BatchPath::Commands);
    assert_eq!(opened.load(&mut con).unwrap(), bits);
    assert_eq!(opened.count(&mut con).unwrap(), count);
    assert_eq!(never_absent(&opened, &mut con, &keys, "replayed"), 0);
    println!("L5 the append-only file replayed without the module: the same bits and count");
}
