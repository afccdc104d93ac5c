//! Quick start: size a filter for one million keys at 1%, fill it, measure its
//! false-positive rate on a million keys that were never inserted, and round-trip it
//! through the binary format.
//!
//! `cargo run --release --example quickstart -p linebloom`

use linebloom::{BloomFilter, Params, fpr};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u64 = 1_000_000;
    let target = 0.01;
    let t0 = Instant::now();
    let params = Params::for_fpr(n, target)?;
    let sizing = t0.elapsed();
    let mut filter = BloomFilter::new(params);
    println!(
        "linebloom quickstart: kernel {}",
        linebloom::active_kernel()
    );
    println!(
        "sized for n = {n}, p = {target}: {} blocks, k = {}, {} bytes ({:.2} bits/key), in {:.1} ms",
        params.blocks(),
        params.k(),
        params.bytes(),
        params.bits_per_key(n),
        sizing.as_secs_f64() * 1e3
    );

    // Members are the even numbers, non-members the odd ones: disjoint by construction.
    let t0 = Instant::now();
    for i in 0..n {
        filter.insert(&(2 * i));
    }
    let insert_ns = t0.elapsed().as_nanos() as f64 / n as f64;
    let missing = (0..n).filter(|i| !filter.contains(&(2 * i))).count();
    assert_eq!(missing, 0, "false negatives");

    let probes = 1_000_000u64;
    let t0 = Instant::now();
    let false_positives = (0..probes)
        .filter(|i| filter.contains(&(2 * i + 1)))
        .count();
    let query_ns = t0.elapsed().as_nanos() as f64 / probes as f64;
    let measured = false_positives as f64 / probes as f64;
    println!(
        "measured FPR {measured:.5} ({false_positives} of {probes} non-members); \
         predicted (blocked formula) {:.5}; classic formula at the same memory {:.5}",
        params.expected_fpr(n),
        fpr::classic_approx(params.bits() as f64, params.k(), n as f64)
    );
    println!(
        "fill ratio {:.3}, estimated len {:.0}, estimated FPR from the bits {:.5}",
        filter.fill_ratio(),
        filter.estimated_len(),
        filter.estimated_fpr()
    );
    println!(
        "insert {insert_ns:.1} ns/key, negative lookup {query_ns:.1} ns/key (single-threaded, one run)"
    );

    let bytes = filter.to_bytes();
    let copy = BloomFilter::from_bytes(&bytes)?;
    assert_eq!(copy, filter);
    println!("format round trip: {} bytes, identical filter", bytes.len());
    Ok(())
}
