//! The linebloom module's `BF.*` commands against a real `redis-server`: RedisBloom's
//! syntax, replies and error texts for every command and option, growth with a
//! compounded rate at or below the target, measured, and `SCANDUMP`/`LOADCHUNK` moves,
//! whole, in pieces, refused when corrupt.
//!
//! Each test starts its own server through `linebloom_redis_testing` on a free loopback
//! port (stopped by PID when it ends), loading only the linebloom module, so its
//! commands have RedisBloom's names. Where `redis-server` or the module is missing the
//! test says so and skips, unless `LINEBLOOM_REQUIRE_REDIS=1` (CI).

use linebloom_redis_testing::{Modules, Server};
use redis::{Connection, RedisResult, Value};

fn server() -> Option<(tempfile::TempDir, Server, Connection)> {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(tmp.path(), Modules::LINEBLOOM, false)?;
    let con = server.connect();
    Some((tmp, server, con))
}

/// One command, its arguments split at spaces.
fn cmd<T: redis::FromRedisValue>(con: &mut Connection, line: &str) -> RedisResult<T> {
    let mut parts = line.split(' ');
    let mut c = redis::cmd(parts.next().unwrap());
    for p in parts {
        c.arg(p);
    }
    c.query(con)
}

/// The text of an error reply, as the server sent it: its code, then the rest.
fn text(e: &redis::RedisError) -> String {
    [e.code(), e.detail()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The error text of a command that must fail.
fn error(con: &mut Connection, line: &str) -> String {
    match cmd::<Value>(con, line) {
        Ok(v) => panic!("{line} answered {v:?}, not an error"),
        Err(e) => text(&e),
    }
}

#[test]
fn the_seeds_two_commands_answer_as_redisbloom_does() {
    let Some((_tmp, _server, mut con)) = server() else {
        return;
    };
    assert_eq!(
        cmd::<i64>(&mut con, "BF.ADD myBloomFilter product:12345").unwrap(),
        1
    );
    assert_eq!(
        cmd::<i64>(&mut con, "BF.ADD myBloomFilter product:12345").unwrap(),
        0
    );
    assert_eq!(
        cmd::<i64>(&mut con, "BF.EXISTS myBloomFilter product:12345").unwrap(),
        1
    );
    assert_eq!(
        cmd::<i64>(&mut con, "BF.EXISTS myBloomFilter product:67890").unwrap(),
        0
    );
    // A filter BF.ADD made has RedisBloom's defaults: 100 items, expansion 2.
    let info: Vec<Value> = cmd(&mut con, "BF.INFO myBloomFilter").unwrap();
    let fields: Vec<String> = info
        .iter()
        .step_by(2)
        .map(|v| redis::from_redis_value_ref(v).unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "Capacity",
            "Size",
            "Number of filters",
            "Number of items inserted",
            "Expansion rate"
        ]
    );
    assert_eq!(info[1], Value::Int(100));
    assert_eq!(
        (&info[5], &info[7], &info[9]),
        (&Value::Int(1), &Value::Int(1), &Value::Int(2))
    );
    let t: String = cmd(&mut con, "TYPE myBloomFilter").unwrap();
    assert_eq!(t, "linebl-bf");
    // A missing filter answers 0, as RedisBloom's does.
    assert_eq!(cmd::<i64>(&mut con, "BF.EXISTS nothing x").unwrap(), 0);
    assert_eq!(
        cmd::<Vec<i64>>(&mut con, "BF.MEXISTS nothing x y").unwrap(),
        [0, 0]
    );
    assert_eq!(cmd::<i64>(&mut con, "BF.CARD nothing").unwrap(), 0);
}

#[test]
fn every_command_takes_redisbloom_syntax_and_errors() {
    let Some((_tmp, _server, mut con)) = server() else {
        return;
    };
    assert_eq!(
        cmd::<String>(&mut con, "BF.RESERVE f 0.001 1000 EXPANSION 4").unwrap(),
        "OK"
    );
    assert!(error(&mut con, "BF.RESERVE f 0.01 10").contains("item exists"));
    assert_eq!(
        cmd::<Vec<i64>>(&mut con, "BF.MADD f a b a").unwrap(),
        [1, 1, 0]
    );
    assert_eq!(
        cmd::<Vec<i64>>(&mut con, "BF.MEXISTS f a b c").unwrap(),
        [1, 1, 0]
    );
    assert_eq!(cmd::<i64>(&mut con, "BF.CARD f").unwrap(), 2);
    for (field, value) in [
        ("capacity", 1000),
        ("filters", 1),
        ("items", 2),
        ("expansion", 4),
    ] {
        let v: Vec<i64> = cmd(&mut con, &format!("BF.INFO f {field}")).unwrap();
        assert_eq!(v, [value], "{field}");
    }
    let size: Vec<i64> = cmd(&mut con, "BF.INFO f SIZE").unwrap();
    let usage: i64 = cmd(&mut con, "MEMORY USAGE f").unwrap();
    assert!(
        size[0] > 1000 && size[0] <= usage,
        "Size {} within MEMORY USAGE {usage}",
        size[0]
    );
    for (line, text) in [
        ("BF.RESERVE g 0.01", "wrong number of arguments"),
        ("BF.RESERVE g 7.7 1000", "error rate must be in the range"),
        ("BF.RESERVE g blah 1000", "bad error rate"),
        ("BF.RESERVE g 0.01 0", "capacity must be in the range"),
        (
            "BF.RESERVE g 0.1 1 EXPANSION -1",
            "expansion must be in the range",
        ),
        (
            "BF.RESERVE g 0.1 1 NONSCALING EXPANSION 2",
            "Nonscaling filters cannot expand",
        ),
        ("BF.ADD f", "wrong number of arguments"),
        ("BF.EXISTS f a b", "wrong number of arguments"),
        ("BF.INFO f capacity size", "wrong number of arguments"),
        ("BF.INFO f wrong_value", "Invalid information value"),
        ("BF.INFO nothing", "not found"),
        ("BF.INSERT g NOCREATE ITEMS a", "not found"),
        ("BF.INSERT g CAPACITY 0.3 ITEMS a", "Bad capacity"),
        ("BF.INSERT g ERROR big ITEMS a", "Bad error rate"),
        ("BF.INSERT g EXPANSION -1 ITEMS a", "Bad expansion"),
        ("BF.INSERT g DONTEXIST ITEMS a", "Unknown argument received"),
        ("BF.INSERT g ITEMS", "wrong number of arguments"),
    ] {
        let e = error(&mut con, line);
        assert!(e.contains(text), "{line}: {e}");
    }
    // Another type's key.
    cmd::<String>(&mut con, "SET s x").unwrap();
    for line in [
        "BF.ADD s a",
        "BF.EXISTS s a",
        "BF.CARD s",
        "BF.INFO s",
        "BF.RESERVE s 0.01 10",
    ] {
        assert!(error(&mut con, line).contains("WRONGTYPE"), "{line}");
    }
    // BF.INSERT creates with its options, or adds to what is there.
    let new: Vec<i64> = cmd(
        &mut con,
        "BF.INSERT h ERROR 0.001 CAPACITY 50000 EXPANSION 2 ITEMS foo",
    )
    .unwrap();
    assert_eq!(new, [1]);
    let more: Vec<i64> = cmd(&mut con, "BF.INSERT h ERROR 0.1 ITEMS foo bar baz").unwrap();
    assert_eq!(more, [0, 1, 1]);
    assert_eq!(
        cmd::<Vec<i64>>(&mut con, "BF.INFO h CAPACITY").unwrap(),
        [50000]
    );
    // BF.DEBUG: RedisBloom's line format, this filter's numbers.
    let lines: Vec<String> = cmd(&mut con, "BF.DEBUG h").unwrap();
    assert_eq!(lines[0], "size:3");
    assert!(
        lines[1].starts_with("bytes:") && lines[1].ends_with("capacity:50000 size:3 ratio:0.0005"),
        "{}",
        lines[1]
    );
}

#[test]
fn a_non_scaling_filter_refuses_as_redisbloom_does() {
    let Some((_tmp, _server, mut con)) = server() else {
        return;
    };
    let r: Vec<i64> = cmd(&mut con, "BF.INSERT n CAPACITY 3 NONSCALING ITEMS a b c").unwrap();
    assert_eq!(r, [1, 1, 1]);
    // Present items answer 0 before the full filter refuses, and the reply stops there.
    // The raw reply: a typed query turns an array holding an error into that error.
    let mut insert = redis::cmd("BF.INSERT");
    insert.arg("n").arg("ITEMS").arg(&["a", "b", "c", "d", "d"]);
    let Ok(Value::Array(r)) = redis::ConnectionLike::req_command(&mut con, &insert) else {
        panic!("an array");
    };
    assert_eq!(r[..3], [Value::Int(0), Value::Int(0), Value::Int(0)]);
    assert_eq!(r.len(), 4);
    match &r[3] {
        Value::ServerError(e) => assert_eq!(e.details(), Some("non scaling filter is full")),
        other => panic!("{other:?}"),
    }
    assert!(error(&mut con, "BF.ADD n extra").contains("non scaling filter is full"));
    let info: Vec<Value> = cmd(&mut con, "BF.INFO n").unwrap();
    assert_eq!(
        (&info[1], &info[5], &info[7], &info[9]),
        (&Value::Int(3), &Value::Int(1), &Value::Int(3), &Value::Nil)
    );
    // Smaller than a scaling filter of the same reservation (its first layer is sized at
    // half the rate).
    cmd::<String>(&mut con, "BF.RESERVE fixed 0.001 1000 NONSCALING").unwrap();
    cmd::<String>(&mut con, "BF.RESERVE scaling 0.001 1000").unwrap();
    let size = |con: &mut Connection, k: &str| {
        cmd::<Vec<i64>>(con, &format!("BF.INFO {k} SIZE")).unwrap()[0]
    };
    assert!(size(&mut con, "fixed") < size(&mut con, "scaling"));
}

#[test]
fn a_grown_filter_keeps_its_compounded_rate_below_the_target_measured() {
    let Some((_tmp, _server, mut con)) = server() else {
        return;
    };
    // Grown 100 times past its reservation: layers of 1000, 2000, 4000, ….
    cmd::<String>(&mut con, "BF.RESERVE g 0.01 1000").unwrap();
    let members: Vec<String> = (0..100_000).map(|i| format!("member:{i}")).collect();
    for batch in members.chunks(1000) {
        redis::cmd("BF.MADD")
            .arg("g")
            .arg(batch)
            .query::<Vec<i64>>(&mut con)
            .unwrap();
    }
    let layers: Vec<i64> = cmd(&mut con, "BF.INFO g FILTERS").unwrap();
    assert!(layers[0] >= 7, "{layers:?} layers");
    // No false negatives.
    for batch in members.chunks(1000) {
        let r: Vec<i64> = redis::cmd("BF.MEXISTS")
            .arg("g")
            .arg(batch)
            .query(&mut con)
            .unwrap();
        assert!(r.iter().all(|&x| x == 1), "a member answered absent");
    }
    // The rate over 400,000 non-members. The keys are fixed, so the count is too; if the
    // true rate were the target 0.01, a count above 0.01·N + 6σ would have a chance
    // below 1e-9: that is the slack.
    let n = 400_000u32;
    let mut positives = 0;
    for start in (0..n).step_by(1000) {
        let batch: Vec<String> = (start..start + 1000)
            .map(|i| format!("other:{i}"))
            .collect();
        let r: Vec<i64> = redis::cmd("BF.MEXISTS")
            .arg("g")
            .arg(&batch)
            .query(&mut con)
            .unwrap();
        positives += r.iter().sum::<i64>();
    }
    let (p, n) = (0.01, f64::from(n));
    let bound = p * n + 6.0 * (p * (1.0 - p) * n).sqrt();
    println!(
        "compounded rate after 100x growth: {positives} of {n} = {:.5} (target {p})",
        positives as f64 / n
    );
    assert!(
        (positives as f64) < bound,
        "{positives} false positives of {n}"
    );
}

/// Every piece `SCANDUMP` gives, in order.
fn scandump(con: &mut Connection, command: &str, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut chunks = Vec::new();
    let mut position = 0;
    loop {
        let (next, data): (i64, Option<Vec<u8>>) = redis::cmd(command)
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

fn loadchunk(
    con: &mut Connection,
    command: &str,
    key: &str,
    position: i64,
    data: &[u8],
) -> RedisResult<String> {
    redis::cmd(command)
        .arg(key)
        .arg(position)
        .arg(data)
        .query(con)
}

#[test]
fn scandump_and_loadchunk_move_a_filter_whole_or_in_pieces() {
    let Some((_tmp, _server, mut con)) = server() else {
        return;
    };
    let items: Vec<String> = (0..5000).map(|i| format!("x{i}")).collect();
    // 12e6 items at 1%: a dump of two 16 MiB pieces.
    for (key, reserve) in [
        ("small", "BF.RESERVE small 0.01 50"),
        ("large", "BF.RESERVE large 0.01 12000000"),
    ] {
        cmd::<String>(&mut con, reserve).unwrap();
        redis::cmd("BF.MADD")
            .arg(key)
            .arg(&items)
            .query::<Vec<i64>>(&mut con)
            .unwrap();
    }
    let small = scandump(&mut con, "BF.SCANDUMP", "small");
    let large = scandump(&mut con, "BF.SCANDUMP", "large");
    assert_eq!((small.len(), large.len()), (1, 2));
    assert_eq!(large[0].1.len(), 16 << 20);
    for (key, chunks) in [("small", &small), ("large", &large)] {
        let copy = format!("{key}-copy");
        let (last, first) = chunks.split_last().unwrap();
        for (position, data) in first {
            assert_eq!(
                loadchunk(&mut con, "BF.LOADCHUNK", &copy, *position, data).unwrap(),
                "OK"
            );
            // A filter still loading answers errors, never "absent".
            let e = error(&mut con, &format!("BF.EXISTS {copy} x1"));
            assert!(
                e.contains("being loaded by LOADCHUNK: 1 of 2 chunks"),
                "{e}"
            );
            assert!(error(&mut con, &format!("BF.ADD {copy} x1")).contains("being loaded"));
            // Out of order, and too long, refused with RedisBloom's texts.
            let e = loadchunk(&mut con, "BF.LOADCHUNK", &copy, 5, &last.1).unwrap_err();
            assert!(text(&e).contains("invalid offset - no link found"), "{e}");
            let mut longer = last.1.clone();
            longer.push(0);
            let e = loadchunk(&mut con, "BF.LOADCHUNK", &copy, last.0, &longer).unwrap_err();
            assert!(text(&e).contains("Too big for current filter"), "{e}");
        }
        assert_eq!(
            loadchunk(&mut con, "BF.LOADCHUNK", &copy, last.0, &last.1).unwrap(),
            "OK"
        );
        for batch in items.chunks(1000) {
            let r: Vec<i64> = redis::cmd("BF.MEXISTS")
                .arg(&copy)
                .arg(batch)
                .query(&mut con)
                .unwrap();
            assert!(r.iter().all(|&x| x == 1), "{copy} lost an item");
        }
        let card =
            |con: &mut Connection, k: &str| cmd::<i64>(con, &format!("BF.CARD {k}")).unwrap();
        assert_eq!(card(&mut con, key), card(&mut con, &copy));
        // A whole filter takes no more chunks.
        let e = loadchunk(&mut con, "BF.LOADCHUNK", &copy, 1, &chunks[0].1).unwrap_err();
        assert!(text(&e).contains("invalid offset"), "{e}");
    }
    // A position past the end answers 0.
    let (next, data): (i64, Vec<u8>) = redis::cmd("BF.SCANDUMP")
        .arg("small")
        .arg(7)
        .query(&mut con)
        .unwrap();
    assert_eq!((next, data.len()), (0, 0));
    assert!(error(&mut con, "BF.SCANDUMP small str").contains("Second argument must be numeric"));
    assert!(error(&mut con, "BF.SCANDUMP nothing 0").contains("not found"));
    assert!(error(&mut con, "BF.LOADCHUNK nothing 2 abc").contains("not found"));
}

#[test]
fn corrupt_and_foreign_chunks_are_refused_and_store_nothing() {
    let Some((_tmp, _server, mut con)) = server() else {
        return;
    };
    cmd::<String>(&mut con, "BF.RESERVE f 0.01 5").unwrap();
    for i in 0..50 {
        cmd::<i64>(&mut con, &format!("BF.ADD f foo{i}")).unwrap();
    }
    let chunk = scandump(&mut con, "BF.SCANDUMP", "f").remove(0).1;
    // Every byte flipped, one at a time: refused, and no key is left behind.
    for at in 0..chunk.len() {
        let mut bad = chunk.clone();
        bad[at] ^= 0x20;
        let e = loadchunk(&mut con, "BF.LOADCHUNK", "g", 1, &bad).unwrap_err();
        assert!(text(&e).contains("received bad data"), "byte {at}: {e}");
    }
    assert_eq!(cmd::<i64>(&mut con, "EXISTS g").unwrap(), 0);
    // RedisBloom's own header chunk (RedisBloom's test_arbitrary_offset's bytes) is not
    // a linebloom dump, and the error says so.
    let redisbloom = b"\x11\x18\xf3\xdd\x74\x48\x01\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00\x00\x11\x18\xf3\xdd\x74\x48\x01\x00\x9a\x99\x99\x99\x99\x99\xb9\x3f\x9a\x99\x99\x99\x99\x99\xb9\x3f\x01\x00\x00\x00\x11\x18\xf3\xdd\x74\x48\x01\x00\x00";
    let e = loadchunk(&mut con, "BF.LOADCHUNK", "k", 1, redisbloom).unwrap_err();
    assert!(
        text(&e).contains("this is RedisBloom's BF.SCANDUMP output"),
        "{e}"
    );
    // A CF dump is not a BF one.
    cmd::<i64>(&mut con, "CF.ADD c x").unwrap();
    let cf = scandump(&mut con, "CF.SCANDUMP", "c").remove(0).1;
    assert!(loadchunk(&mut con, "BF.LOADCHUNK", "k", 1, &cf).is_err());
    // Chunks into a live filter are refused, and the filter answers as before.
    for position in [-9223372036854775808i64, 0, 1, 4, 922337203685477588] {
        assert!(loadchunk(&mut con, "BF.LOADCHUNK", "f", position, b"abcd").is_err());
    }
    assert_eq!(cmd::<i64>(&mut con, "BF.EXISTS f foo7").unwrap(), 1);
}
