//! Turns the last criterion run into one CSV: `cargo run -p linebloom-benches --bin
//! summarize -- OUT.csv`. One row per benchmark: group, contender, capacity, the median
//! ns per key (criterion's median estimate divided by the keys per iteration) with its
//! confidence bounds, and the filter's bytes and measured FPR from
//! `target/linebloom-bench/fpr.csv` where the benchmark filled one.

use std::collections::BTreeMap;
use std::path::Path;

fn walk(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
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

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).ok_or("usage: summarize OUT.csv")?;
    let root = Path::new("target/criterion");
    let mut files = Vec::new();
    walk(root, &mut files);
    if files.is_empty() {
        return Err(format!(
            "no criterion results under {}: run `cargo bench -p linebloom-benches` first",
            root.display()
        )
        .into());
    }
    // name,capacity -> (bytes, bits/key, fpr); the last row for a pair wins.
    let mut fpr: BTreeMap<(String, String), String> = BTreeMap::new();
    if let Ok(text) = std::fs::read_to_string("target/linebloom-bench/fpr.csv") {
        for line in text.lines() {
            let cols: Vec<&str> = line.split(',').collect();
            if cols.len() == 5 {
                fpr.insert(
                    (cols[0].into(), cols[1].into()),
                    format!("{},{},{}", cols[2], cols[3], cols[4]),
                );
            }
        }
    }
    let mut rows = Vec::new();
    for bench in files {
        let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&bench)?)?;
        let est: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
            bench.with_file_name("estimates.json"),
        )?)?;
        let per = meta["throughput"]["Elements"].as_f64().unwrap_or(1.0);
        let median = &est["median"];
        let ns = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN) / per;
        let group = meta["group_id"].as_str().unwrap_or("");
        let contender = meta["function_id"].as_str().unwrap_or("");
        let n = meta["value_str"].as_str().unwrap_or("");
        let extra = fpr
            .get(&(contender.to_string(), n.to_string()))
            .cloned()
            .unwrap_or_else(|| ",,".into());
        rows.push(format!(
            "{group},{contender},{n},{:.3},{:.3},{:.3},{extra}",
            ns(&median["point_estimate"]),
            ns(&median["confidence_interval"]["lower_bound"]),
            ns(&median["confidence_interval"]["upper_bound"]),
        ));
    }
    rows.sort();
    let mut text = String::from(
        "group,contender,capacity,median_ns_per_key,ci_low_ns,ci_high_ns,bytes,bits_per_key,measured_fpr\n",
    );
    for r in rows {
        text.push_str(&r);
        text.push('\n');
    }
    std::fs::write(&out, text).map_err(|e| format!("cannot write {out}: {e}"))?;
    println!("wrote {out}");
    Ok(())
}
