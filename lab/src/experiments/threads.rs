//! `threads`: `AtomicBloomFilter` insert and lookup throughput against the number of
//! threads (1 to the machine's cores), against fastbloom's `AtomicBloomFilter` on the
//! same keys. Each thread works on its own slice of keys. Timing is per-thread CPU time
//! (see [`crate::support::timing`]): the figure is `threads × operations / (sum of the threads'
//! CPU seconds)`, the rate the threads reach when each has a core to itself, so a
//! neighbour's load on this shared machine does not count against anyone. Contenders
//! run interleaved with a rotating start order, and an identical second fastbloom
//! filter (`fastbloom-atomic-control`) is the noise floor. The CSV has the median, min
//! and max of the rounds.

use crate::Ctx;
use crate::contenders::xxh3;
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::member_key;
use crate::support::plot::{LineChart, Series, Style};
use crate::support::stats::summary as med;
use crate::support::table::markdown_table;
use crate::support::timing::{interleaved, parallel_cpu_ns};
use linebloom::{AtomicBloomFilter, Params};
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "threads";

/// One CSV row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// linebloom-atomic or fastbloom-atomic.
    pub contender: String,
    /// insert or lookup.
    pub workload: String,
    /// Threads.
    pub threads: usize,
    /// Median million operations per second (all threads).
    pub median_mops: f64,
    /// Slowest round.
    pub min_mops: f64,
    /// Fastest round.
    pub max_mops: f64,
}

/// Runs `op` over `keys` split across `threads` scoped threads; returns Mops/s as
/// `threads × keys / Σ thread CPU time`.
fn parallel(keys: &[u64], threads: usize, op: &(impl Fn(u64) -> bool + Sync)) -> f64 {
    let cpu_ns = parallel_cpu_ns(keys, threads, op);
    threads as f64 * keys.len() as f64 / (cpu_ns.max(1) as f64 * 1e-9) / 1e6
}

/// The contenders, in CSV order.
const CONTENDERS: [&str; 3] = [
    "linebloom-atomic",
    "fastbloom-atomic",
    "fastbloom-atomic-control",
];

/// The `threads` experiment.
pub struct Threads;

impl Experiment for Threads {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str =
        "AtomicBloomFilter throughput vs threads, against fastbloom's AtomicBloomFilter";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (n, ops, rounds) = ctx.scale.pick(
            (100_000u64, 200_000usize, 3usize),
            (1_000_000, 1_000_000, 5),
            (10_000_000, 4_000_000, 7),
            (100_000_000, 16_000_000, 9),
        );
        let cores = std::thread::available_parallelism()
            .map(|c| c.get())
            .unwrap_or(1);
        let keys: Vec<u64> = (0..ops as u64).map(|i| member_key(ctx, i)).collect();
        let probes: Vec<u64> = (0..ops as u64)
            .map(|i| member_key(ctx, i.wrapping_mul(7)) | 1)
            .collect();
        let mut rows = Vec::new();
        let bar = crate::support::progress::bar(ctx, cores as u64, NAME);
        for threads in 1..=cores {
            let ours = AtomicBloomFilter::new(Params::for_fpr(n, 0.01)?);
            let fast = || crate::contenders::FastbloomAtomic::for_fpr(n, 0.01).0;
            let (theirs, control) = (fast(), fast());
            let inserts = interleaved(
                rounds,
                &mut [
                    &mut || parallel(&keys, threads, &|k| ours.insert(&k)),
                    &mut || parallel(&keys, threads, &|k| theirs.insert_hash(xxh3(k))),
                    &mut || parallel(&keys, threads, &|k| control.insert_hash(xxh3(k))),
                ],
            );
            let lookups = interleaved(
                rounds,
                &mut [
                    &mut || parallel(&probes, threads, &|k| ours.contains(&k)),
                    &mut || parallel(&probes, threads, &|k| theirs.contains_hash(xxh3(k))),
                    &mut || parallel(&probes, threads, &|k| control.contains_hash(xxh3(k))),
                ],
            );
            for (w, samples) in [("insert", inserts), ("lookup", lookups)] {
                for (c, s) in CONTENDERS.iter().zip(&samples) {
                    let (m, lo, hi) = med(s);
                    rows.push(Row {
                        contender: c.to_string(),
                        workload: w.to_string(),
                        threads,
                        median_mops: m,
                        min_mops: lo,
                        max_mops: hi,
                    });
                }
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Draws Mops/s against threads.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let mut series = Vec::new();
        for c in ["linebloom-atomic", "fastbloom-atomic"] {
            for w in ["insert", "lookup"] {
                let pts: Vec<(f64, f64)> = rows
                    .iter()
                    .filter(|r| r.contender == c && r.workload == w)
                    .map(|r| (r.threads as f64, r.median_mops))
                    .collect();
                series.push(Series {
                    name: format!("{c} {w}"),
                    colour_key: c.trim_end_matches("-atomic").to_string(),
                    points: pts,
                    errors: Some(
                        rows.iter()
                            .filter(|r| r.contender == c && r.workload == w)
                            .map(|r| (r.min_mops, r.max_mops))
                            .collect(),
                    ),
                    style: if w == "insert" {
                        Style::Measured
                    } else {
                        Style::Reference
                    },
                });
            }
        }
        let frame = LineChart::new(
            "Concurrent filter throughput vs threads",
            "threads",
            "million ops/s (all threads)",
        );
        crate::support::plot::line_chart(&run.dir, &frame, &series)
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let table: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                vec![
                    r.contender.clone(),
                    r.workload.clone(),
                    r.threads.to_string(),
                    format!("{:.1}", r.median_mops),
                    format!("{:.1}–{:.1}", r.min_mops, r.max_mops),
                ]
            })
            .collect();
        let behind: Vec<String> = rows
            .iter()
            .filter(|r| r.contender == "linebloom-atomic")
            .filter_map(|o| {
                let t = rows.iter().find(|r| {
                    r.contender == "fastbloom-atomic"
                        && r.workload == o.workload
                        && r.threads == o.threads
                })?;
                (t.median_mops > o.median_mops).then(|| {
                    format!(
                        "{} with {} thread(s): {:.1} vs {:.1} Mops/s",
                        o.workload, o.threads, t.median_mops, o.median_mops
                    )
                })
            })
            .collect();
        let cores = rows.iter().map(|r| r.threads).max().unwrap_or(1);
        Ok(Summary {
            table: markdown_table(
                &["contender", "workload", "threads", "median Mops/s", "range"],
                &table,
            ),
            caption: format!(
                "Operations per second across threads (threads × operations / the threads' summed CPU time) for linebloom's AtomicBloomFilter and fastbloom's AtomicBloomFilter on the same keys, from 1 to {cores} threads (this machine's cores), with min–max over rounds; fastbloom-atomic-control is an identical second fastbloom filter, the noise floor. Scaling beyond {cores} threads is not measured here."
            ),
            not_leading: if behind.is_empty() {
                "— (linebloom's atomic filter was at least as fast as fastbloom's at every thread count measured)".into()
            } else {
                format!(
                    "fastbloom's atomic filter was faster: {}.",
                    behind.join("; ")
                )
            },
        })
    }
}
