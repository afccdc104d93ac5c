//! "Choosing a filter": the report's answer, per job, to which filter to use, computed
//! from this run's CSVs (`space`, `throughput`, `churn`, `growth`, `capabilities`,
//! `threads`, `footprint`), never typed in. For each job it names the measured best
//! choice, whatever its structure, and where linebloom stands; a job whose experiments did
//! not run says so.

use crate::Ctx;
use crate::contenders;
use crate::experiments::{capabilities, churn, footprint, growth, space, threads, throughput};
use crate::support::experiment::{Experiment, Run};

/// The rate every choice is made at.
const TARGET: f64 = 0.01;

/// One job's line: the job, the measured best, linebloom's standing, the evidence.
struct Choice {
    job: &'static str,
    best: String,
    linebloom: String,
    from: &'static str,
}

/// The rows of experiment `E`'s CSV, or `None` when it has not run.
fn rows<E: Experiment>(ctx: &Ctx) -> Option<Vec<E::Row>> {
    Run::open(&ctx.out, E::NAME).ok()?.rows().ok()
}

/// The Markdown section.
pub fn section(ctx: &Ctx) -> String {
    let choices = [
        static_set(ctx),
        deletes(ctx),
        unknown_size(ctx),
        threads(ctx),
        microcontroller(ctx),
    ];
    let lines: Vec<Vec<String>> = choices
        .into_iter()
        .map(|c| {
            vec![
                c.job.to_string(),
                c.best,
                c.linebloom,
                format!("`{}`", c.from),
            ]
        })
        .collect();
    format!(
        "## Choosing a filter\n\nFor each job, the best choice this run measured, whatever its structure, and where linebloom stands; every number comes from the named experiments' CSVs at a 1% target.\n\n{}\n",
        crate::support::table::markdown_table(
            &["job", "measured best", "linebloom", "from"],
            &lines
        )
    )
}

/// A set built once: the fewest bits per key at 1%, and the fastest negative lookup.
fn static_set(ctx: &Ctx) -> Choice {
    let job = "static set (built once)";
    let from = "space, throughput";
    let Some(space) = rows::<space::Space>(ctx) else {
        return not_run(job, from);
    };
    // Every filter's point not significantly above 1%, whatever rate it was asked for
    // (the one-size filters were asked once; the exact set is not a filter): the fewest
    // bits per key among them.
    let smallest = space
        .iter()
        .filter(|r| r.wilson_lo <= TARGET && contenders::find(&r.contender).is_some())
        .min_by(|a, b| a.bits_per_key.total_cmp(&b.bits_per_key));
    let ours = space
        .iter()
        .find(|r| (r.target - TARGET).abs() < 1e-12 && r.contender == "linebloom");
    // One open of the throughput run: its rows and the kernel its provenance names.
    let fastest = Run::open(&ctx.out, throughput::NAME).ok().and_then(|run| {
        let t: Vec<throughput::Row> = run.rows().ok()?;
        // The largest size where the contenders of other structures ran too.
        let size = *throughput::other_structure_sizes(&t).last()?;
        let at_size: Vec<throughput::Row> = t
            .into_iter()
            .filter(|r| {
                r.size_bytes == size && r.workload == "miss" && !r.contender.ends_with("-control")
            })
            .collect();
        let best = at_size
            .iter()
            .min_by(|a, b| a.median_ns.total_cmp(&b.median_ns))?
            .clone();
        // The kernel a user gets: the one run-time detection picked on the machine
        // that ran the experiment.
        let detected = format!("linebloom-{}", run.provenance.kernel);
        let ours = at_size.iter().find(|r| r.contender == detected).cloned();
        Some((size, best, ours))
    });
    let mut best = smallest.map_or("—".into(), |r| {
        format!(
            "smallest: {} ({:.1} bits/key, {:.2}%)",
            r.contender,
            r.bits_per_key,
            100.0 * r.fpr
        )
    });
    let mut linebloom = ours.map_or("—".into(), |r| {
        format!("{:.1} bits/key, {:.2}%", r.bits_per_key, 100.0 * r.fpr)
    });
    if let Some((size, fast, ours)) = fastest {
        best.push_str(&format!(
            "; fastest negative lookup at {} KiB: {} ({:.1} ns)",
            size >> 10,
            fast.contender,
            fast.median_ns
        ));
        if let Some(o) = ours {
            linebloom.push_str(&format!("; {} {:.1} ns", o.contender, o.median_ns));
        }
    }
    Choice {
        job,
        best,
        linebloom,
        from,
    }
}

/// A set with deletes: the fewest bits per live key that held the target with no false
/// negative and no refused insert, and the rebuild alternative.
fn deletes(ctx: &Ctx) -> Choice {
    let job = "dynamic set with deletes";
    let from = "churn";
    let Some(rows) = rows::<churn::Churn>(ctx) else {
        return not_run(job, from);
    };
    let last = |lib: &str| rows.iter().rfind(|r| r.contender == lib);
    let bpk = |r: &churn::Row| r.bytes as f64 * 8.0 / r.live_keys.max(1) as f64;
    let clean = |lib: &str| {
        rows.iter()
            .filter(|r| r.contender == lib)
            .all(|r| r.false_negatives == 0)
    };
    let best = churn::libraries()
        .into_iter()
        .filter_map(|lib| last(lib).map(|r| (lib, r)))
        .filter(|(lib, r)| clean(lib) && r.failed_inserts == 0 && r.fpr <= TARGET * 1.1)
        .min_by(|a, b| bpk(a.1).total_cmp(&bpk(b.1)));
    let median_update = |lib: &str| {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r.contender == lib && r.round > 0)
            .map(|r| r.update_ms)
            .collect();
        crate::support::stats::summary(&v).0
    };
    let standing = |lib: &str| {
        last(lib).map(|r| {
            format!(
                "{lib} {:.1} bits per live key, {:.2}%, {:.1} ms per round{}",
                bpk(r),
                100.0 * r.fpr,
                median_update(lib),
                if clean(lib) {
                    ""
                } else {
                    " (false negatives!)"
                }
            )
        })
    };
    let mut linebloom: Vec<String> = churn::libraries()
        .into_iter()
        .filter(|lib| lib.starts_with("linebloom"))
        .filter_map(standing)
        .collect();
    if rows.iter().any(|r| r.contender == "linebloom") {
        linebloom.push(format!(
            "or a plain linebloom rebuilt each round: {:.1} ms",
            median_update("linebloom")
        ));
    }
    Choice {
        job,
        best: best.map_or(
            "— (no deleting filter held 1% cleanly)".into(),
            |(lib, r)| {
                format!(
                    "{lib} ({:.1} bits per live key, {:.2}%, {:.1} ms per round of updates)",
                    bpk(r),
                    100.0 * r.fpr,
                    median_update(lib)
                )
            },
        ),
        linebloom: if linebloom.is_empty() {
            "—".into()
        } else {
            linebloom.join("; ")
        },
        from,
    }
}

/// A set of unknown size: the fewest bits per key at 100× the first estimate among the
/// filters that kept the target, lost nothing and refused nothing.
fn unknown_size(ctx: &Ctx) -> Choice {
    let job = "unknown size (grows 100×)";
    let from = "growth";
    let Some(rows) = rows::<growth::Growth>(ctx) else {
        return not_run(job, from);
    };
    let bpk = |r: &growth::Row| r.bytes as f64 * 8.0 / (r.initial * r.multiple) as f64;
    let at_100 = |lib: &str| {
        rows.iter()
            .find(|r| r.contender == lib && r.multiple == 100)
    };
    let best = growth::growing()
        .into_iter()
        .filter_map(at_100)
        .filter(|r| r.fpr <= TARGET && r.false_negatives == 0 && r.failed_inserts == 0)
        .min_by(|a, b| bpk(a).total_cmp(&bpk(b)));
    Choice {
        job,
        best: best.map_or("— (none kept 1% at 100×)".into(), |r| {
            format!(
                "{} ({:.1} bits/key, {:.2}% at 100×)",
                r.contender,
                bpk(r),
                100.0 * r.fpr
            )
        }),
        linebloom: at_100("linebloom-scalable").map_or("—".into(), |r| {
            format!(
                "linebloom-scalable {:.1} bits/key, {:.2}% at 100×",
                bpk(r),
                100.0 * r.fpr
            )
        }),
        from,
    }
}

/// A filter shared between threads: who passed the concurrent-insert check, and who
/// inserts fastest at the most threads measured.
fn threads(ctx: &Ctx) -> Choice {
    let job = "shared between threads";
    let from = "capabilities, threads";
    let Some(caps) = rows::<capabilities::Capabilities>(ctx) else {
        return not_run(job, from);
    };
    let able: Vec<&str> = caps
        .iter()
        .filter(|r| r.operation == "concurrent insert" && r.verdict == capabilities::Verdict::Works)
        .map(|r| r.contender.as_str())
        .collect();
    let speed = rows::<threads::Threads>(ctx).and_then(|t| {
        let most = t.iter().map(|r| r.threads).max()?;
        let at = |c: &str, w: &str| {
            t.iter()
                .find(|r| r.contender == c && r.workload == w && r.threads == most)
                .map(|r| r.median_mops)
        };
        let ours = at("linebloom-atomic", "insert")?;
        let theirs = at("fastbloom-atomic", "insert")?;
        Some((most, ours, theirs))
    });
    let (best, linebloom) = match speed {
        Some((most, ours, theirs)) => {
            let winner = if ours >= theirs {
                "linebloom-atomic"
            } else {
                "fastbloom-atomic"
            };
            (
                format!(
                    "{winner} (inserts at {most} threads: {:.0} M/s); concurrent insert passes for {}",
                    ours.max(theirs),
                    able.join(", ")
                ),
                format!("linebloom-atomic {ours:.0} M/s against fastbloom-atomic's {theirs:.0}"),
            )
        }
        None => (
            format!("concurrent insert passes for {}", able.join(", ")),
            "—".into(),
        ),
    };
    Choice {
        job,
        best,
        linebloom,
        from,
    }
}

/// A microcontroller: which filters were run or built without std, and what
/// linebloom's insert and contains cost there (flash and stack, from `footprint`).
fn microcontroller(ctx: &Ctx) -> Choice {
    let job = "microcontroller (no_std)";
    let from = "capabilities, footprint";
    let Some(caps) = rows::<capabilities::Capabilities>(ctx) else {
        return not_run(job, from);
    };
    let with = |v: capabilities::Verdict| -> Vec<&str> {
        caps.iter()
            .filter(|r| r.operation == "no_std" && r.verdict == v)
            .map(|r| r.contender.as_str())
            .collect()
    };
    let checked = with(capabilities::Verdict::CiChecked);
    let declared = with(capabilities::Verdict::Declared);
    let footprint = rows::<footprint::Footprint>(ctx).unwrap_or_default();
    let at_s = |what: &str| footprint::linebloom_at(&footprint, "thumbv7em", "s", what);
    let code = at_s("text");
    let stack = at_s("stack insert").zip(at_s("stack contains"));
    let others = if declared.is_empty() {
        "no other crate declares no_std".to_string()
    } else {
        format!(
            "{} declare no_std but were not built here",
            declared.join(", ")
        )
    };
    Choice {
        job,
        best: if checked.is_empty() {
            format!("— (nothing checked without std; {others})")
        } else {
            format!("linebloom, the only one checked without std ({others})")
        },
        linebloom: {
            let mut line = "runs on Cortex-M4, M3 and M0 under QEMU in CI".to_string();
            if let Some(bytes) = code {
                line += &format!(
                    "; insert and contains add {bytes:.0} bytes of thumbv7em code (opt-level s, LTO)"
                );
            }
            if let Some((insert, contains)) = stack {
                line += &format!(" and use {insert:.0} and {contains:.0} bytes of stack");
            }
            line
        },
        from,
    }
}

fn not_run(job: &'static str, from: &'static str) -> Choice {
    Choice {
        job,
        best: format!("not measured: run `lab run` on {from}"),
        linebloom: "—".into(),
        from,
    }
}
