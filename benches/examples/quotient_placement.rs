//! Where the vector quotient filter puts a key: the first-block threshold of location
//! scheme 3 (36 of 48 tags) against 0 (every key in the emptier block), 32 and 40, in
//! one process: hit, miss, delete and insert-back time, the load at the first refused
//! insert, and the false-positive rate at 50, 80 and 94% load.
//!
//! The threshold is a constant of the scheme, so this example needs a build with the
//! run-time hook (a separate target folder keeps the normal build's artefacts):
//!
//! ```text
//! RUSTFLAGS="--cfg linebloom_placement_sweep" CARGO_TARGET_DIR=target/placement \
//!     cargo run --release -p linebloom-benches --example quotient_placement [ROUNDS] [MAX_N]
//! ... --example quotient_placement quantiles [FILLS]
//! ```
//!
//! `quantiles` fills small filters (8, 16, 64 and 512 blocks of 8-bit tags; 20,000
//! fills each by default) until their first refusal, with T = 0 and T = 36 at every
//! block count (the scheme uses 36 from 64 blocks up only), and prints the 10^-3 and
//! 10^-2 quantiles of the keys held then: the numbers behind where the threshold starts.
//!
//! Each contender is one filter filled under its threshold with the same random hashes,
//! 8-bit tags, at the block count the C VQF comparison uses (`ceil(n / (48 · 0.88))`,
//! even), so all sit at 88% load. A round times one pass of each operation per
//! contender, in a start order that rotates every round, with the contender's threshold
//! set before its inserts; the delete pass takes every tenth key and the insert pass
//! puts them back. `T=0 control` is a second filter of the baseline: its ratio is the
//! noise floor. Printed: median CPU ns per operation, and the baseline's time over each
//! contender's (above 1: faster than always taking the emptier block).

#[cfg(linebloom_placement_sweep)]
fn main() -> anyhow::Result<()> {
    sweep::run()
}

#[cfg(not(linebloom_placement_sweep))]
fn main() {
    eprintln!(
        "quotient_placement needs the run-time threshold hook: run it as\n  \
         RUSTFLAGS=\"--cfg linebloom_placement_sweep\" CARGO_TARGET_DIR=target/placement \
         cargo run --release -p linebloom-benches --example quotient_placement"
    );
    std::process::exit(2);
}

#[cfg(linebloom_placement_sweep)]
mod sweep {
    use linebloom::quotient::placement_sweep::set_first_block_below;
    use linebloom::{QuotientParams, VectorQuotientFilter};
    use linebloom_lab::support::keys::keyed_member;
    use linebloom_lab::support::stats::summary;
    use linebloom_lab::support::timing::{ns_per_key, round_order};

    const OPS: [&str; 4] = ["hit", "miss", "delete", "insert back"];
    /// (name, threshold for 8-bit tags, for 16-bit tags); the first is the baseline, the
    /// second its control.
    const CONTENDERS: [(&str, [u32; 2]); 5] = [
        ("T=0", [0, 0]),
        ("T=0 control", [0, 0]),
        ("T=32/16", [32, 16]),
        ("T=36/18 scheme", [36, 18]),
        ("T=40/21", [40, 21]),
    ];

    /// The first-block threshold against others, in one process.
    #[derive(clap::Parser)]
    #[command(args_conflicts_with_subcommands = true)]
    struct Args {
        #[command(subcommand)]
        mode: Option<Mode>,
        /// Rounds; the start order rotates every round.
        #[arg(default_value_t = 9)]
        rounds: usize,
        /// The largest key count timed (10^4 up to it, by factors of 10).
        #[arg(default_value_t = 10_000_000)]
        max_n: u64,
    }

    #[derive(clap::Subcommand)]
    enum Mode {
        /// The 10^-3 quantile of the keys held at the first refusal, per rule.
        Quantiles {
            /// Filters filled per block count.
            #[arg(default_value_t = 20_000)]
            fills: u64,
        },
    }

    pub fn run() -> anyhow::Result<()> {
        let args = <Args as clap::Parser>::parse();
        if let Some(Mode::Quantiles { fills }) = args.mode {
            return quantiles(fills);
        }
        let (rounds, max_n) = (args.rounds, args.max_n);
        println!(
            "quotient kernel: {}; CPU: {}",
            linebloom::arch::quotient::detect().name,
            linebloom_lab::support::provenance::cpu_model()
        );
        for n in [10_000u64, 100_000, 1_000_000, 10_000_000] {
            if n <= max_n {
                timings(n, rounds)?;
            }
        }
        refusals_and_rates()?;
        set_first_block_below(8, None);
        set_first_block_below(16, None);
        Ok(())
    }

    fn timings(n: u64, rounds: usize) -> anyhow::Result<()> {
        let blocks = (n as f64 / (48.0 * 0.88)).ceil() as u64;
        let params = QuotientParams::new(blocks + blocks % 2, 8)?;
        let keys: Vec<u64> = (0..n).map(|i| keyed_member(11, i)).collect();
        let probes = n.min(1 << 20);
        let hits: Vec<u64> = (0..probes).map(|i| keys[(i * 7919 % n) as usize]).collect();
        let misses: Vec<u64> = (0..probes).map(|i| keyed_member(12, i)).collect();
        let churn: Vec<u64> = keys.iter().step_by(10).copied().collect();
        let mut filters = Vec::new();
        for &(name, below) in &CONTENDERS {
            set_first_block_below(8, Some(below[0]));
            let mut f = VectorQuotientFilter::new(params);
            for &k in &keys {
                f.insert(&k)
                    .map_err(|e| anyhow::anyhow!("{name}: {e} while loading"))?;
            }
            filters.push(f);
        }
        let mut samples = vec![vec![Vec::new(); OPS.len()]; CONTENDERS.len()];
        for round in 0..rounds {
            for ci in round_order(round, CONTENDERS.len()) {
                let f = &mut filters[ci];
                set_first_block_below(8, Some(CONTENDERS[ci].1[0]));
                let count = |f: &VectorQuotientFilter, keys: &[u64]| {
                    keys.iter().filter(|k| f.contains(*k)).count() as u64
                };
                samples[ci][0].push(ns_per_key(&hits, |k| count(f, k)));
                samples[ci][1].push(ns_per_key(&misses, |k| count(f, k)));
                samples[ci][2].push(ns_per_key(&churn, |k| {
                    k.iter().filter(|k| f.remove(*k).is_ok()).count() as u64
                }));
                samples[ci][3].push(ns_per_key(&churn, |k| {
                    k.iter().filter(|k| f.insert(*k).is_ok()).count() as u64
                }));
            }
        }
        for (f, (name, _)) in filters.iter().zip(CONTENDERS) {
            let missing = keys.iter().filter(|k| !f.contains(*k)).count();
            anyhow::ensure!(missing == 0, "{name}: {missing} false negatives");
        }
        println!(
            "\n{n} keys, {} blocks, {rounds} rounds: median CPU ns per operation, and T=0's time over each",
            params.blocks()
        );
        println!(
            "{:<16} {:>18} {:>18} {:>18} {:>18}",
            "", OPS[0], OPS[1], OPS[2], OPS[3]
        );
        let median = |ci: usize, oi: usize| summary(&samples[ci][oi]).0;
        for (ci, (name, _)) in CONTENDERS.iter().enumerate() {
            let cells: Vec<String> = (0..OPS.len())
                .map(|oi| {
                    let ratios: Vec<f64> = (0..rounds)
                        .map(|r| samples[0][oi][r] / samples[ci][oi][r])
                        .collect();
                    format!("{:>7.1} ns {:>6.3}×", median(ci, oi), summary(&ratios).0)
                })
                .collect();
            println!("{name:<16} {}", cells.join(" "));
        }
        Ok(())
    }

    /// Keys held at the first refusal, over `fills` fills per block count and rule: the
    /// 10^-3 and 10^-2 quantiles and the median.
    fn quantiles(fills: u64) -> anyhow::Result<()> {
        println!("keys held at the first refused insert, 8-bit tags, {fills} fills");
        for blocks in [8u64, 16, 64, 512] {
            let params = QuotientParams::new(blocks, 8)?;
            for below in [0, 36] {
                set_first_block_below(8, Some(below));
                let mut f = VectorQuotientFilter::new(params);
                let mut held: Vec<f64> = (0..fills)
                    .map(|fill| {
                        f.clear();
                        let mut i = 0u64;
                        while f.insert(&keyed_member(blocks << 32 | fill, i)).is_ok() {
                            i += 1;
                        }
                        i as f64
                    })
                    .collect();
                held.sort_by(f64::total_cmp);
                let at = |q: f64| held[((q * fills as f64) as usize).min(held.len() - 1)];
                println!(
                    "{blocks:>4} blocks, T={below:<2}: 1e-3 quantile {}, \
                     1e-2 {}, median {}; slots {}, capacity() {}",
                    at(1e-3),
                    at(1e-2),
                    at(0.5),
                    params.slots(),
                    params.capacity()
                );
            }
        }
        set_first_block_below(8, None);
        Ok(())
    }

    /// 20 filters of 4096 blocks per threshold filled until the first refusal (both tag
    /// widths), and the rate at 50, 80 and 94% load over 2^21 non-members in the first
    /// four that reach the load.
    fn refusals_and_rates() -> anyhow::Result<()> {
        println!("\n4096 blocks: load at the first refused insert (20 fills), and the rate");
        for tag_bits in [8u32, 16] {
            let params = QuotientParams::new(4096, tag_bits)?;
            let slots = params.slots();
            let marks = [0.5, 0.8, 0.94].map(|x| (x * slots as f64) as u64);
            for &(name, below) in CONTENDERS.iter().filter(|c| c.0 != "T=0 control") {
                let below = below[usize::from(tag_bits == 16)];
                set_first_block_below(tag_bits, Some(below));
                let mut loads = Vec::new();
                let mut positives = [0u64; 3];
                let mut reached = [0u64; 3];
                let probes = 1u64 << 21;
                for fill in 0..20u64 {
                    let mut f = VectorQuotientFilter::new(params);
                    let mut held = 0u64;
                    loop {
                        if fill < 4
                            && let Some(at) = marks.iter().position(|&m| m == held)
                        {
                            reached[at] += 1;
                            positives[at] += (0..probes)
                                .filter(|&i| f.contains(&keyed_member(1000 + fill, i)))
                                .count() as u64;
                        }
                        if f.insert(&keyed_member(fill, held)).is_err() {
                            break;
                        }
                        held += 1;
                    }
                    loads.push(held as f64 / slots as f64);
                }
                let (median, min, _) = summary(&loads);
                let rates: Vec<String> = positives
                    .iter()
                    .zip(reached)
                    .map(|(&p, r)| match r {
                        0 => "—".to_string(),
                        r => format!("{:.3e}", p as f64 / (r * probes) as f64),
                    })
                    .collect();
                println!(
                    "{tag_bits:>2}-bit {name:<16} T={below:<2} first refusal median {:.2}% (lowest {:.2}%); \
                     capacity() {:.2}%; rate at 50/80/94%: {}",
                    100.0 * median,
                    100.0 * min,
                    100.0 * params.capacity() as f64 / slots as f64,
                    rates.join(" / ")
                );
            }
        }
        Ok(())
    }
}
