//! The errors a service meets, against a real `redis-server`: a filter whose shard is
//! gone is `Missing` naming the shard (not "stale"), a meta of another type is
//! `WrongType` naming it, and `open_or_create` says whether it created the filter.
//!
//! Where `redis-server` is missing the test prints `SKIPPED:` and passes, unless
//! `LINEBLOOM_REQUIRE_REDIS=1`.

use linebloom::Params;
use linebloom_redis_client::{FilterOptions, RedisFilter, RedisFilterError};
use linebloom_redis_testing::{Modules, Server};

fn params() -> Params {
    Params::for_fpr(1_000, 0.01).unwrap()
}

#[test]
fn errors_name_what_happened_and_open_or_create_says_what_it_did() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(dir.path(), Modules::NONE, false) else {
        return;
    };
    let mut con = server.connect();
    let options = FilterOptions::default();
    let first = RedisFilter::open_or_create(&mut con, "e", params(), options).unwrap();
    let second = RedisFilter::open_or_create(&mut con, "e", params(), options).unwrap();
    assert!(first.created() && first.clone().created());
    assert!(!second.created());
    assert!(!RedisFilter::open(&mut con, "e").unwrap().created());
    assert!(
        RedisFilter::create(&mut con, "e2", params())
            .unwrap()
            .created()
    );

    // A shard deleted: opening is `Missing`, naming it, after one re-read of the meta.
    let shard = first.generation().shard_key("e", 0);
    redis::cmd("DEL").arg(&shard).query::<()>(&mut con).unwrap();
    match RedisFilter::open(&mut con, "e") {
        Err(RedisFilterError::Missing { key }) => assert_eq!(key, shard),
        other => panic!("{:?}", other.map(|_| ())),
    }

    // The meta replaced by a list: `WrongType`, naming the meta key, for an open and for
    // a live handle's calls.
    redis::cmd("DEL")
        .arg("e2:meta")
        .query::<()>(&mut con)
        .unwrap();
    redis::cmd("RPUSH")
        .arg("e2:meta")
        .arg("x")
        .query::<()>(&mut con)
        .unwrap();
    match RedisFilter::open(&mut con, "e2") {
        Err(RedisFilterError::WrongType { key }) => assert_eq!(key, "e2:meta"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    let live = RedisFilter::create(&mut con, "e3", params()).unwrap();
    live.insert(&mut con, "k").unwrap();
    redis::cmd("DEL")
        .arg("e3:meta")
        .query::<()>(&mut con)
        .unwrap();
    redis::cmd("RPUSH")
        .arg("e3:meta")
        .arg("x")
        .query::<()>(&mut con)
        .unwrap();
    for result in [
        live.contains(&mut con, "k"),
        live.insert(&mut con, "j").map(|_| true),
    ] {
        match result {
            Err(RedisFilterError::WrongType { key }) => assert_eq!(key, "e3:meta"),
            other => panic!("{other:?}"),
        }
    }
}
