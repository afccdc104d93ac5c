//! The batch paths at one size, for comparing two builds of the core: the Bloom filter's
//! `contains_batch` and `insert_batch` and the vector quotient filter's `contains_batch`,
//! each on a filter of about `MIB` MiB (64 by default, past the caches of the VMs this
//! runs on), median CPU ns per key over the rounds.
//!
//! ```text
//! cargo build --release -p linebloom-benches --example batch_paths
//! cp target/release/examples/batch_paths /tmp/batch_paths-before   # then change the core
//! for i in 1 2 3 4 5; do /tmp/batch_paths-before; ./target/release/examples/batch_paths; done
//! ```
//!
//! One process holds one build, so two builds are compared by alternating their runs, as
//! above, and reading the spread of each side's medians.

use linebloom::{BloomFilter, QuotientParams, VectorQuotientFilter};
use linebloom_benches::{dram_probes, member_key};
use linebloom_lab::support::stats::summary;
use linebloom_lab::support::timing::ns_per_key;
use std::hint::black_box;

/// The batch paths at one size.
#[derive(clap::Parser)]
struct Args {
    /// Rounds (each times every path once).
    #[arg(default_value_t = 7)]
    rounds: usize,
    /// Each filter's size, in MiB.
    #[arg(default_value_t = 64)]
    mib: u64,
}

fn main() -> anyhow::Result<()> {
    let Args { rounds, mib } = clap::Parser::parse();
    anyhow::ensure!(rounds > 0 && mib > 0, "rounds and MiB must be at least 1");
    let bytes = mib << 20;
    // At 1%: the Bloom filter holds about a key per 9.6 bits, the quotient filter about
    // a key per 12.
    let bloom_keys = bytes * 8 / 10;
    let quotient_keys = bytes * 8 / 12;
    let mut bloom = BloomFilter::for_fpr(bloom_keys, 0.01)?;
    let members: Vec<u64> = (0..bloom_keys).map(member_key).collect();
    bloom.insert_batch(&members);
    let mut quotient = VectorQuotientFilter::new(QuotientParams::for_fpr(quotient_keys, 0.01)?);
    let quotient_members = quotient_keys * 9 / 10;
    for key in &members[..quotient_members as usize] {
        quotient.add(key)?;
    }
    println!(
        "Bloom filter {} B ({} keys), quotient filter {} B ({} keys, kernel {}); {rounds} rounds",
        bloom.params().bytes(),
        bloom_keys,
        quotient.params().bytes(),
        quotient.len(),
        quotient.kernel_name()
    );
    // 2^24 probes, members of both filters and keys of neither alternating, in an order
    // no prefetcher follows.
    let probes = dram_probes(quotient_members);
    let mut out = vec![false; probes.len()];
    let (mut bloom_lookups, mut quotient_lookups, mut bloom_inserts) =
        (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        bloom_lookups.push(ns_per_key(&probes, |keys| {
            bloom.contains_batch(keys, &mut out);
            black_box(&out);
            0
        }));
        quotient_lookups.push(ns_per_key(&probes, |keys| {
            quotient.contains_batch(keys, &mut out);
            black_box(&out);
            0
        }));
        let mut empty = BloomFilter::for_fpr(bloom_keys, 0.01)?;
        bloom_inserts.push(ns_per_key(&probes, |keys| {
            empty.insert_batch(keys);
            black_box(&empty);
            0
        }));
    }
    for (path, times) in [
        ("Bloom contains_batch", bloom_lookups),
        ("quotient contains_batch", quotient_lookups),
        ("Bloom insert_batch", bloom_inserts),
    ] {
        println!("{path}: {:.2} ns a key (median)", summary(&times).0);
    }
    Ok(())
}
