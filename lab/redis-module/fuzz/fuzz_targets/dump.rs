//! Untrusted bytes as a key's saved value (an RDB file, a `RESTORE` payload) and as the
//! pieces of a `LOADCHUNK` load, for both data types, as they are and with the dump's
//! checksums recomputed so that the fuzzer reaches the filter decoders behind them.
#![no_main]

#[path = "../check.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::dump(data));
