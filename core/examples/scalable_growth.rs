//! Growth with the scalable filter: when you cannot know the final count, start small;
//! the filter adds layers (each twice as large, with half the rate) and the compounded
//! rate stays below the target however far it grows.
//!
//! `cargo run --release --example scalable_growth -p linebloom`

use linebloom::ScalableBloomFilter;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target = 0.01;
    let mut f = ScalableBloomFilter::for_fpr(1_000, target)?;
    let mut inserted = 0u64;
    for stop in [1_000u64, 10_000, 100_000, 1_000_000] {
        while inserted < stop {
            f.insert(&inserted)?;
            inserted += 1;
        }
        let probes = 200_000u64;
        let fp = (0..probes).filter(|i| f.contains(&(u64::MAX - i))).count();
        println!(
            "{stop:>9} keys: {:>2} layers, {:>8} bytes, bound {:.3}%, estimated {:.3}%, \
             measured {:.3}%",
            f.layers(),
            f.memory_bytes(),
            100.0 * f.fpr_bound(),
            100.0 * f.estimated_fpr(),
            100.0 * fp as f64 / probes as f64
        );
    }
    assert!((0..inserted).all(|k| f.contains(&k)), "no false negatives");
    assert!(f.fpr_bound() < target);
    Ok(())
}
