//! The linebloom module's `CF.*` commands against a real `redis-server`: RedisBloom's
//! syntax, replies and error texts for every command and option, growth by
//! `EXPANSION` and its limits, deletes without false negatives against a model, and
//! `SCANDUMP`/`LOADCHUNK` moves, whole, in pieces, refused when corrupt.
//!
//! Each test starts its own server on a free loopback port (stopped by PID when it
//! ends) with only the linebloom module; where `redis-server` or the module is missing
//! the test says so and skips, unless `LINEBLOOM_REQUIRE_REDIS=1` (CI).

use linebloom_redis_testing::{Modules, Server};
use redis::{Connection, RedisResult, Value};
use std::collections::HashMap;

fn server() -> Option<(tempfile::TempDir, Server, Connection)> {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), Modules::LINEBLOOM, false)?;
    let con = server.connect();
    Some((tmp, server, con))
}

fn cmd<T: redis::FromRedisValue>(con: &mut Connection, line: &str) -> RedisResult<T> {
    let mut parts = line.split(' ');
    let mut c = redis::cmd(parts.next().unwrap());
    for p in parts {
        c.arg(p);
    }
    c.query(con)
}

fn error(con: &mut Connection, line: &str) -> String {
    match cmd::<Value>(con, line) {
        Ok(v) => panic!("{line} answered {v:?}, not an error"),
        Err(e) => [e.code(), e.detail()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" "),
    }
}

#[test]
fn adds_counts_and_deletes_answer_as_redisbloom_does() {
    let Some((_tmp, _server, mut con)) = server() else {
        return;
    };
    assert_eq!(cmd::<i64>(&mut con, "CF.EXISTS cf k1").unwrap(), 0);
    assert_eq!(cmd::<i64>(&mut con, "CF.ADD cf k1").unwrap(), 1);
    assert_eq!(
        cmd::<i64>(&mut con, "CF.ADD cf k1").unwrap(),
        1,
        "a second copy"
    );
    assert_eq!(cmd::<i64>(&mut con, "CF.COUNT cf k1").unwrap(), 2);
    assert_eq!(cmd::<i64>(&mut con, "CF.DEL cf k1").unwrap(), 1);
    assert_eq!(cmd::<i64>(&mut con, "CF.COUNT cf k1").unwrap(), 1);
    assert_eq!(cmd::<i64>(&mut con, "CF.DEL cf k1").unwrap(), 1);
    assert_eq!(cmd::<i64>(&mut con, "CF.DEL cf k1").unwrap(), 0);
    assert_eq!(cmd::<i64>(&mut con, "CF.EXISTS cf k1").unwrap(), 0);
    assert_eq!(cmd::<i64>(&mut con, "CF.ADDNX cf k2").unwrap(), 1);
    assert_eq!(cmd::<i64>(&mut con, "CF.ADDNX cf k2").unwrap(), 0);
    assert_eq!(cmd::<i64>(&mut con, "CF.COUNT cf k2").unwrap(), 1);
    assert_eq!(
        cmd::<Vec<i64>>(&mut con, "CF.MEXISTS cf k1 k2").unwrap(),
        [0, 1]
    );
    assert_eq!(
        cmd::<Vec<i64>>(&mut con, "CF.MEXISTS nothing k1").unwrap(),
        [0]
    );
    assert_eq!(
        cmd::<Vec<i64>>(&mut con, "CF.INSERT f ITEMS a b").unwrap(),
        [1, 1]
    );
    assert_eq!(
        cmd::<Vec<i64>>(&mut con, "CF.INSERTNX f ITEMS a c").unwrap(),
        [0, 1]
    );
    assert!(error(&mut con, "CF.INSERT g NOCREATE ITEMS a").contains("not found"));
    assert_eq!(
        cmd::<Vec<i64>>(&mut con, "CF.INSERT g CAPACITY 10000 ITEMS a").unwrap(),
        [1]
    );
    assert_eq!(cmd::<String>(&mut con, "TYPE g").unwrap(), "linebl-cf");
    assert_eq!(cmd::<String>(&mut con, "CF.COMPACT g").unwrap(), "OK");
    // CF.INFO: the quotient filter's own numbers, and RedisBloom's options as given.
    cmd::<String>(
        &mut con,
        "CF.RESERVE r 1000 BUCKETSIZE 4 MAXITERATIONS 500 EXPANSION 3",
    )
    .unwrap();
    cmd::<i64>(&mut con, "CF.ADD r x").unwrap();
    cmd::<i64>(&mut con, "CF.DEL r x").unwrap();
    let info: Vec<Value> = cmd(&mut con, "CF.INFO r").unwrap();
    let info: HashMap<String, i64> = info
        .chunks(2)
        .map(|p| {
            (
                redis::from_redis_value_ref(&p[0]).unwrap(),
                redis::from_redis_value_ref(&p[1]).unwrap(),
            )
        })
        .collect();
    for (field, value) in [
        ("Number of filters", 1),
        ("Number of items inserted", 0),
        ("Number of items deleted", 1),
        ("Bucket size", 4),
        ("Expansion rate", 4),
        ("Max iterations", 500),
    ] {
        assert_eq!(info[field], value, "{field}");
    }
    let usage: i64 = cmd(&mut con, "MEMORY USAGE r").unwrap();
    assert!(info["Size"] > 1000 && info["Size"] <= usage);
    assert!(info["Number of buckets"] > 0);
    let debug: String = cmd(&mut con, "CF.DEBUG r").unwrap();
    assert!(
        debug.starts_with("bktsize:4 buckets:")
            && debug.ends_with("items:0 deletes:1 filters:1 max_iterations:500 expansion:4"),
        "{debug}"
    );
}

#[test]
fn arguments_are_checked_with_redisbloom_texts() {
    let Some((_tmp, _server, mut con)) = server() else {
        return;
    };
    cmd::<String>(&mut con, "CF.RESERVE cf 1000").unwrap();
    for (line, text) in [
        ("CF.RESERVE cf 1000", "item exists"),
        ("CF.RESERVE x", "wrong number of arguments"),
        ("CF.RESERVE x str", "Bad capacity"),
        ("CF.RESERVE x 1", "Capacity must be in the range"),
        ("CF.RESERVE x 10 BUCKETSIZE", "wrong number of arguments"),
        (
            "CF.RESERVE x 10 BUCKETSIZE 0",
            "BUCKETSIZE: value must be in the range [1, 255]",
        ),
        (
            "CF.RESERVE x 10 MAXITERATIONS 0",
            "MAXITERATIONS: value must be in the range [1, 65535]",
        ),
        (
            "CF.RESERVE x 10 MAXITERATIONS string",
            "Couldn't parse MAXITERATIONS",
        ),
        (
            "CF.RESERVE x 10 EXPANSION -1",
            "EXPANSION: value must be in the range [0, 32768]",
        ),
        (
            "CF.INSERT cf CAPACITY -1 ITEMS k0",
            "Capacity must be in the range",
        ),
        (
            "CF.INSERT cf CAPACITY 3 ITEMS k0",
            "Capacity must be in the range",
        ),
        ("CF.INSERT cf element", "wrong number of arguments"),
        ("CF.INSERT cf element x", "Unknown argument received"),
        ("CF.INSERT cf ITEMS", "wrong number of arguments"),
        ("CF.ADD cf", "wrong number of arguments"),
        ("CF.DEL cf", "wrong number of arguments"),
        ("CF.DEL nothing k1", "Not found"),
        ("CF.COUNT cf", "wrong number of arguments"),
        ("CF.INFO nothing", "not found"),
        ("CF.COMPACT nothing", "Cuckoo filter was not found"),
        ("CF.SCANDUMP cf -1", "Invalid position"),
        ("CF.LOADCHUNK cf 0 x", "Invalid position"),
        ("CF.LOADCHUNK cf 1 x", "item exists"),
    ] {
        let e = error(&mut con, line);
        assert!(e.contains(text), "{line}: {e}");
    }
    cmd::<String>(&mut con, "SET s x").unwrap();
    for line in [
        "CF.ADD s a",
        "CF.EXISTS s a",
        "CF.COUNT s a",
        "CF.DEL s a",
        "CF.INFO s",
    ] {
        assert!(error(&mut con, line).contains("WRONGTYPE"), "{line}");
    }
    // RedisBloom's limits accepted at their ends, and reported.
    cmd::<String>(
        &mut con,
        "CF.RESERVE big 67108864 BUCKETSIZE 255 MAXITERATIONS 65535 EXPANSION 32768",
    )
    .unwrap();
    let info: Vec<Value> = cmd(&mut con, "CF.INFO big").unwrap();
    assert_eq!(info[11], Value::Int(255));
    assert_eq!(info[13], Value::Int(32768));
    assert_eq!(info[15], Value::Int(65535));
}

#[test]
fn a_full_filter_grows_by_its_expansion_or_refuses() {
    let Some((_tmp, _server, mut con)) = server() else {
        return;
    };
    // EXPANSION 0: a filter of 4 items refuses the fifth, and a delete makes room.
    cmd::<String>(&mut con, "CF.RESERVE a 4 EXPANSION 0").unwrap();
    for i in 1..=4 {
        assert_eq!(cmd::<i64>(&mut con, &format!("CF.ADD a {i}")).unwrap(), 1);
    }
    assert_eq!(
        cmd::<Vec<i64>>(&mut con, "CF.INSERT a ITEMS 5 6").unwrap(),
        [-1, -1]
    );
    assert!(error(&mut con, "CF.ADD a 5").contains("Filter is full"));
    cmd::<i64>(&mut con, "CF.DEL a 1").unwrap();
    assert_eq!(cmd::<i64>(&mut con, "CF.ADD a 5").unwrap(), 1);
    // EXPANSION 2: layers of 64, 128, 256, 512 hold 1000 items.
    cmd::<String>(&mut con, "CF.RESERVE b 64 EXPANSION 2").unwrap();
    let items: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
    redis::cmd("CF.INSERT")
        .arg("b")
        .arg("ITEMS")
        .arg(&items)
        .query::<Vec<i64>>(&mut con)
        .unwrap();
    let info: Vec<Value> = cmd(&mut con, "CF.INFO b").unwrap();
    assert_eq!((&info[5], &info[7]), (&Value::Int(5), &Value::Int(1000)));
    let r: Vec<i64> = redis::cmd("CF.MEXISTS")
        .arg("b")
        .arg(&items)
        .query(&mut con)
        .unwrap();
    assert!(r.iter().all(|&x| x == 1));
    // The layer limit: 32 layers of 4 items (expansion 1), then RedisBloom's error.
    cmd::<String>(&mut con, "CF.RESERVE c 4").unwrap();
    for i in 0..128 {
        assert_eq!(cmd::<i64>(&mut con, &format!("CF.ADD c {i}")).unwrap(), 1);
    }
    assert!(error(&mut con, "CF.ADD c 2048").contains("Maximum expansions reached"));
    assert_eq!(
        cmd::<Vec<i64>>(&mut con, "CF.INSERT c ITEMS 2049").unwrap(),
        [-1]
    );
}

/// Adds, deletes and lookups on the server against a multiset model: no item the model
/// holds ever answers absent, and counts are never below the model's.
#[test]
fn deletes_never_cause_a_false_negative_against_a_model() {
    let Some((_tmp, _server, mut con)) = server() else {
        return;
    };
    cmd::<String>(&mut con, "CF.RESERVE m 200 EXPANSION 2").unwrap();
    let mut model: HashMap<u32, i64> = HashMap::new();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for step in 0..6000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let item = (state >> 32) as u32 % 500;
        let held = model.get(&item).copied().unwrap_or(0);
        match state % 3 {
            0 => {
                assert_eq!(
                    cmd::<i64>(&mut con, &format!("CF.ADD m {item}")).unwrap(),
                    1
                );
                model.insert(item, held + 1);
            }
            1 if held > 0 => {
                assert_eq!(
                    cmd::<i64>(&mut con, &format!("CF.DEL m {item}")).unwrap(),
                    1
                );
                model.insert(item, held - 1);
            }
            _ => {
                let count: i64 = cmd(&mut con, &format!("CF.COUNT m {item}")).unwrap();
                assert!(count >= held, "step {step}: count {count} below {held}");
            }
        }
    }
    let held: Vec<String> = model
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(i, _)| i.to_string())
        .collect();
    let r: Vec<i64> = redis::cmd("CF.MEXISTS")
        .arg("m")
        .arg(&held)
        .query(&mut con)
        .unwrap();
    assert!(r.iter().all(|&x| x == 1), "a held item answered absent");
    let info: Vec<Value> = cmd(&mut con, "CF.INFO m").unwrap();
    assert_eq!(info[7], Value::Int(model.values().sum::<i64>()));
}

fn scandump(con: &mut Connection, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut chunks = Vec::new();
    let mut position = 0;
    loop {
        let (next, data): (i64, Option<Vec<u8>>) = redis::cmd("CF.SCANDUMP")
            .arg(key)
            .arg(position)
            .query(con)
            .unwrap();
        if next == 0 {
            return chunks;
        }
        chunks.push((next, data.unwrap()));
        position = next;
    }
}

fn loadchunk(con: &mut Connection, key: &str, position: i64, data: &[u8]) -> RedisResult<String> {
    redis::cmd("CF.LOADCHUNK")
        .arg(key)
        .arg(position)
        .arg(data)
        .query(con)
}

#[test]
fn scandump_and_loadchunk_move_a_filter_and_refuse_corrupt_chunks() {
    let Some((_tmp, _server, mut con)) = server() else {
        return;
    };
    // An empty filter scans as RedisBloom's does: 0 and a null.
    cmd::<String>(&mut con, "CF.RESERVE small 62").unwrap();
    let (next, data): (i64, Option<Vec<u8>>) = redis::cmd("CF.SCANDUMP")
        .arg("small")
        .arg(0)
        .query(&mut con)
        .unwrap();
    assert_eq!((next, data), (0, None));
    // 2e7 items of capacity: a dump of two 16 MiB pieces.
    cmd::<String>(&mut con, "CF.RESERVE large 20000000").unwrap();
    let items: Vec<String> = (0..500).map(|i| i.to_string()).collect();
    for key in ["small", "large"] {
        redis::cmd("CF.INSERT")
            .arg(key)
            .arg("ITEMS")
            .arg(&items)
            .query::<Vec<i64>>(&mut con)
            .unwrap();
        cmd::<i64>(&mut con, &format!("CF.DEL {key} 7")).unwrap();
    }
    for (key, pieces) in [("small", 1), ("large", 2)] {
        let chunks = scandump(&mut con, key);
        assert_eq!(chunks.len(), pieces, "{key}");
        let copy = format!("{key}-copy");
        for (i, (position, data)) in chunks.iter().enumerate() {
            assert_eq!(loadchunk(&mut con, &copy, *position, data).unwrap(), "OK");
            if i + 1 < chunks.len() {
                assert!(error(&mut con, &format!("CF.EXISTS {copy} 1")).contains("being loaded"));
                let e = loadchunk(&mut con, &copy, position + 2, data).unwrap_err();
                assert_eq!(e.code(), Some("Couldn't"), "{e}");
            }
        }
        let a: Vec<i64> = redis::cmd("CF.MEXISTS")
            .arg(key)
            .arg(&items)
            .query(&mut con)
            .unwrap();
        let b: Vec<i64> = redis::cmd("CF.MEXISTS")
            .arg(&copy)
            .arg(&items)
            .query(&mut con)
            .unwrap();
        assert_eq!(a, b);
        let debug =
            |con: &mut Connection, k: &str| cmd::<String>(con, &format!("CF.DEBUG {k}")).unwrap();
        assert_eq!(
            debug(&mut con, key),
            debug(&mut con, &copy),
            "counts and deletes carried"
        );
    }
    // Every byte of a small dump flipped: refused, nothing stored.
    let chunk = scandump(&mut con, "small").remove(0).1;
    for at in (0..chunk.len()).step_by(7) {
        let mut bad = chunk.clone();
        bad[at] ^= 0x01;
        let e = loadchunk(&mut con, "bad", 1, &bad).unwrap_err();
        assert_eq!(e.detail(), Some("create filter!"), "byte {at}: {e}");
    }
    assert_eq!(cmd::<i64>(&mut con, "EXISTS bad").unwrap(), 0);
    // Random chunks into a whole filter are refused, and it answers as before.
    for position in [2i64, 3, -9223372036854775808, 922337203685477588] {
        assert!(loadchunk(&mut con, "small", position, &chunk[..100]).is_err());
    }
    assert_eq!(cmd::<i64>(&mut con, "CF.EXISTS small 1").unwrap(), 1);
}
