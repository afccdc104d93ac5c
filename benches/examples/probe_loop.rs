//! A bare lookup loop for `perf stat`/`perf record`: `cargo run --release -p
//! linebloom-benches --example probe_loop -- <contender> <n> <rounds>`.

use linebloom_benches::*;
use std::hint::black_box;
use std::time::Instant;

fn run<C: LabFilter>(mut c: C, n: u64, rounds: usize) {
    let misses = non_member_keys(PROBE_KEYS);
    fill_and_check(&mut c, n, &misses);
    let t = Instant::now();
    let mut found = 0u64;
    for _ in 0..rounds {
        for &k in &misses {
            found += c.contains(black_box(k)) as u64;
        }
    }
    let ns = t.elapsed().as_nanos() as f64 / (rounds * misses.len()) as f64;
    println!("{}: {ns:.2} ns/lookup ({found} hits)", c.name());
}

/// A bare lookup loop, for `perf stat` and `perf record`.
#[derive(clap::Parser)]
struct Args {
    /// `sbbf`, `fastbloom`, or a linebloom kernel this CPU runs.
    #[arg(default_value = "avx2")]
    which: String,
    /// Keys in the filter.
    #[arg(default_value_t = 10_000)]
    n: u64,
    /// Passes over the probe keys.
    #[arg(default_value_t = 200)]
    rounds: usize,
}

fn main() -> anyhow::Result<()> {
    let Args { which, n, rounds } = clap::Parser::parse();
    match which.as_str() {
        "sbbf" => run(sbbf(n), n, rounds),
        "fastbloom" => run(fastbloom(n), n, rounds),
        kernel => {
            let kernel = linebloom::arch::by_name(kernel)
                .ok_or_else(|| anyhow::anyhow!("no kernel {kernel:?} on this CPU"))?;
            run(linebloom(n, kernel), n, rounds)
        }
    }
    Ok(())
}
