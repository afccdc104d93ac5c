//! Decoding untrusted bytes: one test per error variant, every-byte mutation, every
//! truncation, and random garbage — never a panic, always the right error.

mod common;

use common::{STATIC_BLOCKS, reseal};

use linebloom::format::{HEADER_LEN, VERSION};
use linebloom::*;
use proptest::prelude::*;

fn sample() -> Vec<u8> {
    let mut f = BloomFilter::new(Params::new(3, 7).unwrap());
    f.extend(0..50u32);
    f.to_bytes()
}

fn decode(bytes: &[u8]) -> Result<BloomFilter, DecodeError> {
    BloomFilter::from_bytes(bytes)
}

#[test]
fn valid_bytes_decode() {
    let bytes = sample();
    assert_eq!(decode(&bytes).unwrap().to_bytes(), bytes);
}

#[test]
fn truncated() {
    let bytes = sample();
    assert_eq!(
        decode(&bytes[..10]).unwrap_err(),
        DecodeError::Truncated {
            needed: 72,
            got: 10
        }
    );
    let cut = bytes.len() - 1;
    assert_eq!(
        decode(&bytes[..cut]).unwrap_err(),
        DecodeError::Truncated {
            needed: bytes.len() as u64,
            got: cut as u64
        }
    );
}

#[test]
fn bad_magic() {
    let mut bytes = sample();
    bytes[0] = b'X';
    assert_eq!(decode(&bytes).unwrap_err(), DecodeError::BadMagic(*b"XBLM"));
}

#[test]
fn unsupported_version() {
    let mut bytes = sample();
    bytes[4..6].copy_from_slice(&(VERSION + 1).to_le_bytes());
    assert_eq!(
        decode(&bytes).unwrap_err(),
        DecodeError::UnsupportedVersion(VERSION + 1)
    );
}

#[test]
fn wrong_kind() {
    let mut bytes = sample();
    bytes[6] = 9;
    assert_eq!(
        decode(&bytes).unwrap_err(),
        DecodeError::WrongKind {
            expected: 1,
            found: 9
        }
    );
}

#[test]
fn hasher_mismatch() {
    // `StableHasher` is sealed (its compile_fail doc test shows a forged id refused), so
    // the only ids a decoder meets are the built-in ones, and bytes with any other.
    let xxh3 = BloomFilter::with_hasher(Params::new(2, 4).unwrap(), linebloom::Xxh3::default());
    let err = decode(&xxh3.to_bytes()).unwrap_err();
    assert_eq!(
        err,
        DecodeError::HasherMismatch {
            expected: 2,
            found: 1
        }
    );
    // Between the two built-in hashers the message names both types.
    let msg = err.to_string();
    assert!(msg.contains("Xxh3") && msg.contains("IntFold"), "{msg}");
    // An id no hasher has is refused by both.
    let mut unknown = xxh3.to_bytes();
    unknown[8..12].copy_from_slice(&77u32.to_le_bytes());
    reseal(&mut unknown);
    for err in [
        decode(&unknown).unwrap_err(),
        BloomFilter::<_, linebloom::Xxh3>::from_bytes_with_hasher(&unknown).unwrap_err(),
    ] {
        assert!(
            matches!(err, DecodeError::HasherMismatch { found: 77, .. }),
            "{err:?}"
        );
    }
    // And the right hasher type reads it back.
    assert!(BloomFilter::<_, linebloom::Xxh3>::from_bytes_with_hasher(&xxh3.to_bytes()).is_ok());
}

#[test]
fn version_one_is_refused_by_name() {
    // A version-1 encoding (the fmix64 pattern) cannot answer identically under the
    // version-2 scheme, so it is refused, and the message says what to do.
    let mut bytes = BloomFilter::new(Params::new(2, 4).unwrap()).to_bytes();
    bytes[4..6].copy_from_slice(&1u16.to_le_bytes());
    reseal(&mut bytes);
    let err = decode(&bytes).unwrap_err();
    assert_eq!(err, DecodeError::UnsupportedVersion(1));
    let msg = err.to_string();
    assert!(
        msg.contains("version 1") && msg.contains("rebuild"),
        "{msg}"
    );
}

#[test]
fn invalid_params() {
    let mut bytes = sample();
    bytes[12..16].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(
        decode(&bytes).unwrap_err(),
        DecodeError::InvalidParams(ParamsError::InvalidK(0))
    );
    let mut bytes = sample();
    bytes[16..24].copy_from_slice(&0u64.to_le_bytes());
    assert_eq!(
        decode(&bytes).unwrap_err(),
        DecodeError::InvalidParams(ParamsError::ZeroBlocks)
    );
    let mut bytes = sample();
    bytes[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        decode(&bytes).unwrap_err(),
        DecodeError::InvalidParams(ParamsError::TooLarge { .. })
    ));
}

#[test]
fn huge_claimed_size_is_refused_without_allocating() {
    // The header claims 2^30 blocks (64 GiB), or the most a 32-bit target allows (2 GiB),
    // but the input is tiny: the length check fails before any allocation.
    let mut bytes = sample();
    let claimed = (1u64 << 30).min(linebloom::params::MAX_BLOCKS);
    bytes[16..24].copy_from_slice(&claimed.to_le_bytes());
    assert!(matches!(
        decode(&bytes).unwrap_err(),
        DecodeError::Truncated { .. }
    ));
}

#[test]
fn reserved_non_zero() {
    let mut bytes = sample();
    bytes[40] = 1;
    assert_eq!(decode(&bytes).unwrap_err(), DecodeError::ReservedNonZero);
}

#[test]
fn trailing_bytes() {
    let mut bytes = sample();
    let expected = bytes.len() as u64;
    bytes.push(0);
    assert_eq!(
        decode(&bytes).unwrap_err(),
        DecodeError::TrailingBytes {
            expected,
            got: expected + 1
        }
    );
}

/// The messages a user meets name the problem, in sentences.
#[test]
fn messages_name_the_problem() {
    let bytes = sample();
    let message = |b: &[u8]| decode(b).unwrap_err().to_string();
    // Junk of five bytes is not an encoding at all, not a short one.
    assert!(message(b"junk!").starts_with("not a linebloom encoding: bad magic"));
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0; 4]);
    let trailing = format!("4 trailing bytes after the {}-byte encoding", bytes.len());
    assert_eq!(message(&longer), trailing);
    let mut kind = bytes.clone();
    kind[6] = 255;
    reseal(&mut kind);
    assert_eq!(
        message(&kind),
        "the bytes hold an unknown filter kind (kind 255), not a BloomFilter (kind 1)"
    );
    let mut hasher = bytes.clone();
    hasher[8] = 255;
    reseal(&mut hasher);
    assert_eq!(
        message(&hasher),
        "the filter was written with an unknown hasher (id 255), not the IntFold hasher (id 2)"
    );
    let e = Params::for_fpr(u64::MAX, 0.01).unwrap_err();
    assert!(e.to_string().starts_with("capacity too large"), "{e}");
}

#[test]
fn bad_checksum() {
    let mut bytes = sample();
    bytes[HEADER_LEN + 5] ^= 0x10;
    assert!(matches!(
        decode(&bytes).unwrap_err(),
        DecodeError::BadChecksum { .. }
    ));
    // The same edit, resealed, decodes: the checksum was the only thing that caught it.
    reseal(&mut bytes);
    assert!(decode(&bytes).is_ok());
}

/// `view` reads the payload in place, so it exists only on little-endian targets.
#[cfg(target_endian = "little")]
#[test]
fn misaligned_view() {
    let f = BloomFilter::new(Params::new(2, 8).unwrap());
    let mut storage = vec![Block::ZERO; f.encoded_len().div_ceil(64) + 1];
    let bytes = linebloom::block::blocks_as_bytes_mut(&mut storage);
    let n = f.encode_into(&mut bytes[1..]).unwrap();
    assert_eq!(
        BloomFilter::<&[Block]>::view(&bytes[1..1 + n]).unwrap_err(),
        DecodeError::Misaligned
    );
    let n = f.encode_into(bytes).unwrap();
    assert_eq!(BloomFilter::<&[Block]>::view(&bytes[..n]).unwrap(), f);
    // The counting and classic views check alignment and the whole encoding alike.
    use linebloom::{ClassicBloomFilter, ClassicParams, CountingBloomFilter};
    let counting = CountingBloomFilter::new(CountingParams::new(2, 5).unwrap());
    let n = counting.encode_into(&mut bytes[1..]).unwrap();
    assert_eq!(
        CountingBloomFilter::<&[Block]>::view(&bytes[1..1 + n]).unwrap_err(),
        DecodeError::Misaligned
    );
    let classic = ClassicBloomFilter::new(ClassicParams::new(700, 4).unwrap());
    let n = classic.encode_into(bytes).unwrap();
    bytes[HEADER_LEN] ^= 1;
    assert!(matches!(
        ClassicBloomFilter::<&[Block]>::view(&bytes[..n]).unwrap_err(),
        DecodeError::BadChecksum { .. }
    ));
    // A Bloom encoding is not a counting filter.
    let n = f.encode_into(bytes).unwrap();
    assert!(matches!(
        CountingBloomFilter::<&[Block]>::view(&bytes[..n]).unwrap_err(),
        DecodeError::WrongKind { .. }
    ));
}

#[test]
fn buffer_too_small() {
    let f = BloomFilter::new(Params::new(2, 8).unwrap());
    let mut small = [0u8; 100];
    assert_eq!(
        f.encode_into(&mut small),
        Err(linebloom::format::EncodeError::BufferTooSmall {
            needed: 200,
            got: 100
        })
    );
}

#[test]
fn every_single_byte_mutation_is_rejected() {
    let bytes = sample();
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut m = bytes.clone();
            m[i] ^= flip;
            assert!(
                decode(&m).is_err(),
                "mutating byte {i} by {flip:#x} was accepted"
            );
        }
    }
}

#[test]
fn every_truncation_is_rejected() {
    let bytes = sample();
    for len in 0..bytes.len() {
        assert!(decode(&bytes[..len]).is_err());
    }
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = decode(&bytes);
    }

    #[test]
    fn random_header_edits_never_panic(at in 0usize..HEADER_LEN, value in any::<u8>()) {
        let mut bytes = sample();
        bytes[at] = value;
        reseal(&mut bytes);
        let _ = decode(&bytes);
    }
}

// ---- decoding ----------------------------------------------------------------------

/// (kind, a valid encoding, does this decode?)
type Encoding = (&'static str, Vec<u8>, fn(&[u8]) -> bool);

fn encodings() -> Vec<Encoding> {
    let mut c = CountingBloomFilter::new(CountingParams::new(3, 5).unwrap());
    c.extend(0..40u64);
    let mut cl = ClassicBloomFilter::new(ClassicParams::new(900, 4).unwrap());
    cl.extend(0..40u64);
    let mut s = ScalableBloomFilter::for_fpr(10, 0.05).unwrap();
    for k in 0..45u64 {
        s.insert(&k).unwrap();
    }
    let mut b = BloomFilter::new(Params::new(3, 5).unwrap());
    b.extend(0..40u64);
    let a = AtomicBloomFilter::new(Params::new(3, 5).unwrap());
    (0..40u64).for_each(|k| {
        a.insert(&k);
    });
    let sa = StaticAtomicBloomFilter::<STATIC_BLOCKS>::new(8);
    (0..40u64).for_each(|k| {
        sa.insert(&k);
    });
    let mut static_blocks = vec![Block::ZERO; STATIC_BLOCKS];
    sa.write_blocks(&mut static_blocks);
    let mut q = VectorQuotientFilter::new(QuotientParams::new(4, 8).unwrap());
    (0..40u64).for_each(|k| q.add(&k).unwrap());
    vec![
        ("bloom", b.to_bytes(), |b| {
            <BloomFilter>::from_bytes(b).is_ok()
        }),
        // The atomic kinds are stored as the Bloom format of their plain snapshot.
        ("atomic", a.to_bloom().to_bytes(), |b| {
            <BloomFilter>::from_bytes(b)
                .map(AtomicBloomFilter::from)
                .is_ok()
        }),
        (
            "static atomic",
            BloomFilter::from_storage(static_blocks, 8)
                .unwrap()
                .to_bytes(),
            |b| <BloomFilter>::from_bytes(b).is_ok_and(|f| f.as_blocks().len() == STATIC_BLOCKS),
        ),
        ("quotient", q.to_bytes(), |b| {
            <VectorQuotientFilter>::from_bytes(b).is_ok()
        }),
        ("counting", c.to_bytes(), |b| {
            <CountingBloomFilter>::from_bytes(b).is_ok()
        }),
        ("classic", cl.to_bytes(), |b| {
            <ClassicBloomFilter>::from_bytes(b).is_ok()
        }),
        ("scalable", s.to_bytes(), |b| {
            <ScalableBloomFilter>::from_bytes(b).is_ok()
        }),
    ]
}

#[test]
fn every_single_byte_mutation_is_rejected_for_every_kind() {
    for (name, bytes, decodes) in encodings() {
        assert!(decodes(&bytes), "{name}: valid bytes");
        for i in 0..bytes.len() {
            for flip in [0x01u8, 0x80] {
                let mut m = bytes.clone();
                m[i] ^= flip;
                assert!(!decodes(&m), "{name}: byte {i} ^ {flip:#x} accepted");
            }
        }
        for len in 0..bytes.len() {
            assert!(
                !decodes(&bytes[..len]),
                "{name}: truncation to {len} accepted"
            );
        }
    }
}

#[test]
fn kinds_are_not_confused() {
    let plain = BloomFilter::new(Params::new(3, 5).unwrap()).to_bytes();
    assert_eq!(
        <CountingBloomFilter>::from_bytes(&plain).unwrap_err(),
        DecodeError::WrongKind {
            expected: 2,
            found: 1
        }
    );
    assert_eq!(
        <ClassicBloomFilter>::from_bytes(&plain).unwrap_err(),
        DecodeError::WrongKind {
            expected: 4,
            found: 1
        }
    );
    assert_eq!(
        <ScalableBloomFilter>::from_bytes(&plain).unwrap_err(),
        DecodeError::WrongKind {
            expected: 3,
            found: 1
        }
    );
}

#[test]
fn classic_and_scalable_inconsistencies_have_their_own_error() {
    let cl = ClassicBloomFilter::new(ClassicParams::new(900, 4).unwrap());
    let mut bytes = cl.to_bytes();
    bytes[32..40].copy_from_slice(&5000u64.to_le_bytes()); // bits no longer match the block count
    reseal(&mut bytes);
    assert_eq!(
        <ClassicBloomFilter>::from_bytes(&bytes).unwrap_err(),
        DecodeError::Inconsistent
    );

    let mut s = ScalableBloomFilter::for_fpr(10, 0.05).unwrap();
    for k in 0..45u64 {
        s.insert(&k).unwrap();
    }
    let mut bytes = s.to_bytes();
    bytes[64 + 32 + 8] ^= 1; // first layer's k no longer what the options give
    reseal(&mut bytes);
    assert_eq!(
        <ScalableBloomFilter>::from_bytes(&bytes).unwrap_err(),
        DecodeError::Inconsistent
    );
    let mut bytes = s.to_bytes();
    bytes[40..48].copy_from_slice(&2.0f64.to_bits().to_le_bytes()); // target rate 2.0
    reseal(&mut bytes);
    assert!(matches!(
        <ScalableBloomFilter>::from_bytes(&bytes).unwrap_err(),
        DecodeError::InvalidParams(ParamsError::InvalidFpr)
    ));
}

#[test]
fn a_scalable_filter_that_cannot_grow_says_why_every_time() {
    // A filter whose next layer cannot be sized remembers the error rather than
    // rerunning the sizing search: every insert past capacity returns the same error,
    // leaves the filter unchanged, and the remembered error does not make it unequal to
    // a decoded copy.
    use linebloom::{IntFold, ParamsError, ScalableBloomFilter, ScalableError};
    let options = ScalableOptions::new(100, 0.01).with_growth(1e12);
    let mut f = ScalableBloomFilter::with_hasher(options, IntFold::default()).unwrap();
    let mut i = 0u64;
    while f.newest_len() < 100 {
        f.insert(&i).unwrap();
        i += 1;
    }
    let full = f.clone();
    for _ in 0..3 {
        let err = f.insert(&u64::MAX).unwrap_err();
        assert!(
            matches!(
                err,
                ScalableError::Layer(ParamsError::CapacityTooLarge { .. })
            ),
            "{err:?}"
        );
        assert_eq!(f, full);
    }
    assert_eq!(
        ScalableBloomFilter::<IntFold>::from_bytes(&f.to_bytes()).unwrap(),
        f
    );
}
