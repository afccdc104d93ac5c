//! Batched against single-key lookups on a 1.2 GiB filter, for choosing the prefetch
//! distance (`PREFETCH_DISTANCE` in `core/src/arch/mod.rs`): rebuild with each value and
//! compare the printed medians (of 5 passes over 2^24 probes that miss every cache).
//! Filled with 2e8 keys only (the lookup cost does not depend on the fill: no kernel
//! exits early), to keep each run short. The filter is on huge pages as
//! `BloomFilter::new` makes it; `--4k` runs it on ordinary pages instead.

use linebloom::BloomFilter;
use linebloom_benches::*;
use std::hint::black_box;
use std::time::Instant;

/// Batched against single-key lookups on a 1.2 GiB filter.
#[derive(clap::Parser)]
struct Args {
    /// The filter on ordinary 4 KiB pages instead of huge pages.
    #[arg(long = "4k")]
    small_pages: bool,
}

fn main() {
    let kernel = linebloom::arch::detect();
    if <Args as clap::Parser>::parse().small_pages {
        // Same filter in ordinary pages, for the comparison.
        return run(small_page_filter(1_000_000_000, kernel).0, "4k");
    }
    // As users build it: on huge pages (`Blocks::zeroed`).
    run(linebloom(1_000_000_000, kernel).0, "huge")
}

fn fill<S: AsRef<[linebloom::Block]> + AsMut<[linebloom::Block]>>(f: &mut BloomFilter<S>) {
    let keys: Vec<u64> = (0..1u64 << 16).map(member_key).collect();
    for i in 0..3000u64 {
        let chunk: Vec<u64> = keys.iter().map(|k| k ^ (i << 40)).collect();
        f.insert_batch(&chunk);
    }
}

fn run<S: AsRef<[linebloom::Block]> + AsMut<[linebloom::Block]>>(
    mut f: BloomFilter<S>,
    pages: &str,
) {
    fill(&mut f);
    let kernel = linebloom::arch::detect();
    let probes = dram_probes(3000 << 16);
    let mut out = vec![false; probes.len()];
    let (mut single, mut batched) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        black_box(probes.iter().filter(|&&k| f.contains(&k)).count());
        single.push(t.elapsed().as_nanos() as f64 / probes.len() as f64);
        let t = Instant::now();
        f.contains_batch(&probes, &mut out);
        black_box(&out);
        batched.push(t.elapsed().as_nanos() as f64 / probes.len() as f64);
    }
    single.sort_by(f64::total_cmp);
    batched.sort_by(f64::total_cmp);
    let thp = std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("AnonHugePages"))
                .map(str::to_owned)
        })
        .unwrap_or_default();
    print!(
        "[{thp}] {pages} pages, {}: single {:.2} ns, batched {:.2} ns, ratio {:.2}",
        kernel.name,
        single[3],
        batched[3],
        single[3] / batched[3]
    );
}
