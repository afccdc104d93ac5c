//! Golden vectors: fixed keys and parameters → a checksum of the filter's encoding.
//!
//! Any change to hashing, the bit scheme, the layout or the format changes these
//! values. They are checked on every platform CI runs (x86_64; aarch64, 32-bit armv7 and
//! big-endian s390x under qemu), so the same bytes and keys give the same filter
//! everywhere. If a change here is
//! intended, it is a format-version change: bump `format::VERSION` and record why.

use linebloom::arch::Kernel;
use linebloom::arch::quotient::QuotientKernel;
use linebloom::{
    BloomFilter, CountingParams, IntFold, Key, KeyHasher, Params, QuotientParams, StableHasher,
    VectorQuotientFilter, Xxh3,
};

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
    // u64::MAX, not usize::MAX: integers are keys by value, and usize::MAX is another
    // value on 32-bit targets (the same key as this one on 64-bit ones).
    f.insert(&u64::MAX);
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

/// A vector quotient filter built from fixed keys, with some removed (so both shifts
/// are in the pinned bytes).
fn golden_quotient<H: StableHasher>(
    blocks: u64,
    tag_bits: u32,
    seed: u64,
    kernel: &'static QuotientKernel,
) -> VectorQuotientFilter<linebloom::Blocks, H> {
    let params = QuotientParams::new(blocks, tag_bits).unwrap();
    let mut f = VectorQuotientFilter::with_hasher(params, H::from_seed(seed)).with_kernel(kernel);
    // A count fixed by the shape alone (15/16 of the slots, at most 600), so the pinned
    // bytes never move with the sizing.
    let keys = (params.slots() * 15 / 16).min(600);
    for i in 0..keys {
        f.insert(&i).unwrap();
    }
    f.insert("key").unwrap();
    for i in (0..keys).step_by(3) {
        f.remove(&i).unwrap();
    }
    f
}

#[test]
fn quotient_scheme_is_pinned() {
    // The scheme of `quotient::location` (FORMAT.md, kind 5), by hand for one hash.
    let (h, m) = (0x0123_4567_89ab_cdefu64, 1000u64);
    let product = h as u128 * m as u128;
    let first = (product >> 64) as u64;
    let (tag, bucket) = (h & 0xff, (((product as u64) as u128 * 80) >> 64) as u64);
    let spread = ((bucket << 16) | tag)
        .wrapping_add(1)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let pair = ((spread as u128 * m as u128) >> 64) as u64;
    let mut second = (pair + m - first) % m;
    if second == first {
        second = (first + m / 2) % m;
    }
    let at = linebloom::quotient::location(h, m as usize, 8);
    assert_eq!(
        (
            at.first as u64,
            at.second as u64,
            at.bucket as u64,
            at.tag as u64
        ),
        (first, second, bucket, tag)
    );
    let got: Vec<(usize, usize, u32, u32)> = [
        (0u64, 2usize, 8u32),
        (u64::MAX, 2, 16),
        (42, 1 << 20, 8),
        (h, 999_998, 16),
    ]
    .iter()
    .map(|&(h, m, r)| {
        let at = linebloom::quotient::location(h, m, r);
        (at.first, at.second, at.bucket, at.tag)
    })
    .collect();
    println!("quotient locations: {got:?}");
    assert_eq!(got, GOLDEN_QUOTIENT_LOCATIONS);
}

#[test]
fn quotient_filters_are_pinned() {
    let shapes = [
        (2, 8, 0),
        (38, 8, 0),
        (38, 16, 5),
        (200, 8, 42),
        (200, 16, 7),
    ];
    // Under Miri, one shape of each width (all of them take minutes there).
    let checked = |i: &usize| !cfg!(miri) || [0, 2].contains(i);
    let golden: Vec<u64> = (0..shapes.len())
        .filter(checked)
        .flat_map(|i| [GOLDEN_QUOTIENT[2 * i], GOLDEN_QUOTIENT[2 * i + 1]])
        .collect();
    for kernel in linebloom::arch::quotient::available() {
        let got: Vec<u64> = (0..shapes.len())
            .filter(checked)
            .map(|i| shapes[i])
            .flat_map(|(blocks, tag_bits, seed)| {
                [
                    xxhash_rust_checksum(
                        &golden_quotient::<IntFold>(blocks, tag_bits, seed, kernel).to_bytes(),
                    ),
                    xxhash_rust_checksum(
                        &golden_quotient::<Xxh3>(blocks, tag_bits, seed, kernel).to_bytes(),
                    ),
                ]
            })
            .collect();
        println!("quotient filters via {}: {got:#018x?}", kernel.name);
        assert_eq!(got, golden, "kernel {}", kernel.name);
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

// Format version 2, kind 5: (IntFold, Xxh3) for each shape of `quotient_filters_are_pinned`.
const GOLDEN_QUOTIENT: [u64; 10] = [
    0x137744182aa13fbb,
    0xfdcab5808abca56e,
    0xe8049ffb3f119ae1,
    0x80104d2a1720de2c,
    0x473b77ebaa670360,
    0x3dc49797412a21ae,
    0x0273412235af1128,
    0x78d45ffbbeb9e874,
    0xba1c0042630f1ced,
    0x86f4004856a7c25d,
];
const GOLDEN_QUOTIENT_LOCATIONS: [(usize, usize, u32, u32); 4] = [
    (0, 1, 0, 0),
    (1, 0, 35, 65535),
    (0, 603415, 0, 42),
    (4444, 879741, 15, 52719),
];

/// Filters of every kind and both stable hashers, built from fixed keys. Their encodings
/// are committed in `tests/data/` (written on x86_64): every platform must build the
/// same bytes, and decode the committed ones to the same answers.
fn fixtures() -> Vec<(&'static str, Vec<u8>)> {
    use linebloom::{ClassicBloomFilter, ClassicParams, CountingBloomFilter, ScalableBloomFilter};
    let keys = || (0..700u64).map(|i| i * 7919);
    let mut bloom = BloomFilter::new(Params::new(16, 8).unwrap());
    bloom.extend(keys());
    let mut bloom_xxh3 = BloomFilter::with_hasher(Params::new(16, 5).unwrap(), Xxh3::with_seed(9));
    bloom_xxh3.extend(keys());
    let mut counting = CountingBloomFilter::new(CountingParams::new(64, 6).unwrap());
    counting.extend(keys());
    let mut classic = ClassicBloomFilter::new(ClassicParams::new(7001, 5).unwrap());
    keys().for_each(|k| {
        classic.insert(&k);
    });
    // Options spelled out (the committed bytes hold them), so that a change of the
    // defaults leaves the fixture as it is.
    let options = linebloom::ScalableOptions::new(100, 0.01)
        .with_growth(2.0)
        .with_tightening(0.5);
    let mut scalable = ScalableBloomFilter::with_hasher(options, IntFold::default()).unwrap();
    keys().for_each(|k| {
        scalable.insert(&k).unwrap();
    });
    let mut quotient = VectorQuotientFilter::new(QuotientParams::new(32, 8).unwrap());
    let mut quotient16 =
        VectorQuotientFilter::with_hasher(QuotientParams::new(40, 16).unwrap(), Xxh3::with_seed(4));
    for k in keys() {
        quotient.insert(&k).unwrap();
        quotient16.insert(&k).unwrap();
    }
    for k in keys().step_by(5) {
        quotient.remove(&k).unwrap();
        quotient16.remove(&k).unwrap();
    }
    vec![
        ("bloom", bloom.to_bytes()),
        ("bloom-xxh3", bloom_xxh3.to_bytes()),
        ("counting", counting.to_bytes()),
        ("classic", classic.to_bytes()),
        ("scalable", scalable.to_bytes()),
        ("quotient", quotient.to_bytes()),
        ("quotient16-xxh3", quotient16.to_bytes()),
    ]
}

/// Decodes a fixture, checks every member, and counts positives among 50,000
/// non-members: the answers the committed bytes give.
fn fixture_answers(name: &str, bytes: &[u8]) -> usize {
    use linebloom::{Blocks, ClassicBloomFilter, CountingBloomFilter, ScalableBloomFilter};
    let contains: Box<dyn Fn(u64) -> bool> = match name {
        "bloom" => {
            let f = BloomFilter::from_bytes(bytes).unwrap();
            Box::new(move |k| f.contains(&k))
        }
        "bloom-xxh3" => {
            let f = BloomFilter::<Blocks, Xxh3>::from_bytes_with_hasher(bytes).unwrap();
            Box::new(move |k| f.contains(&k))
        }
        "counting" => {
            let f = CountingBloomFilter::from_bytes(bytes).unwrap();
            Box::new(move |k| f.contains(&k))
        }
        "classic" => {
            let f = ClassicBloomFilter::from_bytes(bytes).unwrap();
            Box::new(move |k| f.contains(&k))
        }
        "scalable" => {
            let f = ScalableBloomFilter::from_bytes(bytes).unwrap();
            Box::new(move |k| f.contains(&k))
        }
        "quotient" => {
            let f = VectorQuotientFilter::from_bytes(bytes).unwrap();
            Box::new(move |k| f.contains(&k))
        }
        "quotient16-xxh3" => {
            let f = VectorQuotientFilter::<Blocks, Xxh3>::from_bytes_with_hasher(bytes).unwrap();
            Box::new(move |k| f.contains(&k))
        }
        _ => unreachable!("unknown fixture {name}"),
    };
    // The quotient fixtures removed every fifth key: the rest must all be there.
    let held = |i: u64| !name.starts_with("quotient") || !i.is_multiple_of(5);
    assert!(
        (0..700u64).filter(|&i| held(i)).all(|i| contains(i * 7919)),
        "{name}: a member is missing"
    );
    (0..50_000u64).filter(|i| contains(i * 7919 + 1)).count()
}

#[test]
fn committed_encodings_decode_alike_on_every_platform() {
    // The big-endian (s390x) and 32-bit (armv7) CI jobs run this against
    // bytes encoded on x86_64. Regenerate the files (only for an intended format
    // change) with LINEBLOOM_WRITE_FIXTURES=1.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut answers = Vec::new();
    for (name, built) in fixtures() {
        let path = dir.join(format!("{name}.lbf"));
        if std::env::var_os("LINEBLOOM_WRITE_FIXTURES").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &built).unwrap();
        }
        let stored = std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (LINEBLOOM_WRITE_FIXTURES=1 writes it)",
                path.display()
            )
        });
        assert!(
            built == stored,
            "{name}: this platform encodes other bytes than x86_64"
        );
        answers.push(fixture_answers(name, &stored));
    }
    println!("fixture positives: {answers:?}");
    assert_eq!(answers, FIXTURE_POSITIVES);
}

/// Positives among the 50,000 non-members of `fixture_answers`, per fixture (bloom,
/// bloom-xxh3, counting, classic, scalable, quotient, quotient16-xxh3), as x86_64
/// decodes the committed bytes.
const FIXTURE_POSITIVES: [usize; 7] = [277, 290, 387, 489, 162, 91, 1];
