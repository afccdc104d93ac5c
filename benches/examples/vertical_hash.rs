//! Does hashing four keys per vector speed up the batch operations? The same filter
//! shape, probed by `contains_batch` and filled by `insert_batch` with `u64` keys, once
//! with linebloom's `IntFold` (which the batch pipeline hashes vertically, a vector of
//! keys at a time, where the kernel has a vertical form) and once with `PlainFold`, a
//! hasher that computes the same function one key at a time (the scalar pipeline), plus
//! a control copy of `PlainFold`. All three run interleaved, the start order rotating
//! every round, each pass timed in CPU time; the table gives the median of the per-round
//! ratios `PlainFold ÷ contender` (> 1: the contender is faster), so the control's
//! column is the noise floor.
//!
//! ```text
//! cargo run --release -p linebloom-benches --example vertical_hash -- [rounds]
//! ```

use linebloom::{Blocks, BloomFilter, IntFold, KeyHasher, Params};
use linebloom_benches::*;
use linebloom_lab::timing::{interleaved, ns_per_key, paired_speedup};
use std::hint::black_box;

/// `IntFold`'s function, one key at a time: it does not tell the batch pipeline that it
/// is `IntFold`, so the pipeline calls `hash_u64` per key.
struct PlainFold;

impl KeyHasher for PlainFold {
    fn hash_bytes(&self, bytes: &[u8]) -> u64 {
        IntFold::default().hash_bytes(bytes)
    }
    #[inline(always)]
    fn hash_u64(&self, value: u64) -> u64 {
        IntFold::fold(value, 0)
    }
    fn hash_value<T: std::hash::Hash + ?Sized>(&self, value: &T) -> u64 {
        IntFold::default().hash_value(value)
    }
}

/// A filter for `n` keys at 1%, holding members `0..n` (inserted by `insert_batch`).
fn filled<H: KeyHasher>(n: u64, hasher: H) -> BloomFilter<Blocks, H> {
    let params = Params::for_fpr(n, TARGET_FPR).expect("valid size");
    let mut f = BloomFilter::with_hasher(params, hasher);
    let members: Vec<u64> = (0..n).map(member_key).collect();
    for chunk in members.chunks(1 << 16) {
        f.insert_batch(chunk);
    }
    f
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let probes = non_member_keys(PROBE_KEYS);
    println!(
        "kernel {}; median over {rounds} rounds of PlainFold's time ÷ the contender's",
        linebloom::arch::detect().name
    );
    println!("| n | op | IntFold | PlainFold control | IntFold ns/key |");
    println!("|---|---|---|---|---|");
    for n in [10_000u64, 1_000_000, 10_000_000] {
        let mut vertical = filled(n, IntFold::default());
        let mut plain = filled(n, PlainFold);
        let mut control = filled(n, PlainFold);
        // Same function, same shape: the three filters hold the same bits.
        assert_eq!(
            vertical.as_blocks(),
            plain.as_blocks(),
            "IntFold and PlainFold differ"
        );
        let members: Vec<u64> = (0..(PROBE_KEYS as u64).min(n)).map(member_key).collect();
        let mut outs = [(); 3].map(|_| vec![false; probes.len()]);
        let [o1, o2, o3] = &mut outs;
        let samples = interleaved(
            rounds,
            &mut [
                &mut || miss_of(&vertical, &probes, o1),
                &mut || miss_of(&plain, &probes, o2),
                &mut || miss_of(&control, &probes, o3),
            ],
        );
        row(n, "contains_batch", &samples);
        let samples = interleaved(
            rounds,
            &mut [
                &mut || insert_of(&mut vertical, &members),
                &mut || insert_of(&mut plain, &members),
                &mut || insert_of(&mut control, &members),
            ],
        );
        row(n, "insert_batch", &samples);
        assert_eq!(
            vertical.as_blocks(),
            plain.as_blocks(),
            "IntFold and PlainFold differ"
        );
    }
}

/// ns a key of one `contains_batch` pass over `probes`.
fn miss_of<H: KeyHasher>(f: &BloomFilter<Blocks, H>, probes: &[u64], out: &mut [bool]) -> f64 {
    ns_per_key(probes, |keys| {
        f.contains_batch(black_box(keys), out);
        out.iter().filter(|&&b| b).count() as u64
    })
}

/// ns a key of one `insert_batch` pass over `members` (already in: the bits stay).
fn insert_of<H: KeyHasher>(f: &mut BloomFilter<Blocks, H>, members: &[u64]) -> f64 {
    ns_per_key(members, |keys| {
        f.insert_batch(black_box(keys));
        keys.len() as u64
    })
}

/// One table row: the speed-ups against `PlainFold` (samples[1]) and IntFold's median.
fn row(n: u64, op: &str, samples: &[Vec<f64>]) {
    let (median, _, _) = linebloom_lab::stats::summary(&samples[0]);
    println!(
        "| {n:.0e} | {op} | {:.2} | {:.2} | {median:.2} |",
        paired_speedup(&samples[1], &samples[0]),
        paired_speedup(&samples[1], &samples[2]),
    );
}
