//! `sizing_per_filter`: the sizing promise filter by filter. The `sizing` experiment
//! pools probes, so it checks the average; here every small `(n, p)` cell builds 100 or
//! more filters, each over its own key set (the same thing, for a good hash, as its own
//! hash seed), and counts the filters whose own rate is above `p`.
//!
//! Two counts per filter type, because probing cannot resolve one filter's rate well:
//!
//! * **exact**, for linebloom's types: the rate read from the filter's bits
//!   (`estimated_fpr`, exact for the blocked filters given an ideal hash), with no probe
//!   noise. linebloom promises that at most 1% of its Bloom, counting and classic
//!   filters are above `p`.
//! * **clearly above**, for every type: filters whose Wilson 99% lower bound, over their
//!   own probes, is above `p`. It only catches filters well above `p` (at 1e-3 and
//!   100,000 probes a filter must be about 30% above `p`), so it is a floor on the
//!   share, not the share.
//!
//! The pooled rate over all filters of a cell is reported too: the average promise.

use crate::Ctx;
use crate::contenders::{Sizing, build};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{false_positives, members, non_members};
use crate::support::plot::{LineChart, Series, Style};
use crate::support::stats::{Z99, wilson};
use crate::support::table::markdown_table;
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "sizing_per_filter";

use crate::experiments::sizing::libraries;

/// The types linebloom promises this for (the scalable filter promises its compounded
/// bound instead).
const PROMISED: &[&str] = &["linebloom", "linebloom-classic", "linebloom-counting"];

/// One CSV row: one filter type in one `(n, p)` cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Library.
    #[serde(alias = "library")]
    pub contender: String,
    /// Keys inserted into each filter (the capacity asked for).
    pub n: u64,
    /// Requested rate.
    pub requested: f64,
    /// Filters built, each over its own key set.
    pub filters: u64,
    /// Non-member probes per filter.
    pub probes: u64,
    /// Pooled measured rate over every filter's probes.
    pub pooled: f64,
    /// Filters whose measured rate is above `requested` (probe noise included).
    pub measured_above: u64,
    /// Filters whose Wilson 99% lower bound is above `requested`.
    pub clearly_above: u64,
    /// Filters whose exact rate (from their bits) is above `requested`; empty where the
    /// library cannot say.
    pub exact_above: Option<u64>,
    /// The largest exact rate ÷ `requested` among the filters.
    pub exact_worst: Option<f64>,
    /// Bits per key (average over the filters).
    pub bits_per_key: f64,
}

/// The cells, filters per cell and probes per filter of each scale.
fn plan(scale: crate::Scale) -> (Vec<u64>, Vec<f64>, u64, usize) {
    match scale {
        crate::Scale::Test => (vec![100, 1_000], vec![0.01], 20, 20_000),
        crate::Scale::Preview => (vec![100, 1_000], vec![1e-2, 1e-3], 100, 50_000),
        crate::Scale::Reference => (vec![10, 100, 1_000, 10_000], vec![1e-2, 1e-3], 100, 100_000),
        crate::Scale::Full => (
            vec![1, 10, 100, 1_000, 10_000, 100_000],
            vec![1e-1, 1e-2, 1e-3, 1e-4],
            200,
            1_000_000,
        ),
    }
}

/// The `sizing_per_filter` experiment.
pub struct SizingPerFilter;

impl Experiment for SizingPerFilter {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str = "the promise per filter: over 100+ key sets per small (n, p) cell, the share of filters above p";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (ns, ps, filters, probes) = plan(ctx.scale);
        let probe_keys = non_members(ctx, probes, 3);
        let mut rows = Vec::new();
        let bar = crate::support::progress::bar(ctx, (ns.len() * ps.len()) as u64 * filters, NAME);
        for &n in &ns {
            for &p in &ps {
                bar.set_message(format!("n = {n}, p = {p}"));
                let mut cells: Vec<Row> = Vec::new();
                for instance in 0..filters {
                    // Stream 1000 + instance: a key set of its own for every filter.
                    let keys = members(ctx, n as usize, 1_000 + instance);
                    for lib in &libraries() {
                        let Some(f) = build(lib, Sizing::Fpr(p), &keys, ctx.kernel)? else {
                            continue;
                        };
                        let fp = false_positives(f.as_ref(), &probe_keys);
                        let (lo, _) = wilson(fp, probes as u64, Z99);
                        let row = match cells.iter_mut().find(|r| r.contender == *lib) {
                            Some(row) => row,
                            None => {
                                cells.push(Row {
                                    contender: lib.to_string(),
                                    n,
                                    requested: p,
                                    filters: 0,
                                    probes: probes as u64,
                                    pooled: 0.0,
                                    measured_above: 0,
                                    clearly_above: 0,
                                    exact_above: None,
                                    exact_worst: None,
                                    bits_per_key: 0.0,
                                });
                                cells.last_mut().expect("just pushed")
                            }
                        };
                        row.filters += 1;
                        row.pooled += fp as f64; // a count until the cell is done
                        row.measured_above += u64::from(fp as f64 / probes as f64 > p);
                        row.clearly_above += u64::from(lo > p);
                        if let Some(exact) = f.exact_fpr() {
                            *row.exact_above.get_or_insert(0) += u64::from(exact > p);
                            let worst = row.exact_worst.get_or_insert(0.0);
                            *worst = worst.max(exact / p);
                        }
                        row.bits_per_key += f.bytes() as f64 * 8.0 / n as f64;
                    }
                    bar.inc(1);
                }
                for mut row in cells {
                    row.pooled /= (row.filters * row.probes) as f64;
                    row.bits_per_key /= row.filters as f64;
                    rows.push(row);
                }
            }
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Draws the share of filters above `p` against `n`, at the smallest `p` measured.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let p_min = rows.iter().map(|r| r.requested).fold(1.0, f64::min);
        let mut series: Vec<Series> = libraries()
            .iter()
            .filter_map(|lib| {
                let rs: Vec<&Row> = rows
                    .iter()
                    .filter(|r| r.contender == *lib && r.requested == p_min)
                    .collect();
                let exact = rs.first()?.exact_above.is_some();
                Some(Series {
                    name: format!("{lib} ({})", if exact { "exact" } else { "clearly above" }),
                    colour_key: lib.to_string(),
                    points: rs
                        .iter()
                        .map(|r| (r.n as f64, (100.0 * share_above(r)).max(ZERO_AT)))
                        .collect(),
                    errors: None,
                    style: Style::Measured,
                })
            })
            .collect();
        let (lo, hi) = (
            rows.iter()
                .map(|r| r.n as f64)
                .fold(f64::INFINITY, f64::min),
            rows.iter().map(|r| r.n as f64).fold(0.0, f64::max),
        );
        series.push(Series::horizontal(
            "1%: the per-filter promise",
            "bound",
            (lo, hi),
            1.0,
        ));
        let title = format!("Filters above their requested rate p = {p_min}");
        let frame = LineChart::new(
            &title,
            "keys per filter (n)",
            "% of filters above p (none: drawn at 0.3%)",
        )
        .log_x()
        .log_y();
        crate::support::plot::line_chart(&run.dir, &frame, &series)
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let pct = |count: u64, of: u64| format!("{:.1}%", 100.0 * count as f64 / of as f64);
        let cell = |r: &Row| format!("n = {}, p = {}", r.n, r.requested);
        let table_rows: Vec<Vec<String>> = libraries()
            .iter()
            .filter(|lib| rows.iter().any(|r| r.contender == **lib))
            .map(|lib| {
                let rs: Vec<&Row> = rows.iter().filter(|r| r.contender == *lib).collect();
                let worst_exact = rs
                    .iter()
                    .filter(|r| r.exact_above.is_some())
                    .max_by(|a, b| share_above(a).total_cmp(&share_above(b)));
                let worst_clear = rs
                    .iter()
                    .max_by_key(|r| r.clearly_above)
                    .expect("a library with rows");
                let worst_pooled = rs
                    .iter()
                    .map(|r| r.pooled / r.requested)
                    .fold(0.0, f64::max);
                vec![
                    lib.to_string(),
                    rs.len().to_string(),
                    worst_exact.map_or("—".into(), |r| match r.exact_above {
                        Some(0) => "none in any cell".into(),
                        _ => format!(
                            "{} ({})",
                            pct(r.exact_above.unwrap_or(0), r.filters),
                            cell(r)
                        ),
                    }),
                    if worst_clear.clearly_above == 0 {
                        "none in any cell".into()
                    } else {
                        format!(
                            "{} ({})",
                            pct(worst_clear.clearly_above, worst_clear.filters),
                            cell(worst_clear)
                        )
                    },
                    format!("{worst_pooled:.2}"),
                ]
            })
            .collect();
        let broken: Vec<String> = rows
            .iter()
            .filter(|r| PROMISED.contains(&r.contender.as_str()) && share_above(r) > 0.01)
            .map(|r| {
                format!(
                    "{}: {} of {} filters above p at {}",
                    r.contender,
                    r.exact_above.unwrap_or(r.clearly_above),
                    r.filters,
                    cell(r)
                )
            })
            .collect();
        let mut not_leading = String::new();
        if !broken.is_empty() {
            not_leading.push_str(&format!(
                "linebloom broke the per-filter promise (at most 1% of filters above p): {}.",
                broken.join("; ")
            ));
        }
        if not_leading.is_empty() {
            not_leading = "—".into();
        }
        Ok(Summary {
        table: markdown_table(
            &[
                "library",
                "cells",
                "filters above p, exact (worst cell)",
                "filters clearly above p, probed (worst cell)",
                "worst pooled ÷ p",
            ],
            &table_rows,
        ),
        caption: "Each cell builds 100 or more filters of one type, each over its own key set, and counts those whose own rate is above the requested p: exactly from the bits for linebloom's types (\"exact\"), and for the rivals only those whose Wilson 99% lower bound over their probes is above p (\"clearly above\": a floor, as probing cannot resolve a filter a few percent above p). The dashed line is linebloom's per-filter promise: at most 1% of filters above p.".into(),
        not_leading,
    })
    }
}

/// The share of a row's filters above `p`: exact where known, else clearly above.
fn share_above(r: &Row) -> f64 {
    r.exact_above.unwrap_or(r.clearly_above) as f64 / r.filters as f64
}

/// Where a share of zero is drawn on the log axis (with 100 or more filters a cell, the
/// smallest share that is not zero is 1% or less, and 0.3% sits below every such share
/// measured up to 300 filters).
const ZERO_AT: f64 = 0.3;
