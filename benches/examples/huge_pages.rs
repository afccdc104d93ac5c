//! What huge pages buy a single-key lookup: linebloom as `BloomFilter::new` builds it
//! (mapped on transparent huge pages from 2 MiB up, `Blocks::zeroed`) against the same
//! filter on ordinary 4 KiB pages, next to sbbf-rs-safe and its control copy.
//!
//! ```text
//! cargo run --release -p linebloom-benches --example huge_pages -- [ROUNDS]
//! ```
//!
//! Negative lookups at n = 1e6, 1e7 and 1e8 (1.2 MiB, 12 MiB and 122 MiB filters),
//! interleaved with a rotating start order, CPU time per pass; prints each contender's
//! median ns per lookup, its median paired speed-up over sbbf-rs-safe, and the huge-page
//! bytes each filter added to the process (`AnonHugePages`).

use linebloom_benches::*;
use linebloom_lab::support::timing::{anon_huge_bytes, paired_speedup};

fn main() {
    let kernel = linebloom::arch::detect();
    let rounds = rounds_arg(9);
    let misses = &non_member_keys(PROBE_KEYS);
    for n in [1_000_000u64, 10_000_000, 100_000_000] {
        let mut contenders: Vec<(String, Box<dyn LabFilter>, u64)> = Vec::new();
        let mut add = |name: &str, mut f: Box<dyn LabFilter>| {
            let before = anon_huge_bytes();
            fill_and_check(f.as_mut(), n, misses);
            contenders.push((name.to_owned(), f, anon_huge_bytes() - before));
        };
        add("sbbf-rs-safe", Box::new(sbbf(n)));
        add("control", Box::new(sbbf(n)));
        add("linebloom", Box::new(linebloom(n, kernel)));
        add("linebloom-4k", Box::new(small_page_filter(n, kernel)));
        let refs: Vec<&dyn LabFilter> = contenders.iter().map(|(_, f, _)| f.as_ref()).collect();
        // One dynamic call per pass: each filter's own loop.
        let samples = interleaved_lookups(&refs, misses, rounds);
        for ((name, _, huge), s) in contenders.iter().zip(&samples) {
            let (median, _, _) = linebloom_lab::support::stats::summary(s);
            println!(
                "n = {n:>9}  {name:<13} {median:6.2} ns  ×{:.2} vs sbbf-rs-safe  huge pages {:>4} MiB",
                paired_speedup(&samples[0], s),
                huge >> 20
            );
        }
    }
}
