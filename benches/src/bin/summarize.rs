//! Turns the last criterion run into one CSV: `cargo run -p linebloom-benches --bin
//! summarize -- OUT.csv`. One row per benchmark: group, contender, capacity, the median
//! ns per key (criterion's median estimate divided by the keys per iteration) with its
//! confidence bounds, and the filter's bytes and measured FPR from
//! `target/linebloom-bench/fpr.csv` where the benchmark filled one.

use linebloom_benches::{FPR_CSV, FprRecord, rounded};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, found);
        } else if p.file_name().is_some_and(|n| n == "benchmark.json")
            && p.parent().is_some_and(|d| d.ends_with("new"))
        {
            found.push(p);
        }
    }
}

/// One row of the summary.
#[derive(serde::Serialize)]
struct SummaryRecord<'a> {
    group: &'a str,
    contender: &'a str,
    capacity: &'a str,
    median_ns_per_key: f64,
    ci_low_ns: f64,
    ci_high_ns: f64,
    bytes: Option<usize>,
    bits_per_key: Option<f64>,
    measured_fpr: Option<f64>,
}

/// Collects the last criterion run (`target/criterion`) and the benchmarks' measured
/// false-positive rates (`target/linebloom-bench/fpr.csv`) into one CSV.
#[derive(clap::Parser)]
struct Args {
    /// The CSV to write.
    out: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let out = <Args as clap::Parser>::parse().out;
    let root = Path::new("target/criterion");
    let mut files = Vec::new();
    walk(root, &mut files);
    if files.is_empty() {
        anyhow::bail!(
            "no criterion results under {}: run `cargo bench -p linebloom-benches` first",
            root.display()
        );
    }
    // (contender, capacity) -> its rate row; the last row for a pair wins.
    let mut fpr: BTreeMap<(String, String), FprRecord> = BTreeMap::new();
    if let Ok(mut reader) = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(FPR_CSV)
    {
        for record in reader.deserialize::<FprRecord>() {
            let record = record.map_err(|e| anyhow::anyhow!("{FPR_CSV}: {e}"))?;
            fpr.insert(
                (record.contender.clone(), record.capacity.to_string()),
                record,
            );
        }
    }
    let mut benches = Vec::new();
    for bench in files {
        let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&bench)?)?;
        let est: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
            bench.with_file_name("estimates.json"),
        )?)?;
        benches.push((meta, est));
    }
    let mut rows: Vec<SummaryRecord> = benches
        .iter()
        .map(|(meta, est)| {
            let per = meta["throughput"]["Elements"].as_f64().unwrap_or(1.0);
            let median = &est["median"];
            let ns = |v: &serde_json::Value| rounded(v.as_f64().unwrap_or(f64::NAN) / per, 3);
            let contender = meta["function_id"].as_str().unwrap_or("");
            let capacity = meta["value_str"].as_str().unwrap_or("");
            let rate = fpr.get(&(contender.to_string(), capacity.to_string()));
            SummaryRecord {
                group: meta["group_id"].as_str().unwrap_or(""),
                contender,
                capacity,
                median_ns_per_key: ns(&median["point_estimate"]),
                ci_low_ns: ns(&median["confidence_interval"]["lower_bound"]),
                ci_high_ns: ns(&median["confidence_interval"]["upper_bound"]),
                bytes: rate.map(|r| r.bytes),
                bits_per_key: rate.map(|r| r.bits_per_key),
                measured_fpr: rate.map(|r| r.measured_fpr),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.group, a.contender, a.capacity).cmp(&(b.group, b.contender, b.capacity))
    });
    let mut writer = csv::Writer::from_path(&out)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))?;
    for row in &rows {
        writer.serialize(row)?;
    }
    writer.flush()?;
    println!("wrote {}", out.display());
    Ok(())
}
