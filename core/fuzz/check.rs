//! What the fuzz targets check, for one input. Shared with `core/tests/fuzz_corpus.rs`,
//! which replays the committed seeds and every crash input ever found (kept in
//! `fuzz/regressions/`) in the normal test suite.
//!
//! For every decoder: refusing is fine, panicking is not; an accepted input must
//! re-encode to the same bytes (a quotient filter of the emptier-block scheme to the
//! same bytes under the current scheme), and the filter must work: every key inserted
//! into a copy is found (no false negatives), and the monitoring numbers are in range.

use linebloom::{
    Block, Blocks, BloomFilter, ClassicBloomFilter, CountingBloomFilter, Filter, IntFold,
    KeyHasher, ScalableBloomFilter, VectorQuotientFilter, Xxh3,
};

/// Keys inserted into a copy of every accepted filter.
const PROBE_KEYS: [u64; 4] = [0, 1, 0xdead_beef, u64::MAX];

/// The checks of one decoded filter, for a type with `from_bytes_with_hasher`, `to_bytes`
/// and the family's `fill_ratio`, `estimated_len` and `estimated_fpr` (`Filter`);
/// `$insert` adds a key to a copy and says whether it went in. The filter must
/// re-encode to `$reencoded` (by default the input).
macro_rules! check_decoded {
    ($ty:ty, $bytes:expr, |$g:ident, $key:ident| $insert:expr) => {
        check_decoded!($ty, $bytes, $bytes.to_vec(), |$g, $key| $insert)
    };
    ($ty:ty, $bytes:expr, $reencoded:expr, |$g:ident, $key:ident| $insert:expr) => {
        if let Ok(f) = <$ty>::from_bytes_with_hasher($bytes) {
            assert_eq!(
                f.to_bytes(),
                $reencoded,
                "{} re-encodes differently",
                stringify!($ty)
            );
            assert!((0.0..=1.0).contains(&f.fill_ratio()));
            assert!((0.0..=1.0).contains(&f.estimated_fpr()));
            assert!(f.estimated_len() >= 0.0);
            let mut $g = f.clone();
            for $key in PROBE_KEYS {
                if $insert {
                    assert!(
                        $g.contains(&$key),
                        "{}: inserted key not found",
                        stringify!($ty)
                    );
                }
            }
        }
    };
}

/// One input, as it is and resealed with a valid checksum.
pub fn decode(data: &[u8]) {
    decode_once(data);
    if data.len() >= 8 {
        let mut resealed = data.to_vec();
        reseal(&mut resealed);
        decode_once(&resealed);
    }
}

/// Writes the checksum of everything before the last 8 bytes into them.
fn reseal(bytes: &mut [u8]) {
    let body = bytes.len() - 8;
    let sum = Xxh3::default().hash_bytes(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum.to_le_bytes());
}

/// What an accepted quotient filter re-encodes to: its bytes, but a filter of the
/// emptier-block scheme (read, with the same answers) is written under the current
/// scheme, resealed.
fn quotient_reencoded(bytes: &[u8]) -> Vec<u8> {
    use linebloom::quotient::{SCHEME_ID, SCHEME_ID_EMPTIER_BLOCK};
    let mut out = bytes.to_vec();
    if out[32..40] == SCHEME_ID_EMPTIER_BLOCK.to_le_bytes() {
        out[32..40].copy_from_slice(&SCHEME_ID.to_le_bytes());
        reseal(&mut out);
    }
    out
}

fn decode_once(bytes: &[u8]) {
    check_decoded!(BloomFilter<Blocks, IntFold>, bytes, |g, k| {
        g.insert(&k);
        true
    });
    check_decoded!(BloomFilter<Blocks, Xxh3>, bytes, |g, k| {
        g.insert(&k);
        true
    });
    check_decoded!(CountingBloomFilter<Blocks, IntFold>, bytes, |g, k| {
        g.insert(&k);
        true
    });
    check_decoded!(CountingBloomFilter<Blocks, Xxh3>, bytes, |g, k| {
        g.insert(&k);
        true
    });
    check_decoded!(ClassicBloomFilter<Blocks, IntFold>, bytes, |g, k| {
        g.insert(&k);
        true
    });
    check_decoded!(ClassicBloomFilter<Blocks, Xxh3>, bytes, |g, k| {
        g.insert(&k);
        true
    });
    // A scalable filter may refuse a key (fixed mode and full, or no next layer).
    check_decoded!(ScalableBloomFilter<IntFold>, bytes, |g, k| g
        .insert(&k)
        .is_ok());
    check_decoded!(ScalableBloomFilter<Xxh3>, bytes, |g, k| g
        .insert(&k)
        .is_ok());
    // A quotient filter may be full; what it took, it gives back once per insert.
    check_decoded!(VectorQuotientFilter<Blocks, IntFold>, bytes, quotient_reencoded(bytes), |g, k| quotient_round_trip(&mut g, k));
    check_decoded!(VectorQuotientFilter<Blocks, Xxh3>, bytes, quotient_reencoded(bytes), |g, k| quotient_round_trip(&mut g, k));
    quotient_layout(bytes);
    view(bytes);
    into_storage(bytes);
}

/// An accepted quotient filter's blocks follow the layout, walked bit by bit (a naive
/// model of the block check): every `1` of the metadata sits in a bucket, before the
/// last bucket's closing `0`, and nothing is set after it.
fn quotient_layout(bytes: &[u8]) {
    let Ok(f) = VectorQuotientFilter::<Blocks, IntFold>::from_bytes_with_hasher(bytes) else {
        return;
    };
    let params = f.params();
    let buckets = params.buckets_per_block();
    // The metadata words: one bit per bucket and one per slot.
    let words = (buckets + params.slots_per_block()).div_ceil(64) as usize;
    for (i, block) in f.as_blocks().iter().enumerate() {
        let mut closed = 0;
        for bit in 0..64 * words {
            let one = (block.0[bit / 64] >> (bit % 64)) & 1 == 1;
            if closed == buckets {
                assert!(!one, "block {i}: metadata bit {bit} is a tag in no bucket");
            } else if !one {
                closed += 1;
            }
        }
        assert_eq!(
            closed, buckets,
            "block {i}: {closed} of {buckets} buckets closed"
        );
    }
}

/// Inserts `key` into a decoded quotient filter twice; if both went in, removes it once
/// (it must still be found) and inserts it back. True when the key is held.
fn quotient_round_trip<H: KeyHasher>(g: &mut VectorQuotientFilter<Blocks, H>, key: u64) -> bool {
    let len = g.len();
    if g.insert(&key).is_err() {
        assert_eq!(g.len(), len, "a refused insert changed the count");
        return false;
    }
    if g.insert(&key).is_ok() {
        g.remove(&key).expect("an inserted key is removable");
        assert!(g.contains(&key), "removing one of two copies lost the key");
    }
    true
}

/// `from_bytes_into_with_hasher` a caller's storage (here a `Vec`) accepts exactly what `from_bytes_with_hasher` accepts,
/// and gives the same filter.
fn into_storage(bytes: &[u8]) {
    let decoded = BloomFilter::<Blocks, IntFold>::from_bytes_with_hasher(bytes);
    let blocks = decoded.as_ref().map_or(1, |f| f.params().blocks());
    let into = BloomFilter::<Vec<Block>, IntFold>::from_bytes_into_with_hasher(
        bytes,
        vec![Block::ZERO; blocks],
    );
    assert_eq!(
        into.is_ok(),
        decoded.is_ok(),
        "from_bytes_into and from_bytes disagree"
    );
    if let (Ok(a), Ok(b)) = (into, decoded) {
        assert_eq!(a, b);
    }
}

/// `view` (of each block kind) on a 64-byte aligned copy answers exactly as `decode`
/// does.
fn view(bytes: &[u8]) {
    // `view` exists only on little-endian targets.
    #[cfg(target_endian = "big")]
    let _ = bytes;
    #[cfg(target_endian = "little")]
    {
        use linebloom::block::{blocks_as_bytes, blocks_as_bytes_mut};
        let mut aligned = vec![Block::ZERO; bytes.len().div_ceil(64)];
        blocks_as_bytes_mut(&mut aligned)[..bytes.len()].copy_from_slice(bytes);
        let copy = &blocks_as_bytes(&aligned)[..bytes.len()];
        let viewed = BloomFilter::<&[Block], IntFold>::view(copy);
        let decoded = BloomFilter::<Blocks, IntFold>::from_bytes_with_hasher(bytes);
        assert_eq!(viewed.is_ok(), decoded.is_ok(), "view and decode disagree");
        if let (Ok(v), Ok(d)) = (viewed, decoded) {
            assert_eq!(v, d);
            for key in PROBE_KEYS {
                assert_eq!(v.contains(&key), d.contains(&key));
            }
        }
        let viewed = CountingBloomFilter::<&[Block], IntFold>::view(copy);
        let decoded = CountingBloomFilter::<Blocks, IntFold>::from_bytes_with_hasher(bytes);
        assert_eq!(
            viewed.is_ok(),
            decoded.is_ok(),
            "counting view and decode disagree"
        );
        if let (Ok(v), Ok(d)) = (viewed, decoded) {
            assert_eq!(v.as_blocks(), d.as_blocks());
            for key in PROBE_KEYS {
                assert_eq!(v.count_estimate(&key), d.count_estimate(&key));
            }
        }
        let viewed = VectorQuotientFilter::<&[Block], IntFold>::view(copy);
        let decoded = VectorQuotientFilter::<Blocks, IntFold>::from_bytes_with_hasher(bytes);
        assert_eq!(
            viewed.is_ok(),
            decoded.is_ok(),
            "quotient view and decode disagree"
        );
        if let (Ok(v), Ok(d)) = (viewed, decoded) {
            assert_eq!((v.as_blocks(), v.len()), (d.as_blocks(), d.len()));
            for key in PROBE_KEYS {
                assert_eq!(v.contains(&key), d.contains(&key));
            }
        }
        let viewed = ClassicBloomFilter::<&[Block], IntFold>::view(copy);
        let decoded = ClassicBloomFilter::<Blocks, IntFold>::from_bytes_with_hasher(bytes);
        assert_eq!(
            viewed.is_ok(),
            decoded.is_ok(),
            "classic view and decode disagree"
        );
        if let (Ok(v), Ok(d)) = (viewed, decoded) {
            assert_eq!(v.as_blocks(), d.as_blocks());
            for key in PROBE_KEYS {
                assert_eq!(v.contains(&key), d.contains(&key));
            }
        }
    }
}

/// JSON text into `BloomFilter`: accepted filters serialize back to JSON that decodes
/// to the same filter, and re-encode to bytes that decode alike.
pub fn serde_json(data: &[u8]) {
    let Ok(text) = core::str::from_utf8(data) else {
        return;
    };
    if let Ok(f) = serde_json::from_str::<BloomFilter>(text) {
        let again: BloomFilter = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(again, f);
        assert_eq!(BloomFilter::from_bytes(&f.to_bytes()).unwrap(), f);
    }
    if let Ok(f) = serde_json::from_str::<BloomFilter<Blocks, Xxh3>>(text) {
        let bytes = f.to_bytes();
        assert_eq!(
            BloomFilter::<Blocks, Xxh3>::from_bytes_with_hasher(&bytes).unwrap(),
            f
        );
    }
}
