//! `quotient_load`: the vector quotient filter as it fills. Two questions, one filter
//! kind:
//!
//! * **Does the rate formula hold at every load?** One filter is filled with random
//!   keys, and at 50%, 80% and 94% of its slots (8-bit tags) the lab counts false
//!   positives over non-members and divides by the formula at that load
//!   ([`QuotientParams::expected_fpr`]) and by the filter's own estimate from its block
//!   loads (`estimated_fpr`). The target is ±3%. 16-bit tags, whose rate near 2·10⁻⁵
//!   needs billions of probes for that, run only at `--scale full`, at 50%, 80% and
//!   their capacity.
//! * **Where does it first refuse a key?** Filters of the same shape are filled until
//!   the first insert that finds both blocks full; the load at that point, over many
//!   key sets, against the load [`QuotientParams::capacity`] promises (refused below it
//!   with a chance of about 1e-9 at most; `QuotientParams` says where that is exact).
//!   A refusal below the capacity is a defect.

use crate::Ctx;
use crate::contenders::LinebloomQuotient;
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{count_positives, member_key, random_probe};
use crate::support::plot::{LineChart, Series, Style};
use crate::support::stats::{Z99, wilson};
use crate::support::table::markdown_table;
use linebloom::QuotientParams;
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "quotient_load";

/// The tolerance of the rate formula: ±3%.
pub const TOLERANCE: f64 = 0.03;

/// One CSV row: a rate measured at one load, or one filter's first refusal.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// The filter measured (`linebloom-quotient`).
    pub contender: String,
    /// `rate` or `first-refusal`.
    pub kind: String,
    /// 8 or 16.
    pub tag_bits: u32,
    /// Blocks of the filter.
    pub blocks: u64,
    /// Which filter (key set) of the refusal runs; 0 for rates.
    pub filter: u32,
    /// Keys held.
    pub n: u64,
    /// Keys held over slots.
    pub load: f64,
    /// The load up to which the sizing promises no refusal (capacity over slots).
    pub capacity_load: f64,
    /// Non-member probes (0 for refusals).
    pub probes: u64,
    /// False positives among them.
    pub false_positives: u64,
    /// Measured rate.
    pub measured: f64,
    /// The formula at this load ([`QuotientParams::expected_fpr`]).
    pub formula: f64,
    /// The filter's estimate from its block loads (`estimated_fpr`).
    pub estimated: f64,
    /// measured / formula.
    pub ratio: f64,
    /// Wilson 99% lower bound of the ratio.
    pub ratio_lo: f64,
    /// Wilson 99% upper bound of the ratio.
    pub ratio_hi: f64,
}

/// The `quotient_load` experiment.
pub struct QuotientLoad;

/// A filter filled with keys `key(0..)` until it holds `load` of its slots or refuses;
/// returns the keys it took.
fn fill_to(f: &mut LinebloomQuotient, load: f64, mut key: impl FnMut(u64) -> u64) -> u64 {
    let slots = f.0.params().slots();
    let target = ((load * slots as f64).ceil() as u64).min(slots);
    while f.0.len() < target {
        if f.0.add(&key(f.0.len())).is_err() {
            break;
        }
    }
    f.0.len()
}

impl Experiment for QuotientLoad {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str = "the vector quotient filter's rate against its formula at 50/80/94% load, and the load at its first refused insert";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        // (blocks for the rates, probes per 8-bit load, refusal filters, their blocks,
        // probes per 16-bit load or 0 to skip 16-bit tags)
        let (blocks, probes, filters, refusal_blocks, probes16): (u64, u64, u32, u64, u64) =
            ctx.scale.pick(
                (1 << 10, 1 << 18, 3, 1 << 8, 0),
                (1 << 12, 1 << 21, 10, 1 << 10, 0),
                (1 << 14, 1 << 25, 30, 1 << 12, 0),
                (1 << 16, 1 << 25, 100, 1 << 14, 1 << 30),
            );
        let mut widths = vec![(8u32, probes, [0.5, 0.8, 0.94])];
        if probes16 > 0 {
            let capacity = QuotientParams::new(blocks, 16)?;
            let at_capacity = capacity.capacity() as f64 / capacity.slots() as f64;
            widths.push((16, probes16, [0.5, 0.8, at_capacity]));
        }
        let steps = widths.len() as u64 * (3 + filters as u64);
        let bar = crate::support::progress::bar(ctx, steps, NAME);
        let kernel = linebloom::arch::quotient::detect();
        let mut rows = Vec::new();
        for (tag_bits, probes, loads) in widths {
            let params = QuotientParams::new(blocks, tag_bits)?;
            let capacity_load = params.capacity() as f64 / params.slots() as f64;
            let mut f = LinebloomQuotient::new(params, kernel);
            for load in loads {
                bar.set_message(format!("{tag_bits}-bit tags at {:.0}% load", 100.0 * load));
                let n = fill_to(&mut f, load, |i| member_key(ctx, i));
                anyhow::ensure!(
                    n as f64 >= load * params.slots() as f64,
                    "{tag_bits}-bit tags: refused an insert at {n} keys, below {:.0}% load",
                    100.0 * load
                );
                let fp = count_positives(&f, 0..probes, |i| random_probe(ctx, i));
                let (lo, hi) = wilson(fp, probes, Z99);
                let formula = params.expected_fpr(n);
                let measured = fp as f64 / probes as f64;
                rows.push(Row {
                    contender: crate::contenders::vector_quotient::NAME.into(),
                    kind: "rate".into(),
                    tag_bits,
                    blocks,
                    filter: 0,
                    n,
                    load: n as f64 / params.slots() as f64,
                    capacity_load,
                    probes,
                    false_positives: fp,
                    measured,
                    formula,
                    estimated: f.0.estimated_fpr(),
                    ratio: measured / formula,
                    ratio_lo: lo / formula,
                    ratio_hi: hi / formula,
                });
                bar.inc(1);
            }
            let params = QuotientParams::new(refusal_blocks, tag_bits)?;
            let capacity_load = params.capacity() as f64 / params.slots() as f64;
            for filter in 0..filters {
                bar.set_message(format!("{tag_bits}-bit tags: fill until refused"));
                let mut f = LinebloomQuotient::new(params, kernel);
                let stream = (filter as u64 + 1) << 40;
                let n = fill_to(&mut f, 1.0, |i| member_key(ctx, stream + i));
                rows.push(Row {
                    contender: crate::contenders::vector_quotient::NAME.into(),
                    kind: "first-refusal".into(),
                    tag_bits,
                    blocks: refusal_blocks,
                    filter,
                    n,
                    load: n as f64 / params.slots() as f64,
                    capacity_load,
                    probes: 0,
                    false_positives: 0,
                    measured: f64::NAN,
                    formula: f64::NAN,
                    estimated: f.0.estimated_fpr(),
                    ratio: f64::NAN,
                    ratio_lo: f64::NAN,
                    ratio_hi: f64::NAN,
                });
                bar.inc(1);
            }
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Draws measured / formula against load, with Wilson 99% bars and the ±3% lines.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let line = |name: &str, y: f64| Series::horizontal(name, name, (0.45, 1.0), y);
        let mut series: Vec<Series> = [8u32, 16]
            .into_iter()
            .filter_map(|bits| {
                let rate: Vec<&Row> = rows
                    .iter()
                    .filter(|r| r.kind == "rate" && r.tag_bits == bits)
                    .collect();
                (!rate.is_empty()).then(|| Series {
                    name: format!("{bits}-bit tags (measured / formula)"),
                    colour_key: if bits == 8 {
                        crate::contenders::vector_quotient::NAME.into()
                    } else {
                        "linebloom-quotient-16".into()
                    },
                    points: rate.iter().map(|r| (r.load, r.ratio)).collect(),
                    errors: Some(rate.iter().map(|r| (r.ratio_lo, r.ratio_hi)).collect()),
                    style: Style::Measured,
                })
            })
            .collect();
        series.extend([
            line("formula +3%", 1.0 + TOLERANCE),
            line("formula exact", 1.0),
            line("formula −3%", 1.0 - TOLERANCE),
        ]);
        let frame = LineChart::new(
            "Vector quotient filter: measured / predicted rate by load (Wilson 99% bars)",
            "load (keys held / tag slots)",
            "measured / formula",
        );
        crate::support::plot::line_chart(&run.dir, &frame, &series)
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let rates: Vec<Vec<String>> = rows
            .iter()
            .filter(|r| r.kind == "rate")
            .map(|r| {
                vec![
                    format!("{}", r.tag_bits),
                    format!("{:.1}%", 100.0 * r.load),
                    format!("{}", r.n),
                    format!("{:.1e}", r.probes as f64),
                    format!("{:.4e}", r.measured),
                    format!("{:.4e}", r.formula),
                    format!("{:.4e}", r.estimated),
                    format!("{:.4} [{:.4}, {:.4}]", r.ratio, r.ratio_lo, r.ratio_hi),
                ]
            })
            .collect();
        let mut refusals = Vec::new();
        let mut below = Vec::new();
        for bits in [8u32, 16] {
            let mut loads: Vec<f64> = rows
                .iter()
                .filter(|r| r.kind == "first-refusal" && r.tag_bits == bits)
                .map(|r| r.load)
                .collect();
            if loads.is_empty() {
                continue;
            }
            loads.sort_by(f64::total_cmp);
            let first = rows
                .iter()
                .find(|r| r.kind == "first-refusal" && r.tag_bits == bits)
                .expect("non-empty");
            let under = loads.iter().filter(|&&l| l < first.capacity_load).count();
            if under > 0 {
                below.push(format!(
                    "{bits}-bit tags: {under} of {} filters",
                    loads.len()
                ));
            }
            refusals.push(vec![
                format!("{bits}"),
                format!("{}", first.blocks),
                format!("{}", loads.len()),
                format!("{:.2}%", 100.0 * first.capacity_load),
                format!("{:.2}%", 100.0 * loads[0]),
                format!("{:.2}%", 100.0 * loads[loads.len() / 2]),
                format!("{:.2}%", 100.0 * loads[loads.len() - 1]),
            ]);
        }
        let missed: Vec<String> = rows
            .iter()
            .filter(|r| {
                r.kind == "rate" && (r.ratio_lo > 1.0 + TOLERANCE || r.ratio_hi < 1.0 - TOLERANCE)
            })
            .map(|r| {
                format!(
                    "{}-bit tags at {:.0}% load (ratio {:.4})",
                    r.tag_bits,
                    100.0 * r.load,
                    r.ratio
                )
            })
            .collect();
        let table = format!(
            "{}\nWhere filters first refused an insert (load when both of a key's blocks were full), against the load their capacity promises:\n\n{}",
            markdown_table(
                &[
                    "tag bits",
                    "load",
                    "keys",
                    "probes",
                    "measured",
                    "formula",
                    "estimated from block loads",
                    "measured / formula [Wilson 99%]",
                ],
                &rates,
            ),
            markdown_table(
                &[
                    "tag bits",
                    "blocks",
                    "filters",
                    "capacity (load)",
                    "first refusal: min",
                    "median",
                    "max",
                ],
                &refusals,
            )
        );
        let mut not_leading = Vec::new();
        if !missed.is_empty() {
            not_leading.push(format!(
                "The rate formula missed by more than ±{:.0}% (whole 99% interval outside): {}.",
                TOLERANCE * 100.0,
                missed.join("; ")
            ));
        }
        if !below.is_empty() {
            not_leading.push(format!(
                "Filters refused an insert below their capacity: {}.",
                below.join("; ")
            ));
        }
        Ok(Summary {
            table,
            caption: "The vector quotient filter filled with random keys: its measured false-positive rate over non-members divided by the formula at that load (`QuotientParams::expected_fpr`), with Wilson 99% bars and the ±3% band; the filter's own estimate from its block loads is in the table. 16-bit tags run at `--scale full` only (their rate needs billions of probes). The second table fills filters of one shape with different key sets until the first refused insert.".into(),
            not_leading: if not_leading.is_empty() {
                "— (every rate's 99% interval overlaps the ±3% band around the formula, and no filter refused an insert below its capacity)".into()
            } else {
                not_leading.join(" ")
            },
        })
    }
}
