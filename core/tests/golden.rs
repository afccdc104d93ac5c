//! Golden vectors: fixed keys and parameters → a checksum of the filter's encoding.
//!
//! Any change to hashing, the bit scheme, the layout or the format changes these
//! values. They are checked on every platform CI runs (x86_64, and aarch64 under qemu),
//! so the same bytes and keys give the same filter everywhere. If a change here is
//! intended, it is a format-version change: bump `format::VERSION` and record why.

use linebloom::arch::Kernel;
use linebloom::{BloomFilter, Key, KeyHasher, Params, Xxh3};

fn golden_filter(blocks: u64, k: u32, seed: u64, kernel: &'static Kernel) -> BloomFilter {
    let mut f = BloomFilter::with_hasher(Params::new(blocks, k).unwrap(), Xxh3::with_seed(seed))
        .with_kernel(kernel);
    for i in 0..500u64 {
        f.insert(&i);
    }
    for i in 0..200u32 {
        f.insert(format!("key-{i}").as_str());
    }
    f.insert(&-1i64);
    f.insert(&usize::MAX);
    f.insert(&[0xffu8; 33]);
    f
}

#[test]
fn hashes_are_pinned() {
    let h = Xxh3::default();
    // XXH3-64 of the canonical little-endian encodings (seed 0).
    let got = [
        0u64.hash_key(&h),
        1u64.hash_key(&h),
        "linebloom".hash_key(&h),
        h.hash_bytes(b""),
    ];
    println!("hashes: {got:#018x?}");
    assert_eq!(got, GOLDEN_HASHES);
}

#[test]
fn filters_are_pinned() {
    // Through every kernel this CPU runs: all must produce the pinned bytes.
    let shapes = [
        (1, 1, 0),
        (37, 5, 0),
        (37, 8, 0),
        (101, 11, 42),
        (64, 16, 7),
    ];
    for kernel in linebloom::arch::available() {
        let got: Vec<u64> = shapes
            .iter()
            .map(|&(blocks, k, seed)| {
                xxhash_rust_checksum(&golden_filter(blocks, k, seed, kernel).to_bytes())
            })
            .collect();
        println!("filters via {}: {got:#018x?}", kernel.name);
        assert_eq!(got, GOLDEN_FILTERS, "kernel {}", kernel.name);
    }
}

/// XXH3 via the crate's own stable hasher, so the test needs no extra dependency.
fn xxhash_rust_checksum(bytes: &[u8]) -> u64 {
    Xxh3::with_seed(0x601d).hash_bytes(bytes)
}

// XXH3-64("") = 0x2d06800538d394c2 is the reference implementation's published value.
const GOLDEN_HASHES: [u64; 4] = [
    0xc77b3abb6f87acd9,
    0x2fbc593564db792e,
    0x0157e40c68321fcc,
    0x2d06800538d394c2,
];
const GOLDEN_FILTERS: [u64; 5] = [
    0x1e473e17158a6ec8,
    0x2ea76b94c2c1f961,
    0xde53b0c6aa03243f,
    0xbcdd6dc33eb5a1fe,
    0xf404e41691942eb6,
];
