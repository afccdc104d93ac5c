//! Does linebloom's single-key speed survive a call through a trait object? This runs
//! three loops on the same keys, interleaved, for linebloom and sbbf-rs-safe, and prints
//! each one's speed-up over sbbf-rs-safe called the same way and over sbbf-rs-safe
//! called directly:
//!
//! - `direct`: a loop monomorphised for the filter, as `compare` runs;
//! - `dyn per key`: a loop over `&dyn LabFilter` with one dynamic `contains` call per key,
//!   as the lab's `throughput` and `kernels` experiments ran until 2026-12-01;
//! - `dyn per pass`: one dynamic call per pass to [`LabFilter::count_each`], a provided
//!   method compiled per filter type, as the lab runs now.
//!
//! ```text
//! cargo run --release -p linebloom-benches --example dyn_dispatch -- [n]
//! ```
//!
//! On the AMD EPYC VM of 2026-12-01, one run at each of n = 1e4, 2e5 and 3e6, linebloom
//! against sbbf-rs-safe called the same way:
//!
//! | n | direct | dyn per key | dyn per pass |
//! |---|---|---|---|
//! | 1e4 | 1.61 | 1.12 | 1.46 |
//! | 2e5 | 1.45 | 1.00 | 1.38 |
//! | 3e6 | 1.35 | 1.05 | 1.31 |
//!
//! sbbf-rs-safe's own time hardly moves with the call (its probe is already an indirect
//! call). Out of line, linebloom's `contains` is a 38-instruction leaf, but each call
//! reloads the filter's fields and the salt constants and ends in `vzeroupper`; inline,
//! those stay in registers and LLVM hoists the kernel flag's test out of the loop.

use linebloom_benches::*;
use linebloom_lab::support::timing::{interleaved, ns_per_key, paired_speedup};
use std::hint::black_box;

/// Misses of `f` over `keys`, each key passed through `black_box` as in `compare`.
fn misses_direct<F: LabFilter>(f: &F, keys: &[u64]) -> u64 {
    // The lab's single-key loop, called on the concrete type: no dynamic call at all.
    f.count_each(keys)
}

/// The same loop with a dynamic call per key, as the lab's `throughput` called it (with the
/// same `black_box`, so that the two loops differ only in the call).
fn misses_dyn(f: &dyn LabFilter, keys: &[u64]) -> u64 {
    keys.iter().filter(|&&x| f.contains(black_box(x))).count() as u64
}

/// One dynamic call for the whole pass: the filter's own loop.
fn misses_dyn_pass(f: &dyn LabFilter, keys: &[u64]) -> u64 {
    f.count_each(keys)
}

/// A dynamic call per key against one per pass.
#[derive(clap::Parser)]
struct Args {
    /// Keys in each filter.
    #[arg(default_value_t = 10_000)]
    n: u64,
}

fn main() {
    let Args { n } = clap::Parser::parse();
    let keys = non_member_keys(PROBE_KEYS);
    let kernel = linebloom::arch::detect();
    let mut sbbf_direct = sbbf(n);
    fill_and_check(&mut sbbf_direct, n, &keys);
    let mut lb_direct = linebloom(n, kernel);
    fill_and_check(&mut lb_direct, n, &keys);
    let mut sbbf_dyn: Box<dyn LabFilter> = Box::new(sbbf(n));
    fill_and_check(&mut *sbbf_dyn, n, &keys);
    let mut lb_dyn: Box<dyn LabFilter> = Box::new(linebloom(n, kernel));
    fill_and_check(&mut *lb_dyn, n, &keys);

    let mut c0 = || ns_per_key(&keys, |k| misses_direct(&sbbf_direct, k));
    let mut c1 = || ns_per_key(&keys, |k| misses_direct(&lb_direct, k));
    let mut c2 = || ns_per_key(&keys, |k| misses_dyn(&*sbbf_dyn, k));
    let mut c3 = || ns_per_key(&keys, |k| misses_dyn(&*lb_dyn, k));
    let mut c4 = || ns_per_key(&keys, |k| misses_dyn_pass(&*sbbf_dyn, k));
    let mut c5 = || ns_per_key(&keys, |k| misses_dyn_pass(&*lb_dyn, k));
    let samples = interleaved(
        31,
        &mut [&mut c0, &mut c1, &mut c2, &mut c3, &mut c4, &mut c5],
    );
    let names = [
        "direct sbbf-rs-safe",
        "direct linebloom",
        "dyn per key sbbf-rs-safe",
        "dyn per key linebloom",
        "dyn per pass sbbf-rs-safe",
        "dyn per pass linebloom",
    ];
    println!(
        "n = {n}, kernel {}, 31 rounds, CPU time per pass, rotating start order",
        kernel.name
    );
    for (i, (name, s)) in names.iter().zip(&samples).enumerate() {
        let (median, _, _) = linebloom_lab::support::stats::summary(s);
        // sbbf-rs-safe called the same way: the even contender of this one's pair.
        println!(
            "{name:>26}: {median:6.2} ns a miss, {:.2}x sbbf-rs-safe called the same way, {:.2}x sbbf-rs-safe direct",
            paired_speedup(&samples[i & !1], s),
            paired_speedup(&samples[0], s)
        );
    }
}
