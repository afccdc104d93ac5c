//! Capacity monitoring and rebuild, as a service would run it: watch the fill ratio,
//! the estimated number of keys and the current false-positive rate; when the estimated
//! count passes the capacity the filter was sized for (the rate follows soon after),
//! rebuild it twice as large from the source of truth (here a `Vec` of ids; a database
//! in a service). A Bloom filter cannot delete, so the same rebuild also drops ids that
//! were removed from the source.
//!
//! `cargo run --release --example monitoring -p linebloom`

use linebloom::BloomFilter;

fn main() -> Result<(), linebloom::ParamsError> {
    let target = 0.01;
    let mut ids: Vec<u64> = Vec::new();
    let mut filter = BloomFilter::for_fpr(50_000, target)?;
    let mut rebuilds = 0;
    for batch in 0..8u64 {
        let new_ids = (batch * 20_000..(batch + 1) * 20_000).map(|i| i.wrapping_mul(0x9e37_79b9));
        for id in new_ids {
            ids.push(id);
            filter.insert(&id);
        }
        let (fill, keys, rate) = (
            filter.fill_ratio(),
            filter.estimated_len(),
            filter.estimated_fpr(),
        );
        // The most keys this filter holds at the target, from its shape alone.
        let capacity = filter.params().capacity_at(target);
        println!(
            "{:>7} ids: fill {:.3}, estimated keys {:>7.0} of {capacity}, current rate {:.3}% \
             (target {}%)",
            ids.len(),
            fill,
            keys,
            100.0 * rate,
            100.0 * target
        );
        if keys > capacity as f64 || rate > target {
            // Rebuild with room to grow: twice the current count.
            filter = BloomFilter::for_fpr(2 * ids.len() as u64, target)?;
            filter.extend(ids.iter().copied());
            rebuilds += 1;
            println!(
                "        rebuilt for {} ids: {} bytes, current rate {:.3}%",
                2 * ids.len(),
                filter.params().bytes(),
                100.0 * filter.estimated_fpr()
            );
        }
    }
    assert!(
        ids.iter().all(|id| filter.contains(id)),
        "no false negatives"
    );
    println!("{rebuilds} rebuilds for {} ids", ids.len());
    Ok(())
}
