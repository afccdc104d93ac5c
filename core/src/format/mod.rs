//! The binary format: versioned, little-endian, checksummed (specified in `core/FORMAT.md`).
//!
//! Decoding takes untrusted bytes. It never panics, allocates only after the length has
//! been checked against the header (so at most the input's size), and reports each
//! defect with its own [`DecodeError`] variant.
//!
//! Every kind reads and writes through the same names: `encoded_len`, `encode_into`
//! (no allocation, [`EncodeError`] when the buffer is short), `to_bytes`, `from_bytes`
//! (the default hasher) and `from_bytes_with_hasher` (any [`crate::StableHasher`]);
//! the block kinds also have `from_bytes_into` / `from_bytes_into_with_hasher` (the
//! caller's storage, no allocation) and, on little-endian targets, `view` (borrowed in
//! place from 64-byte aligned bytes, no copy).
//!
//! | file | holds |
//! |---|---|
//! | `error.rs` | [`DecodeError`], [`EncodeError`] |
//! | `header.rs` | the header, the checksum, and the payload helpers every kind shares |
//! | `blocks.rs` | the one block-array codec of [`crate::BloomFilter`], [`crate::CountingBloomFilter`] and [`crate::VectorQuotientFilter`] |
//! | `classic.rs` | [`crate::ClassicBloomFilter`]'s codec (its bit count and probe scheme) |
//! | `scalable.rs` | `ScalableBloomFilter`'s codec (its options and layers) |
//! | `serde.rs` | `Serialize`/`Deserialize` for every kind, through the bytes (feature `serde`) |

mod blocks;
mod classic;
mod error;
mod header;
#[cfg(feature = "alloc")]
mod scalable;
#[cfg(feature = "serde")]
mod serde;

pub use error::{DecodeError, EncodeError};

/// `b"LBLM"`.
pub const MAGIC: [u8; 4] = *b"LBLM";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 2;
/// Bytes before the payload (a whole block, so the payload stays 64-byte aligned).
pub const HEADER_LEN: usize = 64;
/// Bytes of the trailing checksum.
pub const CHECKSUM_LEN: usize = 8;
/// Filter-kind tag of [`crate::BloomFilter`].
pub const KIND_BLOOM: u16 = 1;
/// Filter-kind tag of [`crate::CountingBloomFilter`].
pub const KIND_COUNTING: u16 = 2;
/// Filter-kind tag of `ScalableBloomFilter`.
pub const KIND_SCALABLE: u16 = 3;
/// Filter-kind tag of [`crate::ClassicBloomFilter`].
pub const KIND_CLASSIC: u16 = 4;
/// Filter-kind tag of [`crate::VectorQuotientFilter`].
pub const KIND_QUOTIENT: u16 = 5;
