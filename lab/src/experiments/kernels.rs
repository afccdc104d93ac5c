//! `kernels`: every kernel this CPU runs on the same workload (a filter of 1e5 keys at
//! 1%, about 120 KiB, with insert, hit and miss), interleaved, as a bar chart; and the
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
    pub kernel: String,
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
    let mut filters: Vec<Box<dyn Filter>> = linebloom::arch::available()
        .map(|k| {
            let mut f = blocked(params, k);
            f.insert_batch(&keys);
            Box::new(f) as Box<dyn Filter>
        })
        .collect();
    let workloads = ["insert", "hit", "miss"];
    let mut samples = vec![vec![Vec::new(); workloads.len()]; filters.len()];
    let bar = crate::progress::bar(ctx, rounds as u64, NAME);
    for _ in 0..rounds {
        for (fi, f) in filters.iter_mut().enumerate() {
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
    for (k, per) in linebloom::arch::available().zip(&samples) {
        for (w, s) in workloads.iter().zip(per) {
            let (m, lo, hi) = med(s);
            rows.push(Row {
                kernel: k.name.into(),
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
                    kernel: format!("{k}@thumbv7em"),
                    workload: "text".into(),
                    value: bytes as f64,
                    note: "bytes of entry_insert + entry_contains (release, no_std)".into(),
                });
            }
        }
        Err(why) => rows.push(Row {
            kernel: "thumbv7em".into(),
            workload: "text".into(),
            value: f64::NAN,
            note: format!("unavailable: {why}"),
        }),
    }
    csvio::write(&ctx.dir(NAME)?.join("data.csv"), &rows)
}

/// Draws the miss-lookup bars per kernel.
pub fn plot(ctx: &Ctx) -> anyhow::Result<()> {
    let rows: Vec<Row> = csvio::read(&ctx.existing_csv(NAME)?)?;
    let bars: Vec<(String, String, f64)> = rows
        .iter()
        .filter(|r| r.workload != "text")
        .map(|r| {
            (
                format!("{} {}", r.kernel, r.workload),
                r.kernel.clone(),
                r.value,
            )
        })
        .collect();
    crate::plot::bar_chart(
        &ctx.dir(NAME)?,
        "Kernels on one workload (1e5 keys, 1%): median ns per operation",
        "ns per operation",
        &bars,
    )
}

/// Report material from the CSV.
pub fn summary(ctx: &Ctx) -> anyhow::Result<Summary> {
    let rows: Vec<Row> = csvio::read(&ctx.existing_csv(NAME)?)?;
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
            vec![r.kernel.clone(), r.workload.clone(), v, r.note.clone()]
        })
        .collect();
    let best = rows
        .iter()
        .filter(|r| r.workload == "miss")
        .min_by(|a, b| a.value.total_cmp(&b.value))
        .map(|r| r.kernel.clone())
        .unwrap_or_default();
    let detected = ctx.kernel.name;
    Ok(Summary {
        table: markdown_table(&["kernel", "workload", "value", "note"], &table),
        caption: "Median ns per insert, hit and miss for every kernel this CPU runs on the same 120 KiB filter and keys, interleaved round by round. The table adds the code size of the insert and contains entry points built for a Cortex-M4F (thumbv7em), the embedded target.".into(),
        not_leading: if best == detected || best.is_empty() {
            format!("The detected kernel ({detected}) was also the fastest on misses.")
        } else {
            format!("The detected kernel ({detected}) was not the fastest on misses here: {best} was. Run-time detection prefers the widest instruction set; on this machine that choice costs a little.")
        },
    })
}
