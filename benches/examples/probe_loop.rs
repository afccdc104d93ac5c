//! A bare lookup loop for `perf stat`/`perf record`: `cargo run --release -p
//! linebloom-benches --example probe_loop -- <contender> <n> <rounds>`.

use linebloom_benches::*;
use std::hint::black_box;
use std::time::Instant;

fn run<C: Filter>(mut c: C, n: u64, rounds: usize) {
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("avx2");
    let n: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let rounds: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(200);
    match which {
        "sbbf" => run(sbbf(n), n, rounds),
        "fastbloom" => run(fastbloom(n), n, rounds),
        kernel => run(
            linebloom(n, linebloom::arch::by_name(kernel).expect("kernel")),
            n,
            rounds,
        ),
    }
}
