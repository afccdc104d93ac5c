//! Property tests: no false negatives, ever, and bit-exact agreement with a naive model
//! of the scheme, for random keys, sizes from one block up to odd counts, every k, and
//! after a format round trip and a union.

mod common;

use common::NaiveFilter;
use linebloom::{Block, BloomFilter, Params};
use proptest::prelude::*;

fn shapes() -> impl Strategy<Value = (u64, u32)> {
    (
        prop_oneof![Just(1u64), 1u64..8, 8u64..300, Just(1023u64)],
        1u32..=16,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if common::RELEASE { 512 } else { 96 }))]

    #[test]
    fn no_false_negatives_and_matches_model(
        (blocks, k) in shapes(),
        keys in prop::collection::vec(any::<u64>(), 0..600),
        probes in prop::collection::vec(any::<u64>(), 0..200),
    ) {
        let mut f = BloomFilter::new(Params::new(blocks, k).unwrap());
        let mut model = NaiveFilter::new(blocks as usize, k);
        for key in &keys {
            let h = f.hash(key);
            prop_assert_eq!(f.insert(key), model.insert_hash(h), "insert result for {}", key);
        }
        for key in &keys {
            prop_assert!(f.contains(key), "false negative for {}", key);
        }
        for key in &probes {
            prop_assert_eq!(f.contains(key), model.contains_hash(f.hash(key)));
        }
        let words: Vec<[u64; 8]> = f.as_blocks().iter().map(|b| b.0).collect();
        prop_assert_eq!(words, model.words());
    }

    #[test]
    fn survives_round_trip_and_union(
        (blocks, k) in shapes(),
        a in prop::collection::vec(".{0,12}", 0..200),
        b in prop::collection::vec(".{0,12}", 0..200),
    ) {
        let p = Params::new(blocks, k).unwrap();
        let mut fa = BloomFilter::new(p);
        let mut fb = BloomFilter::new(p);
        fa.extend(a.iter().map(String::as_str));
        fb.extend(b.iter().map(String::as_str));
        let decoded = BloomFilter::from_bytes(&fa.to_bytes()).unwrap();
        prop_assert_eq!(&decoded, &fa);
        for key in &a {
            prop_assert!(decoded.contains(key.as_str()));
        }
        let mut both = decoded.clone();
        both.union(&fb).unwrap();
        for key in a.iter().chain(&b) {
            prop_assert!(both.contains(key.as_str()), "lost {:?} in union", key);
        }
        let mut common_part = fa.clone();
        common_part.intersect(&fb).unwrap();
        for key in a.iter().filter(|k| b.contains(k)) {
            prop_assert!(common_part.contains(key.as_str()), "lost {:?} in intersect", key);
        }
    }

    #[test]
    fn borrowed_storage_behaves_like_owned(
        (blocks, k) in shapes(),
        keys in prop::collection::vec(any::<u32>(), 0..300),
    ) {
        let mut owned = BloomFilter::new(Params::new(blocks, k).unwrap());
        let mut storage = vec![Block::ZERO; blocks as usize];
        let mut borrowed = BloomFilter::from_storage(&mut storage[..], k).unwrap();
        for key in &keys {
            prop_assert_eq!(owned.insert(key), borrowed.insert(key));
        }
        prop_assert!(owned == borrowed);
    }
}

#[test]
fn clear_empties_the_filter() {
    let mut f = BloomFilter::new(Params::new(3, 7).unwrap());
    f.extend(0..100u64);
    assert!(f.fill_ratio() > 0.0);
    f.clear();
    assert_eq!(f.fill_ratio(), 0.0);
    assert!(!(0..100u64).any(|k| f.contains(&k)));
}

#[test]
fn insert_reports_new_keys() {
    let mut f = BloomFilter::new(Params::for_fpr(1000, 0.001).unwrap());
    assert!(f.insert("alpha"));
    assert!(
        !f.insert("alpha"),
        "second insert of the same key sets nothing new"
    );
}

#[test]
fn combining_needs_equal_shape_and_hasher() {
    use linebloom::{IncompatibleError, IntFold};
    let mut a = BloomFilter::new(Params::new(4, 8).unwrap());
    let b = BloomFilter::new(Params::new(4, 9).unwrap());
    let err = a.union(&b).unwrap_err();
    assert!(matches!(err, IncompatibleError::Params { .. }));
    assert_eq!(
        err.to_string(),
        "filters differ in shape: 4 blocks, k = 8 vs 4 blocks, k = 9"
    );
    let c = BloomFilter::with_hasher(Params::new(4, 8).unwrap(), IntFold::with_seed(1));
    assert_eq!(a.intersect(&c), Err(IncompatibleError::Hasher));

    // The classic filter names which of the two differs, too.
    use linebloom::{ClassicBloomFilter, ClassicParams};
    let shape = ClassicParams::new(4096, 7).unwrap();
    let mut a = ClassicBloomFilter::new(shape);
    let other = ClassicParams::new(8192, 7).unwrap();
    let err = a.union(&ClassicBloomFilter::new(other)).unwrap_err();
    assert_eq!(
        err,
        IncompatibleError::Params {
            ours: shape,
            theirs: other
        }
    );
    assert_eq!(
        err.to_string(),
        "filters differ in shape: 4096 bits, k = 7 vs 8192 bits, k = 7"
    );
    let seeded = ClassicBloomFilter::with_hasher(shape, IntFold::with_seed(1));
    assert_eq!(a.union(&seeded), Err(IncompatibleError::Hasher));
}

#[test]
fn estimates_track_the_truth() {
    let n = 20_000u64;
    let p = Params::for_fpr(n, 0.01).unwrap();
    let mut f = BloomFilter::new(p);
    f.extend(common::members(7, n as usize));
    let est = f.estimated_len();
    assert!(
        (est - n as f64).abs() < 0.03 * n as f64,
        "estimated_len {est} vs {n}"
    );
    // The bit-level estimate of the current rate agrees with the formula within 10%.
    let (now, predicted) = (f.estimated_fpr(), p.expected_fpr(n));
    assert!(
        (now / predicted - 1.0).abs() < 0.1,
        "estimated_fpr {now} vs formula {predicted}"
    );
}

#[test]
fn key_encodings_are_portable() {
    use linebloom::{Key, Xxh3};
    let h = Xxh3::default();
    // usize is widened to 8 bytes, so 32- and 64-bit targets agree.
    assert_eq!(7usize.hash_key(&h), 7u64.hash_key(&h));
    assert_eq!("ab".hash_key(&h), b"ab".hash_key(&h));
    assert_eq!(String::from("ab").hash_key(&h), [b'a', b'b'].hash_key(&h));
    assert_eq!(
        0x0102u16.hash_key(&h),
        [2u8, 1, 0, 0, 0, 0, 0, 0].hash_key(&h),
        "Xxh3 hashes integers as their value's 8 little-endian bytes"
    );
    assert_eq!(
        (-1i16).hash_key(&h),
        [0xffu8; 8].hash_key(&h),
        "signed: sign-extended"
    );
}

/// A storage that answers with no blocks after its first two calls: safe code, so the
/// filter must not trust it for bounds.
struct Shrinking {
    blocks: Vec<Block>,
    calls: std::cell::Cell<u32>,
}

impl AsRef<[Block]> for Shrinking {
    fn as_ref(&self) -> &[Block] {
        self.calls.set(self.calls.get() + 1);
        let keep = if self.calls.get() > 2 {
            0
        } else {
            self.blocks.len()
        };
        &self.blocks[..keep]
    }
}

#[test]
#[should_panic(expected = "storage changed length")]
fn a_storage_that_shrinks_is_refused_not_read_out_of_bounds() {
    // Storage that shrinks after construction must not be read out of bounds (Params
    // forbids zero blocks only at construction): the probe compares the slice with the
    // shape every time and panics on a mismatch.
    let storage = Shrinking {
        blocks: vec![Block::ZERO; 64],
        calls: std::cell::Cell::new(0),
    };
    let f = BloomFilter::from_storage(storage, 8).unwrap();
    for key in 0..1000u64 {
        f.contains(&key);
    }
}
