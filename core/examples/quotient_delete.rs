//! Deletion with the vector quotient filter: 8-bit fingerprints in 64-byte blocks, about
//! 12 bits per key at 1%, a quarter of what the counting filter spends. A key inserted
//! twice is held twice; each `remove` undoes one `insert`. A full filter refuses the
//! insert and changes nothing.
//!
//! `cargo run --release --example quotient_delete -p linebloom`

use linebloom::{RemoveError, VectorQuotientFilter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 100_000u64;
    let mut sessions = VectorQuotientFilter::for_fpr(n, 0.01)?;
    for id in 0..n {
        sessions.insert(&id)?;
    }
    let params = sessions.params();
    println!(
        "{n} sessions in {} bytes ({:.1} bits each, {}-bit tags), {:.1}% of the slots used, \
         predicted rate {:.3}%, kernel {}",
        params.bytes(),
        params.bits_per_key(n),
        params.tag_bits(),
        100.0 * sessions.load_factor(),
        100.0 * sessions.expected_fpr(n),
        sessions.kernel_name()
    );

    // Log out the first half: they answer "absent" again, the rest stay present.
    for id in 0..n / 2 {
        sessions.remove(&id)?;
    }
    assert!(
        (n / 2..n).all(|id| sessions.contains(&id)),
        "no false negatives"
    );
    let still_found = (0..n / 2).filter(|id| sessions.contains(id)).count();
    println!(
        "after removing {}: {} held (exact), {still_found} of the removed still answer \
         maybe (false positives), rate now {:.3}%",
        n / 2,
        sessions.len(),
        100.0 * sessions.estimated_fpr()
    );

    // Twice in, twice out.
    sessions.insert("token")?;
    sessions.insert("token")?;
    sessions.remove("token")?;
    assert!(sessions.contains("token"), "inserted twice, removed once");
    sessions.remove("token")?;

    // A key whose fingerprint is nowhere is certainly absent: nothing changes. (A key
    // never inserted that matches another key's fingerprint would remove that one:
    // remove only what you inserted.)
    let absent = (10 * n..).find(|id| !sessions.contains(id)).unwrap();
    assert_eq!(sessions.remove(&absent), Err(RemoveError::NotPresent));

    // Filled past its capacity, the filter refuses and keeps every key it holds.
    let mut small = VectorQuotientFilter::for_fpr(1_000, 0.01)?;
    let held: Vec<u64> = (0..).take_while(|k| small.insert(k).is_ok()).collect();
    println!(
        "a filter sized for 1000 keys refused its key number {} at {:.1}% load; all {} held \
         keys still answer present",
        held.len() + 1,
        100.0 * small.load_factor(),
        held.len()
    );
    assert!(held.iter().all(|k| small.contains(k)));
    Ok(())
}
