//! `churn`: a set that changes. Every filter that can delete is built for `n` keys at
//! 1%, then, round after round, the oldest tenth of its keys is deleted and as many new
//! keys are inserted. After each round the lab measures the false-positive rate over
//! non-members, checks every live key (a false negative is a defect: it must stay
//! zero), counts the inserts and deletes the filter refused (a full cuckoo or quotient
//! filter refuses; a counting filter never does), and reads the memory.
//!
//! The filters that cannot delete take part the way a service runs them: rebuilt from
//! the live set every round (the seeds' periodic rebuild). Each row records the CPU
//! time of its round's update, the deletes and inserts or the rebuild (one measurement
//! per round, so it shows orders of magnitude, not small differences).

use crate::Ctx;
use crate::contenders::{self, LabFilter, Sizing, build};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{false_positives, members, non_members};
use crate::support::plot::{LineChart, Series, Style};
use crate::support::table::markdown_table;
use crate::support::timing::thread_cpu_ns;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Experiment name.
pub const NAME: &str = "churn";

/// The contenders that delete, linebloom's first (the table's order).
pub fn libraries() -> Vec<&'static str> {
    contenders::names_where(|c| c.facts.deletes)
}

/// The contenders that cannot delete, rebuilt from the live set every round: those of
/// fixed size (a growing filter would be rebuilt at its first estimate), less the
/// concurrent twins.
pub fn rebuilt() -> Vec<&'static str> {
    contenders::names_where(|c| !c.facts.deletes && !c.facts.grows() && c.facts.stands_alone())
}

/// The rate every filter is sized for (the cuckoo filter has one fixed rate).
const TARGET: f64 = 0.01;

/// One CSV row: one library after one round.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Library.
    #[serde(alias = "library")]
    pub contender: String,
    /// `delete` (deletes the old keys) or `rebuild` (built again from the live set).
    pub strategy: String,
    /// Round (0: just built).
    pub round: u32,
    /// Keys the filter should hold now.
    pub live_keys: u64,
    /// Measured false-positive rate over non-members.
    pub fpr: f64,
    /// Live keys the filter answered "absent" for (must be zero).
    pub false_negatives: u64,
    /// Inserts refused so far.
    pub failed_inserts: u64,
    /// Deletes refused so far.
    pub failed_removes: u64,
    /// Bytes of filter memory.
    pub bytes: u64,
    /// CPU milliseconds of this round's update (0 in round 0).
    pub update_ms: f64,
}

/// The `churn` experiment.
pub struct Churn;

impl Experiment for Churn {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str = "a set that changes: delete the oldest 10% and insert as many new keys, round after round, for every filter that can delete";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (n, rounds, probes) = ctx.scale.pick(
            (2_000, 3, 20_000),
            (100_000, 10, 200_000),
            (100_000, 10, 200_000),
            (1_000_000, 20, 2_000_000),
        );
        let step = (n / 10).max(1);
        let initial = members(ctx, n, 21);
        let fresh = members(ctx, step * rounds as usize, 22);
        let probe_keys = non_members(ctx, probes, 21);
        let mut rows = Vec::new();
        let bar = crate::support::progress::bar(ctx, every_library().count() as u64, NAME);
        let make = |lib: &str, keys: &[u64]| -> anyhow::Result<Box<dyn LabFilter>> {
            build(lib, Sizing::Fpr(TARGET), keys, ctx.kernel)?
                .ok_or_else(|| anyhow::anyhow!("{lib} cannot be built for churn"))
        };
        for (lib, rebuild) in every_library() {
            bar.set_message(lib.to_string());
            let mut f = make(lib, &initial)?;
            if !rebuild {
                anyhow::ensure!(
                    f.remove(initial[0]).is_some(),
                    "{lib} is in churn's list but cannot delete"
                );
                f.try_insert(initial[0]);
            }
            let mut live: VecDeque<u64> = initial.iter().copied().collect();
            let (mut failed_inserts, mut failed_removes) = (0, 0);
            let mut fresh_keys = fresh.iter().copied();
            for round in 0..=rounds {
                let mut update_ns = 0;
                if round > 0 {
                    let t = thread_cpu_ns();
                    if rebuild {
                        live.drain(..step.min(live.len()));
                        live.extend(fresh_keys.by_ref().take(step));
                        f = make(lib, live.make_contiguous())?;
                    } else {
                        for _ in 0..step {
                            let Some(old) = live.pop_front() else { break };
                            if f.remove(old) != Some(true) {
                                failed_removes += 1;
                                live.push_back(old); // still held: still a member
                            }
                        }
                        for key in fresh_keys.by_ref().take(step) {
                            if f.try_insert(key) {
                                live.push_back(key);
                            } else {
                                failed_inserts += 1;
                            }
                        }
                    }
                    update_ns = thread_cpu_ns() - t;
                }
                let false_negatives = live.iter().filter(|&&k| !f.contains(k)).count() as u64;
                rows.push(Row {
                    contender: lib.to_string(),
                    strategy: if rebuild { "rebuild" } else { "delete" }.into(),
                    round,
                    live_keys: live.len() as u64,
                    fpr: false_positives(f.as_ref(), &probe_keys) as f64 / probes as f64,
                    false_negatives,
                    failed_inserts,
                    failed_removes,
                    bytes: f.bytes() as u64,
                    update_ms: update_ns as f64 / 1e6,
                });
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Draws the false-positive rate against the round for each library.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let mut series: Vec<Series> = every_library()
            .map(|(lib, rebuilt)| Series {
                name: if rebuilt {
                    format!("{lib} (rebuilt)")
                } else {
                    lib.to_string()
                },
                colour_key: lib.to_string(),
                points: rows
                    .iter()
                    .filter(|r| r.contender == lib)
                    .map(|r| (r.round as f64, r.fpr.max(1e-6)))
                    .collect(),
                errors: None,
                // Dashed: rebuilt from scratch, not updated in place.
                style: if rebuilt {
                    Style::Reference
                } else {
                    Style::Measured
                },
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        let last = rows.iter().map(|r| r.round).max().unwrap_or(0) as f64;
        series.push(Series::horizontal(
            "target 1%",
            "bound",
            (0.0, last),
            TARGET,
        ));
        let frame = LineChart::new(
            "False-positive rate while a tenth of the keys is replaced each round",
            "round (each deletes the oldest 10% of keys and inserts as many new ones)",
            "measured false-positive rate",
        )
        .log_y();
        crate::support::plot::line_chart(&run.dir, &frame, &series)
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let last = |lib: &str| rows.iter().rfind(|r| r.contender == lib);
        let first = |lib: &str| rows.iter().find(|r| r.contender == lib);
        let table: Vec<Vec<String>> = every_library()
            .filter_map(|(lib, rebuilt)| {
                let (start, end) = (first(lib)?, last(lib)?);
                let fneg: u64 = rows
                    .iter()
                    .filter(|r| r.contender == lib)
                    .map(|r| r.false_negatives)
                    .max()
                    .unwrap_or(0);
                let updates: Vec<f64> = rows
                    .iter()
                    .filter(|r| r.contender == lib && r.round > 0)
                    .map(|r| r.update_ms)
                    .collect();
                Some(vec![
                    lib.to_string(),
                    if rebuilt { "rebuild" } else { "delete" }.to_string(),
                    format!("{:.4}", start.fpr),
                    format!("{:.4}", end.fpr),
                    fneg.to_string(),
                    end.failed_inserts.to_string(),
                    end.failed_removes.to_string(),
                    format!(
                        "{:.1}",
                        end.bytes as f64 * 8.0 / end.live_keys.max(1) as f64
                    ),
                    if updates.is_empty() {
                        "—".into()
                    } else {
                        format!("{:.1}", crate::support::stats::summary(&updates).0)
                    },
                ])
            })
            .collect();
        let ours = last("linebloom-counting");
        let mut notes = Vec::new();
        if let Some(ours) = ours {
            let our_bpk = ours.bytes as f64 * 8.0 / ours.live_keys.max(1) as f64;
            for lib in libraries().into_iter().skip(1) {
                let Some(end) = last(lib) else { continue };
                let clean = rows
                    .iter()
                    .filter(|r| r.contender == lib)
                    .all(|r| r.false_negatives == 0);
                let bpk = end.bytes as f64 * 8.0 / end.live_keys.max(1) as f64;
                if clean && end.failed_inserts == 0 && bpk < our_bpk && end.fpr <= TARGET * 1.1 {
                    notes.push(format!(
                    "{lib} held the changing set at {:.2}% with {bpk:.1} bits per key against linebloom-counting's {our_bpk:.1} ({:.2}%)",
                    100.0 * end.fpr,
                    100.0 * ours.fpr
                ));
                }
            }
            if rows
                .iter()
                .any(|r| r.contender == "linebloom-counting" && r.false_negatives > 0)
            {
                notes.push("linebloom-counting gave false negatives".into());
            }
        }
        let rounds = rows.iter().map(|r| r.round).max().unwrap_or(0);
        Ok(Summary {
            table: markdown_table(
                &[
                    "library",
                    "strategy",
                    "FPR when built",
                    &format!("FPR after {rounds} rounds"),
                    "most false negatives in a round",
                    "inserts refused",
                    "deletes refused",
                    "bits per live key",
                    "CPU ms per round (median)",
                ],
                &table,
            ),
            caption: format!(
                "Every filter that can delete, sized for its keys at 1% (the cuckoo filter has one fixed rate), then put through {rounds} rounds that each delete the oldest tenth of the keys and insert as many new ones. The filters that cannot delete are rebuilt from the live set every round instead (dashed). The plot is the false-positive rate over non-members after each round; the table adds the false negatives found by checking every live key after every round, the inserts and deletes each filter refused, its memory per live key, and the CPU time of a round's update (the deletes and inserts, or the rebuild; one measurement per round)."
            ),
            not_leading: if notes.is_empty() {
                "— (no other deleting filter held the set at or near 1% with fewer bits per key and no refused inserts or false negatives)".into()
            } else {
                notes.join("; ") + "."
            },
        })
    }
}

/// Every library with whether it is rebuilt (true) or deletes (false).
fn every_library() -> impl Iterator<Item = (&'static str, bool)> {
    libraries()
        .into_iter()
        .map(|l| (l, false))
        .chain(rebuilt().into_iter().map(|l| (l, true)))
}
