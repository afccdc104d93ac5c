//! Interleaved head-to-head: every contender on the same keys, round-robin, so that a
//! noisy neighbour slows all contenders alike. Prints and writes the median ns/op per
//! contender and its ratio to sbbf-rs-safe, with min and max across rounds.
//!
//! `cargo run --release -p linebloom-benches --bin compare -- [--rounds R] [--quick] [--out FILE]`
//!
//! Workloads: single-key insert, lookup of members (hit) and non-members (miss) at
//! n = 1e4, 1e6, 1e7 (1% target), and on a ≥ 1 GiB filter the single-key loop against
//! `contains_batch`.

use linebloom_benches::*;
use std::hint::black_box;
use std::io::Write;
use std::time::Instant;

/// One timed pass of `op` over `keys`; returns ns per key.
fn time_pass(keys: &[u64], mut op: impl FnMut(&[u64]) -> u64) -> f64 {
    let t = Instant::now();
    black_box(op(keys));
    t.elapsed().as_nanos() as f64 / keys.len() as f64
}

struct Row {
    workload: String,
    n: u64,
    contender: String,
    samples: Vec<f64>,
    fpr: f64,
    bits_per_key: f64,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs one workload (`"insert"`, or a lookup) over keys; returns the hit count.
type Workload = Box<dyn FnMut(&str, &[u64]) -> u64>;

/// A contender boxed behind closures, so heterogeneous filters run round-robin.
struct Entry {
    name: String,
    fpr: f64,
    bits_per_key: f64,
    run: Workload,
}

fn entry<C: Filter + 'static>(mut c: C, n: u64, misses: &[u64]) -> Entry {
    fill_and_check(&mut c, n, misses);
    let fpr = misses.iter().filter(|&&k| c.contains(k)).count() as f64 / misses.len() as f64;
    let bits_per_key = c.bytes() as f64 * 8.0 / n as f64;
    let name = c.name();
    Entry {
        name,
        fpr,
        bits_per_key,
        run: Box::new(move |what, keys| match what {
            "insert" => {
                for &k in keys {
                    c.insert(black_box(k));
                }
                0
            }
            _ => keys.iter().filter(|&&k| c.contains(black_box(k))).count() as u64,
        }),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let rounds: usize = flag("--rounds").and_then(|s| s.parse().ok()).unwrap_or(15);
    let quick = args.iter().any(|a| a == "--quick");
    let out = flag("--out");

    let misses = non_member_keys(PROBE_KEYS);
    let mut rows: Vec<Row> = Vec::new();
    for n in [10_000u64, 1_000_000, 10_000_000] {
        let hits = hit_keys(n);
        let insert_keys: Vec<u64> = (0..PROBE_KEYS as u64).map(|i| member_key(i + n)).collect();
        let mut entries = vec![entry(sbbf(n), n, &misses)];
        for kernel in linebloom::arch::available() {
            entries.push(entry(linebloom(n, kernel), n, &misses));
        }
        entries.push(entry(fastbloom(n), n, &misses));
        for (workload, keys) in [("hit", &hits), ("miss", &misses), ("insert", &insert_keys)] {
            let mut samples = vec![Vec::new(); entries.len()];
            for _ in 0..rounds {
                for (e, s) in entries.iter_mut().zip(&mut samples) {
                    s.push(time_pass(keys, |k| (e.run)(workload, k)));
                }
            }
            for (e, s) in entries.iter().zip(samples) {
                rows.push(Row {
                    workload: workload.into(),
                    n,
                    contender: e.name.clone(),
                    samples: s,
                    fpr: e.fpr,
                    bits_per_key: e.bits_per_key,
                });
            }
        }
        eprintln!("n = {n} done");
    }

    if !quick {
        // Batched against single-key lookups on a ≥ 1 GiB filter (mixed hits and misses).
        let n = 900_000_000u64;
        let kernel = linebloom::arch::detect();
        let mut f = linebloom(n, kernel);
        fill_and_check(&mut f, n, &misses);
        // 2^24 probes touch 16M distinct lines (1 GiB), more than any cache here holds
        // (300 MiB L3), so every lookup goes to DRAM. Half are members, half not.
        let probes = dram_probes(n);
        let mut out = vec![false; probes.len()];
        let (mut single, mut batched) = (Vec::new(), Vec::new());
        for _ in 0..rounds.min(5) {
            single.push(time_pass(&probes, |k| {
                k.iter().filter(|&&x| f.0.contains(black_box(&x))).count() as u64
            }));
            batched.push(time_pass(&probes, |k| {
                f.0.contains_batch(black_box(k), &mut out);
                out.iter().filter(|&&x| x).count() as u64
            }));
        }
        let label = format!("{}-{}MiB", f.name(), f.bytes() >> 20);
        let bpk = f.bytes() as f64 * 8.0 / n as f64;
        for (mode, s) in [("single", single), ("batched", batched)] {
            rows.push(Row {
                workload: format!("dram-{mode}"),
                n,
                contender: label.clone(),
                samples: s,
                fpr: f64::NAN,
                bits_per_key: bpk,
            });
        }
    }

    let mut text = String::from(
        "workload,n,contender,median_ns,min_ns,max_ns,ratio_vs_first,bits_per_key,measured_fpr\n",
    );
    let mut baseline = f64::NAN;
    let mut last_group = (String::new(), 0);
    for r in &mut rows {
        let (lo, hi) = (
            r.samples.iter().copied().fold(f64::INFINITY, f64::min),
            r.samples.iter().copied().fold(0.0, f64::max),
        );
        let med = median(&mut r.samples);
        if (r.workload.clone(), r.n) != last_group {
            baseline = med;
            last_group = (r.workload.clone(), r.n);
        }
        let line = format!(
            "{},{},{},{med:.3},{lo:.3},{hi:.3},{:.3},{:.3},{:.5}\n",
            r.workload,
            r.n,
            r.contender,
            med / baseline,
            r.bits_per_key,
            r.fpr
        );
        print!("{line}");
        text.push_str(&line);
    }
    if let Some(path) = out {
        let mut f =
            std::fs::File::create(&path).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
        f.write_all(text.as_bytes()).expect("write results");
    }
}
