//! The fuzz targets' checks (`fuzz/check.rs`) over the committed seeds and every crash
//! input the fuzzers ever found (`fuzz/regressions/<target>/`), in the normal test suite:
//! a fixed crash stays fixed without nightly or libFuzzer.
//!
//! To keep a new crash: copy `fuzz/artifacts/<target>/crash-*` into
//! `fuzz/regressions/<target>/` and commit it with the fix.
#![cfg(feature = "serde")]

#[path = "../fuzz/check.rs"]
mod check;

use std::path::Path;

/// Every file of `fuzz/<kind>/<target>/`, with its name.
fn inputs(kind: &str, target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(kind)
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| (path.display().to_string(), std::fs::read(&path).unwrap()))
        .collect()
}

#[test]
fn decode_seeds_and_regressions_replay() {
    let seeds = inputs("seeds", "decode");
    assert!(seeds.len() >= 5, "one seed per filter kind at least");
    for (name, bytes) in seeds.iter().chain(&inputs("regressions", "decode")) {
        println!("{name}");
        check::decode(bytes);
    }
    // The seeds are valid encodings: the checks above ran on real filters.
    assert!(seeds.iter().all(|(_, b)| b.starts_with(b"LBLM")));
}

#[test]
fn serde_json_seeds_and_regressions_replay() {
    let seeds = inputs("seeds", "serde_json");
    assert!(!seeds.is_empty());
    for (name, bytes) in seeds.iter().chain(&inputs("regressions", "serde_json")) {
        println!("{name}");
        check::serde_json(bytes);
    }
    let text = std::str::from_utf8(&seeds[0].1).unwrap();
    assert!(
        serde_json::from_str::<linebloom::BloomFilter>(text).is_ok(),
        "a valid seed"
    );
}
