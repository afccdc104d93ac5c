//! `growth`: the set outgrows its first estimate. Every filter that can grow is built
//! for `n₀` keys at 1%, then filled to 100 times that; at 1, 2, 5, 10, 20, 50 and 100
//! times `n₀` the lab measures the false-positive rate over non-members, checks every
//! key inserted so far (a false negative is a defect), counts refused inserts, and reads
//! the memory. A plain linebloom filter sized for `n₀` runs alongside as the reference
//! of what happens without growth.
//!
//! qfilter grows only up to a maximum declared when it is built; the lab declares 128
//! times `n₀`, which costs it bits per slot from the start (its remainders are widened
//! so that they survive the doublings).

use crate::Ctx;
use crate::contenders::{self, GROWS_FROM, LabFilter, Sizing};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{false_positives, members, non_members};
use crate::support::plot::{LineChart, Series, Style};
use crate::support::table::markdown_table;
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "growth";

/// The contenders that grow (linebloom's first), then qfilter, which grows up to a
/// maximum declared when it is built (`QFILTER_MAX`, 128 times the initial size; the
/// contender table builds it without one).
pub fn growing() -> Vec<&'static str> {
    let mut growing = contenders::names_where(|c| c.facts.grows());
    growing.push("qfilter");
    growing
}

/// The filters measured: those that grow, then the fixed-size reference.
pub fn libraries() -> Vec<&'static str> {
    let mut libraries = growing();
    libraries.push(REFERENCE);
    libraries
}

/// The fixed-size reference (it cannot grow).
const REFERENCE: &str = "linebloom";

/// The rate every filter is built for.
const TARGET: f64 = 0.01;

/// Where the lab measures: multiples of the first estimate.
const MULTIPLES: &[u64] = &[1, 2, 5, 10, 20, 50, 100];

/// qfilter's declared maximum, in multiples of the first estimate.
const QFILTER_MAX: u64 = 128;

/// One CSV row: one library at one multiple of its first estimate.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Library.
    #[serde(alias = "library")]
    pub contender: String,
    /// The first estimate, `n₀`.
    pub initial: u64,
    /// Keys inserted so far, over `n₀`.
    pub multiple: u64,
    /// Measured false-positive rate over non-members.
    pub fpr: f64,
    /// Inserted keys answered "absent" (must be zero).
    pub false_negatives: u64,
    /// Inserts refused so far.
    pub failed_inserts: u64,
    /// Bytes of filter memory.
    pub bytes: u64,
}

/// A filter built for a first estimate of `initial` keys at `TARGET`: a growing
/// contender by its own recipe (which starts at a [`GROWS_FROM`]th of the keys it is
/// sized for), qfilter in its resizeable mode, the reference at a fixed size.
fn build(library: &str, initial: u64, ctx: &Ctx) -> anyhow::Result<Box<dyn LabFilter>> {
    Ok(match library {
        "qfilter" => Box::new(contenders::non_bloom_rivals::Qfilter(
            qfilter::Filter::new_resizeable(initial, QFILTER_MAX * initial, TARGET)
                .map_err(|e| anyhow::anyhow!("qfilter: {e:?}"))?,
        )),
        REFERENCE => Box::new(contenders::blocked(
            linebloom::Params::for_fpr(initial, TARGET)?,
            ctx.kernel,
        )),
        grower => {
            let sized_for = initial * GROWS_FROM;
            contenders::build_sized(grower, Sizing::Fpr(TARGET), sized_for, &[], ctx.kernel)?
                .ok_or_else(|| anyhow::anyhow!("{grower} has no recipe for a rate"))?
        }
    })
}

/// The `growth` experiment.
pub struct Growth;

impl Experiment for Growth {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str = "a set that outgrows its first estimate: rate and memory at 1 to 100 times it, for every filter that can grow";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (initial, probes) = ctx.scale.pick(
            (500, 20_000),
            (20_000, 200_000),
            (20_000, 500_000),
            (100_000, 2_000_000),
        );
        let last = *MULTIPLES.last().expect("multiples");
        let keys = members(ctx, initial * last as usize, 41);
        let probe_keys = non_members(ctx, probes, 41);
        let mut rows = Vec::new();
        let libraries = libraries();
        let bar = crate::support::progress::bar(ctx, libraries.len() as u64, NAME);
        for lib in libraries {
            bar.set_message(lib.to_string());
            let mut f = build(lib, initial as u64, ctx)?;
            let (mut inserted, mut failed_inserts) = (0, 0);
            for &multiple in MULTIPLES {
                let upto = initial * multiple as usize;
                for &k in &keys[inserted..upto] {
                    if !f.try_insert(k) {
                        failed_inserts += 1;
                    }
                }
                inserted = upto;
                // Refused keys were never inserted; the rest must all be held.
                let held = keys[..upto].iter().filter(|&&k| f.contains(k)).count() as u64;
                let false_negatives = (upto as u64 - failed_inserts).saturating_sub(held);
                rows.push(Row {
                    contender: lib.to_string(),
                    initial: initial as u64,
                    multiple,
                    fpr: false_positives(f.as_ref(), &probe_keys) as f64 / probes as f64,
                    false_negatives,
                    failed_inserts,
                    bytes: f.bytes() as u64,
                });
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Draws the rate (`plot`) and the memory per key (`memory`) against the growth.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let dir = &run.dir;
        let span = (1.0, *MULTIPLES.last().expect("multiples") as f64);
        let mut rate = series(rows, |r| r.fpr.max(1e-5));
        rate.push(Series::horizontal("target 1%", "bound", span, TARGET));
        let frame = LineChart::new(
            "False-positive rate as the set outgrows the first estimate",
            "keys inserted, in multiples of the first estimate n₀",
            "measured false-positive rate",
        )
        .log_x()
        .log_y();
        crate::support::plot::line_chart(dir, &frame, &rate)?;
        let memory = LineChart::new(
            "Memory per key as the set outgrows the first estimate",
            "keys inserted, in multiples of the first estimate n₀",
            "bits of filter memory per key inserted",
        )
        .log_x()
        .log_y();
        crate::support::plot::line_chart_as(dir, "memory", &memory, &series(rows, bits_per_key))
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let at = |lib: &str, m: u64| rows.iter().find(|r| r.contender == lib && r.multiple == m);
        let cell = |r: Option<&Row>| {
            r.map_or("–".into(), |r| {
                format!("{:.2}% at {:.1} bits/key", 100.0 * r.fpr, bits_per_key(r))
            })
        };
        let table: Vec<Vec<String>> = libraries()
            .into_iter()
            .map(|lib| {
                let lost: u64 = rows
                    .iter()
                    .filter(|r| r.contender == lib)
                    .map(|r| r.false_negatives)
                    .max()
                    .unwrap_or(0);
                let refused = at(lib, 100).map_or(0, |r| r.failed_inserts);
                vec![
                    lib.to_string(),
                    cell(at(lib, 1)),
                    cell(at(lib, 10)),
                    cell(at(lib, 100)),
                    lost.to_string(),
                    refused.to_string(),
                ]
            })
            .collect();
        // Who kept the target at 100×, and at what memory.
        let kept = |lib: &str| {
            at(lib, 100)
                .filter(|r| r.fpr <= TARGET && r.false_negatives == 0 && r.failed_inserts == 0)
        };
        let mut notes = Vec::new();
        match kept("linebloom-scalable") {
            Some(ours) => {
                for lib in growing()
                    .into_iter()
                    .filter(|l| !l.starts_with("linebloom"))
                {
                    if let Some(r) = kept(lib)
                        && bits_per_key(r) < bits_per_key(ours)
                    {
                        notes.push(format!(
                        "{lib} kept {:.2}% at 100× with {:.1} bits per key against linebloom-scalable's {:.1} ({:.2}%)",
                        100.0 * r.fpr,
                        bits_per_key(r),
                        bits_per_key(ours),
                        100.0 * ours.fpr
                    ));
                    }
                }
            }
            None => notes.push(format!(
                "linebloom-scalable did not hold 1% at 100× its first estimate ({})",
                cell(at("linebloom-scalable", 100))
            )),
        }
        let initial = rows.first().map_or(0, |r| r.initial);
        Ok(Summary {
            table: markdown_table(
                &[
                    "library",
                    "at n₀",
                    "at 10 n₀",
                    "at 100 n₀",
                    "most false negatives",
                    "inserts refused by 100 n₀",
                ],
                &table,
            ),
            caption: format!(
                "Every filter that can grow, built for a first estimate of n₀ = {initial} keys at 1% and filled to 100 n₀; the rate is measured over non-members at each step (plot), and the memory per key inserted is in `growth/memory.svg`. qfilter grows only up to a maximum declared at build ({QFILTER_MAX} n₀ here), paid for in wider slots from the start; linebloom sized for n₀ is the reference of a filter that does not grow."
            ),
            not_leading: if notes.is_empty() {
                "— (no other growing filter kept 1% at 100× its first estimate in less memory per key)"
                .into()
            } else {
                notes.join("; ") + "."
            },
        })
    }
}

/// One series per library of `value(row)` against the multiple.
fn series(rows: &[Row], value: impl Fn(&Row) -> f64) -> Vec<Series> {
    libraries()
        .into_iter()
        .map(|lib| Series {
            name: if lib == REFERENCE {
                format!("{lib} (fixed size, the reference)")
            } else {
                lib.to_string()
            },
            colour_key: lib.to_string(),
            points: rows
                .iter()
                .filter(|r| r.contender == *lib)
                .map(|r| (r.multiple as f64, value(r)))
                .collect(),
            errors: None,
            style: Style::Measured,
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

/// Bits of memory per key inserted.
fn bits_per_key(r: &Row) -> f64 {
    r.bytes as f64 * 8.0 / (r.initial * r.multiple) as f64
}
