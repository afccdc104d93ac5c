//! `latency`: how long one lookup takes when nothing overlaps it, against filter size,
//! next to the latency of one random 64-byte read (a dependent chain over a buffer of
//! the same size); and the distribution (p50/p99/p99.9) of the time to answer a batch of
//! 64 lookups, as a single-key loop and through `contains_batch`.
//!
//! In the chain each key depends on the previous answer (`next = mix(key) + answer`), so
//! the CPU cannot start the next lookup early: this is the latency a request that needs
//! one answer sees; it is timed in CPU time (see [`crate::support::timing`]).
//!
//! Batch times are measured one batch at a time with `Instant` (about 20 ns of timer
//! overhead, included): reading a thread's CPU clock is a system call that costs more
//! than a batch. The single-key loop, `contains_batch` and a control (the single-key loop
//! again, `batch-single-control`: its distance from `batch-single` is the noise floor)
//! take turns batch by batch, the first of each turn rotating; every batch has its own
//! keys, so no mode finds lines another mode just brought into the cache.

use crate::Ctx;
use crate::contenders::{LabFilter, blocked};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{fill_stream, member_key};
use crate::support::plot::{LineChart, Series, Style};
use crate::support::stats::quantile;
use crate::support::table::markdown_table;
use crate::support::timing::{MemoryProbe, thread_cpu_ns};
use linebloom::Params;
use serde::{Deserialize, Serialize};
use std::hint::black_box;
use std::time::Instant;

/// Experiment name.
pub const NAME: &str = "latency";
const BATCH: usize = 64;

/// One CSV row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Filter size in bytes.
    pub size_bytes: u64,
    /// chain (ns per dependent lookup), memory-chain (ns per dependent read),
    /// batch-single, batch-batched (ns per batch of 64).
    pub mode: String,
    /// Median (for chains: mean over the chain).
    pub p50_ns: f64,
    /// 99th percentile.
    pub p99_ns: f64,
    /// 99.9th percentile.
    pub p999_ns: f64,
    /// Samples.
    pub samples: u64,
}

/// The `latency` experiment.
pub struct Latency;

impl Experiment for Latency {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str =
        "dependent-chain lookup latency vs size, and p50/p99/p99.9 of batch latency";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (sizes, chain, batches): (Vec<u64>, usize, usize) = match ctx.scale {
            crate::Scale::Test => (vec![16 << 10, 1 << 20], 20_000, 2_000),
            crate::Scale::Preview => (vec![16 << 10, 1 << 20, 64 << 20], 200_000, 5_000),
            crate::Scale::Reference => (
                vec![16 << 10, 1 << 20, 16 << 20, 256 << 20, 1 << 30],
                1_000_000,
                20_000,
            ),
            crate::Scale::Full => (
                vec![16 << 10, 256 << 10, 4 << 20, 64 << 20, 1 << 30, 4 << 30],
                4_000_000,
                100_000,
            ),
        };
        let mut rows = Vec::new();
        let bar = crate::support::progress::bar(ctx, sizes.len() as u64, NAME);
        for &size in &sizes {
            let n = crate::contenders::keys_for_bytes(size, 0.01)?;
            let params = Params::for_fpr(n, 0.01)?;
            let mut f = blocked(params, ctx.kernel);
            fill_stream(ctx, &mut f, n, "fill");
            let bytes = params.bytes() as u64;

            // Dependent chain through the filter.
            let mut key = ctx.seed | 1;
            let t = thread_cpu_ns();
            for _ in 0..chain {
                let answer = f.contains(key) as u64;
                key = (key ^ (key >> 29))
                    .wrapping_mul(0xbf58_476d_1ce4_e5b9)
                    .wrapping_add(answer);
            }
            black_box(key);
            let ns = (thread_cpu_ns() - t) as f64 / chain as f64;
            rows.push(Row {
                size_bytes: bytes,
                mode: "chain".into(),
                p50_ns: ns,
                p99_ns: ns,
                p999_ns: ns,
                samples: chain as u64,
            });
            let probe = MemoryProbe::new(params.bytes(), ctx.seed);
            let mem = probe.dependent_chain(chain);
            rows.push(Row {
                size_bytes: bytes,
                mode: "memory-chain".into(),
                p50_ns: mem,
                p99_ns: mem,
                p999_ns: mem,
                samples: chain as u64,
            });
            drop(probe);

            // Per-batch latency distribution, single-key loop and batched.
            // Three modes, each probing its own batches: a batch probed twice would find its
            // lines cached the second time.
            let keys: Vec<u64> = (0..(3 * batches * BATCH) as u64)
                .map(|i| member_key(ctx, i.wrapping_mul(0x9e37) % n) ^ (i & 1))
                .collect();
            let mut out = [false; BATCH];
            let mut samples = [(); 3].map(|_| Vec::with_capacity(batches));
            for (turn, chunks) in keys.chunks_exact(3 * BATCH).enumerate() {
                for (mode, chunk) in (0..3)
                    .map(|j| (turn + j) % 3)
                    .zip(chunks.chunks_exact(BATCH))
                {
                    let t = Instant::now();
                    if mode == 1 {
                        f.contains_batch(chunk, &mut out);
                        black_box(&out);
                    } else {
                        black_box(chunk.iter().filter(|&&k| f.contains(k)).count());
                    }
                    samples[mode].push(t.elapsed().as_nanos() as f64);
                }
            }
            let [single, batched, control] = &samples;
            for (mode, s) in [
                ("batch-single", single),
                ("batch-batched", batched),
                ("batch-single-control", control),
            ] {
                rows.push(Row {
                    size_bytes: bytes,
                    mode: mode.into(),
                    p50_ns: quantile(s, 0.5),
                    p99_ns: quantile(s, 0.99),
                    p999_ns: quantile(s, 0.999),
                    samples: s.len() as u64,
                });
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Draws chain latency and batch percentiles (per key) against size.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let series_of = |mode: &str, pick: fn(&Row) -> f64, per: f64, name: &str, style: Style| {
            let mut pts: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| r.mode == mode)
                .map(|r| (r.size_bytes as f64, pick(r) / per))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            // Colour says which loop (a fixed colour of `plot::colour` each), the line style
            // which statistic: p50 solid, p99.9 dashed.
            let colour_key = match mode {
                "chain" => "avx2",
                "memory-chain" => "scalar",
                "batch-single" => "avx512",
                _ => "portable",
            };
            Series {
                name: name.into(),
                colour_key: colour_key.into(),
                points: pts,
                errors: None,
                style,
            }
        };
        let series = vec![
            series_of(
                "chain",
                |r| r.p50_ns,
                1.0,
                "dependent lookup (linebloom)",
                Style::Measured,
            ),
            series_of(
                "memory-chain",
                |r| r.p50_ns,
                1.0,
                "dependent 64-byte read (memory)",
                Style::Reference,
            ),
            series_of(
                "batch-single",
                |r| r.p50_ns,
                BATCH as f64,
                "single-key loop, p50 per key",
                Style::Measured,
            ),
            series_of(
                "batch-single",
                |r| r.p999_ns,
                BATCH as f64,
                "single-key loop, p99.9 per key",
                Style::Reference,
            ),
            series_of(
                "batch-batched",
                |r| r.p50_ns,
                BATCH as f64,
                "contains_batch, p50 per key",
                Style::Measured,
            ),
            series_of(
                "batch-batched",
                |r| r.p999_ns,
                BATCH as f64,
                "contains_batch, p99.9 per key",
                Style::Reference,
            ),
        ];
        let frame = LineChart::new("Lookup latency vs filter size", "filter size", "ns")
            .x_bytes()
            .log_y();
        crate::support::plot::line_chart(&run.dir, &frame, &series)
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let mut sizes: Vec<u64> = rows.iter().map(|r| r.size_bytes).collect();
        sizes.sort();
        sizes.dedup();
        let get = |mode: &str, s: u64| rows.iter().find(|r| r.mode == mode && r.size_bytes == s);
        let table: Vec<Vec<String>> = sizes
            .iter()
            .map(|&s| {
                let f = |m: &str, pick: fn(&Row) -> f64| {
                    get(m, s)
                        .map(|r| format!("{:.1}", pick(r)))
                        .unwrap_or_else(|| "—".into())
                };
                vec![
                    format!("{} KiB", s >> 10),
                    f("chain", |r| r.p50_ns),
                    f("memory-chain", |r| r.p50_ns),
                    f("batch-single", |r| r.p50_ns),
                    f("batch-single", |r| r.p999_ns),
                    f("batch-batched", |r| r.p50_ns),
                    f("batch-batched", |r| r.p999_ns),
                    get("batch-single", s)
                        .zip(get("batch-single-control", s))
                        .map(|(a, b)| format!("±{:.0}%", (b.p50_ns / a.p50_ns - 1.0).abs() * 100.0))
                        .unwrap_or_else(|| "—".into()),
                ]
            })
            .collect();
        let over: Vec<String> = sizes
            .iter()
            .filter_map(|&s| {
                let (c, m) = (get("chain", s)?.p50_ns, get("memory-chain", s)?.p50_ns);
                (c > 1.5 * m).then(|| format!("{} KiB ({c:.0} vs {m:.0} ns)", s >> 10))
            })
            .collect();
        Ok(Summary {
        table: markdown_table(
            &["size", "dependent lookup ns", "dependent read ns", "batch of 64, loop p50 ns", "loop p99.9", "contains_batch p50", "contains_batch p99.9", "noise floor (control loop p50)"],
            &table,
        ),
        caption: "Solid lines: the latency of one lookup whose key depends on the previous answer, and the per-key p50 of a 64-key batch; dashed: one dependent random 64-byte read over a buffer of the same size, and p99.9. In cache the lookup's own work dominates; in DRAM it converges on one line's latency, since a blocked filter reads exactly one line. The last column is how far a second, identical single-key loop (run in turn with the others) landed from the first: the noise floor.".into(),
        not_leading: if over.is_empty() {
            "— (a dependent lookup stayed within 1.5× of one dependent memory read at every size)".into()
        } else {
            format!("A dependent lookup cost more than 1.5× one dependent read at: {} (hashing and mask work on top of the line, which overlapping cannot hide in a chain).", over.join(", "))
        },
    })
    }
}
