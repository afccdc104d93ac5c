//! Untrusted bytes into every decoder (each kind, both stable hashers, `view`), as they
//! are and with the checksum recomputed so the fuzzer reaches the checks behind it.
#![no_main]

// Each target uses part of the shared checks.
#[allow(dead_code)]
#[path = "../check.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::decode(data));
