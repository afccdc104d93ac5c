//! The linebloom module's `BF.*` and `CF.*` keys as keys like any other, against real
//! servers: an RDB save and restart, `DEBUG RELOAD`, an append-only rewrite replayed,
//! a replica that runs the module (its full sync and the commands that follow, a
//! multi-piece `LOADCHUNK` among them), `DUMP`/`RESTORE`, `COPY`, `RENAME`, `EXPIRE`,
//! `DEL`, a Redis Cluster routing by the one key, ACL key patterns; and corrupt
//! `RESTORE` payloads and RDB files refused, with the server still up or cleanly
//! stopped.
//!
//! Servers start on free loopback ports through `linebloom_redis_testing` and stop by
//! PID; where `redis-server` or the module is missing the test says so and skips,
//! unless `LINEBLOOM_REQUIRE_REDIS=1` (CI).

use linebloom_redis_testing::{Cluster, Modules, Server, free_port, module_library};
use redis::{Connection, RedisResult, Value};
use std::time::{Duration, Instant};

fn cmd<T: redis::FromRedisValue>(con: &mut Connection, line: &str) -> RedisResult<T> {
    let mut parts = line.split(' ');
    let mut c = redis::cmd(parts.next().unwrap());
    for p in parts {
        c.arg(p);
    }
    c.query(con)
}

const ITEMS: usize = 3000;

fn items() -> Vec<String> {
    (0..ITEMS).map(|i| format!("item:{i}")).collect()
}

/// A BF filter grown to several layers, a non-scaling one, and a CF filter with
/// deletes, all holding [`items`].
fn fill(con: &mut Connection) {
    cmd::<String>(con, "BF.RESERVE bf 0.01 500 EXPANSION 2").unwrap();
    cmd::<String>(con, "BF.RESERVE fixed 0.001 5000 NONSCALING").unwrap();
    cmd::<String>(con, "CF.RESERVE cf 1000 EXPANSION 2").unwrap();
    for batch in items().chunks(500) {
        redis::cmd("BF.MADD")
            .arg("bf")
            .arg(batch)
            .query::<Vec<i64>>(con)
            .unwrap();
        redis::cmd("BF.MADD")
            .arg("fixed")
            .arg(batch)
            .query::<Vec<i64>>(con)
            .unwrap();
        redis::cmd("CF.INSERT")
            .arg("cf")
            .arg("ITEMS")
            .arg(batch)
            .query::<Vec<i64>>(con)
            .unwrap();
    }
    for i in 0..100 {
        // A second copy, then both deleted: the count of deletes is state to carry.
        cmd::<i64>(con, &format!("CF.ADD cf extra:{i}")).unwrap();
        cmd::<i64>(con, &format!("CF.DEL cf extra:{i}")).unwrap();
    }
}

/// What a client can see of the three filters: every answer for the items and for as
/// many non-members, and the info and debug lines.
fn state(con: &mut Connection, prefix: &str) -> Vec<Value> {
    let others: Vec<String> = (0..ITEMS).map(|i| format!("other:{i}")).collect();
    let mut seen = Vec::new();
    for (kind, key) in [("BF", "bf"), ("BF", "fixed"), ("CF", "cf")] {
        let key = format!("{prefix}{key}");
        for probe in [items(), others.clone()] {
            let v: Value = redis::cmd(&format!("{kind}.MEXISTS"))
                .arg(&key)
                .arg(&probe)
                .query(con)
                .unwrap();
            seen.push(v);
        }
        seen.push(cmd(con, &format!("{kind}.INFO {key}")).unwrap());
        seen.push(cmd(con, &format!("{kind}.DEBUG {key}")).unwrap());
    }
    seen
}

fn all_present(v: &Value) -> bool {
    matches!(v, Value::Array(a) if a.iter().all(|x| *x == Value::Int(1)))
}

#[test]
fn filters_survive_a_save_and_restart_a_reload_and_an_aof_rewrite() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = [
        "--enable-debug-command",
        "yes",
        "--aof-use-rdb-preamble",
        "no",
    ];
    let Some(mut server) = Server::start_with(tmp.path(), Modules::LINEBLOOM, &extra) else {
        return;
    };
    let mut con = server.connect();
    fill(&mut con);
    let before = state(&mut con, "");
    assert!(all_present(&before[0]) && all_present(&before[4]) && all_present(&before[8]));
    // DEBUG RELOAD: save, flush, load.
    assert_eq!(cmd::<String>(&mut con, "DEBUG RELOAD").unwrap(), "OK");
    assert_eq!(state(&mut con, ""), before, "after DEBUG RELOAD");
    // SAVE, then a restart that loads dump.rdb.
    cmd::<String>(&mut con, "SAVE").unwrap();
    server.restart();
    let mut con = server.connect();
    assert_eq!(
        state(&mut con, ""),
        before,
        "after a restart from the RDB file"
    );
    // The append-only file, rewritten without the RDB preamble: LOADCHUNK commands.
    cmd::<String>(&mut con, "CONFIG SET appendonly yes").unwrap();
    wait_for(&mut con, "aof_rewrite_in_progress:0");
    cmd::<String>(&mut con, "BGREWRITEAOF").unwrap();
    wait_for(&mut con, "aof_rewrite_in_progress:0");
    let aof = std::fs::read_dir(tmp.path().join("appendonlydir"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".base.aof"))
        .expect("a base AOF");
    let text = std::fs::read(&aof).unwrap();
    let needle = b"BF.LOADCHUNK";
    assert!(
        text.windows(needle.len()).any(|w| w == needle),
        "the rewrite holds BF.LOADCHUNK"
    );
    std::fs::remove_file(tmp.path().join("dump.rdb")).unwrap();
    drop(con);
    server.restart_with(&["--appendonly", "yes"]);
    let mut con = server.connect();
    assert_eq!(
        state(&mut con, ""),
        before,
        "after replaying the rewritten AOF"
    );
}

fn wait_for(con: &mut Connection, line: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let info: String = cmd(con, "INFO persistence").unwrap();
        if info.contains(line) && !info.contains("aof_rewrite_scheduled:1") {
            return;
        }
        assert!(Instant::now() < deadline, "{line} within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_replica_running_the_module_holds_the_same_filters() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(master) = Server::start(&tmp.path().join("m"), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = master.connect();
    // Before the replica: its full sync carries these (rdb_save, rdb_load).
    fill(&mut con);
    let Some(replica) = Server::replica_of(&tmp.path().join("r"), &master, Modules::LINEBLOOM)
    else {
        return;
    };
    let mut rcon = replica.connect();
    // After it: the commands replicate. A multi-piece LOADCHUNK among them.
    cmd::<String>(&mut con, "CF.RESERVE big 20000000").unwrap();
    cmd::<i64>(&mut con, "CF.ADD big x").unwrap();
    let mut position = 0;
    loop {
        let (next, data): (i64, Option<Vec<u8>>) = redis::cmd("CF.SCANDUMP")
            .arg("big")
            .arg(position)
            .query(&mut con)
            .unwrap();
        if next == 0 {
            break;
        }
        let ok: String = redis::cmd("CF.LOADCHUNK")
            .arg("copy")
            .arg(next)
            .arg(data.unwrap())
            .query(&mut con)
            .unwrap();
        assert_eq!(ok, "OK");
        position = next;
    }
    assert_eq!(position, 2, "two pieces");
    for i in 0..50 {
        cmd::<i64>(&mut con, &format!("BF.ADD bf late:{i}")).unwrap();
        cmd::<i64>(&mut con, &format!("CF.DEL cf item:{i}")).unwrap();
    }
    let acked: i64 = cmd(&mut con, "WAIT 1 10000").unwrap();
    assert_eq!(acked, 1);
    assert_eq!(state(&mut rcon, ""), state(&mut con, ""));
    assert_eq!(cmd::<i64>(&mut rcon, "CF.EXISTS copy x").unwrap(), 1);
}

#[test]
fn keys_copy_rename_expire_delete_dump_and_restore() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = server.connect();
    fill(&mut con);
    let before = state(&mut con, "");
    for key in ["bf", "fixed", "cf"] {
        assert_eq!(
            cmd::<i64>(&mut con, &format!("COPY {key} copy:{key}")).unwrap(),
            1
        );
        let dump: Vec<u8> = redis::cmd("DUMP").arg(key).query(&mut con).unwrap();
        let ok: String = redis::cmd("RESTORE")
            .arg(format!("restored:{key}"))
            .arg(0)
            .arg(&dump)
            .query(&mut con)
            .unwrap();
        assert_eq!(ok, "OK");
    }
    assert_eq!(state(&mut con, "copy:"), before);
    assert_eq!(state(&mut con, "restored:"), before);
    // A copy is a copy: a write to it leaves the original.
    cmd::<i64>(&mut con, "BF.ADD copy:bf new").unwrap();
    assert_eq!(cmd::<i64>(&mut con, "BF.EXISTS bf new").unwrap(), 0);
    cmd::<String>(&mut con, "RENAME copy:cf renamed").unwrap();
    assert_eq!(cmd::<i64>(&mut con, "CF.EXISTS renamed item:1").unwrap(), 1);
    assert_eq!(cmd::<i64>(&mut con, "EXISTS copy:cf").unwrap(), 0);
    assert_eq!(cmd::<i64>(&mut con, "PEXPIRE renamed 50").unwrap(), 1);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        cmd::<i64>(&mut con, "CF.EXISTS renamed item:1").unwrap(),
        0,
        "expired"
    );
    assert_eq!(cmd::<i64>(&mut con, "DEL copy:fixed").unwrap(), 1);
    let usage: i64 = cmd(&mut con, "MEMORY USAGE bf").unwrap();
    assert!(usage > 3000, "{usage} bytes for a filter of 3000 items");
}

/// `payload` with Redis's CRC-64 recomputed over everything before it, as `RESTORE`
/// checks it, so that what refuses a corrupt payload is the module's decoder.
fn resealed(mut payload: Vec<u8>) -> Vec<u8> {
    let body = payload.len() - 8;
    let crc = crc::Crc::<u64>::new(&crc::CRC_64_REDIS).checksum(&payload[..body]);
    payload[body..].copy_from_slice(&crc.to_le_bytes());
    payload
}

#[test]
fn corrupt_restore_payloads_are_refused_and_the_server_stays_up() {
    let tmp = tempfile::tempdir().unwrap();
    // Uncompressed payloads: a flipped byte in an LZF stream can decompress to the same
    // bytes (a back-reference moved within a run of zeros).
    let uncompressed = ["--rdbcompression", "no"];
    let Some(server) = Server::start_with(tmp.path(), Modules::LINEBLOOM, &uncompressed) else {
        return;
    };
    let mut con = server.connect();
    cmd::<String>(&mut con, "BF.RESERVE bf 0.01 40").unwrap();
    cmd::<i64>(&mut con, "CF.ADD cf x").unwrap();
    for i in 0..100 {
        cmd::<i64>(&mut con, &format!("BF.ADD bf {i}")).unwrap();
    }
    for key in ["bf", "cf"] {
        let dump: Vec<u8> = redis::cmd("DUMP").arg(key).query(&mut con).unwrap();
        // The resealed payload itself restores.
        let ok: RedisResult<String> = redis::cmd("RESTORE")
            .arg("k")
            .arg(0)
            .arg(resealed(dump.clone()))
            .arg("REPLACE")
            .query(&mut con);
        assert_eq!(ok.unwrap(), "OK", "{key}");
        // Each byte of the value flipped (past Redis's type and module id, before its
        // version and checksum trailer), and the value cut short.
        let value = 10..dump.len() - 10;
        let mut refused = 0;
        for at in value.clone().step_by(3) {
            let mut bad = dump.clone();
            bad[at] ^= 0x10;
            let r: RedisResult<String> = redis::cmd("RESTORE")
                .arg("bad")
                .arg(0)
                .arg(resealed(bad))
                .arg("REPLACE")
                .query(&mut con);
            match r {
                Err(e) => {
                    assert!(
                        e.to_string().contains("Bad data format"),
                        "{key} byte {at}: {e}"
                    );
                    refused += 1;
                }
                Ok(_) => panic!("{key}: a payload with byte {at} flipped was restored"),
            }
        }
        assert!(refused > 10);
        for cut in [value.start + 1, value.end / 2, value.end - 1] {
            let mut short = dump[..cut].to_vec();
            short.extend_from_slice(&dump[dump.len() - 10..]);
            let r: RedisResult<String> = redis::cmd("RESTORE")
                .arg("bad")
                .arg(0)
                .arg(resealed(short))
                .arg("REPLACE")
                .query(&mut con);
            assert!(r.is_err(), "{key}: cut at {cut}");
        }
        assert_eq!(cmd::<i64>(&mut con, "EXISTS bad").unwrap(), 0);
    }
    assert_eq!(cmd::<String>(&mut con, "PING").unwrap(), "PONG");
}

#[test]
fn a_corrupt_rdb_file_stops_the_load_with_the_module_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let uncompressed = ["--rdbcompression", "no"];
    let Some(mut server) = Server::start_with(tmp.path(), Modules::LINEBLOOM, &uncompressed) else {
        return;
    };
    let module = module_library().expect("the server above loaded it");
    let mut con = server.connect();
    cmd::<String>(&mut con, "BF.RESERVE bf 0.01 1000").unwrap();
    cmd::<i64>(&mut con, "BF.ADD bf x").unwrap();
    cmd::<String>(&mut con, "SAVE").unwrap();
    drop(con);
    server.stop();
    // Flip a byte inside the filter's blocks: the dump's checksum refuses it.
    let path = tmp.path().join("dump.rdb");
    let mut rdb = std::fs::read(&path).unwrap();
    let magic = rdb
        .windows(8)
        .position(|w| w == b"LBRMDUMP")
        .expect("the dump in the RDB");
    rdb[magic + 200] ^= 0x01;
    std::fs::write(&path, &rdb).unwrap();
    let log = tmp.path().join("log");
    let port = free_port().to_string();
    let status = std::process::Command::new("redis-server")
        .args([
            "--port",
            &port,
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--dir",
        ])
        .arg(tmp.path())
        .arg("--loadmodule")
        .arg(&module)
        .args(["--logfile"])
        .arg(&log)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(
        !status.success(),
        "the server refuses to start from the corrupt file"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("body checksum does not match"), "{text}");
    assert!(!text.contains("crashed by signal"), "{text}");
}

#[test]
fn a_cluster_routes_each_filter_by_its_key_and_acls_apply_to_it() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(tmp.path(), 3, Modules::LINEBLOOM) else {
        return;
    };
    let mut con = cluster.connect();
    let keys: Vec<String> = (0..30).map(|i| format!("filter:{i}")).collect();
    for key in &keys {
        let added: i64 = redis::cmd("BF.ADD")
            .arg(key)
            .arg("x")
            .query(&mut con)
            .unwrap();
        assert_eq!(added, 1);
        let added: i64 = redis::cmd("CF.ADD")
            .arg(format!("{key}:cf"))
            .arg("x")
            .query(&mut con)
            .unwrap();
        assert_eq!(added, 1);
    }
    let nodes: Vec<usize> = keys.iter().map(|k| cluster.node_of(k)).collect();
    assert!(nodes.iter().any(|&n| n != nodes[0]), "the keys span nodes");
    for key in &keys {
        let present: i64 = redis::cmd("BF.EXISTS")
            .arg(key)
            .arg("x")
            .query(&mut con)
            .unwrap();
        assert_eq!(present, 1);
        // The node that owns the key's slot holds it; the others redirect.
        let node = &cluster.urls()[cluster.node_of(key)];
        let mut direct = redis::Client::open(node.as_str())
            .unwrap()
            .get_connection()
            .unwrap();
        assert_eq!(
            redis::cmd("BF.EXISTS")
                .arg(key)
                .arg("x")
                .query::<i64>(&mut direct)
                .unwrap(),
            1
        );
    }
    // ACL key patterns: the key is declared, so a user limited to `allowed:*` is refused
    // another.
    let url = &cluster.urls()[0];
    let mut admin = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let keys: Vec<String> = redis::cmd("COMMAND")
        .arg("GETKEYS")
        .arg("BF.ADD")
        .arg("k1")
        .arg("x")
        .query(&mut admin)
        .unwrap();
    assert_eq!(keys, ["k1"]);
    redis::cmd("ACL")
        .arg(&["SETUSER", "limited", "on", ">pw", "~allowed:*", "+@all"])
        .query::<String>(&mut admin)
        .unwrap();
    let mut limited = admin;
    redis::cmd("AUTH")
        .arg("limited")
        .arg("pw")
        .query::<String>(&mut limited)
        .unwrap();
    let e = redis::cmd("CF.EXISTS")
        .arg("secret")
        .arg("x")
        .query::<i64>(&mut limited)
        .unwrap_err();
    assert!(e.to_string().contains("no permissions"), "{e}");
}

#[test]
fn beside_redisbloom_the_module_answers_under_its_namespace() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::BOTH, false) else {
        return;
    };
    let mut con = server.connect();
    let ns = linebloom_redis_testing::NAMESPACE;
    assert_eq!(
        cmd::<i64>(&mut con, &format!("{ns}.BF.ADD ours x")).unwrap(),
        1
    );
    assert_eq!(cmd::<i64>(&mut con, "BF.ADD theirs x").unwrap(), 1);
    assert_eq!(cmd::<String>(&mut con, "TYPE ours").unwrap(), "linebl-bf");
    assert_eq!(cmd::<String>(&mut con, "TYPE theirs").unwrap(), "MBbloom--");
    // Each family's commands refuse the other's keys.
    assert!(
        cmd::<i64>(&mut con, &format!("{ns}.BF.EXISTS theirs x"))
            .unwrap_err()
            .to_string()
            .contains("WRONGTYPE")
    );
    assert_eq!(
        cmd::<i64>(&mut con, &format!("{ns}.CF.ADD c x")).unwrap(),
        1
    );
    assert_eq!(
        cmd::<i64>(&mut con, &format!("{ns}.CF.COUNT c x")).unwrap(),
        1
    );
    // RedisBloom's SCANDUMP output does not load into linebloom's filters, and the error
    // says why.
    cmd::<i64>(&mut con, "CF.ADD theirs-cf x").unwrap();
    for (kind, key) in [("BF", "theirs"), ("CF", "theirs-cf")] {
        let (position, data): (i64, Vec<u8>) = redis::cmd(&format!("{kind}.SCANDUMP"))
            .arg(key)
            .arg(0)
            .query(&mut con)
            .unwrap();
        let e = redis::cmd(&format!("{ns}.{kind}.LOADCHUNK"))
            .arg("moved")
            .arg(position)
            .arg(data)
            .query::<String>(&mut con)
            .unwrap_err();
        let expected = format!("this is RedisBloom's {kind}.SCANDUMP output");
        assert!(e.to_string().contains(&expected), "{e}");
    }
    assert_eq!(cmd::<i64>(&mut con, "EXISTS moved").unwrap(), 0);
}
