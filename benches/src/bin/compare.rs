//! Interleaved head-to-head on the same `u64` keys: the speed targets of the
//! single-key and batch paths (S1–S4, T2–T4 in `benches/README.md`), measured the way
//! this shared machine allows.
//!
//! ```text
//! cargo run --release -p linebloom-benches --bin compare -- [--rounds R] [--quick] [--out FILE]
//! ```
//!
//! Method (see `linebloom_lab::support::timing`):
//!
//! * every pass is timed in this thread's **CPU time**, not wall time;
//! * contenders run round-robin and the **start order rotates** every round;
//! * **sbbf-rs-safe** (XXH3-64, 10 bits per key) is the baseline, and an identical second
//!   copy of it, **`sbbf-rs-safe-control`**, is timed like any contender: its speed-up
//!   is the noise floor of every row of its table;
//! * a row's `speedup` is the median over rounds of `baseline time / contender time`
//!   in the same round (> 1 = faster than sbbf-rs-safe).
//!
//! Sizes n = 1e4, 1e6, 1e7 and 1e8 keys (1e8 left out by `--quick`), filters sized for
//! 1%, linebloom's built by `BloomFilter::new` (huge pages from 2 MiB up) with every SIMD
//! kernel this CPU runs (`linebloom-avx512` and `linebloom-avx2` on an AVX-512 CPU) and,
//! as `linebloom-4k-*`, the detected kernel's filter on ordinary pages, to show what the
//! pages buy. `split-block-256` is a 256-bit split-block filter on linebloom's hash
//! (`linebloom_lab::contenders::split_block`), sized to the detected kernel's measured rate
//! so that the two compare at equal false positives.
//!
//! Workloads: `hit` (members), `miss` (non-members), `insert` (keys not yet in, the same
//! keys each round, counting those the filter reports new: a dedup loop, which uses
//! every answer), `add` (the same keys, the answer not asked for: linebloom's `add`,
//! the rivals' insert with its answer dropped). All four also run `floor-1bit`
//! (`OneBitFloor`: one multiply, the block, one load and one bit a key on a buffer of
//! linebloom's size: the least a single-key probe that reads one line can do, so its
//! speed-up is the ceiling of any such filter of that size here). The miss table adds
//! `linebloom-batch` (`contains_batch`) and at 1e8 `random-read` (independent random
//! 64-byte reads over a buffer the filter's size: the memory system's limit). A last
//! table runs the atomic filters on 1 and 2 threads (`atomic-*`, per-key CPU time
//! summed over threads).
//!
//! Every contender's false-positive rate is measured on 2^20 non-members; the detected
//! kernel's linebloom filter's on 2^24 (`contains_batch`), whose binomial 99% interval
//! at 1% is ±0.006 percentage points (S4).

use linebloom::pattern::block_index;
use linebloom::{AtomicBloomFilter, Params};
use linebloom_benches::*;
use linebloom_lab::contenders::{SplitBlock256, blocked_xxh3, xxh3};
use linebloom_lab::support::stats::summary;
use linebloom_lab::support::timing::{
    interleaved, interleaved_boxed, ns_per_key, paired_speedup, parallel_cpu_ns,
};
use std::hint::black_box;

/// Runs one workload (a table name) over keys; returns a count so the work is kept.
type Run = Box<dyn FnMut(&str, &[u64]) -> u64>;

/// A contender boxed behind one closure, so heterogeneous filters run round-robin.
struct Entry {
    name: String,
    /// The tables this contender runs in.
    tables: &'static [&'static str],
    fpr: f64,
    /// How many non-members `fpr` was measured on.
    fpr_probes: usize,
    bits_per_key: f64,
    run: Run,
}

/// A filter contender: filled with `n` members, its FPR measured on `fpr_probes`.
fn filter_entry<C: LabFilter + 'static>(
    name: Option<&str>,
    mut c: C,
    n: u64,
    fpr_probes: &[u64],
) -> Entry {
    fill_and_check(&mut c, n, fpr_probes);
    Entry {
        name: name.map(str::to_owned).unwrap_or_else(|| c.name()),
        tables: &["hit", "miss", "insert", "add"],
        fpr: c.count_each(fpr_probes) as f64 / fpr_probes.len() as f64,
        fpr_probes: fpr_probes.len(),
        bits_per_key: c.bytes() as f64 * 8.0 / n as f64,
        run: single_key_run(c),
    }
}

/// The lab's own single-key loops (each key through `black_box`), compiled for `C`:
/// `insert` counts the keys the filter reports new (a dedup loop, which uses every
/// answer), `add` only fills (a loop that asks nothing).
fn single_key_run<C: LabFilter + 'static>(mut c: C) -> Run {
    Box::new(move |what, keys| match what {
        "insert" => c.dedup_each(keys),
        "add" => {
            c.insert_each(keys);
            0
        }
        _ => c.count_each(keys),
    })
}

/// linebloom's filter for `n` keys with `kernel`, its rate measured on `s4_probes`
/// through `contains_batch`.
fn linebloom_entry(
    n: u64,
    kernel: &'static linebloom::arch::Kernel,
    fpr_probes: &[u64],
    s4_probes: &[u64],
) -> Entry {
    let mut f = linebloom(n, kernel);
    fill_and_check(&mut f, n, fpr_probes);
    let mut out = vec![false; s4_probes.len()];
    f.0.contains_batch(s4_probes, &mut out);
    Entry {
        name: f.name(),
        tables: &["hit", "miss", "insert", "add"],
        fpr: out.iter().filter(|&&x| x).count() as f64 / s4_probes.len() as f64,
        fpr_probes: s4_probes.len(),
        bits_per_key: f.bytes() as f64 * 8.0 / n as f64,
        run: single_key_run(f),
    }
}

/// linebloom's `contains_batch` over the miss keys (a contender of the miss table).
fn batch_entry(n: u64, fpr_probes: &[u64]) -> Entry {
    let mut f = linebloom(n, linebloom::arch::detect());
    fill_and_check(&mut f, n, fpr_probes);
    let mut out = vec![false; fpr_probes.len()];
    f.0.contains_batch(fpr_probes, &mut out);
    let fpr = out.iter().filter(|&&x| x).count() as f64 / fpr_probes.len() as f64;
    Entry {
        name: "linebloom-batch".into(),
        tables: &["miss"],
        fpr,
        fpr_probes: fpr_probes.len(),
        bits_per_key: f.bytes() as f64 * 8.0 / n as f64,
        run: Box::new(move |_, keys| {
            f.0.contains_batch(black_box(keys), &mut out[..keys.len()]);
            out.iter().filter(|&&x| x).count() as u64
        }),
    }
}

/// Independent random 64-byte reads over a buffer of `bytes` (on huge pages, as the
/// filter is):
/// one read per key, the line from one multiply of the (random) key, so that almost
/// nothing but the read is timed: the memory system's limit.
///
/// Every line is written first, as a filled filter's are. A buffer never written reads
/// the kernel's zero page: with transparent huge pages, one shared 2 MiB physical page
/// behind every virtual 2 MiB, so the "random reads" would mostly hit the cache.
fn random_read_entry(bytes: usize) -> Entry {
    let mut buf = linebloom::Blocks::zeroed(bytes.div_ceil(64));
    for (i, line) in buf.as_mut().iter_mut().enumerate() {
        line.0[0] = i as u64;
    }
    Entry {
        name: "random-read".into(),
        tables: &["miss"],
        fpr: f64::NAN,
        fpr_probes: 0,
        bits_per_key: f64::NAN,
        run: Box::new(move |_, keys| {
            let blocks = buf.as_ref();
            keys.iter()
                .map(|&k| {
                    blocks[block_index(k.wrapping_mul(0x9e37_79b9_7f4a_7c15), blocks.len())].0[0]
                })
                .fold(0u64, u64::wrapping_add)
        }),
    }
}

struct Row {
    table: String,
    n: u64,
    contender: String,
    samples: Vec<f64>,
    speedup: f64,
    fpr: f64,
    fpr_probes: usize,
    bits_per_key: f64,
}

impl Row {
    /// The row as written: the samples summarized, every figure to the digits it needs.
    fn record(&self) -> CompareRecord {
        let (median, lo, hi) = summary(&self.samples);
        CompareRecord {
            table: self.table.clone(),
            n: self.n,
            contender: self.contender.clone(),
            median_cpu_ns: rounded(median, 3),
            min_cpu_ns: rounded(lo, 3),
            max_cpu_ns: rounded(hi, 3),
            speedup_vs_sbbf: rounded(self.speedup, 3),
            bits_per_key: rounded(self.bits_per_key, 3),
            measured_fpr: rounded(self.fpr, 6),
            fpr_probes: self.fpr_probes,
        }
    }
}

/// Non-members each contender's false-positive rate is measured on: 2^20, so that at
/// 1% the rate's relative standard error is 1%.
const FPR_PROBES: usize = 1 << 20;

/// Non-members the detected kernel's linebloom filter's rate is measured on (through
/// `contains_batch`): 2^24, over the 1e7 that S4 asks for.
const S4_PROBES: usize = 1 << 24;

/// Runs each workload over every contender that takes it; appends one row per pair.
fn run_size(n: u64, rounds: usize, rows: &mut Vec<Row>) {
    let misses = non_member_keys(PROBE_KEYS);
    let s4_probes = non_member_keys(S4_PROBES);
    let fpr_probes = &s4_probes[..FPR_PROBES].to_vec();
    let hits = hit_keys(n);
    let inserts: Vec<u64> = (0..PROBE_KEYS as u64).map(|i| member_key(i + n)).collect();
    let kernel = linebloom::arch::detect();
    let params = Params::for_fpr(n, TARGET_FPR).expect("valid size");
    let ours = linebloom_entry(n, kernel, fpr_probes, &s4_probes);
    // The split-block probe on linebloom's hash, sized to linebloom's measured rate, so
    // the two compare at equal false positives.
    let split_block = SplitBlock256::for_fpr(n, ours.fpr).expect("a measured rate in (0, 1)");
    drop(s4_probes);
    let mut entries = vec![
        filter_entry(None, sbbf(n), n, fpr_probes),
        filter_entry(Some("sbbf-rs-safe-control"), sbbf(n), n, fpr_probes),
        ours,
        filter_entry(None, split_block, n, fpr_probes),
        filter_entry(
            Some(&format!("linebloom-4k-{}", kernel.name)),
            small_page_filter(n, kernel),
            n,
            fpr_probes,
        ),
        filter_entry(None, blocked_xxh3(params, kernel), n, fpr_probes),
        filter_entry(None, fastbloom(n), n, fpr_probes),
        filter_entry(None, OneBitFloor::<0>::new(n), n, fpr_probes),
        batch_entry(n, fpr_probes),
    ];
    // The other SIMD kernels this CPU runs (AVX2 beside AVX-512), after the detected one.
    for other in linebloom::arch::available() {
        if !["scalar", "portable", kernel.name].contains(&other.name) {
            entries.push(filter_entry(None, linebloom(n, other), n, fpr_probes));
        }
    }
    if n >= 100_000_000 {
        entries.push(random_read_entry(params.bytes()));
    }
    for (table, keys) in [
        ("hit", &hits),
        ("miss", &misses),
        ("insert", &inserts),
        ("add", &inserts),
    ] {
        let mut active: Vec<&mut Entry> = entries
            .iter_mut()
            .filter(|e| e.tables.contains(&table))
            .collect();
        let samples = {
            let mut closures: Vec<Box<dyn FnMut() -> f64 + '_>> = active
                .iter_mut()
                .map(|e| {
                    let run = &mut e.run;
                    Box::new(move || ns_per_key(keys, |k| run(table, k))) as Box<dyn FnMut() -> f64>
                })
                .collect();
            interleaved_boxed(rounds, &mut closures)
        };
        for (e, s) in active.iter().zip(&samples) {
            rows.push(Row {
                table: table.into(),
                n,
                contender: e.name.clone(),
                speedup: paired_speedup(&samples[0], s),
                samples: s.clone(),
                fpr: e.fpr,
                fpr_probes: e.fpr_probes,
                bits_per_key: e.bits_per_key,
            });
        }
    }
}

/// CPU ns per key of `op` over `keys` split across `threads` scoped threads: the sum of
/// the threads' CPU times over the key count.
fn parallel(keys: &[u64], threads: usize, op: &(impl Fn(u64) -> bool + Sync)) -> f64 {
    parallel_cpu_ns(keys, threads, op) as f64 / keys.len() as f64
}

/// T4: linebloom's and fastbloom's atomic filters, inserts and lookups, 1 and 2 threads,
/// with an identical second fastbloom filter as the control.
fn run_atomic(n: u64, rounds: usize, rows: &mut Vec<Row>) {
    let misses = non_member_keys(PROBE_KEYS * 4);
    let inserts: Vec<u64> = (0..(PROBE_KEYS * 4) as u64)
        .map(|i| member_key(i + n))
        .collect();
    let ours = AtomicBloomFilter::new(Params::for_fpr(n, TARGET_FPR).expect("valid size"));
    let fast = || linebloom_lab::contenders::FastbloomAtomic::for_fpr(n, TARGET_FPR).0;
    let (theirs, control) = (fast(), fast());
    for i in 0..n {
        let k = member_key(i);
        ours.insert(&k);
        theirs.insert_hash(xxh3(k));
        control.insert_hash(xxh3(k));
    }
    let fpr_ours = misses.iter().filter(|&&k| ours.contains(&k)).count() as f64;
    let fpr_theirs = misses
        .iter()
        .filter(|&&k| theirs.contains_hash(xxh3(k)))
        .count() as f64;
    let m = misses.len() as f64;
    let bits = |bytes: usize| bytes as f64 * 8.0 / n as f64;
    let names = [
        "fastbloom-atomic",
        "fastbloom-atomic-control",
        "linebloom-atomic",
    ];
    let meta = [
        (fpr_theirs / m, bits(theirs.num_bits() / 8)),
        (fpr_theirs / m, bits(control.num_bits() / 8)),
        (fpr_ours / m, bits(ours.params().bytes())),
    ];
    for threads in [1usize, 2] {
        for (what, keys) in [("lookup", &misses), ("insert", &inserts)] {
            let lookup = what == "lookup";
            let mut c0 = || {
                parallel(keys, threads, &|k| {
                    if lookup {
                        theirs.contains_hash(xxh3(k))
                    } else {
                        theirs.insert_hash(xxh3(k))
                    }
                })
            };
            let mut c1 = || {
                parallel(keys, threads, &|k| {
                    if lookup {
                        control.contains_hash(xxh3(k))
                    } else {
                        control.insert_hash(xxh3(k))
                    }
                })
            };
            let mut c2 = || {
                parallel(keys, threads, &|k| {
                    if lookup {
                        ours.contains(&k)
                    } else {
                        ours.insert(&k)
                    }
                })
            };
            let samples = interleaved(rounds, &mut [&mut c0, &mut c1, &mut c2]);
            for ((name, s), (fpr, bpk)) in names.iter().zip(&samples).zip(meta) {
                rows.push(Row {
                    table: format!("atomic-{what}-{threads}t"),
                    n,
                    contender: name.to_string(),
                    speedup: paired_speedup(&samples[0], s),
                    samples: s.clone(),
                    fpr,
                    fpr_probes: misses.len(),
                    bits_per_key: bpk,
                });
            }
        }
    }
}

/// Interleaved head-to-head on the same keys: the speed targets of benches/README.md.
#[derive(clap::Parser)]
struct Args {
    /// Rounds per workload; the start order rotates every round.
    #[arg(long, default_value_t = 15)]
    rounds: usize,
    /// Leave out 1e8 keys.
    #[arg(long)]
    quick: bool,
    /// Also write the CSV to this file.
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = <Args as clap::Parser>::parse();
    let rounds = args.rounds;
    eprintln!(
        "kernel {}, {rounds} rounds, CPU time per pass, rotating start order",
        linebloom::arch::active_kernel()
    );

    let mut rows: Vec<Row> = Vec::new();
    let sizes: &[u64] = if args.quick {
        &[10_000, 1_000_000, 10_000_000]
    } else {
        &[10_000, 1_000_000, 10_000_000, 100_000_000]
    };
    for &n in sizes {
        run_size(n, rounds, &mut rows);
        eprintln!("n = {n} done");
    }
    run_atomic(1_000_000, rounds, &mut rows);
    eprintln!("atomic done");

    let mut stdout = csv::Writer::from_writer(std::io::stdout());
    let mut file = match &args.out {
        Some(path) => Some(
            csv::Writer::from_path(path)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
        ),
        None => None,
    };
    for r in &rows {
        let record = r.record();
        stdout.serialize(&record)?;
        if let Some(file) = &mut file {
            file.serialize(&record)?;
        }
    }
    stdout.flush()?;
    if let Some(file) = &mut file {
        file.flush()?;
    }
    Ok(())
}
