//! The binary format: versioned, little-endian, checksummed (specified in `core/FORMAT.md`).
//!
//! Decoding takes untrusted bytes. It never panics, allocates only after the length has
//! been checked against the header (so at most the input's size), and reports each
//! defect with its own [`DecodeError`] variant.
//!
//! On little-endian targets [`BloomFilter::view`] reads a filter in place from 64-byte
//! aligned bytes (a memory map, a `static` blob) without copying or allocating.

use crate::block::Block;
use crate::bloom::BloomFilter;
use crate::hasher::StableHasher;
use crate::params::{Params, ParamsError};

/// `b"LBLM"`.
pub const MAGIC: [u8; 4] = *b"LBLM";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 1;
/// Bytes before the payload (a whole block, so the payload stays 64-byte aligned).
pub const HEADER_LEN: usize = 64;
/// Bytes of the trailing checksum.
pub const CHECKSUM_LEN: usize = 8;
/// Filter-kind tag of [`BloomFilter`].
pub const KIND_BLOOM: u16 = 1;

/// Why bytes could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DecodeError {
    /// Fewer bytes than the header, or than the header says the filter needs.
    Truncated {
        /// Bytes needed.
        needed: u64,
        /// Bytes given.
        got: u64,
    },
    /// The first four bytes are not `LBLM`.
    BadMagic([u8; 4]),
    /// A format version this crate does not read.
    UnsupportedVersion(u16),
    /// The bytes hold another kind of filter.
    WrongKind {
        /// The kind asked for.
        expected: u16,
        /// The kind stored.
        found: u16,
    },
    /// The filter was written with another hasher.
    HasherMismatch {
        /// The hasher id asked for.
        expected: u32,
        /// The hasher id stored.
        found: u32,
    },
    /// The stored parameters are not a valid filter (k out of range, zero or too many
    /// blocks).
    InvalidParams(ParamsError),
    /// Reserved header bytes are not zero.
    ReservedNonZero,
    /// More bytes than the header says the filter has.
    TrailingBytes {
        /// Bytes expected.
        expected: u64,
        /// Bytes given.
        got: u64,
    },
    /// The checksum does not match: the bytes were corrupted.
    BadChecksum {
        /// Checksum stored in the bytes.
        stored: u64,
        /// Checksum computed over them.
        computed: u64,
    },
    /// [`BloomFilter::view`] needs the bytes to start at a 64-byte aligned address.
    Misaligned,
    /// The output buffer of `encode_into` is too small.
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
    },
}

impl core::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DecodeError::Truncated { needed, got } => {
                write!(f, "truncated: need {needed} bytes, got {got}")
            }
            DecodeError::BadMagic(m) => write!(f, "bad magic {m:02x?}, expected \"LBLM\""),
            DecodeError::UnsupportedVersion(v) => write!(
                f,
                "format version {v} is not supported (this build reads {VERSION})"
            ),
            DecodeError::WrongKind { expected, found } => {
                write!(f, "filter kind {found}, expected {expected}")
            }
            DecodeError::HasherMismatch { expected, found } => {
                write!(f, "hasher id {found}, expected {expected}")
            }
            DecodeError::InvalidParams(e) => write!(f, "invalid parameters: {e}"),
            DecodeError::ReservedNonZero => f.write_str("reserved header bytes are not zero"),
            DecodeError::TrailingBytes { expected, got } => {
                write!(f, "{got} bytes, expected {expected}")
            }
            DecodeError::BadChecksum { stored, computed } => {
                write!(
                    f,
                    "checksum mismatch: stored {stored:016x}, computed {computed:016x}"
                )
            }
            DecodeError::Misaligned => f.write_str("bytes are not 64-byte aligned"),
            DecodeError::BufferTooSmall { needed } => {
                write!(f, "output buffer too small: need {needed} bytes")
            }
        }
    }
}

impl core::error::Error for DecodeError {}

/// The header fields, as parsed and checked.
struct Header {
    params: Params,
    seed: u64,
    total_len: usize,
}

fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// Checks everything but the payload's bits; `bytes` is the whole encoding.
fn parse_header(bytes: &[u8], kind: u16, hasher_id: u32) -> Result<Header, DecodeError> {
    let got = bytes.len() as u64;
    if bytes.len() < HEADER_LEN {
        return Err(DecodeError::Truncated {
            needed: (HEADER_LEN + CHECKSUM_LEN) as u64,
            got,
        });
    }
    let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
    if magic != MAGIC {
        return Err(DecodeError::BadMagic(magic));
    }
    let version = le_u16(bytes, 4);
    if version != VERSION {
        return Err(DecodeError::UnsupportedVersion(version));
    }
    let found_kind = le_u16(bytes, 6);
    if found_kind != kind {
        return Err(DecodeError::WrongKind {
            expected: kind,
            found: found_kind,
        });
    }
    let found_hasher = le_u32(bytes, 8);
    if found_hasher != hasher_id {
        return Err(DecodeError::HasherMismatch {
            expected: hasher_id,
            found: found_hasher,
        });
    }
    if bytes[32..HEADER_LEN].iter().any(|&b| b != 0) {
        return Err(DecodeError::ReservedNonZero);
    }
    let params =
        Params::new(le_u64(bytes, 16), le_u32(bytes, 12)).map_err(DecodeError::InvalidParams)?;
    // Params caps the size at MAX_BYTES, so this cannot overflow.
    let expected = (HEADER_LEN + params.bytes() + CHECKSUM_LEN) as u64;
    if got < expected {
        return Err(DecodeError::Truncated {
            needed: expected,
            got,
        });
    }
    if got > expected {
        return Err(DecodeError::TrailingBytes { expected, got });
    }
    let body = bytes.len() - CHECKSUM_LEN;
    let stored = le_u64(bytes, body);
    let computed = checksum(&bytes[..body]);
    if stored != computed {
        return Err(DecodeError::BadChecksum { stored, computed });
    }
    Ok(Header {
        params,
        seed: le_u64(bytes, 24),
        total_len: bytes.len(),
    })
}

impl<S: AsRef<[Block]>, H: StableHasher> BloomFilter<S, H> {
    /// Length of this filter's encoding: header + 64 bytes per block + checksum.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.params().bytes() + CHECKSUM_LEN
    }

    /// Writes the encoding into `out` with no allocation; returns the bytes written.
    ///
    /// ```
    /// use linebloom::{Block, BloomFilter};
    /// let mut s = [Block::ZERO; 1];
    /// let f = BloomFilter::from_storage(&mut s[..], 8).unwrap();
    /// let mut buf = [0u8; 136];
    /// assert_eq!(f.encode_into(&mut buf), Ok(136));
    /// ```
    pub fn encode_into(&self, out: &mut [u8]) -> Result<usize, DecodeError> {
        let len = self.encoded_len();
        if out.len() < len {
            return Err(DecodeError::BufferTooSmall { needed: len });
        }
        let out = &mut out[..len];
        out[..HEADER_LEN].fill(0);
        out[0..4].copy_from_slice(&MAGIC);
        out[4..6].copy_from_slice(&VERSION.to_le_bytes());
        out[6..8].copy_from_slice(&KIND_BLOOM.to_le_bytes());
        out[8..12].copy_from_slice(&H::ID.to_le_bytes());
        out[12..16].copy_from_slice(&self.params().k().to_le_bytes());
        out[16..24].copy_from_slice(&(self.params().blocks() as u64).to_le_bytes());
        out[24..32].copy_from_slice(&self.hasher().seed().to_le_bytes());
        let payload = &mut out[HEADER_LEN..len - CHECKSUM_LEN];
        for (chunk, block) in payload.chunks_exact_mut(Block::BYTES).zip(self.as_blocks()) {
            chunk.copy_from_slice(&block.to_le_bytes());
        }
        let sum = checksum(&out[..len - CHECKSUM_LEN]);
        out[len - CHECKSUM_LEN..].copy_from_slice(&sum.to_le_bytes());
        Ok(len)
    }

    /// The encoding as a new vector.
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params};
    /// let mut f = BloomFilter::new(Params::for_fpr(1000, 0.01).unwrap());
    /// f.insert("k");
    /// let g = BloomFilter::from_bytes(&f.to_bytes()).unwrap();
    /// assert_eq!(f, g);
    /// ```
    #[cfg(feature = "alloc")]
    pub fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        let mut out = alloc::vec![0u8; self.encoded_len()];
        let written = self
            .encode_into(&mut out)
            .expect("buffer has encoded_len bytes");
        debug_assert_eq!(written, out.len());
        out
    }
}

#[cfg(feature = "alloc")]
impl<H: StableHasher> BloomFilter<alloc::boxed::Box<[Block]>, H> {
    /// Decodes untrusted bytes. Allocates only the payload, whose size the input's own
    /// length has already justified.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let header = parse_header(bytes, KIND_BLOOM, H::ID)?;
        let payload = &bytes[HEADER_LEN..header.total_len - CHECKSUM_LEN];
        let blocks: alloc::boxed::Box<[Block]> = payload
            .chunks_exact(Block::BYTES)
            .map(|c| Block::from_le_bytes(c.try_into().expect("64-byte chunk")))
            .collect();
        let filter = BloomFilter::from_storage_with_hasher(
            blocks,
            header.params.k(),
            H::from_seed(header.seed),
        )
        .map_err(DecodeError::InvalidParams)?;
        Ok(filter)
    }
}

#[cfg(target_endian = "little")]
impl<'a, H: StableHasher> BloomFilter<&'a [Block], H> {
    /// A read-only filter that borrows its blocks straight from an encoding, with no copy
    /// and no allocation (after checking the whole encoding, checksum included).
    ///
    /// `bytes` must start at a 64-byte aligned address, so that the payload (at offset
    /// 64) is aligned too. Only on little-endian targets, where the stored words are
    /// already in native order; big-endian targets use `from_bytes`.
    ///
    /// ```
    /// use linebloom::{Block, BloomFilter, Params, block::blocks_as_bytes_mut};
    /// let mut f = BloomFilter::new(Params::new(2, 8).unwrap());
    /// f.insert("a");
    /// // Encode into 64-byte aligned memory, as a memory map would give it.
    /// let mut aligned = vec![Block::ZERO; f.encoded_len().div_ceil(64)];
    /// let bytes = blocks_as_bytes_mut(&mut aligned);
    /// let n = f.encode_into(bytes).unwrap();
    /// let view = BloomFilter::<&[Block]>::view(&bytes[..n]).unwrap();
    /// assert!(view.contains("a"));
    /// ```
    pub fn view(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        if !(bytes.as_ptr() as usize).is_multiple_of(core::mem::align_of::<Block>()) {
            return Err(DecodeError::Misaligned);
        }
        let header = parse_header(bytes, KIND_BLOOM, H::ID)?;
        let payload = &bytes[HEADER_LEN..header.total_len - CHECKSUM_LEN];
        // SAFETY: `payload` starts 64 bytes after a 64-byte aligned address, so it is
        // aligned for `Block`; its length is `blocks × 64` (checked by `parse_header`);
        // every bit pattern is a valid `Block` (plain `[u64; 8]`); on a little-endian
        // target the stored little-endian words are the native words; and the slice
        // borrows `bytes` for `'a`, so it cannot outlive or alias a mutable borrow.
        let blocks = unsafe {
            core::slice::from_raw_parts(payload.as_ptr() as *const Block, header.params.blocks())
        };
        BloomFilter::from_storage_with_hasher(blocks, header.params.k(), H::from_seed(header.seed))
            .map_err(DecodeError::InvalidParams)
    }
}

#[cfg(all(feature = "serde", feature = "alloc"))]
mod serde_impls {
    use super::*;
    use alloc::boxed::Box;

    impl<S: AsRef<[Block]>, H: StableHasher> serde::Serialize for BloomFilter<S, H> {
        /// Serialized as the checksummed binary format, as one byte string.
        fn serialize<Ser: serde::Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
            s.serialize_bytes(&self.to_bytes())
        }
    }

    struct BytesVisitor<H>(core::marker::PhantomData<H>);

    impl<H: StableHasher> serde::de::Visitor<'_> for BytesVisitor<H> {
        type Value = BloomFilter<Box<[Block]>, H>;
        fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.write_str("a linebloom filter encoding")
        }
        fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
            BloomFilter::from_bytes(v).map_err(E::custom)
        }
    }

    impl<'de, H: StableHasher> serde::Deserialize<'de> for BloomFilter<Box<[Block]>, H> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_bytes(BytesVisitor(core::marker::PhantomData))
        }
    }
}
