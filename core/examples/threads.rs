//! Sharing a filter across threads: `AtomicBloomFilter` inserts through `&self` with
//! atomic OR, so worker threads fill one filter without a lock; afterwards it converts
//! to a plain `BloomFilter` without copying, to save or query it.
//!
//! `cargo run --release --example threads -p linebloom`

use linebloom::{AtomicBloomFilter, Params};

fn main() -> Result<(), linebloom::ParamsError> {
    let (threads, per_thread) = (4u64, 100_000u64);
    let shared = AtomicBloomFilter::new(Params::for_fpr(threads * per_thread, 0.01)?);
    std::thread::scope(|s| {
        for t in 0..threads {
            let shared = &shared;
            s.spawn(move || {
                for i in 0..per_thread {
                    shared.insert(&(t * per_thread + i));
                }
            });
        }
    });
    let filter = shared.into_bloom();
    let lost = (0..threads * per_thread)
        .filter(|k| !filter.contains(k))
        .count();
    let fp = (0..100_000u64)
        .filter(|i| filter.contains(&(u64::MAX - i)))
        .count();
    println!(
        "{threads} threads x {per_thread} keys: {lost} lost, {:.3}% false positives \
         (estimated {:.3}%)",
        fp as f64 / 1000.0,
        100.0 * filter.estimated_fpr()
    );
    assert_eq!(lost, 0, "no false negatives");
    Ok(())
}
