//! The fuzz target's checks (`check.rs`) over the committed seeds and regressions, in
//! the module's unit tests (`src/lib.rs` includes this file; an integration test would
//! link the server's allocator): every input the fuzzer started from or once failed on
//! keeps passing without nightly or libFuzzer.

#[path = "check.rs"]
mod check;

#[test]
fn seeds_and_regressions_pass_the_fuzz_checks() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut ran = 0;
    for dir in ["seeds/dump", "regressions/dump"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            check::dump(&bytes);
            // Cut short and flipped, as the fuzzer would first try.
            check::dump(&bytes[..bytes.len() / 2]);
            let mut flipped = bytes.clone();
            if let Some(b) = flipped.get_mut(60) {
                *b ^= 0xff;
            }
            check::dump(&flipped);
            ran += 1;
        }
    }
    assert!(ran >= 3, "the seeds are committed ({ran} found)");
}

/// Writes the seeds: a dump of each filter shape (`cargo test --profile tests
/// --manifest-path lab/redis-module/Cargo.toml --target-dir target -- --ignored
/// write_seeds`).
#[test]
#[ignore = "writes fuzz/seeds/dump; run by hand when the dump format changes"]
fn write_seeds() {
    use linebloom_redis::bf::{BfFilter, BfOptions};
    use linebloom_redis::cf::{CfFilter, CfOptions};
    use linebloom_redis::dump::{Kind, seal};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/dump");
    std::fs::create_dir_all(&dir).unwrap();
    let mut scaling = BfFilter::new(BfOptions {
        capacity: 20,
        ..BfOptions::default()
    })
    .unwrap();
    let mut fixed = BfFilter::new(BfOptions {
        capacity: 30,
        expansion: 0,
        ..BfOptions::default()
    })
    .unwrap();
    let mut cf = CfFilter::new(CfOptions {
        capacity: 40,
        expansion: 2,
        ..CfOptions::default()
    })
    .unwrap();
    for i in 0..100u32 {
        let item = i.to_le_bytes();
        scaling.add(&item).unwrap();
        let _ = fixed.add(&item);
        cf.add(&item).unwrap();
    }
    cf.delete(&7u32.to_le_bytes());
    for (name, kind, body) in [
        ("bf-scaling.dump", Kind::Bf, scaling.to_body()),
        ("bf-fixed.dump", Kind::Bf, fixed.to_body()),
        ("cf-layers.dump", Kind::Cf, cf.to_body()),
    ] {
        std::fs::write(dir.join(name), seal(kind, &body)).unwrap();
    }
}
