//! `kernels`: every kernel this CPU runs on the same workload (a filter of 1e5 keys at
//! 1%, about 120 KiB, with insert, hit and miss), interleaved with a rotating start order
//! and timed in CPU time, as a bar chart. Two more contenders run with them: an
//! identical copy of the detected kernel's filter (`<kernel>-control`, the noise floor),
//! and the detected kernel on a filter of the same memory with the `k` of lowest
//! predicted rate instead of the fast shape `k = 8` that sizing picks (`<kernel> k=K`):
//! what [`linebloom::FAST_SHAPE_ALLOWANCE`] buys. The table also has the
//! code size of the insert and contains entry points of the kernels built for
//! `thumbv7em-none-eabihf` (a Cortex-M4F), read from the symbol table of a
//! `--no-default-features` release build with the `object` crate. When that target or
//! cargo is not available, the CSV says so instead of a number.

use super::{Summary, markdown_table, members, non_members};
use crate::rivals::{Filter, blocked};
use crate::stats::summary as med;
use crate::timing::ns_per_key;
use crate::{Ctx, csvio};
use linebloom::Params;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Experiment name.
pub const NAME: &str = "kernels";

/// One CSV row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Kernel.
    #[serde(alias = "kernel")] // the column's name before every CSV called it `contender`
    pub contender: String,
    /// insert, hit, miss; or text for the code size.
    pub workload: String,
    /// ns per op (median), or bytes of code.
    pub value: f64,
    /// min / max, or where the size came from.
    pub note: String,
}

/// The workspace root (two levels above this crate's manifest).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Builds the core for thumbv7em and sums the sizes of each kernel's entry points.
fn thumb_text_sizes() -> Result<Vec<(String, u64)>, String> {
    let root = workspace_root();
    let target_dir = root.join("target").join("lab-thumbv7em");
    let out = std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(&root)
        // Without LTO the rlib holds machine code (with it, only bitcode).
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .args([
            "build",
            "--quiet",
            "--release",
            "-p",
            "linebloom",
            "--no-default-features",
            "--target",
            "thumbv7em-none-eabihf",
            "--target-dir",
        ])
        .arg(&target_dir)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build for thumbv7em-none-eabihf failed (is the target installed? `rustup target add thumbv7em-none-eabihf`): {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    let rlib = std::fs::read_dir(target_dir.join("thumbv7em-none-eabihf/release/deps"))
        .map_err(|e| e.to_string())?
        .flatten()
        .filter(|e| {
            e.file_name().to_string_lossy().starts_with("liblinebloom-")
                && e.file_name().to_string_lossy().ends_with(".rlib")
        })
        // Earlier builds with other flags leave older rlibs: take the one just built.
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())
        .map(|e| e.path())
        .ok_or("no liblinebloom rlib found")?;
    let data = std::fs::read(&rlib).map_err(|e| e.to_string())?;
    let archive = object::read::archive::ArchiveFile::parse(&*data).map_err(|e| e.to_string())?;
    let mut sizes: Vec<(String, u64)> = Vec::new();
    for member in archive.members() {
        let member = member.map_err(|e| e.to_string())?;
        let Ok(bytes) = member.data(&*data) else {
            continue;
        };
        let Ok(file) = object::File::parse(bytes) else {
            continue;
        };
        use object::{Object, ObjectSymbol};
        for sym in file.symbols() {
            let Ok(name) = sym.name() else { continue };
            for kernel in ["scalar", "portable"] {
                let hit = name.contains(kernel)
                    && (name.contains("entry_insert") || name.contains("entry_contains"))
                    && !name.contains("batch");
                if hit {
                    match sizes.iter_mut().find(|(k, _)| k == kernel) {
                        Some(e) => e.1 += sym.size(),
                        None => sizes.push((kernel.to_string(), sym.size())),
                    }
                }
            }
        }
    }
    if sizes.is_empty() {
        return Err("no kernel entry symbols found in the thumbv7em rlib".into());
    }
    Ok(sizes)
}

/// Measures and writes `data.csv`.
pub fn run(ctx: &Ctx) -> anyhow::Result<()> {
    let (n, probes, rounds) = ctx.scale.pick(
        (10_000usize, 50_000usize, 3usize),
        (100_000, 1 << 20, 9),
        (100_000, 1 << 22, 15),
    );
    let keys = members(ctx, n, 7);
    let misses = non_members(ctx, probes, 7);
    let hits: Vec<u64> = (0..probes).map(|i| keys[i % n]).collect();
    let params = Params::for_fpr(n as u64, 0.01)?;
    let detected = ctx.kernel;
    let mut shapes: Vec<(String, &'static linebloom::arch::Kernel, Params)> =
        linebloom::arch::available()
            .map(|k| (k.name.to_string(), k, params))
            .collect();
    shapes.push((format!("{}-control", detected.name), detected, params));
    let best_k = Params::for_bits_per_key(n as u64, params.bits_per_key(n as u64))?.k();
    if best_k != params.k() {
        let same_memory = Params::new(params.blocks() as u64, best_k)?;
        shapes.push((
            format!("{} k={best_k}", detected.name),
            detected,
            same_memory,
        ));
    }
    let mut filters: Vec<Box<dyn Filter>> = shapes
        .iter()
        .map(|(_, kernel, p)| {
            let mut f = blocked(*p, kernel);
            f.insert_batch(&keys);
            Box::new(f) as Box<dyn Filter>
        })
        .collect();
    let workloads = ["insert", "hit", "miss"];
    let mut samples = vec![vec![Vec::new(); workloads.len()]; filters.len()];
    let bar = crate::progress::bar(ctx, rounds as u64, NAME);
    let len = filters.len();
    for round in 0..rounds {
        // The start order rotates every round (see `timing`).
        for fi in crate::timing::round_order(round, len) {
            let f = &mut filters[fi];
            samples[fi][0].push(ns_per_key(&misses, |k| {
                k.iter().for_each(|&x| f.insert(x));
                0
            }));
            samples[fi][1].push(ns_per_key(&hits, |k| {
                k.iter().filter(|&&x| f.contains(x)).count() as u64
            }));
            samples[fi][2].push(ns_per_key(&misses, |k| {
                k.iter().filter(|&&x| f.contains(x)).count() as u64
            }));
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let mut rows = Vec::new();
    for ((label, _, _), per) in shapes.iter().zip(&samples) {
        for (w, s) in workloads.iter().zip(per) {
            let (m, lo, hi) = med(s);
            rows.push(Row {
                contender: label.clone(),
                workload: w.to_string(),
                value: m,
                note: format!("min {lo:.2} max {hi:.2}"),
            });
        }
    }
    match thumb_text_sizes() {
        Ok(sizes) => {
            for (k, bytes) in sizes {
                rows.push(Row {
                    contender: format!("{k}@thumbv7em"),
                    workload: "text".into(),
                    value: bytes as f64,
                    note: "bytes of entry_insert + entry_contains, all three k entries (release, no_std)".into(),
                });
            }
        }
        Err(why) => rows.push(Row {
            contender: "thumbv7em".into(),
            workload: "text".into(),
            value: f64::NAN,
            note: format!("unavailable: {why}"),
        }),
    }
    csvio::write(&ctx.dir(NAME)?.join("data.csv"), &rows)
}

/// Draws the miss-lookup bars per kernel.
pub fn plot(ctx: &Ctx) -> anyhow::Result<()> {
    let rows: Vec<Row> = ctx.rows(NAME)?;
    let bars: Vec<(String, String, f64)> = rows
        .iter()
        .filter(|r| r.workload != "text")
        .map(|r| (r.workload.clone(), r.contender.clone(), r.value))
        .collect();
    crate::plot::bar_chart(
        &ctx.dir(NAME)?,
        "Kernels on one workload (1e5 keys, 1%): median CPU ns per operation",
        "CPU ns per operation",
        &bars,
    )
}

/// Report material from the CSV.
pub fn summary(ctx: &Ctx) -> anyhow::Result<Summary> {
    let rows: Vec<Row> = ctx.rows(NAME)?;
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let v = if r.workload == "text" {
                if r.value.is_finite() {
                    format!("{} bytes", r.value)
                } else {
                    "—".into()
                }
            } else {
                format!("{:.2} ns", r.value)
            };
            vec![r.contender.clone(), r.workload.clone(), v, r.note.clone()]
        })
        .collect();
    // The kernel detection picked on the machine that ran the experiment.
    let detected: &str = &ctx.run_meta(NAME)?.kernel;
    let control = format!("{detected}-control");
    let miss = |kernel: &str| {
        rows.iter()
            .find(|r| r.workload == "miss" && r.contender == kernel)
            .map(|r| r.value)
    };
    let best = rows
        .iter()
        .filter(|r| r.workload == "miss" && r.contender != control && !r.contender.contains(" k="))
        .min_by(|a, b| a.value.total_cmp(&b.value))
        .map(|r| r.contender.clone())
        .unwrap_or_default();
    let noise = miss(detected)
        .zip(miss(&control))
        .map(|(a, b)| format!("{:.0}%", (b / a - 1.0).abs() * 100.0))
        .unwrap_or_else(|| "—".into());
    let other_k = rows
        .iter()
        .find(|r| r.workload == "miss" && r.contender.starts_with(&format!("{detected} k=")))
        .zip(miss(detected))
        .map(|(r, ours)| {
            format!(
                " On the same memory, {} took {:.2} ns per miss against {ours:.2} ns for k = 8 ({:.2}×).",
                r.contender,
                r.value,
                r.value / ours
            )
        })
        .unwrap_or_default();
    Ok(Summary {
        table: markdown_table(&["kernel", "workload", "value", "note"], &table),
        caption: format!(
            "Median CPU ns per insert, hit and miss for every kernel this CPU runs on the same 120 KiB filter and keys, interleaved round by round with a rotating start order; an identical copy of the {detected} filter landed {noise} from it on misses (the noise floor).{other_k} The table adds the code size of the insert and contains entry points built for a Cortex-M4F (thumbv7em), the embedded target."
        ),
        not_leading: if best == detected || best.is_empty() {
            format!("— (the detected kernel, {detected}, was also the fastest on misses)")
        } else {
            format!(
                "The detected kernel ({detected}) was not the fastest on misses here: {best} was. Run-time detection prefers the widest instruction set; on this machine that choice costs a little."
            )
        },
    })
}
