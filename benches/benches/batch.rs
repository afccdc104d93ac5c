//! `contains_batch` against the single-key loop, on the same filled filter, for the
//! L3-sized and the DRAM-sized capacity (batching only pays once lines miss the cache).

use criterion::{BenchmarkId, Criterion, Throughput};
use linebloom_benches::*;
use std::hint::black_box;

/// Registers `batch/single/*` and `batch/batched/*`.
pub fn register(c: &mut Criterion) {
    let misses = non_member_keys(PROBE_KEYS);
    // A mix of hits and misses, as a real workload sees.
    let mut probes: Vec<u64> = misses.iter().copied().step_by(2).collect();
    for n in capacities().into_iter().filter(|&n| n >= 10_000_000) {
        probes.truncate(PROBE_KEYS / 2);
        probes.extend(hit_keys(n).into_iter().step_by(2));
        for kernel in linebloom::arch::available().filter(|k| k.name != "portable") {
            let mut f = linebloom(n, kernel);
            fill_and_check(&mut f, n, &misses);
            let name = format!("{}-{}MiB", f.name(), f.bytes() >> 20);
            let mut group = c.benchmark_group("batch");
            group.throughput(Throughput::Elements(KEYS_PER_ITER as u64));
            let mut start = 0;
            group.bench_function(BenchmarkId::new(format!("single/{name}"), n), |b| {
                b.iter(|| {
                    let chunk = &probes[start..start + KEYS_PER_ITER];
                    start = (start + KEYS_PER_ITER) % (probes.len() - KEYS_PER_ITER);
                    black_box(
                        chunk
                            .iter()
                            .filter(|&&k| f.0.contains(black_box(&k)))
                            .count(),
                    )
                })
            });
            let mut out = vec![false; KEYS_PER_ITER];
            let mut start = 0;
            group.bench_function(BenchmarkId::new(format!("batched/{name}"), n), |b| {
                b.iter(|| {
                    let chunk = &probes[start..start + KEYS_PER_ITER];
                    start = (start + KEYS_PER_ITER) % (probes.len() - KEYS_PER_ITER);
                    f.0.contains_batch(black_box(chunk), &mut out);
                    black_box(out.iter().filter(|&&x| x).count())
                })
            });
            group.finish();
        }
    }
}
