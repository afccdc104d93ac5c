//! `throughput`: ns per operation (insert, positive lookup, negative lookup; single and
//! batched) against filter size, from 16 KiB to 1 GiB, per linebloom kernel and per
//! rival, next to two limit lines measured in the same run over a buffer of the same
//! size: independent random 64-byte reads (what overlapping misses can do) and a
//! dependent chain of such reads (one miss at a time). Every curve reads as a multiple
//! of what the memory can do.
//!
//! At each size, `n` is the most keys linebloom's own sizing holds at 1% in that many
//! bytes ([`keys_for_bytes`](crate::contenders::keys_for_bytes)), and every contender is
//! built for those `n` keys at 1% by its own recipe, the one [`build`] uses: sbbf-rs-safe
//! at the Parquet spec's 10 bits per key, fastbloom by `with_false_pos`, and
//! `split-block-256` (a 256-bit split-block filter on linebloom's hash) at linebloom's
//! own exact rate for those keys, so the two probes compare at equal false positives.
//! The filters
//! of other structures (classic and counting Bloom filters, cuckoo, quotient, xor and binary fuse;
//! [`other_structures`]) likewise, up to the rivals' largest size; their inserts are not timed
//! where they refuse keys past their capacity (the insert workload adds keys past `n`)
//! or cannot insert at all (the static xor filters). linebloom's filters are built as a
//! user builds them (`BloomFilter::new`), whose storage maps filters of 2 MiB or more on
//! transparent huge pages (`Blocks::zeroed`); the CSV records how many huge-page bytes
//! the process had, since the kernel may refuse. Rivals allocate their own memory (4 KiB
//! pages unless the kernel's THP mode is `always`). At the largest
//! size the reference scale measures only linebloom's detected kernel (filling a 1 GiB
//! rival takes minutes); `--scale full` measures everyone everywhere.
//!
//! Contenders are interleaved round by round, the start order rotating every round, and
//! every pass is timed in CPU time (see [`crate::support::timing`]). A pass is one dynamic call:
//! the single-key loops are each filter's own ([`LabFilter::count_each`],
//! [`LabFilter::dedup_each`] for `insert`, which uses every answer as a dedup loop does,
//! [`LabFilter::insert_each`] for `add`, which asks for none), so a probe inlines into its
//! loop as in a user's code, where
//! a dynamic call per key cost more than linebloom's whole probe. An identical second
//! sbbf-rs-safe filter, `sbbf-rs-safe-control`, is timed like any contender: its ratio
//! to sbbf-rs-safe is the table's noise floor. The CSV has the median, min and max.

use crate::Ctx;
use crate::contenders::{
    self, Fastbloom, LabFilter, Renamed, Sbbf, Sizing, SplitBlock256, blocked, build,
};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{fill_stream, member_key, non_members};
use crate::support::plot::{LineChart, Series, Style};
use crate::support::stats::summary as med;
use crate::support::table::markdown_table;
use crate::support::timing::{MemoryProbe, anon_huge_bytes, ns_per_key};
use linebloom::Params;
use rand::{RngExt, SeedableRng, rngs::StdRng};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Experiment name.
pub const NAME: &str = "throughput";

/// The control copy's name: an identical second sbbf-rs-safe.
const CONTROL: &str = "sbbf-rs-safe-control";

/// The contenders of other structures, built for the same keys at 1% by their own recipe: every
/// contender outside the blocked Bloom filters that neither grows nor is a concurrent
/// twin.
pub fn other_structures() -> Vec<&'static str> {
    contenders::names_where(|c| {
        c.look.structure != "blocked Bloom" && !c.facts.grows() && c.facts.stands_alone()
    })
}

/// Contenders whose inserts are not timed: they refuse keys past their capacity (the
/// insert workload adds keys past `n`), or cannot insert after they are built. Those
/// that delete have their inserts timed by `reinsert` instead.
fn untimed_inserts() -> Vec<&'static str> {
    contenders::names_where(|c| c.facts.refuses_inserts())
}

/// Contenders that delete: each round deletes a quarter of their keys (`delete`) and
/// inserts the same keys back (`reinsert`), so the load stays between 75% and 100%
/// of `n`, where a full filter's inserts and deletes work hardest.
pub fn deletes() -> Vec<&'static str> {
    contenders::names_where(|c| c.facts.deletes && !c.facts.grows())
}

/// One CSV row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Filter (or limit buffer) size in bytes.
    pub size_bytes: u64,
    /// Keys the filter holds.
    pub n: u64,
    /// Contender or limit line.
    pub contender: String,
    /// insert (answer used), add (no answer), hit, miss, hit-batched, miss-batched,
    /// limit-independent, limit-dependent.
    pub workload: String,
    /// Median CPU ns per operation.
    pub median_ns: f64,
    /// Fastest round.
    pub min_ns: f64,
    /// Slowest round.
    pub max_ns: f64,
    /// Operations per round.
    pub ops: u64,
    /// Process huge-page bytes when measured.
    pub huge_page_bytes: u64,
}

/// The `throughput` experiment.
pub struct Throughput;

impl Experiment for Throughput {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str =
        "ns/op (insert, hit, miss; single and batched) vs filter size, with memory limit lines";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (sizes, rounds, rival_max): (Vec<u64>, usize, u64) = match ctx.scale {
            crate::Scale::Test => (vec![16 << 10, 1 << 20], 3, 1 << 20),
            crate::Scale::Preview => (vec![16 << 10, 1 << 20, 64 << 20], 5, 16 << 20),
            crate::Scale::Reference => (
                vec![16 << 10, 256 << 10, 4 << 20, 64 << 20, 1 << 30],
                5,
                64 << 20,
            ),
            crate::Scale::Full => (
                (0..=8)
                    .map(|i| (16u64 << 10) << (2 * i))
                    .take_while(|&s| s <= 4 << 30)
                    .collect(),
                9,
                u64::MAX,
            ),
        };
        let mut rows = Vec::new();
        let bar = crate::support::progress::bar(ctx, sizes.len() as u64, NAME);
        for &size in &sizes {
            bar.set_message(format!("{} KiB", size >> 10));
            let n = crate::contenders::keys_for_bytes(size, 0.01)?;
            let params = Params::for_fpr(n, 0.01)?;
            // Probes: enough distinct lines to defeat the caches at large sizes.
            let lines = (params.bytes() / 64) as u64;
            let probes = lines.clamp(1 << 16, 1 << 24) as usize;
            let mut rng = StdRng::seed_from_u64(ctx.seed ^ size);
            let hits: Vec<u64> = (0..probes)
                .map(|_| member_key(ctx, rng.random_range(0..n)))
                .collect();
            let misses = non_members(ctx, probes, size);
            let inserts: Vec<u64> = (0..probes as u64).map(|i| member_key(ctx, n + i)).collect();
            // Held keys to delete and insert back: a quarter of the members.
            let churn: Vec<u64> = (0..(n / 4).min(probes as u64).max(1))
                .map(|i| member_key(ctx, i))
                .collect();

            let mut contenders: Vec<Box<dyn LabFilter>> = Vec::new();
            let kernels: Vec<_> = if size > rival_max {
                vec![ctx.kernel]
            } else {
                linebloom::arch::available().collect()
            };
            for kernel in kernels {
                contenders.push(Box::new(blocked(params, kernel)));
            }
            if size <= rival_max {
                contenders.push(Box::new(Sbbf::for_fpr(n, 0.01)));
                contenders.push(Box::new(Renamed(CONTROL, Sbbf::for_fpr(n, 0.01))));
                contenders.push(Box::new(Fastbloom::for_fpr(n, 0.01)));
                // The split-block probe on linebloom's hash, at linebloom's own rate
                // for these keys (its exact formula), so the two compare at equal
                // false positives.
                let ours = linebloom::fpr::blocked(params.blocks() as u64, params.k(), n);
                contenders.push(Box::new(SplitBlock256::for_fpr(n, ours)?));
            }
            for c in contenders.iter_mut() {
                let name = c.name();
                fill_stream(ctx, c.as_mut(), n, &name);
            }
            if size <= rival_max {
                let keys: Vec<u64> = (0..n).map(|i| member_key(ctx, i)).collect();
                for name in other_structures() {
                    bar.set_message(format!("{} KiB: building {name}", size >> 10));
                    let built = build(name, Sizing::Fpr(0.01), &keys, ctx.kernel)?;
                    contenders.push(built.ok_or_else(|| anyhow::anyhow!("{name}: no recipe"))?);
                }
                bar.set_message(format!("{} KiB", size >> 10));
            }
            let huge = anon_huge_bytes();
            let probe = MemoryProbe::new(params.bytes(), ctx.seed);

            // `delete` before `reinsert`: a round deletes keys, then puts them back.
            let workloads = [
                "hit",
                "miss",
                "hit-batched",
                "miss-batched",
                "insert",
                "add",
                "delete",
                "reinsert",
            ];
            let mut samples: Vec<Vec<Vec<f64>>> =
                vec![vec![Vec::new(); workloads.len()]; contenders.len()];
            let mut limits = [Vec::new(), Vec::new()];
            let mut out = vec![false; probes];
            let len = contenders.len();
            let (untimed_inserts, deletes) = (untimed_inserts(), deletes());
            // Per (contender, workload): rounds in which a rival took back fewer keys
            // than it held, and the fewest it took, reported once per size.
            let mut short: BTreeMap<(usize, usize), (usize, u64)> = BTreeMap::new();
            for round in 0..rounds {
                // The start order rotates every round (see `timing`).
                for ci in crate::support::timing::round_order(round, len) {
                    let c = &mut contenders[ci];
                    for (wi, w) in workloads.iter().enumerate() {
                        let batched = w.ends_with("batched");
                        if batched && !c.has_batch() {
                            continue;
                        }
                        let inserts_keys = *w == "insert" || *w == "add";
                        if inserts_keys && untimed_inserts.contains(&c.name().as_str()) {
                            continue;
                        }
                        let churns = *w == "delete" || *w == "reinsert";
                        if churns && !deletes.contains(&c.name().as_str()) {
                            continue;
                        }
                        let keys = if w.starts_with("hit") {
                            &hits
                        } else if w.starts_with("miss") {
                            &misses
                        } else if churns {
                            &churn
                        } else {
                            &inserts
                        };
                        let mut done = 0;
                        let t = match (*w, batched) {
                            ("delete", _) => ns_per_key(keys, |k| {
                                done = c.remove_each(k);
                                done
                            }),
                            ("reinsert", _) => ns_per_key(keys, |k| {
                                done = c.try_insert_each(k);
                                done
                            }),
                            // One dynamic call per pass: the loops are the filter's
                            // own (`count_each`, `dedup_each`, `insert_each`), so each
                            // probe inlines. `insert` uses every answer (a dedup loop),
                            // `add` asks for none.
                            ("insert", _) => ns_per_key(keys, |k| c.dedup_each(k)),
                            ("add", _) => ns_per_key(keys, |k| {
                                c.insert_each(k);
                                0
                            }),
                            (_, true) => ns_per_key(keys, |k| {
                                c.contains_batch(k, &mut out);
                                out.iter().filter(|&&x| x).count() as u64
                            }),
                            _ => ns_per_key(keys, |k| c.count_each(k)),
                        };
                        if churns && done != keys.len() as u64 {
                            // linebloom's own filters must take back every key they
                            // held; a rival that refuses is reported, and measured on.
                            anyhow::ensure!(
                                !c.name().starts_with("linebloom"),
                                "{}: {w} took {done} of {} held keys at {} KiB",
                                c.name(),
                                keys.len(),
                                size >> 10
                            );
                            let (rounds_short, fewest) =
                                short.entry((ci, wi)).or_insert((0, u64::MAX));
                            *rounds_short += 1;
                            *fewest = (*fewest).min(done);
                        }
                        samples[ci][wi].push(t);
                    }
                }
                limits[0].push(probe.independent_reads(probes, ctx.seed));
                limits[1].push(probe.dependent_chain(probes.min(1 << 20)));
            }
            for (&(ci, wi), &(rounds_short, fewest)) in &short {
                let what = format!(
                    "{}: {} took as few as {fewest} of {} held keys at {} KiB ({rounds_short} of {rounds} rounds short)",
                    contenders[ci].name(),
                    workloads[wi],
                    churn.len(),
                    size >> 10
                );
                bar.suspend(|| eprintln!("   note: {what}"));
            }
            let mut push = |contender: String, workload: &str, s: &[f64], ops: usize| {
                let (m, lo, hi) = med(s);
                rows.push(Row {
                    size_bytes: params.bytes() as u64,
                    n,
                    contender,
                    workload: workload.into(),
                    median_ns: m,
                    min_ns: lo,
                    max_ns: hi,
                    ops: ops as u64,
                    huge_page_bytes: huge,
                });
            };
            for (c, per) in contenders.iter().zip(&samples) {
                for (w, s) in workloads.iter().zip(per) {
                    if !s.is_empty() {
                        push(c.name(), w, s, probes);
                    }
                }
            }
            push("memory".into(), "limit-independent", &limits[0], probes);
            push(
                "memory".into(),
                "limit-dependent",
                &limits[1],
                probes.min(1 << 20),
            );
            bar.inc(1);
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Draws CPU ns per operation against filter size: misses in `plot.svg` (the
    /// headline), hits in `hit.svg` and inserts in `insert.svg`, each with its dashed
    /// variant (batched lookups; inserts that ask for no answer) and the memory limit
    /// lines.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let dir = &run.dir;
        for (op, dashed, stem, title) in [
            (
                "miss",
                "miss-batched",
                "plot",
                "Negative lookup: CPU ns/op vs size (dashed: batched; memory limits)",
            ),
            (
                "hit",
                "hit-batched",
                "hit",
                "Positive lookup: CPU ns/op vs size (dashed: batched; memory limits)",
            ),
            (
                "insert",
                "add",
                "insert",
                "Insert: CPU ns/op vs size (solid: answer used; dashed: add; memory limits)",
            ),
            (
                "delete",
                "reinsert",
                "delete",
                "Deletes (solid) and inserts back (dashed) at 75-100% of n",
            ),
        ] {
            let frame = LineChart::new(title, "filter size", "CPU ns per operation (median)")
                .x_bytes()
                .log_y();
            crate::support::plot::line_chart_as(dir, stem, &frame, &op_series(rows, op, dashed))?;
        }
        Ok(())
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], run: &Run) -> anyhow::Result<Summary> {
        let mut sizes: Vec<u64> = rows.iter().map(|r| r.size_bytes).collect();
        sizes.sort();
        sizes.dedup();
        let get = |c: &str, w: &str, s: u64| median(rows, c, w, s);
        let ours = format!("linebloom-{}", run.provenance.kernel);
        let mut table = Vec::new();
        let mut behind = Vec::new();
        for &s in &sizes {
            let fmt = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "—".into());
            let o = get(&ours, "miss", s);
            let sb = get("sbbf-rs-safe", "miss", s);
            let split = get("split-block-256", "miss", s);
            let fb = get("fastbloom", "miss", s);
            // The noise floor: how far an identical copy of sbbf-rs-safe landed from it.
            let noise = sb
                .zip(get(CONTROL, "miss", s))
                .map(|(a, b)| (b / a - 1.0).abs());
            table.push(vec![
                format!("{} KiB", s >> 10),
                fmt(o),
                fmt(get(&ours, "miss-batched", s)),
                fmt(sb),
                fmt(split),
                fmt(fb),
                fmt(get(&ours, "insert", s)),
                fmt(get(&ours, "add", s)),
                fmt(get("sbbf-rs-safe", "insert", s)),
                fmt(get("memory", "limit-independent", s)),
                fmt(get("memory", "limit-dependent", s)),
                noise
                    .map(|x| format!("±{:.0}%", x * 100.0))
                    .unwrap_or_else(|| "—".into()),
            ]);
            let others = other_structures()
                .into_iter()
                .map(|f| (f, get(f, "miss", s)));
            for (name, theirs) in [
                ("sbbf-rs-safe", sb),
                ("split-block-256", split),
                ("fastbloom", fb),
            ]
            .into_iter()
            .chain(others)
            {
                // Slower only when the gap is larger than the control's.
                if let (Some(a), Some(b)) = (o, theirs)
                    && b * (1.0 + noise.unwrap_or(0.0)) < a
                {
                    behind.push(format!("{name} at {} KiB ({b:.1} vs {a:.1} ns)", s >> 10));
                }
            }
        }
        let huge = rows.iter().map(|r| r.huge_page_bytes).max().unwrap_or(0);
        // Every contender's negative and positive lookups at every size where it ran.
        // Rows come size by size, so each contender's name recurs once per size: keep
        // its first place only.
        let mut names: Vec<&str> = Vec::new();
        for r in rows
            .iter()
            .filter(|r| r.workload == "miss" && r.contender != CONTROL)
        {
            if !names.contains(&r.contender.as_str()) {
                names.push(&r.contender);
            }
        }
        let sizes = other_structure_sizes(rows);
        let mut header = vec!["contender (miss / hit ns)".to_string()];
        header.extend(sizes.iter().map(|s| format!("{} KiB", s >> 10)));
        let every: Vec<Vec<String>> = names
            .iter()
            .map(|c| pair_line(rows, c, &sizes, ("miss", "hit")))
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let every_table = markdown_table(&header, &every);
        let deleting = deletion_table(rows, &sizes);
        Ok(Summary {
            table: format!(
                "{}\nEvery contender, every structure, at the sizes where all of them ran (median CPU ns per negative / positive lookup):\n\n{every_table}\nThe filters that delete, at 75–100% of the keys they were sized for (median CPU ns per delete / insert back, each round deleting a quarter of the keys and inserting them again; [`delete.svg`](throughput/delete.svg)), and the vector quotient filter's speed-up over qfilter and cuckoofilter (their time over its own: above 1 is faster):\n\n{deleting}",
                markdown_table(
                    &[
                        "size",
                        &format!("{ours} miss"),
                        "batched miss",
                        "sbbf-rs-safe miss",
                        "split-block-256 miss",
                        "fastbloom miss",
                        &format!("{ours} insert"),
                        &format!("{ours} add"),
                        "sbbf-rs-safe insert",
                        "independent reads",
                        "dependent reads",
                        "noise floor (control vs sbbf)",
                    ],
                    &table,
                )
            ),
            caption: format!(
                "Median CPU ns per negative lookup against filter size (log-log), single-key (solid) and batched with prefetch (dashed), next to the time of independent and of dependent random 64-byte reads over a buffer of the same size. Contenders ran interleaved with a rotating start order; the last column is how far an identical copy of sbbf-rs-safe landed from it, the noise floor of each row. The process held at most {} MiB in transparent huge pages during the run (the kernel decides; 0 means every lookup also paid for a TLB miss). `split-block-256` is a 256-bit split-block filter on linebloom's own hash, sized to linebloom's rate for the same keys. `insert` counts the keys each filter reports new (a dedup loop, which uses every answer); `add` inserts without asking (linebloom's `add`; the rivals' insert with its answer dropped). The same for positive lookups is in [`hit.svg`](throughput/hit.svg) and for inserts in [`insert.svg`](throughput/insert.svg); every number is in `data.csv`.",
                huge >> 20
            ),
            not_leading: if behind.is_empty() {
                "— (linebloom's single-key negative lookup was not slower than any other contender, beyond the noise floor, at any size measured)".into()
            } else {
                format!(
                    "Single-key negative lookups were slower, beyond the noise floor, than: {}.",
                    behind.join("; ")
                )
            },
        })
    }
}

/// One series per contender for workload `op` (solid) and `dashed`, and the memory
/// limits.
fn op_series(rows: &[Row], op: &str, dashed: &str) -> Vec<Series> {
    let mut keys: Vec<(String, String)> = rows
        .iter()
        .filter(|r| r.workload == op || r.workload == dashed || r.workload.starts_with("limit"))
        .map(|r| (r.contender.clone(), r.workload.clone()))
        .collect();
    keys.sort();
    keys.dedup();
    keys.iter()
        .map(|(c, w)| {
            let mut pts: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| &r.contender == c && &r.workload == w)
                .map(|r| (r.size_bytes as f64, r.median_ns))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let limit = w.starts_with("limit");
            Series {
                name: if limit {
                    format!("memory: {}", w.trim_start_matches("limit-"))
                } else {
                    format!("{c} {w}")
                },
                colour_key: if limit { w.clone() } else { c.clone() },
                points: pts,
                errors: None,
                style: if limit || w == dashed {
                    Style::Reference
                } else {
                    Style::Measured
                },
            }
        })
        .collect()
}

/// The median ns of `contender`'s `workload` at `size`, where it ran.
fn median(rows: &[Row], contender: &str, workload: &str, size: u64) -> Option<f64> {
    rows.iter()
        .find(|r| r.contender == contender && r.workload == workload && r.size_bytes == size)
        .map(|r| r.median_ns)
}

/// A table line: `contender`, then at each size its two workloads' medians as `a / b`
/// (`—` where either is missing).
fn pair_line(rows: &[Row], contender: &str, sizes: &[u64], (a, b): (&str, &str)) -> Vec<String> {
    let mut line = vec![contender.to_string()];
    line.extend(sizes.iter().map(|&s| {
        match (median(rows, contender, a, s), median(rows, contender, b, s)) {
            (Some(x), Some(y)) => format!("{x:.1} / {y:.1}"),
            _ => "—".into(),
        }
    }));
    line
}

/// The deleting contenders' delete and reinsert times per size, and linebloom-quotient's
/// speed-up over qfilter and cuckoofilter in every operation both measured.
fn deletion_table(rows: &[Row], sizes: &[u64]) -> String {
    let get = |c: &str, w: &str, s: u64| median(rows, c, w, s);
    let mut header = vec!["contender (delete / insert back ns)".to_string()];
    header.extend(sizes.iter().map(|s| format!("{} KiB", s >> 10)));
    let mut lines: Vec<Vec<String>> = deletes()
        .iter()
        .map(|c| pair_line(rows, c, sizes, ("delete", "reinsert")))
        .collect();
    for rival in ["qfilter", "cuckoofilter"] {
        let mut line = vec![format!(
            "speed-up over {rival} (miss / hit / delete / insert back)"
        )];
        line.extend(sizes.iter().map(|&s| {
            let ratio = |w: &str| match (get(rival, w, s), get("linebloom-quotient", w, s)) {
                (Some(theirs), Some(ours)) => format!("{:.1}", theirs / ours),
                _ => "—".into(),
            };
            ["miss", "hit", "delete", "reinsert"].map(ratio).join(" / ")
        }));
        lines.push(line);
    }
    // qfilter has no batch API: what a caller with many keys at once gains.
    let mut line =
        vec!["`contains_batch` over qfilter's single-key lookups (miss / hit)".to_string()];
    line.extend(sizes.iter().map(|&s| {
        let ratio = |w: &str| {
            let batched = format!("{w}-batched");
            match (get("qfilter", w, s), get("linebloom-quotient", &batched, s)) {
                (Some(theirs), Some(ours)) => format!("{:.1}", theirs / ours),
                _ => "—".into(),
            }
        };
        ["miss", "hit"].map(ratio).join(" / ")
    }));
    lines.push(line);
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    markdown_table(&header, &lines)
}

/// The sizes, ascending, at which the contenders of other structures
/// ([`other_structures`]) ran too.
pub fn other_structure_sizes(rows: &[Row]) -> Vec<u64> {
    let others = other_structures();
    let mut sizes: Vec<u64> = rows
        .iter()
        .filter(|r| r.workload == "miss" && others.contains(&r.contender.as_str()))
        .map(|r| r.size_bytes)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}
