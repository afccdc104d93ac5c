//! `sizing`: requested false-positive rate against the rate achieved at capacity, over
//! n × p, for linebloom and every rival that sizes by a rate, each by its own recipe:
//! `Params::for_fpr`, `ClassicParams::for_fpr`, `CountingParams::for_fpr`, fastbloom's
//! `with_false_pos`, bloomfilter's `new_for_fp_rate_with_seed` (fixed seed), the Parquet
//! spec's bits-per-key formula for sbbf-rs-safe, and the two scalable filters grown 100×
//! past their initial capacity.
//!
//! A promise is **kept** when the measured rate is at or below the request, **broken**
//! when even the Wilson 99% lower bound is above it, and **within noise** otherwise.

use crate::Ctx;
use crate::contenders::{SizedBy, Sizing, build};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{false_positives, members, non_members};
use crate::support::plot::{LineChart, Series, Style};
use crate::support::stats::{Z99, wilson};
use crate::support::table::markdown_table;
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "sizing";

/// Every contender that sizes from a rate, linebloom's first (the table's order), less
/// the concurrent twins (their twin's recipe).
pub fn libraries() -> Vec<&'static str> {
    crate::contenders::names_where(|c| {
        c.facts.sized_by != SizedBy::KeyCount && c.facts.stands_alone()
    })
}

/// One CSV row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Library.
    #[serde(alias = "library")]
    pub contender: String,
    /// Keys inserted (the capacity asked for).
    pub n: u64,
    /// Requested rate.
    pub requested: f64,
    /// Measured rate.
    pub measured: f64,
    /// Wilson 99% bounds.
    pub wilson_lo: f64,
    /// Wilson 99% upper bound.
    pub wilson_hi: f64,
    /// Non-member probes.
    pub probes: u64,
    /// Bits per key used.
    pub bits_per_key: f64,
    /// kept / within noise / broken.
    pub verdict: String,
}

/// The `sizing` experiment.
pub struct SizingGrid;

impl Experiment for SizingGrid {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str = "requested vs achieved FPR over n x p: who keeps the promise";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (ns, ps, max_probes): (Vec<u64>, Vec<f64>, usize) = match ctx.scale {
            crate::Scale::Test => (vec![1_000], vec![0.1, 0.01], 50_000),
            crate::Scale::Preview => (
                vec![1_000, 10_000, 100_000],
                vec![1e-1, 1e-2, 1e-3, 1e-4],
                500_000,
            ),
            crate::Scale::Reference => (
                vec![1_000, 10_000, 100_000, 1_000_000],
                vec![1e-1, 1e-2, 1e-3, 1e-4, 1e-5],
                2_000_000,
            ),
            crate::Scale::Full => (
                vec![1_000, 10_000, 100_000, 1_000_000, 10_000_000],
                vec![1e-1, 1e-2, 1e-3, 1e-4, 1e-5],
                20_000_000,
            ),
        };
        let probe_keys = non_members(ctx, max_probes, 2);
        let mut rows = Vec::new();
        let bar = crate::support::progress::bar(ctx, (ns.len() * ps.len()) as u64, NAME);
        for &n in &ns {
            let keys = members(ctx, n as usize, n);
            for &p in &ps {
                bar.set_message(format!("n = {n}, p = {p}"));
                // Enough probes to expect 200 false positives, within the cap.
                let probes = ((200.0 / p) as usize).clamp(100_000.min(max_probes), max_probes);
                for lib in libraries() {
                    let Some(f) = build(lib, Sizing::Fpr(p), &keys, ctx.kernel)? else {
                        continue;
                    };
                    let fp = false_positives(f.as_ref(), &probe_keys[..probes]);
                    let (lo, hi) = wilson(fp, probes as u64, Z99);
                    let measured = fp as f64 / probes as f64;
                    let verdict = if measured <= p {
                        "kept"
                    } else if lo > p {
                        "broken"
                    } else {
                        "within noise"
                    };
                    rows.push(Row {
                        contender: lib.to_string(),
                        n,
                        requested: p,
                        measured,
                        wilson_lo: lo,
                        wilson_hi: hi,
                        probes: probes as u64,
                        bits_per_key: f.bytes() as f64 * 8.0 / n as f64,
                        verdict: verdict.into(),
                    });
                }
                bar.inc(1);
            }
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Draws achieved / requested against requested, at the largest n.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let n_max = rows.iter().map(|r| r.n).max().unwrap_or(0);
        let mut series: Vec<Series> = libraries()
            .iter()
            .map(|lib| {
                let rs: Vec<&Row> = rows
                    .iter()
                    .filter(|r| r.contender == *lib && r.n == n_max)
                    .collect();
                Series {
                    name: lib.to_string(),
                    colour_key: lib.to_string(),
                    points: rs
                        .iter()
                        .map(|r| (r.requested, (r.measured / r.requested).max(1e-3)))
                        .collect(),
                    errors: Some(
                        rs.iter()
                            .map(|r| {
                                (
                                    (r.wilson_lo / r.requested).max(1e-3),
                                    r.wilson_hi / r.requested,
                                )
                            })
                            .collect(),
                    ),
                    style: Style::Measured,
                }
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        let (lo, hi) = (
            rows.iter().map(|r| r.requested).fold(1.0, f64::min),
            rows.iter().map(|r| r.requested).fold(0.0, f64::max),
        );
        series.push(Series::horizontal(
            "promise kept below this line",
            "bound",
            (lo, hi),
            1.0,
        ));
        let title = format!("Achieved / requested false-positive rate at n = {n_max}");
        let frame = LineChart::new(&title, "requested rate", "achieved / requested")
            .log_x()
            .log_y();
        crate::support::plot::line_chart(&run.dir, &frame, &series)
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let table_rows: Vec<Vec<String>> = libraries()
            .iter()
            .filter(|lib| rows.iter().any(|r| r.contender == **lib))
            .map(|lib| {
                let rs: Vec<&Row> = rows.iter().filter(|r| r.contender == *lib).collect();
                let count = |v: &str| rs.iter().filter(|r| r.verdict == v).count();
                let worst = rs
                    .iter()
                    .map(|r| r.measured / r.requested)
                    .fold(0.0, f64::max);
                let bpk = rs
                    .iter()
                    .filter(|r| r.requested == 0.01)
                    .map(|r| r.bits_per_key)
                    .fold(f64::NAN, f64::max);
                vec![
                    lib.to_string(),
                    format!("{}/{}", count("kept"), rs.len()),
                    count("within noise").to_string(),
                    count("broken").to_string(),
                    format!("{worst:.2}"),
                    format!("{bpk:.2}"),
                ]
            })
            .collect();
        let ours_broken: Vec<String> = rows
            .iter()
            .filter(|r| r.contender.starts_with("linebloom") && r.verdict == "broken")
            .map(|r| {
                format!(
                    "{} at n = {}, p = {} (measured {:.2e})",
                    r.contender, r.n, r.requested, r.measured
                )
            })
            .collect();
        let leaner: Vec<String> = libraries()
            .into_iter()
            .filter(|l| !l.starts_with("linebloom"))
            .filter(|l| {
                rows.iter()
                    .filter(|r| r.contender == *l)
                    .all(|r| r.verdict != "broken")
            })
            .filter_map(|l| {
                let theirs = rows
                    .iter()
                    .filter(|r| r.contender == l && r.requested == 0.01)
                    .map(|r| r.bits_per_key)
                    .fold(f64::NAN, f64::max);
                let ours = rows
                    .iter()
                    .filter(|r| r.contender == "linebloom" && r.requested == 0.01)
                    .map(|r| r.bits_per_key)
                    .fold(f64::NAN, f64::max);
                (theirs < ours).then(|| {
                format!(
                    "{l} keeps every promise with {theirs:.2} bits/key at 1% (linebloom: {ours:.2})"
                )
            })
            })
            .collect();
        let mut not_leading = String::new();
        if !ours_broken.is_empty() {
            not_leading.push_str(&format!(
                "linebloom broke these promises: {}. ",
                ours_broken.join("; ")
            ));
        }
        if !leaner.is_empty() {
            not_leading.push_str(&format!("{}. ", leaner.join("; ")));
        }
        if not_leading.is_empty() {
            not_leading = "— (every linebloom type kept its promise, or was within noise, at every n and p measured, and no rival that kept every promise used fewer bits per key at 1%)".into();
        }
        Ok(Summary {
        table: markdown_table(&["library", "kept", "within noise", "broken", "worst achieved/requested", "bits/key at 1% (largest n)"], &table_rows),
        caption: "Each point is one library's achieved false-positive rate divided by the rate it was asked for, at the largest capacity, with Wilson 99% intervals; below the dashed line the promise is kept. The table counts kept, within-noise and broken promises over every n and p measured.".into(),
        not_leading,
    })
    }
}
