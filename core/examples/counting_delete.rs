//! Deletion with the counting filter: 4-bit counters instead of bits, so a key can be
//! removed; and what saturation means (a counter that reached 15 stays there, so some
//! keys can no longer be fully removed, but nothing is ever lost).
//!
//! `cargo run --release --example counting_delete -p linebloom`

use linebloom::{CountingBloomFilter, CountingParams};

fn main() -> Result<(), linebloom::ParamsError> {
    let n = 100_000u64;
    let mut sessions = CountingBloomFilter::for_fpr(n, 0.01)?;
    sessions.extend(0..n);
    println!(
        "{n} sessions in {} bytes ({:.1} bits each: 4 bits per position), predicted rate {:.3}%",
        sessions.params().bytes(),
        sessions.params().bits_per_key(n),
        100.0 * sessions.expected_fpr(n)
    );
    // Log out the first half: they answer "absent" again, the rest stay present.
    for id in 0..n / 2 {
        sessions.remove(&id).expect("inserted, so removable");
    }
    let still_found = (0..n / 2).filter(|id| sessions.contains(id)).count();
    assert!(
        (n / 2..n).all(|id| sessions.contains(&id)),
        "no false negatives"
    );
    println!(
        "after removing {}: {still_found} of them still answer maybe (false positives), \
         estimated keys {:.0}",
        n / 2,
        sessions.estimated_len()
    );
    println!(
        "removing a key never inserted: {:?}",
        sessions.remove(&(10 * n))
    );

    // Saturation: a tiny filter overloaded on purpose.
    let mut tiny = CountingBloomFilter::new(CountingParams::new(1, 8)?);
    tiny.extend(0..400u64);
    println!(
        "overloaded 1-block filter: {} of 128 counters saturated; its keys stay present",
        tiny.saturated_counters()
    );
    assert!((0..400u64).all(|k| tiny.contains(&k)));
    Ok(())
}
