//! The vector quotient filter against the deleting rivals, operation by operation:
//! negative and positive lookups, deletes and inserts back, at filter sizes from L1 to
//! DRAM, each kernel of linebloom-quotient next to qfilter, cuckoofilter and an
//! identical second qfilter (the control, whose ratio to qfilter is the noise floor).
//!
//! ```text
//! cargo run --release -p linebloom-benches --example quotient_ops [ROUNDS] [MAX_MIB]
//! ```
//!
//! Every filter is built by the lab's recipe for `n` keys at 1%, with `n` the keys
//! linebloom's Bloom filter holds at 1% in the size (as in the lab's `throughput`). A
//! round times one pass of each operation per contender, in a start order that rotates
//! every round; a pass is one call into the filter's own loop (`count_each`,
//! `remove_each`, `try_insert_each`), timed in CPU time. Deletes take a quarter of the
//! held keys and the inserts put them back, so the load stays between 75% and 100%.
//! Printed: median ns per operation, and qfilter's and cuckoofilter's time over the
//! detected kernel's (above 1: linebloom-quotient is faster).

use linebloom::QuotientParams;
use linebloom_lab::contenders::{LabFilter, LinebloomQuotient, Renamed, Sizing, build};
use linebloom_lab::support::keys::keyed_member;
use linebloom_lab::support::stats::summary;
use linebloom_lab::support::timing::{ns_per_key, round_order};

const OPS: [&str; 4] = ["miss", "hit", "delete", "reinsert"];

/// The vector quotient filter's kernels against qfilter and cuckoofilter.
#[derive(clap::Parser)]
struct Args {
    /// Rounds; the start order rotates every round.
    #[arg(default_value_t = 9)]
    rounds: usize,
    /// The largest filter, in MiB (16 KiB, 256 KiB, 4 MiB and 64 MiB up to it).
    #[arg(default_value_t = 64)]
    max_mib: u64,
}

fn main() -> anyhow::Result<()> {
    let Args { rounds, max_mib } = clap::Parser::parse();
    println!(
        "quotient kernel detected: {}; CPU: {}",
        linebloom::arch::quotient::detect().name,
        linebloom_lab::support::provenance::cpu_model()
    );
    let sizes = [16u64 << 10, 256 << 10, 4 << 20, 64 << 20]
        .into_iter()
        .filter(|&s| s <= max_mib << 20);
    for size in sizes {
        let n = linebloom_lab::contenders::keys_for_bytes(size, 0.01)?;
        let keys: Vec<u64> = (0..n).map(|i| keyed_member(7, i)).collect();
        let params = QuotientParams::for_fpr(n, 0.01)?;
        let mut contenders: Vec<Box<dyn LabFilter>> = Vec::new();
        for kernel in linebloom::arch::quotient::available() {
            let mut f = LinebloomQuotient::new(params, kernel);
            for &k in &keys {
                anyhow::ensure!(f.try_insert(k), "linebloom-quotient refused a key");
            }
            let name: &'static str = Box::leak(format!("quotient-{}", kernel.name).into());
            contenders.push(Box::new(Renamed(name, f)));
        }
        let rival = |name: &str| -> anyhow::Result<Box<dyn LabFilter>> {
            build(name, Sizing::Fpr(0.01), &keys, linebloom::arch::detect())?
                .ok_or_else(|| anyhow::anyhow!("{name}: no recipe"))
        };
        contenders.push(rival("qfilter")?);
        contenders.push(Box::new(Renamed("qfilter-control", rival("qfilter")?)));
        contenders.push(rival("cuckoofilter")?);
        let probes = (size / 64).clamp(1 << 16, 1 << 22) as usize;
        let hits: Vec<u64> = (0..probes as u64)
            .map(|i| keys[(i * 7919 % n) as usize])
            .collect();
        let misses: Vec<u64> = (0..probes as u64).map(|i| keyed_member(8, i) | 1).collect();
        let churn: Vec<u64> = keys[..(n as usize / 4).min(probes)].to_vec();
        let mut samples = vec![vec![Vec::new(); OPS.len()]; contenders.len()];
        for round in 0..rounds {
            for ci in round_order(round, contenders.len()) {
                let c = &mut contenders[ci];
                for (oi, op) in OPS.iter().enumerate() {
                    let mut done = 0;
                    let t = match *op {
                        "miss" => ns_per_key(&misses, |k| c.count_each(k)),
                        "hit" => ns_per_key(&hits, |k| c.count_each(k)),
                        "delete" => ns_per_key(&churn, |k| {
                            done = c.remove_each(k);
                            done
                        }),
                        _ => ns_per_key(&churn, |k| {
                            done = c.try_insert_each(k);
                            done
                        }),
                    };
                    if (*op == "delete" || *op == "reinsert") && done != churn.len() as u64 {
                        println!("   note: {} {op} took {done} of {}", c.name(), churn.len());
                    }
                    samples[ci][oi].push(t);
                }
            }
        }
        println!(
            "\n{} KiB, {n} keys, {rounds} rounds (median CPU ns per operation)",
            size >> 10
        );
        println!(
            "{:<22} {:>8} {:>8} {:>8} {:>8}",
            "contender", OPS[0], OPS[1], OPS[2], OPS[3]
        );
        let medians: Vec<Vec<f64>> = samples
            .iter()
            .map(|per| per.iter().map(|s| summary(s).0).collect())
            .collect();
        for (c, m) in contenders.iter().zip(&medians) {
            println!(
                "{:<22} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
                c.name(),
                m[0],
                m[1],
                m[2],
                m[3]
            );
        }
        let at = |name: &str| {
            contenders
                .iter()
                .position(|c| c.name() == name)
                .map(|i| &medians[i])
        };
        let detected = linebloom::arch::quotient::detect().name;
        let ours_name = format!("quotient-{detected}");
        for rival in ["qfilter", "qfilter-control", "cuckoofilter"] {
            if let (Some(theirs), Some(ours)) = (at(rival), at(&ours_name)) {
                let ratios: Vec<String> = theirs
                    .iter()
                    .zip(ours)
                    .map(|(t, o)| format!("{:>8.2}", t / o))
                    .collect();
                println!(
                    "{:<22} {}",
                    format!("{rival} / {detected}"),
                    ratios.join(" ")
                );
            }
        }
        if let (Some(a), Some(b)) = (at("qfilter"), at("qfilter-control")) {
            let noise: Vec<String> = a
                .iter()
                .zip(b)
                .map(|(x, y)| format!("{:>8.2}", y / x))
                .collect();
            println!("{:<22} {}", "noise (control/qfilter)", noise.join(" "));
        }
    }
    Ok(())
}
