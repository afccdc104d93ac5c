//! A filter with no allocator: its blocks live in a `static` array, as on a
//! microcontroller. The filter code below uses only `core` (build the library for an
//! embedded target with `cargo build -p linebloom --no-default-features --target
//! thumbv7em-none-eabihf`); `main` prints through std only to show the result here.
//!
//! `cargo run --example static_array -p linebloom`
//!
//! The function below names the plain `BloomFilter` type, whose storage is [`Blocks`]
//! with or without the `alloc` feature: CI builds this example with
//! `--no-default-features` and with every feature, so that enabling `alloc` somewhere
//! else in a build can never break a no-alloc crate (features only add).

use linebloom::{BloomFilter, StaticBlocks};

/// 4 KiB of filter bits in static memory: 64 blocks, handed out once, no `static mut`.
static STORAGE: StaticBlocks<64> = StaticBlocks::new();

/// Firmware-style code: no heap, no std.
fn seen_before(filter: &mut BloomFilter, tag: &[u8]) -> bool {
    !filter.insert(tag)
}

fn main() {
    // No `unsafe`: `take` hands the blocks out once (a second call returns None).
    let storage = STORAGE.take().expect("taken once");
    let mut filter = BloomFilter::from_storage(storage, 7).expect("64 blocks, k = 7 are valid");
    assert!(STORAGE.take().is_none());
    let tags: [&[u8]; 4] = [b"rfid:04a2", b"rfid:9f10", b"rfid:04a2", b"rfid:77c3"];
    for tag in tags {
        let dup = seen_before(&mut filter, tag);
        println!(
            "{}: {}",
            String::from_utf8_lossy(tag),
            if dup { "seen before" } else { "new" }
        );
    }
    println!(
        "{} bytes of static storage, fill ratio {:.4}",
        filter.params().bytes(),
        filter.fill_ratio()
    );
}
