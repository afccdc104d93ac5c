//! `kernels`: every kernel this CPU runs on the same workload (a filter of 1e5 keys at
//! 1%, about 120 KiB, with insert, add, hit and miss: `insert` uses every answer, as a
//! dedup loop does, `add` asks for none), interleaved with a rotating start order
//! and timed in CPU time, as a bar chart. Two more contenders run with them: an
//! identical copy of the detected kernel's filter (`<kernel>-control`, the noise floor),
//! and the detected kernel on a filter of the same memory with the `k` of lowest
//! predicted rate instead of the fast shape `k = 8` that sizing picks (`<kernel> k=K`):
//! what [`linebloom::params::FAST_SHAPE_ALLOWANCE`] buys. Code size on embedded targets
//! is the `footprint` experiment's.

use crate::Ctx;
use crate::contenders::{LabFilter, blocked};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{members, non_members};
use crate::support::stats::summary as med;
use crate::support::table::markdown_table;
use crate::support::timing::ns_per_key;
use linebloom::Params;
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "kernels";

/// The workloads, in the order of the CSV and the plot's groups.
const WORKLOADS: [&str; 4] = ["insert", "add", "hit", "miss"];

/// One CSV row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Kernel.
    #[serde(alias = "kernel")]
    pub contender: String,
    /// insert, add, hit, miss.
    pub workload: String,
    /// CPU ns per op (median).
    pub value: f64,
    /// min / max.
    pub note: String,
}

/// The `kernels` experiment.
pub struct Kernels;

impl Experiment for Kernels {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str =
        "every kernel on one workload: insert, add, hit and miss, interleaved, with a control copy";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (n, probes, rounds) = ctx.scale.pick(
            (10_000usize, 50_000usize, 3usize),
            (100_000, 1 << 20, 9),
            (100_000, 1 << 20, 9),
            (100_000, 1 << 22, 15),
        );
        let keys = members(ctx, n, 7);
        let misses = non_members(ctx, probes, 7);
        let hits: Vec<u64> = (0..probes).map(|i| keys[i % n]).collect();
        let params = Params::for_fpr(n as u64, 0.01)?;
        let detected = ctx.kernel;
        let mut shapes: Vec<(String, &'static linebloom::arch::Kernel, Params)> =
            linebloom::arch::available()
                .map(|k| (k.name.to_string(), k, params))
                .collect();
        shapes.push((format!("{}-control", detected.name), detected, params));
        let best_k = Params::for_bits_per_key(n as u64, params.bits_per_key(n as u64))?.k();
        if best_k != params.k() {
            let same_memory = Params::new(params.blocks() as u64, best_k)?;
            shapes.push((
                format!("{} k={best_k}", detected.name),
                detected,
                same_memory,
            ));
        }
        let mut filters: Vec<Box<dyn LabFilter>> = shapes
            .iter()
            .map(|(_, kernel, p)| {
                let mut f = blocked(*p, kernel);
                f.insert_batch(&keys);
                Box::new(f) as Box<dyn LabFilter>
            })
            .collect();
        let workloads = WORKLOADS;
        let mut samples = vec![vec![Vec::new(); workloads.len()]; filters.len()];
        let bar = crate::support::progress::bar(ctx, rounds as u64, NAME);
        let len = filters.len();
        for round in 0..rounds {
            // The start order rotates every round (see `timing`).
            for fi in crate::support::timing::round_order(round, len) {
                let f = &mut filters[fi];
                // One dynamic call per pass (see `LabFilter::count_each`).
                // `insert` uses every answer (a dedup loop), `add` asks for none.
                samples[fi][0].push(ns_per_key(&misses, |k| f.dedup_each(k)));
                samples[fi][1].push(ns_per_key(&misses, |k| {
                    f.insert_each(k);
                    0
                }));
                samples[fi][2].push(ns_per_key(&hits, |k| f.count_each(k)));
                samples[fi][3].push(ns_per_key(&misses, |k| f.count_each(k)));
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        let mut rows = Vec::new();
        for ((label, _, _), per) in shapes.iter().zip(&samples) {
            for (w, s) in workloads.iter().zip(per) {
                let (m, lo, hi) = med(s);
                rows.push(Row {
                    contender: label.clone(),
                    workload: w.to_string(),
                    value: m,
                    note: format!("min {lo:.2} max {hi:.2}"),
                });
            }
        }
        Ok(rows)
    }

    /// Draws the bars, grouped by workload (each group labelled once), one colour per
    /// kernel.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let mut bars: Vec<(String, String, f64)> = rows
            .iter()
            .map(|r| (r.workload.clone(), r.contender.clone(), r.value))
            .collect();
        let order = |w: &str| WORKLOADS.iter().position(|x| *x == w);
        bars.sort_by_key(|b| order(&b.0));
        crate::support::plot::bar_chart(
            &run.dir,
            "Kernels on one workload (1e5 keys, 1%): median CPU ns per operation",
            "CPU ns per operation",
            &bars,
        )
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], run: &Run) -> anyhow::Result<Summary> {
        let table: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                vec![
                    r.contender.clone(),
                    r.workload.clone(),
                    format!("{:.2} ns", r.value),
                    r.note.clone(),
                ]
            })
            .collect();
        // The kernel detection picked on the machine that ran the experiment.
        let detected: &str = &run.provenance.kernel;
        let control = format!("{detected}-control");
        let miss = |kernel: &str| {
            rows.iter()
                .find(|r| r.workload == "miss" && r.contender == kernel)
                .map(|r| r.value)
        };
        let best = rows
            .iter()
            .filter(|r| {
                r.workload == "miss" && r.contender != control && !r.contender.contains(" k=")
            })
            .min_by(|a, b| a.value.total_cmp(&b.value))
            .map(|r| r.contender.clone())
            .unwrap_or_default();
        let noise = miss(detected)
            .zip(miss(&control))
            .map(|(a, b)| format!("{:.0}%", (b / a - 1.0).abs() * 100.0))
            .unwrap_or_else(|| "—".into());
        let other_k = rows
        .iter()
        .find(|r| r.workload == "miss" && r.contender.starts_with(&format!("{detected} k=")))
        .zip(miss(detected))
        .map(|(r, ours)| {
            format!(
                " On the same memory, {} took {:.2} ns per miss against {ours:.2} ns for k = 8 ({:.2}×).",
                r.contender,
                r.value,
                r.value / ours
            )
        })
        .unwrap_or_default();
        Ok(Summary {
            table: markdown_table(&["kernel", "workload", "value", "note"], &table),
            caption: format!(
                "Median CPU ns per insert (answer used), add (no answer), hit and miss for every kernel this CPU runs on the same 120 KiB filter and keys, interleaved round by round with a rotating start order; an identical copy of the {detected} filter landed {noise} from it on misses (the noise floor).{other_k}"
            ),
            not_leading: if best == detected || best.is_empty() {
                format!("— (the detected kernel, {detected}, was also the fastest on misses)")
            } else {
                format!(
                    "The detected kernel ({detected}) was not the fastest on misses here: {best} was. Run-time detection prefers the widest instruction set; on this machine that choice costs a little."
                )
            },
        })
    }
}
