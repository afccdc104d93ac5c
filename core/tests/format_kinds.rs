//! Each kind's encoding beyond the Bloom header: serde through the checked format, the
//! classic, scalable and quotient filters' own consistency checks and schemes, decoding
//! into a caller's storage at any alignment, and the quotient filter's block checks.

mod common;

use common::reseal;
use linebloom::format::HEADER_LEN;
use linebloom::*;

#[cfg(feature = "serde")]
#[test]
fn serde_round_trip_goes_through_the_checked_format() {
    let mut f = BloomFilter::new(Params::new(3, 7).unwrap());
    f.extend(0..100u32);
    let json = serde_json::to_string(&f).unwrap();
    let back: BloomFilter = serde_json::from_str(&json).unwrap();
    assert_eq!(back, f);
    // A corrupted payload is refused with the format's own error.
    let mut bytes: Vec<u8> = serde_json::from_str(&json).unwrap();
    bytes[HEADER_LEN + 1] ^= 1;
    let err =
        serde_json::from_str::<BloomFilter>(&serde_json::to_string(&bytes).unwrap()).unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
}

/// Every kind with a format serializes as its bytes and comes back equal, whatever the
/// serde format (JSON sends the bytes as a sequence, bincode-like formats as a string);
/// a kind's bytes do not deserialize as another kind.
#[cfg(feature = "serde")]
#[test]
fn serde_round_trips_every_kind_with_a_format() {
    use linebloom::{ClassicBloomFilter, ClassicParams, CountingBloomFilter, ScalableBloomFilter};
    fn round_trip<F>(f: &F) -> String
    where
        F: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let json = serde_json::to_string(f).unwrap();
        assert_eq!(&serde_json::from_str::<F>(&json).unwrap(), f);
        json
    }
    let mut bloom = BloomFilter::new(Params::new(3, 7).unwrap());
    bloom.extend(0..100u32);
    let mut counting = CountingBloomFilter::new(CountingParams::new(3, 5).unwrap());
    counting.extend(0..100u32);
    let mut classic = ClassicBloomFilter::new(ClassicParams::new(700, 4).unwrap());
    classic.extend(0..100u32);
    let mut scalable = ScalableBloomFilter::for_fpr(10, 0.01).unwrap();
    scalable.extend(0..100u32);
    assert!(scalable.layers() > 1);
    let mut quotient = linebloom::VectorQuotientFilter::for_fpr(100, 0.01).unwrap();
    for k in 0..100u32 {
        quotient.insert(&k).unwrap();
    }
    let jsons = [
        round_trip(&bloom),
        round_trip(&counting),
        round_trip(&classic),
        round_trip(&scalable),
        round_trip(&quotient),
    ];
    let err = serde_json::from_str::<linebloom::VectorQuotientFilter>(&jsons[1]).unwrap_err();
    assert!(err.to_string().contains("VectorQuotientFilter"), "{err}");
    let err = serde_json::from_str::<CountingBloomFilter>(&jsons[0]).unwrap_err();
    assert!(err.to_string().contains("CountingBloomFilter"), "{err}");
    let err = serde_json::from_str::<BloomFilter>(&jsons[3]).unwrap_err();
    assert!(err.to_string().contains("ScalableBloomFilter"), "{err}");
}

#[test]
fn classic_padding_must_be_zero() {
    // A classic filter of m = 700 bits fills 2 blocks; bits 700..1024 are padding,
    // which FORMAT.md says is zero. A set padding bit is refused (accepted, it would
    // give a fill_ratio above 1 and a filter unequal to the canonical one).
    use linebloom::{ClassicBloomFilter, ClassicParams};
    let f = ClassicBloomFilter::new(ClassicParams::new(700, 4).unwrap());
    let clean = f.to_bytes();
    let set_bit = |bit: usize| {
        let mut b = clean.clone();
        b[HEADER_LEN + bit / 8] |= 1 << (bit % 8);
        reseal(&mut b);
        ClassicBloomFilter::<_, linebloom::IntFold>::from_bytes(&b)
    };
    for bit in [700, 703, 704, 1023] {
        assert_eq!(
            set_bit(bit).err(),
            Some(DecodeError::PaddingNonZero),
            "bit {bit}"
        );
    }
    // The last real bit is data, not padding.
    let last = set_bit(699).expect("bit 699 is inside m");
    assert!(last.fill_ratio() > 0.0 && last.fill_ratio() <= 1.0);
}

#[test]
fn scalable_counts_must_match_its_layers() {
    // A len of 2^64 − 1 would overflow on the next insert, so the decoder takes only
    // the len inserts can make. Inserts fill each layer to its capacity
    // before the next starts, so len = full layers' capacities + newest_len exactly.
    use linebloom::ScalableBloomFilter;
    let mut f = ScalableBloomFilter::for_fpr(100, 0.01).unwrap();
    for i in 0..450u64 {
        f.insert(&i).unwrap();
    }
    assert!(f.layers() > 1, "the test needs full layers");
    let good = f.to_bytes();
    let decode = |b: &[u8]| ScalableBloomFilter::<linebloom::IntFold>::from_bytes(b);
    assert_eq!(decode(&good).unwrap(), f);
    let (len, newest) = (f.len(), f.newest_len());
    for (new_len, new_newest) in [
        (u64::MAX, newest),
        (len + 1, newest),
        (len - 1, newest),
        (len, newest + 1),
        (len - newest + 10_000, 10_000),
    ] {
        let mut b = good.clone();
        b[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&new_len.to_le_bytes());
        b[HEADER_LEN + 8..HEADER_LEN + 16].copy_from_slice(&new_newest.to_le_bytes());
        reseal(&mut b);
        assert_eq!(
            decode(&b).err(),
            Some(DecodeError::Inconsistent),
            "len {new_len}, newest {new_newest}"
        );
    }
}

#[test]
fn classic_filters_with_the_old_probe_scheme_are_refused() {
    // Probe scheme 0 of the classic filter (enhanced double hashing, bytes 40..48
    // zero) is not scheme 1 (one mixed value per probe): its bytes, decoded, would
    // answer with false negatives, so they are refused by name.
    use linebloom::{ClassicBloomFilter, ClassicParams};
    let mut f = ClassicBloomFilter::new(ClassicParams::new(700, 4).unwrap());
    f.insert("a");
    let mut b = f.to_bytes();
    assert_eq!(b[40..48], 1u64.to_le_bytes(), "scheme 1 is written");
    for scheme in [0u64, 2, u64::MAX] {
        b[40..48].copy_from_slice(&scheme.to_le_bytes());
        reseal(&mut b);
        let err = ClassicBloomFilter::<_, linebloom::IntFold>::from_bytes(&b).unwrap_err();
        assert_eq!(err, DecodeError::UnsupportedProbeScheme(scheme));
        assert!(err.to_string().contains("rebuild"), "{err}");
    }
}

#[test]
fn quotient_filters_with_another_location_scheme_are_refused() {
    // Under scheme 0 (bytes 32..40 zero) the bucket and tag came from fmix64(h); the
    // same blocks answer differently under it, so it and every unknown scheme are
    // refused by name: first the bytes a scheme-0 build committed, then edited headers.
    use linebloom::VectorQuotientFilter;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let old = std::fs::read(dir.join("quotient-scheme0.lbf")).unwrap();
    assert_eq!(
        VectorQuotientFilter::from_bytes(&old).unwrap_err(),
        DecodeError::UnsupportedQuotientScheme(0)
    );
    let mut f = VectorQuotientFilter::for_fpr(100, 0.01).unwrap();
    f.insert("a").unwrap();
    let mut b = f.to_bytes();
    assert_eq!(b[32..40], 3u64.to_le_bytes(), "scheme 3 is written");
    assert_eq!(linebloom::quotient::SCHEME_ID, 3);
    for scheme in [0u64, 1, 4, u64::MAX] {
        b[32..40].copy_from_slice(&scheme.to_le_bytes());
        reseal(&mut b);
        let err = VectorQuotientFilter::<_, linebloom::IntFold>::from_bytes(&b).unwrap_err();
        assert_eq!(err, DecodeError::UnsupportedQuotientScheme(scheme));
        assert!(err.to_string().contains("rebuild"), "{err}");
        // `view` borrows the blocks in place, which only a little-endian target can;
        // it refuses the scheme as the copying decoders do.
        #[cfg(target_endian = "little")]
        {
            let aligned = common::aligned_copy(&b);
            let bytes = &linebloom::block::blocks_as_bytes(&aligned)[..b.len()];
            assert_eq!(
                VectorQuotientFilter::<&[Block]>::view(bytes).unwrap_err(),
                DecodeError::UnsupportedQuotientScheme(scheme)
            );
        }
    }
    // The words after the scheme are reserved.
    b[32..40].copy_from_slice(&3u64.to_le_bytes());
    b[48..56].copy_from_slice(&1u64.to_le_bytes());
    reseal(&mut b);
    assert_eq!(
        VectorQuotientFilter::<_, linebloom::IntFold>::from_bytes(&b).unwrap_err(),
        DecodeError::ReservedNonZero
    );
}

#[test]
fn quotient_filters_of_the_emptier_block_scheme_are_read() {
    // Scheme 2 put every key in the emptier of its two blocks; scheme 3 only changes
    // which block an insert picks, so scheme-2 bytes (committed by a scheme-2 build:
    // the `quotient` fixture of tests/golden.rs) answer as they did, and are written
    // back as scheme 3 with the same blocks.
    use linebloom::VectorQuotientFilter;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let old = std::fs::read(path.join("quotient-scheme2.lbf")).unwrap();
    assert_eq!(old[32..40], 2u64.to_le_bytes());
    let mut f = VectorQuotientFilter::from_bytes(&old).unwrap();
    let members = (0..700u64)
        .filter(|i| !i.is_multiple_of(5))
        .map(|i| i * 7919);
    assert!(members.clone().all(|k| f.contains(&k)));
    assert_eq!(f.len(), members.clone().count() as u64);
    let written = f.to_bytes();
    assert_eq!(written[32..40], 3u64.to_le_bytes());
    assert_eq!(written[64..written.len() - 8], old[64..old.len() - 8]);
    #[cfg(target_endian = "little")]
    {
        let aligned = common::aligned_copy(&old);
        let bytes = &linebloom::block::blocks_as_bytes(&aligned)[..old.len()];
        let view = VectorQuotientFilter::<&[Block]>::view(bytes).unwrap();
        assert!(members.clone().all(|k| view.contains(&k)));
    }
    // It goes on under scheme 3: removals and new inserts keep every member.
    for k in members.clone().step_by(2) {
        f.remove(&k).unwrap();
    }
    for k in 1_000_000..1_000_300u64 {
        f.insert(&k).unwrap();
    }
    assert!(members.skip(1).step_by(2).all(|k| f.contains(&k)));
    assert!((1_000_000..1_000_300u64).all(|k| f.contains(&k)));
}

#[test]
fn every_scalable_filter_the_library_builds_decodes() {
    // Growth 1.0 makes many layers (options (1, 0.5, 1.0, 0.9) and 200 inserts give
    // 187). The builder stops at MAX_LAYERS and the decoder accepts up to MAX_LAYERS,
    // so a filter grown until it cannot grow any more still round-trips.
    use linebloom::scalable::MAX_LAYERS;
    use linebloom::{IntFold, ScalableBloomFilter, ScalableError, ScalableOptions};
    for tightening in [0.9, 0.99] {
        let options = ScalableOptions::new(1, 0.5)
            .with_growth(1.0)
            .with_tightening(tightening);
        let mut f = ScalableBloomFilter::with_hasher(options, IntFold::default()).unwrap();
        let mut key = 0u64;
        let stopped = loop {
            match f.insert(&key) {
                Ok(_) => key += 1,
                Err(e) => break e,
            }
        };
        assert!(
            f.layers() > 128 && f.layers() <= MAX_LAYERS,
            "{}",
            f.layers()
        );
        assert!(
            matches!(
                stopped,
                ScalableError::LayerLimit
                    | ScalableError::Layer(ParamsError::FprBelowHashFloor { .. })
            ),
            "{stopped:?}"
        );
        let copy = ScalableBloomFilter::<IntFold>::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(copy, f);
        assert!((0..key).all(|k| copy.contains(&k)));
    }
}

#[test]
fn from_bytes_needs_no_type_annotation() {
    // `BloomFilter::from_bytes(&b)` infers its hasher without a typed variable (no
    // E0283): each kind's default type has its own `from_bytes`, and
    // `from_bytes_with_hasher` names any other hasher. This test is the compile check.
    use linebloom::{
        Blocks, ClassicBloomFilter, ClassicParams, CountingBloomFilter, ScalableBloomFilter,
    };
    let mut f = BloomFilter::new(Params::new(4, 8).unwrap());
    f.insert(&1u64);
    assert!(
        BloomFilter::from_bytes(&f.to_bytes())
            .unwrap()
            .contains(&1u64)
    );
    let c = CountingBloomFilter::new(CountingParams::new(4, 8).unwrap());
    assert_eq!(
        CountingBloomFilter::from_bytes(&c.to_bytes())
            .unwrap()
            .estimated_len(),
        0.0
    );
    let k = ClassicBloomFilter::new(ClassicParams::new(100, 3).unwrap());
    assert_eq!(
        ClassicBloomFilter::from_bytes(&k.to_bytes())
            .unwrap()
            .fill_ratio(),
        0.0
    );
    let s = ScalableBloomFilter::for_fpr(10, 0.01).unwrap();
    assert_eq!(
        ScalableBloomFilter::from_bytes(&s.to_bytes())
            .unwrap()
            .layers(),
        1
    );
    // Another hasher: named on `from_bytes_with_hasher`; `from_bytes` refuses it by name.
    let x = BloomFilter::with_hasher(Params::new(4, 8).unwrap(), Xxh3::default());
    assert!(BloomFilter::<Blocks, Xxh3>::from_bytes_with_hasher(&x.to_bytes()).is_ok());
    let err = BloomFilter::from_bytes(&x.to_bytes()).unwrap_err();
    assert!(matches!(err, DecodeError::HasherMismatch { .. }), "{err}");
}

#[test]
fn absurd_scalable_options_are_refused_at_once() {
    // A 184-byte scalable encoding claiming an initial capacity near 2^62 must be
    // refused in bounded time (a sizing search over ~10^6 binomial terms would take
    // 0.2-0.8 s): sizing answers in microseconds, refusing such options by the hash
    // floor, by size, or by a capacity no filter could hold. The time bound turns a slow path into a failure instead of a
    // stall; it is 1000x the measured cost.
    use linebloom::ScalableBloomFilter;
    let mut f = ScalableBloomFilter::for_fpr(10, 0.01).unwrap();
    f.insert(&1u64).unwrap();
    let good = f.to_bytes();
    let start = std::time::Instant::now();
    for (capacity, fpr) in [
        (1u64 << 62, 0.01f64),
        (1 << 62, 0.9),
        (u64::MAX, 0.5),
        (1 << 45, 0.9),
    ] {
        let mut b = good.clone();
        b[32..40].copy_from_slice(&capacity.to_le_bytes());
        b[40..48].copy_from_slice(&fpr.to_bits().to_le_bytes());
        reseal(&mut b);
        let err = ScalableBloomFilter::<linebloom::IntFold>::from_bytes(&b).unwrap_err();
        assert!(
            matches!(
                err,
                DecodeError::InvalidParams(
                    ParamsError::FprBelowHashFloor { .. }
                        | ParamsError::TooLarge { .. }
                        | ParamsError::CapacityTooLarge { .. }
                )
            ),
            "{capacity} {fpr}: {err:?}"
        );
    }
    assert!(
        start.elapsed() < std::time::Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn decode_into_a_callers_storage_at_any_alignment() {
    // Decoding without an allocator, from unaligned bytes and on big-endian
    // targets (this test runs on s390x in CI), for every block kind.
    use linebloom::{ClassicBloomFilter, ClassicParams, CountingBloomFilter};
    let mut bloom = BloomFilter::new(Params::new(3, 7).unwrap());
    let mut counting = CountingBloomFilter::new(CountingParams::new(3, 5).unwrap());
    let mut classic = ClassicBloomFilter::new(ClassicParams::new(1000, 4).unwrap());
    for k in 0..200u64 {
        bloom.insert(&k);
        counting.insert(&k);
        classic.insert(&k);
    }
    for offset in [0, 1, 7] {
        let shifted = |bytes: Vec<u8>| {
            let mut v = vec![0u8; offset];
            v.extend(bytes);
            v
        };
        let b = shifted(bloom.to_bytes());
        let mut storage = [Block::ZERO; 3];
        let got = BloomFilter::from_bytes_into(&b[offset..], &mut storage[..]).unwrap();
        assert_eq!(got, bloom);
        let c = shifted(counting.to_bytes());
        let mut storage = [Block::ZERO; 3];
        let got = CountingBloomFilter::from_bytes_into(&c[offset..], &mut storage[..]).unwrap();
        assert_eq!(got, counting);
        let k = shifted(classic.to_bytes());
        let mut storage = [Block::ZERO; 2];
        let got = ClassicBloomFilter::from_bytes_into(&k[offset..], &mut storage[..]).unwrap();
        assert_eq!(got, classic);
    }
    // Storage of the wrong length is refused, and nothing is written to it.
    let mut short = [Block::ZERO; 2];
    let err = BloomFilter::from_bytes_into(&bloom.to_bytes(), &mut short[..]).unwrap_err();
    assert_eq!(
        err,
        DecodeError::InvalidParams(ParamsError::StorageLength {
            expected: 3,
            got: 2
        })
    );
    assert_eq!(short, [Block::ZERO; 2]);
    // Corrupt bytes are refused before the storage is touched.
    let mut bad = bloom.to_bytes();
    bad[HEADER_LEN] ^= 1;
    let mut storage = [Block::ZERO; 3];
    assert!(matches!(
        BloomFilter::from_bytes_into(&bad, &mut storage[..]),
        Err(DecodeError::BadChecksum { .. })
    ));
    assert_eq!(storage, [Block::ZERO; 3]);
}

/// The vector quotient filter's encoding (kind 5): it round-trips through every decoder,
/// and a block it could not have written is refused by index even under a valid
/// checksum, before the caller's storage is touched.
#[test]
fn quotient_blocks_are_checked_after_the_checksum() {
    use linebloom::{QuotientParams, VectorQuotientFilter};
    let mut f = VectorQuotientFilter::new(QuotientParams::new(4, 8).unwrap());
    for k in 0..100u64 {
        f.insert(&k).unwrap();
    }
    let bytes = f.to_bytes();
    let back = VectorQuotientFilter::from_bytes(&bytes).unwrap();
    assert_eq!(back, f);
    assert_eq!(back.len(), 100);
    let mut storage = [Block::ZERO; 4];
    let into = VectorQuotientFilter::from_bytes_into(&bytes, &mut storage[..]).unwrap();
    assert_eq!(into.len(), 100);
    // Another kind's bytes are refused by name.
    assert!(matches!(
        VectorQuotientFilter::from_bytes(&BloomFilter::new(Params::new(3, 7).unwrap()).to_bytes()),
        Err(DecodeError::WrongKind {
            expected: 5,
            found: 1
        })
    ));
    // Tag bits 12 and an odd block count are refused as parameters.
    for (at, value) in [(12, 12u8), (16, 3)] {
        let mut bad = bytes.clone();
        bad[at] = value;
        reseal(&mut bad);
        assert!(matches!(
            VectorQuotientFilter::from_bytes(&bad),
            Err(DecodeError::InvalidParams(_))
        ));
    }
    // A tag in block 3's last slot, beyond its load: malformed, checksum resealed.
    let mut bad = bytes.clone();
    bad[HEADER_LEN + 3 * 64 + 63] = 0x5a;
    reseal(&mut bad);
    let malformed = DecodeError::InvalidParams(ParamsError::MalformedBlock { index: 3 });
    assert_eq!(
        VectorQuotientFilter::from_bytes(&bad).unwrap_err(),
        malformed
    );
    let mut storage = [Block::ZERO; 4];
    assert_eq!(
        VectorQuotientFilter::from_bytes_into(&bad, &mut storage[..]).unwrap_err(),
        malformed
    );
    assert_eq!(storage, [Block::ZERO; 4], "the storage was not written");
    // A metadata bit after the last bucket's closing zero (metadata bit 80 of block 1,
    // an 8-bit block holding no other tag) is a tag in no bucket: malformed for the
    // decoder, `from_storage` and `view` alike.
    let mut stray = bytes.clone();
    stray[HEADER_LEN + 64..HEADER_LEN + 128].fill(0);
    stray[HEADER_LEN + 64 + 8 + 2] = 1; // byte 10 of the block: metadata bit 80
    reseal(&mut stray);
    let malformed = DecodeError::InvalidParams(ParamsError::MalformedBlock { index: 1 });
    assert_eq!(
        VectorQuotientFilter::from_bytes(&stray).unwrap_err(),
        malformed
    );
    #[cfg(target_endian = "little")]
    {
        let aligned = common::aligned_copy(&stray);
        let view = &linebloom::block::blocks_as_bytes(&aligned)[..stray.len()];
        assert_eq!(
            VectorQuotientFilter::<&[Block]>::view(view).unwrap_err(),
            malformed
        );
    }
    // A corrupted scheme word is caught by the checksum first, as every header byte is.
    let mut corrupted = bytes.clone();
    corrupted[33] ^= 0x10;
    assert!(matches!(
        VectorQuotientFilter::from_bytes(&corrupted),
        Err(DecodeError::BadChecksum { .. })
    ));
    let mut blocks = vec![Block::ZERO; 2];
    blocks[0].0[0] = !0u64 << 36; // 16-bit: 36 empty buckets, then 28 tags in none
    assert_eq!(
        VectorQuotientFilter::from_storage(blocks, 16).unwrap_err(),
        ParamsError::MalformedBlock { index: 0 }
    );
    // Every single-byte mutation of the payload is refused (checksum) or, resealed,
    // either refused as malformed or decoded into a filter whose blocks are well formed.
    for at in HEADER_LEN..HEADER_LEN + 4 * 64 {
        let mut edited = bytes.clone();
        edited[at] ^= 0x81;
        assert!(VectorQuotientFilter::from_bytes(&edited).is_err());
        reseal(&mut edited);
        if let Ok(g) = VectorQuotientFilter::from_bytes(&edited) {
            let copy = g.as_blocks().to_vec();
            assert!(VectorQuotientFilter::from_storage(copy, 8).is_ok());
        }
    }
}
