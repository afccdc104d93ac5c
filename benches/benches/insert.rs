//! Single-key inserts into an empty filter of each capacity (the filter fills as the
//! benchmark runs; the work per insert does not depend on the fill).

use criterion::{BenchmarkId, Criterion, Throughput};
use linebloom_benches::*;
use std::hint::black_box;

fn bench_one<C: LabFilter>(c: &mut Criterion, mut filter: C, n: u64) {
    let keys: Vec<u64> = (0..PROBE_KEYS as u64).map(|i| member_key(i + n)).collect();
    let mut group = c.benchmark_group("insert");
    group.throughput(Throughput::Elements(KEYS_PER_ITER as u64));
    let mut start = 0;
    group.bench_function(BenchmarkId::new(filter.name(), n), |b| {
        b.iter(|| {
            for &k in &keys[start..start + KEYS_PER_ITER] {
                filter.insert(black_box(k));
            }
            start = (start + KEYS_PER_ITER) % (keys.len() - KEYS_PER_ITER);
        })
    });
    group.finish();
}

/// Registers `insert/*`.
pub fn register(c: &mut Criterion) {
    for n in capacities() {
        for kernel in linebloom::arch::available() {
            bench_one(c, linebloom(n, kernel), n);
        }
        bench_one(c, sbbf(n), n);
        bench_one(c, fastbloom(n), n);
    }
}
