//! Untrusted JSON text into `BloomFilter`'s serde `Deserialize`.
#![no_main]

// Each target uses part of the shared checks.
#[allow(dead_code)]
#[path = "../check.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::serde_json(data));
