//! `formula`: does the exact blocked formula ([`linebloom::fpr::blocked`]) predict the
//! rate of real filters, to within ±3%?
//!
//! Two parts, both with the default configuration (`Params::for_fpr`, the `IntFold`
//! hasher):
//!
//! * **random keys** at targets 10%, 1%, 0.1% and 0.01%: one filter of `n` keys and
//!   `probes` non-members per target (10⁸ probes at reference scale), generated in chunks so
//!   that no probe list is held in memory;
//! * **structured integer keys** at 1%: sequential, strided by powers of two,
//!   bit-reversed, equal halves, golden-ratio steps, and two sets built against
//!   `IntFold`'s constants, with probes continuing each pattern past its members.
//!
//! Each row gives measured / predicted with the Wilson 99% interval of that ratio. The
//! interval also holds the instance spread of one filter (about `1/√B` relative), so a
//! row whose whole interval lies outside ±3% is a miss of the formula.

use crate::Ctx;
use crate::contenders::{LabFilter, blocked};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{count_positives, random_probe};
use crate::support::plot::{LineChart, Series, Style};
use crate::support::stats::{Z99, wilson};
use crate::support::table::markdown_table;
use linebloom::{IntFold, Params};
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "formula";

/// The tolerance the report holds the formula to: ±3%.
pub const TOLERANCE: f64 = 0.03;

/// One CSV row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// `random` or the key pattern's name.
    pub keys: String,
    /// Requested rate.
    pub target: f64,
    /// Keys inserted.
    pub n: u64,
    /// Bits per key set per key.
    pub k: u32,
    /// Memory per key.
    pub bits_per_key: f64,
    /// Non-member probes.
    pub probes: u64,
    /// False positives among them.
    pub false_positives: u64,
    /// Measured rate.
    pub measured: f64,
    /// The formula's rate for this shape and `n`.
    pub predicted: f64,
    /// measured / predicted.
    pub ratio: f64,
    /// Wilson 99% lower bound of the ratio.
    pub ratio_lo: f64,
    /// Wilson 99% upper bound of the ratio.
    pub ratio_hi: f64,
}

/// The structured key patterns: key number `i` of each.
const PATTERNS: &[&str] = &[
    "sequential",
    "sequential from 2^40",
    "stride 2^20",
    "stride 2^32",
    "stride 2^39",
    "bit-reversed",
    "equal halves",
    "stride 1000",
    "golden-ratio steps",
    "K2 ^ i (IntFold constant)",
    "rotr(K1 ^ i, 32) (IntFold constant)",
];

fn pattern_key(pattern: &str, i: u64) -> u64 {
    match pattern {
        "sequential" => i,
        "sequential from 2^40" => i + (1 << 40),
        "stride 2^20" => i << 20,
        "stride 2^32" => i << 32,
        "stride 2^39" => i << 39,
        "bit-reversed" => i.reverse_bits(),
        "equal halves" => i | (i << 32),
        "stride 1000" => i * 1000,
        "golden-ratio steps" => i.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        "K2 ^ i (IntFold constant)" => IntFold::K2 ^ i,
        "rotr(K1 ^ i, 32) (IntFold constant)" => (IntFold::K1 ^ i).rotate_right(32),
        other => unreachable!("unknown key pattern {other}"),
    }
}

fn row(keys: &str, target: f64, params: Params, n: u64, probes: u64, fp: u64) -> Row {
    let predicted = params.expected_fpr(n);
    let (lo, hi) = wilson(fp, probes, Z99);
    let measured = fp as f64 / probes as f64;
    Row {
        keys: keys.into(),
        target,
        n,
        k: params.k(),
        bits_per_key: params.bits_per_key(n),
        probes,
        false_positives: fp,
        measured,
        predicted,
        ratio: measured / predicted,
        ratio_lo: lo / predicted,
        ratio_hi: hi / predicted,
    }
}

/// The `formula` experiment.
pub struct Formula;

impl Experiment for Formula {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str =
        "the exact blocked formula against >= 1e8 probes (random keys) and structured integer keys";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (n, probes, pattern_n, pattern_probes): (u64, u64, u64, u64) = ctx.scale.pick(
            (100_000, 2_000_000, 1 << 16, 400_000),
            (1_000_000, 20_000_000, 1 << 18, 2_000_000),
            (1_000_000, 100_000_000, 1 << 20, 10_000_000),
            (10_000_000, 1_000_000_000, 1 << 24, 100_000_000),
        );
        let targets = [0.1, 0.01, 0.001, 0.0001];
        let bar = crate::support::progress::bar(ctx, (targets.len() + PATTERNS.len()) as u64, NAME);
        let mut rows = Vec::new();
        for target in targets {
            bar.set_message(format!("random keys, p = {target}"));
            let params = Params::for_fpr(n, target)?;
            let mut f = blocked(params, ctx.kernel);
            crate::support::keys::fill_stream(ctx, &mut f, n, "fill");
            let fp = count_positives(&f, 0..probes, |i| random_probe(ctx, i));
            rows.push(row("random", target, params, n, probes, fp));
            bar.inc(1);
        }
        let params = Params::for_fpr(pattern_n, 0.01)?;
        for pattern in PATTERNS {
            bar.set_message(pattern.to_string());
            let mut f = blocked(params, ctx.kernel);
            let members: Vec<u64> = (0..pattern_n).map(|i| pattern_key(pattern, i)).collect();
            f.insert_batch(&members);
            let fp = count_positives(&f, pattern_n..pattern_n + pattern_probes, |i| {
                pattern_key(pattern, i)
            });
            rows.push(row(pattern, 0.01, params, pattern_n, pattern_probes, fp));
            bar.inc(1);
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Draws the plot from the CSV: measured / predicted against bits per key for random
    /// keys, with Wilson 99% bars and the ±3% lines.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let mut random: Vec<&Row> = rows.iter().filter(|r| r.keys == "random").collect();
        random.sort_by(|a, b| a.bits_per_key.total_cmp(&b.bits_per_key));
        let span = |r: &[&Row]| {
            let lo = r
                .iter()
                .map(|r| r.bits_per_key)
                .fold(f64::INFINITY, f64::min);
            let hi = r.iter().map(|r| r.bits_per_key).fold(0.0, f64::max);
            (lo, hi)
        };
        let (lo, hi) = span(&random);
        let line = |name: &str, y: f64| Series::horizontal(name, name, (lo, hi), y);
        let series = vec![
            Series {
                name: "linebloom, random keys (measured / formula)".into(),
                colour_key: "linebloom".into(),
                points: random.iter().map(|r| (r.bits_per_key, r.ratio)).collect(),
                errors: Some(random.iter().map(|r| (r.ratio_lo, r.ratio_hi)).collect()),
                style: Style::Measured,
            },
            line("formula +3%", 1.0 + TOLERANCE),
            line("formula exact", 1.0),
            line("formula −3%", 1.0 - TOLERANCE),
        ];
        let frame = LineChart::new(
            "Measured / predicted false-positive rate (Wilson 99% bars)",
            "bits per key (sized for 10%, 1%, 0.1%, 0.01%)",
            "measured / formula",
        );
        crate::support::plot::line_chart(&run.dir, &frame, &series)
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let table_rows: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                vec![
                    r.keys.clone(),
                    format!("{}", r.target),
                    format!("{}", r.n),
                    format!("{}", r.k),
                    format!("{:.2}", r.bits_per_key),
                    format!("{:.1e}", r.probes as f64),
                    format!("{:.3e}", r.measured),
                    format!("{:.3e}", r.predicted),
                    format!("{:.4} [{:.4}, {:.4}]", r.ratio, r.ratio_lo, r.ratio_hi),
                ]
            })
            .collect();
        let missed: Vec<String> = rows
            .iter()
            .filter(|r| r.ratio_lo > 1.0 + TOLERANCE || r.ratio_hi < 1.0 - TOLERANCE)
            .map(|r| format!("{} at p = {} (ratio {:.4})", r.keys, r.target, r.ratio))
            .collect();
        let worst = rows
            .iter()
            .map(|r| (r.ratio - 1.0).abs())
            .fold(0.0, f64::max);
        Ok(Summary {
            table: markdown_table(
                &[
                    "keys",
                    "target",
                    "n",
                    "k",
                    "bits/key",
                    "probes",
                    "measured",
                    "formula",
                    "measured / formula [Wilson 99%]",
                ],
                &table_rows,
            ),
            caption: format!(
                "The exact blocked formula against measured rates of default-configured filters (IntFold hasher): random keys at four targets, and structured integer key sets at 1%. The largest deviation of a point estimate was {:.2}%; the dashed lines mark ±3%.",
                worst * 100.0
            ),
            not_leading: if missed.is_empty() {
                format!(
                    "— (every row's 99% interval overlaps the ±{:.0}% band around the formula)",
                    TOLERANCE * 100.0
                )
            } else {
                format!(
                    "The formula missed by more than ±{:.0}% (whole 99% interval outside): {}.",
                    TOLERANCE * 100.0,
                    missed.join("; ")
                )
            },
        })
    }
}
