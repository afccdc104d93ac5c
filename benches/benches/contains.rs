//! Single-key lookups, hits and misses, for every linebloom kernel and both rivals at
//! every capacity. Each filter is filled to capacity first and its measured FPR logged
//! (`target/linebloom-bench/fpr.csv`), so speed is read next to accuracy.

use criterion::{BenchmarkId, Criterion, Throughput};
use linebloom_benches::*;
use std::hint::black_box;

fn bench_one<C: LabFilter>(c: &mut Criterion, mut filter: C, n: u64, misses: &[u64]) {
    fill_and_check(&mut filter, n, misses);
    let hits = hit_keys(n);
    for (what, keys) in [("hit", &hits[..]), ("miss", misses)] {
        let mut group = c.benchmark_group(format!("contains/{what}"));
        group.throughput(Throughput::Elements(KEYS_PER_ITER as u64));
        let mut start = 0;
        group.bench_function(BenchmarkId::new(filter.name(), n), |b| {
            b.iter(|| {
                let chunk = &keys[start..start + KEYS_PER_ITER];
                start = (start + KEYS_PER_ITER) % (keys.len() - KEYS_PER_ITER);
                let mut found = 0u32;
                for &k in chunk {
                    found += filter.contains(black_box(k)) as u32;
                }
                black_box(found)
            })
        });
        group.finish();
    }
}

/// Registers `contains/hit/*` and `contains/miss/*`.
pub fn register(c: &mut Criterion) {
    let misses = non_member_keys(PROBE_KEYS);
    for n in capacities() {
        for kernel in linebloom::arch::available() {
            bench_one(c, linebloom(n, kernel), n, &misses);
        }
        bench_one(c, sbbf(n), n, &misses);
        bench_one(c, fastbloom(n), n, &misses);
    }
}
