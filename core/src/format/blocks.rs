//! The block-array codec: one implementation for every kind whose encoding is its
//! blocks as they are ([`BloomFilter`], kind 1; [`CountingBloomFilter`], kind 2;
//! [`VectorQuotientFilter`], kind 5). The header holds `k` (the tag bits of kind 5),
//! the block count and the hasher's seed; the kind-specific words are zero, except the
//! first of kind 5, its location scheme; the payload is the blocks as little-endian
//! words.
//!
//! [`BlockArray`] says what the codec needs of a kind, and `block_array_codec!` writes
//! each kind's public methods as calls into the generic functions here.

use super::header::{
    Fields, block_array_len, fill_storage, open, quotient_scheme, seal, write_blocks,
};
use super::{
    CHECKSUM_LEN, DecodeError, EncodeError, HEADER_LEN, KIND_BLOOM, KIND_COUNTING, KIND_QUOTIENT,
};
use crate::block::Block;
use crate::hasher::StableHasher;
use crate::params::{Params, ParamsError};
use crate::quotient::QuotientParams;
use crate::{BloomFilter, CountingBloomFilter, VectorQuotientFilter};

/// What the block-array codec needs of a filter kind.
pub(crate) trait BlockArray: Sized {
    /// The kind's storage.
    type Storage;
    /// The kind's hasher.
    type Hasher: StableHasher;
    /// The kind's tag in the header.
    const KIND: u16;
    /// The kind-specific header words it writes, and the only ones it reads.
    const EXTRA: [u64; 4] = [0; 4];
    /// The payload's length in bytes for a header's block count and `k`, after checking
    /// that they make a valid shape of this kind.
    fn payload_len(blocks: u64, k: u32) -> Result<u64, ParamsError>;
    /// Checks the payload's blocks (as little-endian bytes) for a kind whose blocks have
    /// a structure, before anything is allocated or written; `Ok` for plain bits.
    fn check_payload(_payload: &[u8], _k: u32) -> Result<(), ParamsError> {
        Ok(())
    }
    /// The filter over `storage` (the encoded block count), `k`, `hasher`; a kind whose
    /// blocks have a structure checks every block here too.
    fn from_parts(
        storage: Self::Storage,
        k: u32,
        hasher: Self::Hasher,
    ) -> Result<Self, ParamsError>;
    /// `k`.
    fn k(&self) -> u32;
    /// The blocks.
    fn blocks(&self) -> &[Block];
    /// The hasher.
    fn hasher(&self) -> &Self::Hasher;
}

macro_rules! impl_block_array {
    ($ty:ident, $kind:expr, $shape:ident, $k:ident $(, $check:ident, $extra:expr)?) => {
        impl<S: AsRef<[Block]>, H: StableHasher> BlockArray for $ty<S, H> {
            type Storage = S;
            type Hasher = H;
            const KIND: u16 = $kind;
            $(const EXTRA: [u64; 4] = $extra;)?
            fn payload_len(blocks: u64, k: u32) -> Result<u64, ParamsError> {
                $shape::new(blocks, k).map(|p| p.bytes() as u64)
            }
            $(
                fn check_payload(payload: &[u8], k: u32) -> Result<(), ParamsError> {
                    crate::quotient::$check(payload, k)
                }
            )?
            fn from_parts(storage: S, k: u32, hasher: H) -> Result<Self, ParamsError> {
                $ty::from_storage_with_hasher(storage, k, hasher)
            }
            fn k(&self) -> u32 {
                self.params().$k()
            }
            fn blocks(&self) -> &[Block] {
                self.as_blocks()
            }
            fn hasher(&self) -> &H {
                $ty::hasher(self)
            }
        }
    };
}
impl_block_array!(BloomFilter, KIND_BLOOM, Params, k);
impl_block_array!(CountingBloomFilter, KIND_COUNTING, Params, k);
impl_block_array!(
    VectorQuotientFilter,
    KIND_QUOTIENT,
    QuotientParams,
    tag_bits,
    check_payload,
    [crate::quotient::SCHEME_ID, 0, 0, 0]
);

/// Header, 64 bytes a block, checksum.
pub(crate) fn encoded_len<F: BlockArray>(filter: &F) -> usize {
    HEADER_LEN + filter.blocks().len() * Block::BYTES + CHECKSUM_LEN
}

pub(crate) fn encode_into<F: BlockArray>(filter: &F, out: &mut [u8]) -> Result<usize, EncodeError> {
    let blocks = filter.blocks();
    let fields = Fields {
        kind: F::KIND,
        hasher_id: <F::Hasher as StableHasher>::ID,
        k: filter.k(),
        blocks: blocks.len() as u64,
        seed: filter.hasher().seed(),
        extra: F::EXTRA,
    };
    seal(out, &fields, blocks.len() * Block::BYTES, |payload| {
        write_blocks(payload, blocks)
    })
}

/// Every check of the encoding, checksum included, before anything is allocated or
/// written.
fn open_block_array<F: BlockArray>(bytes: &[u8]) -> Result<(Fields, &[u8]), DecodeError> {
    let (fields, payload) = open(bytes, F::KIND, <F::Hasher as StableHasher>::ID, |f, _| {
        block_array_len(f, F::KIND, F::EXTRA, F::payload_len)
    })?;
    quotient_scheme(&fields, F::EXTRA)?;
    F::check_payload(payload, fields.k).map_err(DecodeError::InvalidParams)?;
    Ok((fields, payload))
}

#[cfg(feature = "alloc")]
pub(crate) fn from_bytes<F: BlockArray<Storage = crate::Blocks>>(
    bytes: &[u8],
) -> Result<F, DecodeError> {
    let (fields, payload) = open_block_array::<F>(bytes)?;
    let storage = super::header::read_blocks(payload);
    F::from_parts(storage, fields.k, F::Hasher::from_seed(fields.seed))
        .map_err(DecodeError::InvalidParams)
}

pub(crate) fn from_bytes_into<F: BlockArray>(
    bytes: &[u8],
    storage: F::Storage,
) -> Result<F, DecodeError>
where
    F::Storage: AsMut<[Block]>,
{
    let (fields, payload) = open_block_array::<F>(bytes)?;
    let storage = fill_storage(payload, storage, fields.blocks)?;
    F::from_parts(storage, fields.k, F::Hasher::from_seed(fields.seed))
        .map_err(DecodeError::InvalidParams)
}

#[cfg(target_endian = "little")]
pub(crate) fn view<'a, F: BlockArray<Storage = &'a [Block]>>(
    bytes: &'a [u8],
) -> Result<F, DecodeError> {
    let (fields, blocks) = super::header::view_blocks(bytes, open_block_array::<F>)?;
    F::from_parts(blocks, fields.k, F::Hasher::from_seed(fields.seed))
        .map_err(DecodeError::InvalidParams)
}

/// The public codec methods of a block-array kind, each a call into the functions
/// above. `$params` is an expression of the kind's shape for the doc examples.
macro_rules! block_array_codec {
    ($ty:ident, $name:literal, $params_ty:literal, $params:literal, $insert:literal) => {
        impl<S: AsRef<[Block]>, H: StableHasher> $ty<S, H> {
            /// Length of this filter's encoding: header, 64 bytes per block, checksum.
            #[must_use]
            pub fn encoded_len(&self) -> usize {
                encoded_len(self)
            }

            /// Writes the encoding into `out` with no allocation; returns the bytes
            /// written ([`encoded_len`](Self::encoded_len)).
            ///
            /// # Errors
            ///
            /// [`EncodeError::BufferTooSmall`] when `out` is shorter than the encoding;
            /// nothing is written then.
            ///
            /// ```
            #[doc = concat!("use linebloom::{", $name, ", ", $params_ty, ", format::EncodeError};")]
            #[doc = concat!("let f = ", $name, "::new(", $params, ");")]
            /// let mut buf = vec![0u8; f.encoded_len()];
            /// assert_eq!(f.encode_into(&mut buf), Ok(f.encoded_len()));
            /// assert!(matches!(f.encode_into(&mut buf[..10]), Err(EncodeError::BufferTooSmall { .. })));
            /// # Ok::<(), linebloom::ParamsError>(())
            /// ```
            pub fn encode_into(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
                encode_into(self, out)
            }

            /// The encoding as a new vector.
            #[cfg(feature = "alloc")]
            #[must_use]
            pub fn to_bytes(&self) -> alloc::vec::Vec<u8> {
                super::header::to_vec(self.encoded_len(), |out| self.encode_into(out))
            }
        }

        #[cfg(feature = "alloc")]
        impl $ty {
            #[doc = concat!("Decodes untrusted bytes of a `", $name, "` written with the default hasher, [`crate::IntFold`].")]
            /// Allocates only the payload, whose size the input's own length has
            /// already justified.
            ///
            /// # Errors
            ///
            /// A [`DecodeError`] naming the first defect: truncation, another format
            /// version or kind, another hasher ([`DecodeError::HasherMismatch`]: use
            /// [`from_bytes_with_hasher`](Self::from_bytes_with_hasher)), invalid
            /// parameters, trailing bytes, or a checksum mismatch.
            ///
            /// ```
            #[doc = concat!("use linebloom::{", $name, ", ", $params_ty, "};")]
            #[doc = concat!("let mut f = ", $name, "::new(", $params, ");")]
            #[doc = concat!("f.", $insert, ";")]
            #[doc = concat!("let g = ", $name, "::from_bytes(&f.to_bytes())?;")]
            /// assert_eq!(f, g);
            /// assert!(g.contains("k"));
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
                from_bytes(bytes)
            }
        }

        #[cfg(feature = "alloc")]
        impl<H: StableHasher> $ty<crate::Blocks, H> {
            /// [`from_bytes`]($ty::from_bytes) for bytes written with hasher `H` (name
            #[doc = concat!("it: `", $name, "::<Blocks, Xxh3>::from_bytes_with_hasher(bytes)`).")]
            ///
            /// # Errors
            ///
            /// As for `from_bytes`.
            pub fn from_bytes_with_hasher(bytes: &[u8]) -> Result<Self, DecodeError> {
                from_bytes(bytes)
            }
        }

        impl<S: AsRef<[Block]> + AsMut<[Block]>> $ty<S, crate::IntFold> {
            #[doc = concat!("Decodes untrusted bytes of a `", $name, "` written with the default hasher")]
            /// into the caller's storage, with no allocation. The encoding is checked
            /// whole, checksum included, before a block of `storage` is written. The
            /// bytes may sit at any alignment and the target may be big-endian (unlike
            /// `view`).
            ///
            /// # Errors
            ///
            /// As for `from_bytes`, and [`ParamsError::StorageLength`] (inside
            /// [`DecodeError::InvalidParams`]) when `storage` does not have exactly
            /// the encoded block count.
            pub fn from_bytes_into(bytes: &[u8], storage: S) -> Result<Self, DecodeError> {
                from_bytes_into(bytes, storage)
            }
        }

        impl<S: AsRef<[Block]> + AsMut<[Block]>, H: StableHasher> $ty<S, H> {
            /// [`from_bytes_into`]($ty::from_bytes_into) for bytes written with hasher
            /// `H`.
            ///
            /// # Errors
            ///
            /// As for `from_bytes_into`.
            pub fn from_bytes_into_with_hasher(bytes: &[u8], storage: S) -> Result<Self, DecodeError> {
                from_bytes_into(bytes, storage)
            }
        }

        #[cfg(target_endian = "little")]
        impl<'a, H: StableHasher> $ty<&'a [Block], H> {
            /// A read-only filter that borrows its blocks straight from an encoding,
            /// with no copy and no allocation, after checking the whole encoding,
            /// checksum included.
            ///
            /// `bytes` must start at a 64-byte aligned address, so that the payload
            /// (at offset 64) is aligned too. Only on little-endian targets, where the
            /// stored words are already in native order; elsewhere, and for unaligned
            /// bytes, `from_bytes_into` copies into a caller's storage without
            /// allocating.
            ///
            /// # Errors
            ///
            /// [`DecodeError::Misaligned`], or any error of `from_bytes`.
            ///
            /// ```
            #[doc = concat!("use linebloom::{Block, ", $name, ", ", $params_ty, ", block::blocks_as_bytes_mut};")]
            #[doc = concat!("let mut f = ", $name, "::new(", $params, ");")]
            #[doc = concat!("f.", $insert, ";")]
            /// // Encode into 64-byte aligned memory, as a memory map would give it.
            /// let mut aligned = vec![Block::ZERO; f.encoded_len().div_ceil(64)];
            /// let bytes = blocks_as_bytes_mut(&mut aligned);
            /// let n = f.encode_into(bytes)?;
            #[doc = concat!("let view = ", $name, "::<&[Block]>::view(&bytes[..n])?;")]
            /// assert!(view.contains("k"));
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn view(bytes: &'a [u8]) -> Result<Self, DecodeError> {
                view(bytes)
            }
        }
    };
}

block_array_codec!(
    BloomFilter,
    "BloomFilter",
    "Params",
    "Params::new(4, 8)?",
    "insert(\"k\")"
);
block_array_codec!(
    CountingBloomFilter,
    "CountingBloomFilter",
    "CountingParams",
    "CountingParams::new(4, 5)?",
    "insert(\"k\")"
);
block_array_codec!(
    VectorQuotientFilter,
    "VectorQuotientFilter",
    "QuotientParams",
    "QuotientParams::new(4, 8)?",
    "insert(\"k\")?"
);
