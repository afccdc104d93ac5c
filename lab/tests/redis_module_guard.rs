//! Integration tests of the linebloom module's guard commands (`LINEBLOOM.MTEST`,
//! `LINEBLOOM.MADD`) against a real `redis-server` on a loopback port: the meta guard
//! refuses a batch computed against a changed meta, obeys the ACL of its meta key, and
//! malformed commands are refused and write nothing.
//!
//! Each test starts its own server through `linebloom_redis_testing` (a child process on
//! a free 127.0.0.1 port, stopped by PID when the test ends) that loads the module
//! (`lab/redis-module`). `redis-server` must be on PATH and the module built; where one
//! is missing the test says so in the log and skips, unless `LINEBLOOM_REQUIRE_REDIS=1`
//! (set by `.ci/run`), which turns a missing piece into a failure.

use linebloom::{BloomFilter, Params};
use linebloom_lab::experiments::penetration::connect;
use linebloom_redis_client::{BatchPath, FilterOptions, RebuildOptions, RedisFilter};
use linebloom_redis_testing::{Modules, Server};

#[test]
fn the_module_guard_refuses_a_changed_meta() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = connect(&server.url()).unwrap();
    let mut f = BloomFilter::new(Params::for_fpr(1_000, 0.01).unwrap());
    f.insert_batch(&(0..1_000u64).collect::<Vec<u64>>());
    let rf = RedisFilter::store(&mut con, "g", &f, FilterOptions::default()).unwrap();
    assert_eq!(
        rf.batch_path(),
        BatchPath::Module,
        "the module was detected"
    );
    let meta: String = redis::cmd("GET").arg("g:meta").query(&mut con).unwrap();
    let shard = rf.generation().shard_key("g", 0);
    let before: Vec<u8> = redis::cmd("GET").arg(&shard).query(&mut con).unwrap();
    // One probe: block 0, a hash whose bits are not all set in an almost empty block.
    let probe = module_probe(0, 0x0123_4567_89ab_cdef);
    let (k, blocks) = (rf.params().k(), rf.generation().shard_len(0));
    let run = |con: &mut redis::Connection, name: &str, guard: &[&str]| {
        let mut cmd = redis::cmd(name);
        cmd.arg(&shard).arg(batch_arg(k, blocks, &probe));
        for word in guard {
            cmd.arg(*word);
        }
        cmd.query::<redis::Value>(con)
    };
    // The right meta: the command runs.
    assert!(run(&mut con, "LINEBLOOM.MTEST", &["META", "g:meta", &meta]).is_ok());
    // Another meta, or none: refused, and nothing written.
    for guard in [
        &[
            "META",
            "g:meta",
            "linebloom-v2 live 9 0000000000000001 1 8 0 64",
        ][..],
        &["META", "nokey:meta", &meta],
    ] {
        for name in ["LINEBLOOM.MTEST", "LINEBLOOM.MADD"] {
            let err = run(&mut con, name, guard).expect_err("a stale guard is refused");
            assert_eq!(err.code(), Some("LBSTALE"), "{name}: {err}");
        }
    }
    // A malformed guard is refused too.
    let err = run(&mut con, "LINEBLOOM.MADD", &["META", "g:meta"]).expect_err("bad guard");
    assert_eq!(err.code(), Some("LBOPTIONS"), "{err}");
    let after: Vec<u8> = redis::cmd("GET").arg(&shard).query(&mut con).unwrap();
    assert_eq!(after, before, "a refused command wrote bits");

    // A handle whose meta went stale (another client rebuilt the filter and inserted a
    // key into the new generation only) is refused, re-reads the meta, and finds it.
    let other = RedisFilter::open(&mut con, "g").unwrap();
    let keys: Vec<u64> = (0..1_000).collect();
    other
        .rebuild(&mut con, rf.params(), RebuildOptions::default(), || {
            Ok::<_, String>(keys.clone())
        })
        .unwrap();
    let late = 1u64 << 50;
    other.insert(&mut con, &late).unwrap();
    assert_eq!(rf.generation().number, 1);
    assert!(
        rf.contains(&mut con, &late).unwrap(),
        "a stale handle missed a key"
    );
    assert_eq!(rf.generation().number, 2, "the handle took the new meta");
    assert!(keys.iter().all(|key| rf.contains(&mut con, key).unwrap()));
    // And inserts from the stale-then-refreshed handle land in the live generation.
    let stale = RedisFilter::open(&mut con, "g").unwrap();
    other
        .rebuild(&mut con, rf.params(), RebuildOptions::default(), || {
            Ok::<_, String>(keys.clone())
        })
        .unwrap();
    stale.insert(&mut con, &(late + 1)).unwrap();
    assert_eq!(stale.generation().number, 3);
    assert!(other.contains(&mut con, &(late + 1)).unwrap());
}

/// One probe of the module's wire format: block, then hash, little-endian.
fn module_probe(block: u64, hash: u64) -> Vec<u8> {
    linebloom_redis_wire::probe(block, hash).to_vec()
}

/// A batch argument: the head of `k` and `blocks`, then `probes`.
fn batch_arg(k: u32, blocks: u64, probes: &[u8]) -> Vec<u8> {
    let head = linebloom_redis_wire::Head { k, blocks }.to_string();
    [head.as_bytes(), probes].concat()
}

#[test]
fn the_module_guard_obeys_the_acl_of_its_meta_key() {
    // A user whom the ACL allows only `filt:*` must not learn anything about another key
    // through the guard: the module declares the meta key to Redis, which refuses the
    // call with NOPERM whether or not the value would have matched.
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut admin = connect(&server.url()).unwrap();
    let shard = vec![0u8; 16 * 64];
    let () = redis::cmd("SET")
        .arg("filt:s")
        .arg(&shard)
        .query(&mut admin)
        .unwrap();
    let () = redis::cmd("SET")
        .arg("filt:meta")
        .arg("linebloom-v2 0 16 8")
        .query(&mut admin)
        .unwrap();
    let () = redis::cmd("SET")
        .arg("secret")
        .arg("linebloom-v2 0 16 8")
        .query(&mut admin)
        .unwrap();
    let () = redis::cmd("ACL")
        .arg(&[
            "SETUSER",
            "lim",
            "on",
            ">pw",
            "~filt:*",
            "+linebloom.mtest",
            "+linebloom.madd",
            "+get",
        ])
        .query(&mut admin)
        .unwrap();
    let mut lim = connect(&format!("redis://lim:pw@127.0.0.1:{}/", server.port())).unwrap();
    let probe = module_probe(0, 0x0123_4567_89ab_cdef);
    let call = |con: &mut redis::Connection, name: &str, meta_key: &str, value: &str| {
        redis::cmd(name)
            .arg("filt:s")
            .arg(batch_arg(8, 16, &probe))
            .arg("META")
            .arg(meta_key)
            .arg(value)
            .query::<redis::Value>(con)
    };
    // The transcript: the matching and the wrong value give the same refusal.
    for value in ["linebloom-v2 0 16 8", "linebloom-v2 1 16 8"] {
        for name in ["LINEBLOOM.MTEST", "LINEBLOOM.MADD"] {
            let err = call(&mut lim, name, "secret", value).expect_err("no permission on secret");
            assert_eq!(err.code(), Some("NOPERM"), "{name} {value}: {err}");
        }
    }
    assert_eq!(
        redis::cmd("GET")
            .arg("secret")
            .query::<String>(&mut lim)
            .unwrap_err()
            .code(),
        Some("NOPERM")
    );
    // Within the ACL the guard works as before: a match answers, a mismatch is stale.
    let answer = call(
        &mut lim,
        "LINEBLOOM.MTEST",
        "filt:meta",
        "linebloom-v2 0 16 8",
    )
    .unwrap();
    assert_eq!(answer, redis::Value::BulkString(vec![0]));
    let stale = call(
        &mut lim,
        "LINEBLOOM.MTEST",
        "filt:meta",
        "linebloom-v2 1 16 8",
    )
    .unwrap_err();
    assert_eq!(stale.code(), Some("LBSTALE"), "{stale}");
    // No write got through a refused call.
    let after: Vec<u8> = redis::cmd("GET").arg("filt:s").query(&mut admin).unwrap();
    assert_eq!(after, shard);
}

#[test]
fn malformed_module_commands_are_refused_and_write_nothing() {
    // A seeded loop of malformed calls (wrong arity, bad k, scheme and block count, payloads that are
    // not whole probes, block indices up to 2^64 - 1, wrong key types, bad COUNT and META tails):
    // each is an error reply, the server stays up, and no key changes or appears.
    use rand::{RngExt, SeedableRng, rngs::StdRng};
    let tmp = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(tmp.path(), Modules::LINEBLOOM, false) else {
        return;
    };
    let mut con = connect(&server.url()).unwrap();
    let shard: Vec<u8> = (0..4 * 64).map(|i| (i * 37 % 251) as u8).collect();
    let () = redis::cmd("SET")
        .arg("m:s")
        .arg(&shard)
        .query(&mut con)
        .unwrap();
    let () = redis::cmd("SET")
        .arg("m:meta")
        .arg("linebloom-v2 0 4 8")
        .query(&mut con)
        .unwrap();
    let () = redis::cmd("RPUSH")
        .arg("m:list")
        .arg("x")
        .query(&mut con)
        .unwrap();
    let mut rng = StdRng::seed_from_u64(33);
    let calls = 3_000;
    for i in 0..calls {
        let name = if rng.random::<bool>() {
            "LINEBLOOM.MTEST"
        } else {
            "LINEBLOOM.MADD"
        };
        let good_probe = module_probe(rng.random_range(0..4), rng.random());
        // The shard, then the batch's parts: scheme, k, blocks, probes.
        let mut parts: [Vec<u8>; 5] = [
            b"m:s".to_vec(),
            linebloom_redis_wire::SCHEME.as_bytes().to_vec(),
            b"8".to_vec(),
            b"4".to_vec(),
            good_probe.clone(),
        ];
        let mut tail: Vec<Vec<u8>> = Vec::new();
        let mut arity = None;
        let mut unassembled = None;
        // Exactly one defect per call, so every call must be refused.
        match i % 10 {
            0 => arity = Some(rng.random_range(0..2)), // wrong arity
            1 => {
                parts[2] = [&b"0"[..], b"17", b"-1", b"8x", b"", b"99999999999"]
                    [rng.random_range(0..6)]
                .to_vec()
            }
            2 => {
                parts[1] = [
                    &b"linebloom-v1"[..],
                    b"",
                    b"linebloom-v3",
                    b"linebloom-v2 ",
                    b"linebloom-v2/ascii-probes",
                ][rng.random_range(0..5)]
                .to_vec()
            }
            3 => {
                // Not whole probes: 1 to 18 bytes off a multiple of 19 (no probes at
                // all is a batch of no keys, and valid); or whole ones with a byte
                // outside the encoding.
                let len =
                    [rng.random_range(1..19), rng.random_range(20..38)][rng.random_range(0..2)];
                parts[4] = (0..len).map(|_| rng.random::<u8>() & 0x7f).collect();
                if rng.random_range(0..3) == 0 {
                    parts[4] = good_probe.clone();
                    parts[4][rng.random_range(0..19)] |= 0x80;
                }
            }
            4 => {
                let block = [4, 5, u32::MAX as u64, u64::MAX, u64::MAX - 1, 1 << 58]
                    [rng.random_range(0..6)];
                parts[4] = [good_probe.clone(), module_probe(block, rng.random())].concat();
            }
            5 => parts[0] = [&b"m:list"[..], b"m:missing"][rng.random_range(0..2)].to_vec(),
            6 => {
                let tails: [&[&[u8]]; 6] = [
                    &[b"META"],
                    &[b"META", b"m:meta"],
                    &[b"META", b"m:meta", b"linebloom-v2 0 4 8", b"extra"],
                    &[b"NOTMETA", b"m:meta", b"linebloom-v2 0 4 8"],
                    &[b"META", b"m:meta", b"linebloom-v2 9 4 8"],
                    &[b"COUNT"],
                ];
                tail.extend(tails[rng.random_range(0..6)].iter().map(|a| a.to_vec()));
            }
            7 => {
                // A shape whose shard is not this one's length, or no shape at all.
                parts[3] = [
                    &b"3"[..],
                    b"5",
                    b"0",
                    b"x",
                    b"",
                    b"-4",
                    b"18446744073709551615",
                ][rng.random_range(0..7)]
                .to_vec()
            }
            8 => {
                // A batch that is not one: the head's parts as arguments of their own
                // (an older client's layout), or a head cut short.
                let layouts: [&[&[u8]]; 3] = [
                    &[b"m:s", linebloom_redis_wire::SCHEME.as_bytes(), b"8", b"4"],
                    &[b"m:s", b"linebloom-v2:8:4"],
                    &[b"m:s", b"linebloom-v2:8"],
                ];
                let mut args: Vec<Vec<u8>> = layouts[rng.random_range(0..3)]
                    .iter()
                    .map(|a| a.to_vec())
                    .collect();
                args.push(good_probe.clone());
                unassembled = Some(args);
            }
            _ => tail.push(b"META".to_vec()),
        }
        let mut args = unassembled.unwrap_or_else(|| {
            let batch = [
                &parts[1][..],
                b":",
                &parts[2],
                b":",
                &parts[3],
                b":",
                &parts[4],
            ]
            .concat();
            vec![parts[0].clone(), batch]
        });
        args.extend(tail);
        if let Some(n) = arity {
            args.truncate(n);
        }
        let mut cmd = redis::cmd(name);
        for a in &args {
            cmd.arg(a);
        }
        let reply = cmd.query::<redis::Value>(&mut con);
        assert!(
            reply.is_err(),
            "call {i} ({name} {args:?}) was accepted: {reply:?}"
        );
    }
    let () = redis::cmd("PING").query(&mut con).unwrap();
    let after: Vec<u8> = redis::cmd("GET").arg("m:s").query(&mut con).unwrap();
    assert_eq!(after, shard, "a refused call wrote to the shard");
    let list: Vec<String> = redis::cmd("LRANGE")
        .arg("m:list")
        .arg(0)
        .arg(-1)
        .query(&mut con)
        .unwrap();
    assert_eq!(list, ["x"]);
    let keys: usize = redis::cmd("DBSIZE").query(&mut con).unwrap();
    assert_eq!(keys, 3, "a refused call created a key");
}
