//! A blacklist with an exact re-check behind the filter: the filter answers "certainly
//! not listed" for almost every request without touching the exact set (a database in a
//! real service, a `HashSet` here); only "maybe" answers pay for the exact lookup, and
//! the exact lookup removes the false positives. No listed key is ever let through.
//!
//! `cargo run --release --example blacklist -p linebloom`

use linebloom::BloomFilter;
use std::collections::HashSet;

fn main() -> Result<(), linebloom::ParamsError> {
    let banned: HashSet<u64> = (0..50_000u64).map(|i| i * 1_000_003 + 17).collect();
    let mut filter = BloomFilter::for_fpr(banned.len() as u64, 0.001)?;
    filter.extend(banned.iter().copied());

    let (mut exact_lookups, mut blocked, mut false_alarms) = (0u64, 0u64, 0u64);
    let requests: Vec<u64> = (0..1_000_000u64)
        .map(|i| {
            if i % 100 == 0 {
                (i / 100 % 50_000) * 1_000_003 + 17
            } else {
                i * 7 + 1
            }
        })
        .collect();
    for &user in &requests {
        if !filter.contains(&user) {
            continue; // certainly not banned: no exact lookup
        }
        exact_lookups += 1;
        if banned.contains(&user) {
            blocked += 1;
        } else {
            false_alarms += 1; // the filter's false positive, caught by the re-check
        }
    }
    let listed = requests.iter().filter(|u| banned.contains(u)).count() as u64;
    println!("requests: {}, of them banned: {listed}", requests.len());
    println!(
        "exact lookups: {exact_lookups} ({:.2}% of requests); blocked {blocked}, false alarms \
         {false_alarms}",
        100.0 * exact_lookups as f64 / requests.len() as f64
    );
    assert_eq!(blocked, listed, "every banned request is blocked");
    println!(
        "filter: {} bytes for {} banned ids ({:.1} bits each)",
        filter.params().bytes(),
        banned.len(),
        filter.params().bits_per_key(banned.len() as u64)
    );
    Ok(())
}
