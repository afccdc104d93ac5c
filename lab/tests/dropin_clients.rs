//! A service written against RedisBloom, unchanged, on the linebloom module: the `redis`
//! crate's own `bloom` commands (`bf_add`, `bf_exists`, `bf_info`, the dump iterator
//! and `bf_loadchunk`, …) and RESP3 replies (booleans and maps), against a real
//! `redis-server` that loads only the linebloom module. (redis-py's `r.bf()` and
//! `r.cf()`: `lab/redis-module/examples/redis_py.py`.)
//!
//! The server starts on a free loopback port and stops by PID; where `redis-server` or
//! the module is missing the test says so and skips, unless `LINEBLOOM_REQUIRE_REDIS=1`.

use linebloom_redis_testing::{Modules, Server};
use redis::TypedCommands;
use redis::bloom::{
    BloomFilterDumpIterator, BloomFilterInfoType, BloomFilterInsertOptions,
    BloomFilterScalingOptions,
};

#[test]
fn the_redis_crates_bloom_commands_work_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = server.connect();
    con.bf_reserve_options(
        "users",
        0.001,
        10_000,
        BloomFilterScalingOptions::ExpansionRate(4),
    )
    .unwrap();
    assert!(con.bf_add("users", "alice").unwrap());
    assert!(!con.bf_add("users", "alice").unwrap());
    assert_eq!(
        con.bf_madd("users", &["bob", "carol"]).unwrap(),
        [true, true]
    );
    assert!(con.bf_exists("users", "bob").unwrap());
    assert!(!con.bf_exists("users", "mallory").unwrap());
    assert_eq!(
        con.bf_mexists("users", &["carol", "dave"]).unwrap(),
        [true, false]
    );
    assert_eq!(con.bf_card("users").unwrap(), 3);
    let info = con.bf_info("users").unwrap();
    assert_eq!(*info["Capacity"], 10_000.0);
    assert_eq!(*info["Expansion rate"], 4.0);
    assert_eq!(
        con.bf_info_type("users", BloomFilterInfoType::Items)
            .unwrap(),
        3.0
    );
    let options = BloomFilterInsertOptions::default()
        .capacity(50)
        .error_rate(0.01);
    assert_eq!(
        con.bf_insert_options("guests", &["x", "y"], options)
            .unwrap(),
        [true, true]
    );
    // The crate's dump iterator, then its loadchunk, move the filter.
    let chunks: Vec<_> = BloomFilterDumpIterator::new(&mut con, "users")
        .map(Result::unwrap)
        .collect();
    for chunk in chunks {
        con.bf_loadchunk("users-copy", chunk).unwrap();
    }
    assert_eq!(
        con.bf_mexists("users-copy", &["alice", "bob", "carol", "dave"])
            .unwrap(),
        [true, true, true, false]
    );
}

#[test]
fn resp3_clients_get_booleans_and_maps_as_from_redisbloom() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let client = redis::Client::open(format!("{}?protocol=resp3", server.url())).unwrap();
    let mut con = client.get_connection().unwrap();
    let v: redis::Value = redis::cmd("BF.ADD")
        .arg("f")
        .arg("a")
        .query(&mut con)
        .unwrap();
    assert_eq!(v, redis::Value::Boolean(true));
    let v: redis::Value = redis::cmd("BF.INFO").arg("f").query(&mut con).unwrap();
    assert!(
        matches!(v, redis::Value::Map(ref m) if m.len() == 5),
        "{v:?}"
    );
    let v: redis::Value = redis::cmd("BF.INFO")
        .arg("f")
        .arg("ITEMS")
        .query(&mut con)
        .unwrap();
    assert!(
        matches!(v, redis::Value::Map(ref m) if m.len() == 1),
        "{v:?}"
    );
    let v: redis::Value = redis::cmd("CF.INSERTNX")
        .arg("c")
        .arg("ITEMS")
        .arg("a")
        .arg("a")
        .query(&mut con)
        .unwrap();
    assert_eq!(
        v,
        redis::Value::Array(vec![redis::Value::Int(1), redis::Value::Int(0)])
    );
    let v: redis::Value = redis::cmd("CF.COUNT")
        .arg("c")
        .arg("a")
        .query(&mut con)
        .unwrap();
    assert_eq!(v, redis::Value::Int(1));
    let v: redis::Value = redis::cmd("CF.DEL")
        .arg("c")
        .arg("a")
        .query(&mut con)
        .unwrap();
    assert_eq!(v, redis::Value::Boolean(true));
}
