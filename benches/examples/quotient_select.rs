//! The vector quotient filter's select, kernel by kernel: `pdep` + `tzcnt` (the
//! `avx512` kernel) against the table-driven broadword select (every other kernel), on
//! the same random metadata-like words, with nothing else in the loop.
//!
//! ```text
//! cargo run --release -p linebloom-benches --example quotient_select [ROUNDS]
//! ```
//!
//! Each pass selects one set bit (a rank that varies per word) in each of 2^16 random
//! words held in L1, through `linebloom::arch::quotient::select_sum` (the kernel's own select
//! compiled with its features). Kernels run interleaved, the start order rotating every
//! round, timed in thread CPU time; the detected kernel runs twice, and the second
//! copy's ratio is the noise floor. Printed: the median ns per select, and each
//! kernel's time over the detected one's, paired by round.

use linebloom::arch::quotient::select_sum;
use linebloom_lab::support::keys::keyed_member;
use linebloom_lab::support::stats::summary;
use linebloom_lab::support::timing::{interleaved_boxed, ns_per_key, paired_speedup};

fn main() -> anyhow::Result<()> {
    let rounds = linebloom_benches::rounds_arg(31);
    let detected = linebloom::arch::quotient::detect();
    println!(
        "quotient kernel detected: {}; CPU: {}",
        detected.name,
        linebloom_lab::support::provenance::cpu_model()
    );
    // Metadata words are about half ones (tags) and half zeros (bucket ends).
    let words: Vec<u64> = (0..1u64 << 16).map(|i| keyed_member(11, i)).collect();
    let mut kernels: Vec<(String, &'static linebloom::arch::quotient::QuotientKernel)> =
        linebloom::arch::quotient::available()
            .map(|k| (k.name.to_string(), k))
            .collect();
    kernels.push((format!("{}-control", detected.name), detected));
    let answers: Vec<u64> = kernels.iter().map(|(_, k)| select_sum(k, &words)).collect();
    anyhow::ensure!(
        answers.iter().all(|&a| a == answers[0]),
        "the kernels' selects disagree: {answers:?}"
    );
    let mut passes: Vec<Box<dyn FnMut() -> f64>> = kernels
        .iter()
        .map(|&(_, kernel)| {
            let words = &words;
            Box::new(move || ns_per_key(words, |w| select_sum(kernel, w)))
                as Box<dyn FnMut() -> f64>
        })
        .collect();
    let samples = interleaved_boxed(rounds, &mut passes);
    let base = kernels
        .iter()
        .position(|(name, _)| name == detected.name)
        .expect("the detected kernel is available");
    println!(
        "\n{} words, {rounds} rounds (median CPU ns per select)",
        words.len()
    );
    println!(
        "{:<18} {:>8} {:>22}",
        "kernel",
        "ns",
        format!("time / {}", detected.name)
    );
    for ((name, _), s) in kernels.iter().zip(&samples) {
        println!(
            "{name:<18} {:>8.2} {:>22.2}",
            summary(s).0,
            paired_speedup(s, &samples[base])
        );
    }
    Ok(())
}
