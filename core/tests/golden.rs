//! Golden vectors: fixed keys and parameters → a checksum of the filter's encoding.
//!
//! Any change to hashing, the bit scheme, the layout or the format changes these
//! values. They are checked on every platform CI runs (x86_64, and aarch64 under qemu),
//! so the same bytes and keys give the same filter everywhere. If a change here is
//! intended, it is a format-version change: bump `format::VERSION` and record why.

use linebloom::arch::Kernel;
use linebloom::{BloomFilter, IntFold, Key, KeyHasher, Params, StableHasher, Xxh3};

fn golden_filter<H: StableHasher>(
    blocks: u64,
    k: u32,
    seed: u64,
    kernel: &'static Kernel,
) -> BloomFilter<linebloom::Blocks, H> {
    let mut f = BloomFilter::with_hasher(Params::new(blocks, k).unwrap(), H::from_seed(seed))
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
fn int_fold_is_pinned() {
    // IntFold::fold as specified in its docs (and FORMAT.md), seed 0 and seed 7; a u64
    // computed by hand from the 128-bit product for x = 1, seed 0.
    let by_hand = {
        let a = 1u64.rotate_left(32) ^ IntFold::K1;
        let p = a as u128 * (1 ^ IntFold::K2) as u128;
        ((p >> 64) as u64 ^ p as u64).wrapping_mul(IntFold::K3)
    };
    assert_eq!(IntFold::fold(1, 0), by_hand);
    let got = [
        IntFold::fold(0, 0),
        IntFold::fold(1, 0),
        IntFold::fold(u64::MAX, 0),
        IntFold::fold(0x0123_4567_89ab_cdef, 7),
        (-1i32).hash_key(&IntFold::default()),
    ];
    println!("fold: {got:#018x?}");
    assert_eq!(got, GOLDEN_FOLD);
    // Integers are keys by value: every width and signedness agrees.
    let h = IntFold::with_seed(3);
    assert_eq!(5u8.hash_key(&h), 5u64.hash_key(&h));
    assert_eq!(5i32.hash_key(&h), 5usize.hash_key(&h));
    assert_eq!((-2i8).hash_key(&h), (-2i64).hash_key(&h));
    assert_eq!(7u128.hash_key(&h), 7u32.hash_key(&h));
    assert_eq!((-7i128).hash_key(&h), (-7i16).hash_key(&h));
    assert_ne!((1u128 << 64).hash_key(&h), 0u64.hash_key(&h));
    assert_eq!('a'.hash_key(&h), 97u8.hash_key(&h));
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
            .flat_map(|&(blocks, k, seed)| {
                [
                    xxhash_rust_checksum(
                        &golden_filter::<IntFold>(blocks, k, seed, kernel).to_bytes(),
                    ),
                    xxhash_rust_checksum(
                        &golden_filter::<Xxh3>(blocks, k, seed, kernel).to_bytes(),
                    ),
                ]
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
const GOLDEN_FOLD: [u64; 5] = [
    0x2afa4ffed2fce49c,
    0x0ad6816f5782865c,
    0x2602b8944a443b7b,
    0x86da3a95d999940f,
    0x2602b8944a443b7b, // -1i32 is the key u64::MAX
];
// Format version 2: (IntFold, Xxh3) for each shape.
const GOLDEN_FILTERS: [u64; 10] = [
    0xb303219343950897,
    0xe58be91c630fa0db,
    0x90b54b5bd9a7ba5c,
    0xdccb6c29156bf079,
    0xf7e93b17fc6e2c8c,
    0x345b8af175f522b7,
    0xd9cf067621163c26,
    0x84a43ff953b6d513,
    0x0c62947e74889ea3,
    0xf56ccad705bf8ace,
];
