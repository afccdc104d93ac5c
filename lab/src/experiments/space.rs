//! `space`: the space–accuracy frontier. Every contender is sized for a series of target
//! rates by its own recipe; we record the bits per key it used and the rate it achieved
//! (so a contender that under-delivers moves right, not just down), next to the
//! information-theoretic lower bound `log2(1/ε)` bits per key. `std::collections::HashSet`
//! is listed in the table as the exact reference (rate 0, its memory per key).

use crate::Ctx;
use crate::contenders::{Exact, LabFilter, SizedBy, Sizing, build};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{false_positives, members, non_members};
use crate::support::plot::{LineChart, Series, Style};
use crate::support::stats::{Z99, wilson};
use crate::support::table::markdown_table;
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "space";

/// Every contender the lab builds but the concurrent twins (their twin's memory and
/// rate).
fn contenders() -> Vec<&'static str> {
    crate::contenders::names_where(|c| c.facts.stands_alone())
}

/// Contenders with one size for a key count whatever the rate asked: measured once.
fn one_size() -> Vec<&'static str> {
    crate::contenders::names_where(|c| c.facts.sized_by == SizedBy::KeyCount)
}

/// One CSV row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Contender.
    #[serde(alias = "scheme")]
    pub contender: String,
    /// Target rate asked for.
    pub target: f64,
    /// Achieved rate.
    pub fpr: f64,
    /// Wilson 99% bounds.
    pub wilson_lo: f64,
    /// Wilson 99% upper bound.
    pub wilson_hi: f64,
    /// Bits per key used.
    pub bits_per_key: f64,
    /// log2(1/fpr): the fewest bits any filter could use for this rate.
    pub lower_bound_bits: f64,
}

/// The `space` experiment.
pub struct Space;

impl Experiment for Space {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str =
        "bits per key vs achieved FPR (the space-accuracy frontier) with the lower bound";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (n, targets, max_probes): (usize, Vec<f64>, usize) = match ctx.scale {
            crate::Scale::Test => (2_000, vec![0.1, 0.01], 50_000),
            crate::Scale::Preview | crate::Scale::Reference => (
                100_000,
                vec![0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4],
                2_000_000,
            ),
            crate::Scale::Full => (
                1_000_000,
                vec![0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4, 3e-5, 1e-5],
                20_000_000,
            ),
        };
        let keys = members(ctx, n, 5);
        let probe_keys = non_members(ctx, max_probes, 5);
        let mut rows = Vec::new();
        let bar = crate::support::progress::bar(ctx, targets.len() as u64, NAME);
        let one_size = one_size();
        for &p in &targets {
            bar.set_message(format!("p = {p}"));
            let probes = ((200.0 / p) as usize).clamp(max_probes.min(100_000), max_probes);
            for contender in contenders() {
                let one_size = one_size.contains(&contender);
                if one_size && p != targets[0] {
                    continue;
                }
                // One size, whatever the rate: as many probes as the scale allows.
                let probes = if one_size { max_probes } else { probes };
                let Some(f) = build(contender, Sizing::Fpr(p), &keys, ctx.kernel)? else {
                    continue;
                };
                let fp = false_positives(f.as_ref(), &probe_keys[..probes]);
                let (lo, hi) = wilson(fp, probes as u64, Z99);
                let fpr = fp as f64 / probes as f64;
                rows.push(Row {
                    contender: contender.to_string(),
                    target: p,
                    fpr,
                    wilson_lo: lo,
                    wilson_hi: hi,
                    bits_per_key: f.bytes() as f64 * 8.0 / n as f64,
                    lower_bound_bits: if fpr > 0.0 { -fpr.log2() } else { f64::NAN },
                });
            }
            bar.inc(1);
        }
        let mut exact = Exact(Default::default());
        exact.insert_batch(&keys);
        rows.push(Row {
            contender: "hashset".into(),
            target: 0.0,
            fpr: 0.0,
            wilson_lo: 0.0,
            wilson_hi: 0.0,
            bits_per_key: exact.bytes() as f64 * 8.0 / n as f64,
            lower_bound_bits: f64::NAN,
        });
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Draws bits per key against achieved rate, with the lower bound.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let mut series: Vec<Series> = contenders()
            .into_iter()
            .map(|s| {
                let mut rs: Vec<&Row> = rows
                    .iter()
                    .filter(|r| r.contender == *s && r.fpr > 0.0)
                    .collect();
                rs.sort_by(|a, b| a.fpr.total_cmp(&b.fpr));
                Series {
                    name: s.to_string(),
                    colour_key: s.to_string(),
                    points: rs.iter().map(|r| (r.fpr, r.bits_per_key)).collect(),
                    errors: None,
                    style: Style::Measured,
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        let (lo, hi) = rows
            .iter()
            .filter(|r| r.fpr > 0.0)
            .fold((1.0f64, 0.0f64), |(a, b), r| (a.min(r.fpr), b.max(r.fpr)));
        let bound: Vec<(f64, f64)> = (0..=40)
            .map(|i| lo * (hi / lo).powf(i as f64 / 40.0))
            .map(|e| (e, -e.log2()))
            .collect();
        series.push(Series {
            name: "lower bound log2(1/ε)".into(),
            colour_key: "bound".into(),
            points: bound,
            errors: None,
            style: Style::Reference,
        });
        let frame = LineChart::new(
            "Space vs accuracy: bits per key against achieved false-positive rate",
            "achieved false-positive rate",
            "bits per key",
        )
        .log_x();
        crate::support::plot::line_chart(&run.dir, &frame, &series)
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let at = |s: &str| {
            rows.iter()
                .filter(|r| r.contender == s)
                .min_by(|a, b| (a.target - 0.01).abs().total_cmp(&(b.target - 0.01).abs()))
        };
        let mut names: Vec<&str> = rows.iter().map(|r| r.contender.as_str()).collect();
        names.sort();
        names.dedup();
        let table: Vec<Vec<String>> = names
            .iter()
            .filter_map(|s| at(s))
            .map(|r| {
                vec![
                    r.contender.clone(),
                    if r.target > 0.0 {
                        format!("{}", r.target)
                    } else {
                        "exact".into()
                    },
                    format!("{:.5}", r.fpr),
                    format!("{:.2}", r.bits_per_key),
                    if r.lower_bound_bits.is_finite() {
                        format!("{:.2}", r.bits_per_key / r.lower_bound_bits)
                    } else {
                        "—".into()
                    },
                ]
            })
            .collect();
        let ours = at("linebloom")
            .map(|r| r.bits_per_key / r.lower_bound_bits)
            .unwrap_or(f64::NAN);
        let leaner: Vec<String> = names
            .iter()
            .filter(|s| **s != "linebloom")
            .filter_map(|s| at(s))
            .filter(|r| {
                r.lower_bound_bits.is_finite() && r.bits_per_key / r.lower_bound_bits < ours
            })
            .map(|r| {
                format!(
                    "{} ({:.2}× the bound)",
                    r.contender,
                    r.bits_per_key / r.lower_bound_bits
                )
            })
            .collect();
        Ok(Summary {
        table: markdown_table(&["contender (target nearest 1%)", "target", "achieved", "bits/key", "bits / lower bound"], &table),
        caption: "Each curve is one contender sized for a series of target rates by its own recipe, placed at the rate it achieved and the memory it used; the dashed line is the information-theoretic minimum log2(1/ε). Lower and further left is better, and the distance to the dashed line is each design's overhead.".into(),
        not_leading: if leaner.is_empty() {
            format!("— (linebloom's blocked filter used the fewest bits per key relative to the bound at 1%: {ours:.2}×)")
        } else {
            format!("Closer to the space bound than linebloom's blocked filter ({ours:.2}× at 1%): {}.", leaner.join(", "))
        },
    })
    }
}
