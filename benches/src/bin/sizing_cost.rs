//! How long each sizing function takes, over a grid of capacities and rates that runs
//! from tiny to absurd (the goal: well under a millisecond for any input).
//!
//! `cargo run --release -p linebloom-benches --bin sizing_cost`
//!
//! Each call is timed in thread CPU time, 9 times; the table shows the median per call
//! and the worst median over the grid for each function.

use linebloom::{ClassicParams, Params};
use linebloom_lab::support::timing::thread_cpu_ns;

/// Capacities from one key to 2^64 − 1.
const CAPACITIES: [u64; 8] = [
    1,
    1_000,
    1_000_000,
    100_000_000,
    1 << 36,
    1 << 50,
    1 << 63,
    u64::MAX,
];
/// Rates from 0.5 to below any hash's floor.
const RATES: [f64; 7] = [0.5, 0.01, 1e-3, 1e-6, 1e-9, 1e-12, 1e-16];
const REPEATS: usize = 9;

/// Median CPU nanoseconds of one call of `f`.
fn median_ns(mut f: impl FnMut()) -> u64 {
    let mut times: Vec<u64> = (0..REPEATS)
        .map(|_| {
            let start = thread_cpu_ns();
            f();
            thread_cpu_ns() - start
        })
        .collect();
    times.sort_unstable();
    times[REPEATS / 2]
}

fn main() {
    type Sizing = (&'static str, fn(u64, f64) -> bool);
    let functions: [Sizing; 4] = [
        ("Params::for_fpr", |n, p| Params::for_fpr(n, p).is_ok()),
        ("linebloom::CountingParams::for_fpr", |n, p| {
            linebloom::CountingParams::for_fpr(n, p).is_ok()
        }),
        ("ClassicParams::for_fpr", |n, p| {
            ClassicParams::for_fpr(n, p).is_ok()
        }),
        ("Params::for_bits_per_key (p as 1/bits)", |n, p| {
            Params::for_bits_per_key(n, 1.0 / p).is_ok()
        }),
    ];
    println!("| function | median per call, worst over the grid | its input | inputs |");
    println!("|---|---:|---|---:|");
    for (name, f) in functions {
        let mut worst = (0u64, 0u64, 0.0f64);
        for &n in &CAPACITIES {
            for &p in &RATES {
                let ns = median_ns(|| {
                    std::hint::black_box(f(std::hint::black_box(n), std::hint::black_box(p)));
                });
                if ns > worst.0 {
                    worst = (ns, n, p);
                }
            }
        }
        println!(
            "| `{name}` | {:.1} µs | n = {}, p = {:e} | {} |",
            worst.0 as f64 / 1e3,
            worst.1,
            worst.2,
            CAPACITIES.len() * RATES.len()
        );
    }
}
