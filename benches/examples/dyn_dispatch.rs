//! Does linebloom's single-key speed survive a call through a trait object? The lab's
//! `throughput` experiment calls every contender through `Box<dyn Filter>`, `compare`
//! through monomorphised loops; this runs both ways on the same keys, interleaved, for
//! linebloom and sbbf-rs-safe, and prints each one's speed-up over sbbf-rs-safe called
//! directly and over sbbf-rs-safe called through the trait object.
//!
//! ```text
//! cargo run --release -p linebloom-benches --example dyn_dispatch -- [n]
//! ```
//!
//! On the AMD EPYC VM of 2026-12-01, one run at each of n = 1e4, 2e5 and 3e6:
//! linebloom called directly was 1.62, 1.44 and 1.29× sbbf-rs-safe; through the trait
//! object 1.14, 0.98 and 1.02× sbbf-rs-safe called the same way, whose own probe is
//! already an indirect call. The advantage lives in the
//! caller's loop: the inline probe, and the flag test LLVM hoists out of it.

use linebloom_benches::*;
use linebloom_lab::timing::{interleaved, ns_per_key, paired_speedup};
use std::hint::black_box;

/// Misses of `f` over `keys`, each key passed through `black_box` as in `compare`.
fn misses_direct<F: Filter>(f: &F, keys: &[u64]) -> u64 {
    keys.iter().filter(|&&x| f.contains(black_box(x))).count() as u64
}

/// The same loop through the trait object, as the lab's `throughput` calls it (with the
/// same `black_box`, so that the two loops differ only in the call).
fn misses_dyn(f: &dyn Filter, keys: &[u64]) -> u64 {
    keys.iter().filter(|&&x| f.contains(black_box(x))).count() as u64
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let keys = non_member_keys(PROBE_KEYS);
    let kernel = linebloom::arch::detect();
    let mut sbbf_direct = sbbf(n);
    fill_and_check(&mut sbbf_direct, n, &keys);
    let mut lb_direct = linebloom(n, kernel);
    fill_and_check(&mut lb_direct, n, &keys);
    let mut sbbf_dyn: Box<dyn Filter> = Box::new(sbbf(n));
    fill_and_check(&mut *sbbf_dyn, n, &keys);
    let mut lb_dyn: Box<dyn Filter> = Box::new(linebloom(n, kernel));
    fill_and_check(&mut *lb_dyn, n, &keys);

    let mut c0 = || ns_per_key(&keys, |k| misses_direct(&sbbf_direct, k));
    let mut c1 = || ns_per_key(&keys, |k| misses_direct(&lb_direct, k));
    let mut c2 = || ns_per_key(&keys, |k| misses_dyn(&*sbbf_dyn, k));
    let mut c3 = || ns_per_key(&keys, |k| misses_dyn(&*lb_dyn, k));
    let samples = interleaved(31, &mut [&mut c0, &mut c1, &mut c2, &mut c3]);
    let names = [
        "sbbf-rs-safe",
        "linebloom",
        "dyn sbbf-rs-safe",
        "dyn linebloom",
    ];
    println!(
        "n = {n}, kernel {}, 31 rounds, CPU time per pass, rotating start order",
        kernel.name
    );
    for (name, s) in names.iter().zip(&samples) {
        let (median, _, _) = linebloom_lab::stats::summary(s);
        println!(
            "{name:>18}: {median:6.2} ns a miss, {:.2}x sbbf-rs-safe direct, {:.2}x through dyn",
            paired_speedup(&samples[0], s),
            paired_speedup(&samples[2], s)
        );
    }
}
