//! [`DecodeError`] (bytes that are not a filter this build reads) and [`EncodeError`]
//! (a buffer too short to encode into).

use super::VERSION;
use crate::params::ParamsError;

/// Why bytes could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
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
    /// The stored fields are each valid but contradict each other (a scalable filter's
    /// layer that its own options would not have produced, block counts that do not add
    /// up).
    Inconsistent,
    /// Reserved header bytes are not zero.
    ReservedNonZero,
    /// A classic filter's bits past its `m` bits (the padding of its last block) are not
    /// zero, as the format requires.
    PaddingNonZero,
    /// A classic filter whose probe scheme (bytes 40..48) this build does not read. `0`
    /// is enhanced double hashing, whose patterns repeat too often at small sizes (see
    /// the classic filter's docs): rebuild it.
    UnsupportedProbeScheme(u64),
    /// A vector quotient filter whose location scheme (bytes 32..40) this build does not
    /// read (it reads [`crate::quotient::SCHEME_ID`] and
    /// [`crate::quotient::SCHEME_ID_EMPTIER_BLOCK`]). Under scheme `0` the same blocks
    /// answer differently: rebuild the filter from its keys.
    UnsupportedQuotientScheme(u64),
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
    /// `view` needs the bytes to start at a 64-byte aligned address.
    Misaligned,
}

/// A filter kind id as error messages name it, with its article: `a BloomFilter`, or
/// `an unknown filter kind`.
fn kind_name(kind: u16) -> &'static str {
    match kind {
        1 => "a BloomFilter",
        2 => "a CountingBloomFilter",
        3 => "a ScalableBloomFilter",
        4 => "a ClassicBloomFilter",
        5 => "a VectorQuotientFilter",
        _ => "an unknown filter kind",
    }
}

/// A hasher id as error messages name it: `the Xxh3 hasher`, or `an unknown hasher`.
fn hasher_name(id: u32) -> &'static str {
    match id {
        1 => "the Xxh3 hasher",
        2 => "the IntFold hasher",
        _ => "an unknown hasher",
    }
}

impl core::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DecodeError::Truncated { needed, got } => {
                write!(f, "truncated: need {needed} bytes, got {got}")
            }
            DecodeError::BadMagic(m) => write!(
                f,
                "not a linebloom encoding: bad magic {m:02x?}, expected \"LBLM\""
            ),
            DecodeError::UnsupportedVersion(1) => write!(
                f,
                "format version 1 (the fmix64 bit pattern of linebloom before its lean probe) \
                 is no longer read; this build reads version {VERSION}: rebuild the filter \
                 from its keys"
            ),
            DecodeError::UnsupportedVersion(v) => write!(
                f,
                "format version {v} is not supported (this build reads {VERSION})"
            ),
            DecodeError::WrongKind { expected, found } => write!(
                f,
                "the bytes hold {} (kind {found}), not {} (kind {expected})",
                kind_name(*found),
                kind_name(*expected)
            ),
            DecodeError::HasherMismatch { expected, found } => write!(
                f,
                "the filter was written with {} (id {found}), not {} (id {expected})",
                hasher_name(*found),
                hasher_name(*expected)
            ),
            DecodeError::InvalidParams(e) => write!(f, "invalid parameters: {e}"),
            DecodeError::ReservedNonZero => f.write_str("reserved header bytes are not zero"),
            DecodeError::PaddingNonZero => {
                f.write_str("bits past the classic filter's m bits are set (padding must be zero)")
            }
            DecodeError::UnsupportedProbeScheme(id) => write!(
                f,
                "classic filter with probe scheme {id}, which this build does not read \
                 (it reads scheme {}): rebuild the filter",
                crate::classic::PROBE_SCHEME
            ),
            DecodeError::UnsupportedQuotientScheme(id) => write!(
                f,
                "vector quotient filter with location scheme {id}, which this build does not \
                 read (it reads schemes {} and {}): rebuild the filter from its keys",
                crate::quotient::SCHEME_ID_EMPTIER_BLOCK,
                crate::quotient::SCHEME_ID
            ),
            DecodeError::Inconsistent => f.write_str("stored fields contradict each other"),
            DecodeError::TrailingBytes { expected, got } => write!(
                f,
                "{} trailing bytes after the {expected}-byte encoding",
                got.saturating_sub(*expected)
            ),
            DecodeError::BadChecksum { stored, computed } => {
                write!(
                    f,
                    "checksum mismatch: stored {stored:016x}, computed {computed:016x}"
                )
            }
            DecodeError::Misaligned => f.write_str("bytes are not 64-byte aligned"),
        }
    }
}

impl core::error::Error for DecodeError {}

/// Why a filter could not be encoded into a caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The buffer is shorter than the encoding (`encoded_len`); nothing was written.
    BufferTooSmall {
        /// Bytes the encoding needs.
        needed: usize,
        /// Bytes the buffer has.
        got: usize,
    },
}

impl core::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            EncodeError::BufferTooSmall { needed, got } => {
                write!(f, "output buffer too small: need {needed} bytes, got {got}")
            }
        }
    }
}

impl core::error::Error for EncodeError {}
