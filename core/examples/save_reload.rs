//! Save, ship and reload a filter, and what happens to damaged bytes: the format is
//! checksummed, so a flipped bit, a truncated file or the wrong filter type is refused
//! with an error that says which, never read as a filter that answers wrongly.
//!
//! `cargo run --release --example save_reload -p linebloom`

use linebloom::{BloomFilter, CountingBloomFilter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut filter = BloomFilter::for_fpr(10_000, 0.01)?;
    filter.extend(0..10_000u64);
    let path = std::env::temp_dir().join(format!("linebloom-example-{}.lbf", std::process::id()));
    std::fs::write(&path, filter.to_bytes())?;
    let bytes = std::fs::read(&path)?;
    std::fs::remove_file(&path)?;

    let reloaded = BloomFilter::from_bytes(&bytes)?;
    assert_eq!(reloaded, filter);
    assert!((0..10_000u64).all(|k| reloaded.contains(&k)));
    println!(
        "saved and reloaded {} bytes: same filter, every key found",
        bytes.len()
    );

    let mut flipped = bytes.clone();
    flipped[100] ^= 0x10;
    println!(
        "one flipped bit: {}",
        BloomFilter::from_bytes(&flipped).unwrap_err()
    );
    println!(
        "truncated:       {}",
        BloomFilter::from_bytes(&bytes[..1000]).unwrap_err()
    );
    println!(
        "wrong type:      {}",
        CountingBloomFilter::from_bytes(&bytes).unwrap_err()
    );
    println!(
        "not a filter:    {}",
        BloomFilter::from_bytes(b"hello").unwrap_err()
    );
    Ok(())
}
