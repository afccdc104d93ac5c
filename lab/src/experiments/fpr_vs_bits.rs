//! `fpr_vs_bits`: measured false-positive rate against bits per key, for every contender,
//! next to the theoretical curves (classic approximation, exact classic, the blocked
//! formula, the vector quotient filter's) and the information-theoretic bound `2^{-b}`.
//!
//! Contenders that take a size are built at exactly `b·n` bits; contenders that only take a
//! rate (the scalable filters, qfilter, a counting filter) are built for the rate a
//! classic filter reaches at `b` bits and plotted at the memory they actually used;
//! those sized by their key count alone (the xor and binary fuse filters, the cuckoo
//! filter: a fixed fingerprint) are one point each. Which contender is which comes
//! from its facts in the contender table. Every point has a Wilson 99% interval.

use crate::Ctx;
use crate::contenders::{self, SizedBy, Sizing, build};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{false_positives, members, non_members};
use crate::support::plot::{LineChart, Series, Style};
use crate::support::stats::{Z99, wilson};
use crate::support::table::markdown_table;
use linebloom::{Params, fpr};
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "fpr_vs_bits";

/// One CSV row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Contender or theory curve.
    #[serde(alias = "scheme")]
    pub contender: String,
    /// `measured` or `theory`.
    pub kind: String,
    /// Bits per key requested.
    pub bits_per_key: f64,
    /// Bits per key actually used.
    pub actual_bits_per_key: f64,
    /// Keys inserted.
    pub n: u64,
    /// Non-member probes (0 for theory).
    pub probes: u64,
    /// False positives among them.
    pub false_positives: u64,
    /// Measured (or predicted) rate.
    pub fpr: f64,
    /// Wilson 99% lower bound.
    pub wilson_lo: f64,
    /// Wilson 99% upper bound.
    pub wilson_hi: f64,
}

/// The contenders measured, by how they are sized: at exactly `b·n` bits (the vector
/// quotient filter only where `b` holds `n` keys within its capacity: from about 11.5
/// bits per key), at the classic filter's best rate for `b` bits, or once (one size for
/// a key count whatever the memory asked). A concurrent twin is left out: it has its
/// twin's layout and rate.
fn sized_by(how: SizedBy) -> Vec<&'static str> {
    contenders::names_where(|c| c.facts.sized_by == how && c.facts.stands_alone())
}

fn theory(name: &str, b: f64, n: u64, rate: f64) -> Row {
    Row {
        contender: name.into(),
        kind: "theory".into(),
        bits_per_key: b,
        actual_bits_per_key: b,
        n,
        probes: 0,
        false_positives: 0,
        fpr: rate,
        wilson_lo: rate,
        wilson_hi: rate,
    }
}

/// The `fpr_vs_bits` experiment.
pub struct FprVsBits;

impl Experiment for FprVsBits {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str =
        "measured FPR vs bits per key for every contender, against the theoretical curves";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (n, probes, bits): (usize, usize, Vec<f64>) = match ctx.scale {
            crate::Scale::Test => (2_000, 20_000, vec![6.0, 10.0, 16.0]),
            crate::Scale::Preview | crate::Scale::Reference => (
                100_000,
                1_000_000,
                (2..=12).map(|i| 2.0 * i as f64).collect(),
            ),
            crate::Scale::Full => (1_000_000, 10_000_000, (4..=24).map(|i| i as f64).collect()),
        };
        let keys = members(ctx, n, 1);
        let probe_keys = non_members(ctx, probes, 1);
        let nn = n as u64;
        let mut rows = Vec::new();
        let bar = crate::support::progress::bar(ctx, bits.len() as u64 + 1, NAME);
        let measure =
            |contender: &str, b: f64, sizing: Sizing, rows: &mut Vec<Row>| -> anyhow::Result<()> {
                if let Some(f) = build(contender, sizing, &keys, ctx.kernel)? {
                    let fp = false_positives(f.as_ref(), &probe_keys);
                    let (lo, hi) = wilson(fp, probes as u64, Z99);
                    rows.push(Row {
                        contender: contender.into(),
                        kind: "measured".into(),
                        bits_per_key: b,
                        actual_bits_per_key: f.bytes() as f64 * 8.0 / n as f64,
                        n: nn,
                        probes: probes as u64,
                        false_positives: fp,
                        fpr: fp as f64 / probes as f64,
                        wilson_lo: lo,
                        wilson_hi: hi,
                    });
                }
                Ok(())
            };
        for &b in &bits {
            bar.set_message(format!("{b} bits/key"));
            for contender in sized_by(SizedBy::RateOrBits) {
                measure(contender, b, Sizing::BitsPerKey(b), &mut rows)?;
            }
            let classic_rate = (1..=32)
                .map(|k| fpr::classic_approx(b * n as f64, k, n as f64))
                .fold(1.0, f64::min);
            for contender in sized_by(SizedBy::Rate) {
                measure(contender, b, Sizing::Fpr(classic_rate), &mut rows)?;
            }
            let m = (b * n as f64) as u64;
            let best_k = (1..=32)
                .min_by(|&x, &y| {
                    fpr::classic_approx(m as f64, x, n as f64)
                        .total_cmp(&fpr::classic_approx(m as f64, y, n as f64))
                })
                .unwrap_or(1);
            rows.push(theory(
                "theory-classic-approx",
                b,
                nn,
                fpr::classic_approx(m as f64, best_k, n as f64),
            ));
            rows.push(theory(
                "theory-classic-exact",
                b,
                nn,
                fpr::classic_exact(m, best_k, nn),
            ));
            let p = Params::for_bits_per_key(nn, b)?;
            rows.push(theory("theory-blocked", b, nn, p.expected_fpr(nn)));
            if let Some(q) = crate::contenders::LinebloomQuotient::params_for_bits(nn, b) {
                rows.push(theory("theory-quotient", b, nn, q.expected_fpr(nn)));
            }
            rows.push(theory("bound-2^-b", b, nn, 2f64.powf(-b)));
            bar.inc(1);
        }
        bar.set_message("one-size filters");
        for contender in sized_by(SizedBy::KeyCount) {
            // The requested bits do not size these; the row records what they used.
            measure(contender, 0.0, Sizing::Fpr(0.01), &mut rows)?;
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Draws the plot from the CSV.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let mut names: Vec<String> = rows.iter().map(|r| r.contender.clone()).collect();
        names.dedup();
        names.sort();
        names.dedup();
        let series: Vec<Series> = names
            .iter()
            .map(|name| {
                let mut rs: Vec<&Row> = rows.iter().filter(|r| &r.contender == name).collect();
                rs.sort_by(|a, b| a.actual_bits_per_key.total_cmp(&b.actual_bits_per_key));
                let theory = rs.first().is_some_and(|r| r.kind == "theory");
                Series {
                    name: name.clone(),
                    colour_key: name.clone(),
                    points: rs.iter().map(|r| (r.actual_bits_per_key, r.fpr)).collect(),
                    errors: (!theory)
                        .then(|| rs.iter().map(|r| (r.wilson_lo, r.wilson_hi)).collect()),
                    style: if theory {
                        Style::Reference
                    } else {
                        Style::Measured
                    },
                }
            })
            .collect();
        let frame = LineChart::new(
            "False-positive rate vs memory (Wilson 99% intervals)",
            "bits per key",
            "false-positive rate",
        )
        .log_y();
        crate::support::plot::line_chart(&run.dir, &frame, &series)
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        // The row nearest 10 bits/key for each contender.
        let pick = |contender: &str| {
            rows.iter()
                .filter(|r| r.contender == contender)
                .min_by(|a, b| {
                    (a.bits_per_key - 10.0)
                        .abs()
                        .total_cmp(&(b.bits_per_key - 10.0).abs())
                })
        };
        let mut names: Vec<&str> = rows.iter().map(|r| r.contender.as_str()).collect();
        names.sort();
        names.dedup();
        let table_rows: Vec<Vec<String>> = names
            .iter()
            .filter_map(|s| pick(s))
            .map(|r| {
                vec![
                    r.contender.clone(),
                    format!("{:.2}", r.actual_bits_per_key),
                    format!("{:.5}", r.fpr),
                    if r.kind == "theory" {
                        "—".into()
                    } else {
                        format!("[{:.5}, {:.5}]", r.wilson_lo, r.wilson_hi)
                    },
                ]
            })
            .collect();
        let ours = pick("linebloom").map(|r| r.fpr).unwrap_or(f64::NAN);
        let better: Vec<String> = names
            .iter()
            .filter(|s| !s.starts_with("theory") && !s.starts_with("bound") && **s != "linebloom")
            .filter_map(|s| pick(s))
            .filter(|r| {
                r.kind == "measured"
                    && (r.actual_bits_per_key - 10.0).abs() < 0.6
                    && r.wilson_hi < ours
            })
            .map(|r| {
                format!(
                    "{} ({:.5} at {:.1} bits/key)",
                    r.contender, r.fpr, r.actual_bits_per_key
                )
            })
            .collect();
        Ok(Summary {
        table: markdown_table(&["contender (nearest 10 bits/key)", "bits/key", "FPR", "Wilson 99%"], &table_rows),
        caption: "Each curve is one contender's measured false-positive rate at a given memory, with Wilson 99% intervals; dashed curves are the classic approximation, the exact classic rate, the blocked formula this crate sizes with, and the 2^-b bound. Blocked filters pay a small premium over the classic filter at equal memory in exchange for one cache miss per operation, and the measured linebloom points sit on its own formula.".into(),
        not_leading: if better.is_empty() {
            "— (no measured contender had a significantly lower rate than linebloom's blocked filter near 10 bits per key)".into()
        } else {
            format!(
                "Near 10 bits per key these contenders have a lower false-positive rate than linebloom's blocked filter ({ours:.5}): {}. That is the price of blocking (one cache line per key).",
                better.join(", ")
            )
        },
    })
    }
}
