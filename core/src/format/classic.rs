//! The classic filter's codec (kind 4): the bit count and the probe scheme in the
//! kind-specific words, the payload its `⌈bits/512⌉` blocks with the last block's
//! padding zero.

use super::header::{Fields, fill_storage, open, seal, write_blocks};
use super::{CHECKSUM_LEN, DecodeError, EncodeError, HEADER_LEN, KIND_CLASSIC};
use crate::block::Block;
use crate::hasher::StableHasher;
#[cfg(doc)]
use crate::params::ParamsError;
use crate::{ClassicBloomFilter, ClassicParams};

impl<S: AsRef<[Block]>, H: StableHasher> ClassicBloomFilter<S, H> {
    /// Length of the encoding: header (bits in the first kind-specific word, kind tag 4),
    /// `64·⌈bits/512⌉` bytes of payload, checksum.
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.params().blocks() * Block::BYTES + CHECKSUM_LEN
    }

    /// Writes the encoding into `out` with no allocation; returns the bytes written.
    ///
    /// # Errors
    ///
    /// [`EncodeError::BufferTooSmall`] when `out` is shorter than
    /// [`encoded_len`](Self::encoded_len); nothing is written then.
    pub fn encode_into(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let p = self.params();
        let fields = Fields {
            kind: KIND_CLASSIC,
            hasher_id: H::ID,
            k: p.k(),
            blocks: p.blocks() as u64,
            seed: self.hasher().seed(),
            extra: [p.bits(), crate::classic::PROBE_SCHEME, 0, 0],
        };
        seal(out, &fields, p.blocks() * Block::BYTES, |payload| {
            write_blocks(payload, self.as_blocks())
        })
    }

    /// The encoding as a new vector.
    #[cfg(feature = "alloc")]
    #[must_use]
    pub fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        super::header::to_vec(self.encoded_len(), |out| self.encode_into(out))
    }
}

#[cfg(feature = "alloc")]
impl<H: StableHasher> ClassicBloomFilter<crate::Blocks, H> {
    /// [`from_bytes`](ClassicBloomFilter::from_bytes) for bytes written with hasher `H`.
    ///
    /// # Errors
    ///
    /// As for `from_bytes`.
    pub fn from_bytes_with_hasher(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (fields, params, payload) = open_classic::<H>(bytes)?;
        ClassicBloomFilter::from_storage_with_hasher(
            super::header::read_blocks(payload),
            params,
            H::from_seed(fields.seed),
        )
        .map_err(DecodeError::InvalidParams)
    }
}

impl<S: AsRef<[Block]> + AsMut<[Block]>, H: StableHasher> ClassicBloomFilter<S, H> {
    /// [`from_bytes_into`](ClassicBloomFilter::from_bytes_into) for bytes written with
    /// hasher `H`.
    ///
    /// # Errors
    ///
    /// As for `from_bytes_into`.
    pub fn from_bytes_into_with_hasher(bytes: &[u8], storage: S) -> Result<Self, DecodeError> {
        let (fields, params, payload) = open_classic::<H>(bytes)?;
        let storage = fill_storage(payload, storage, fields.blocks)?;
        ClassicBloomFilter::from_storage_with_hasher(storage, params, H::from_seed(fields.seed))
            .map_err(DecodeError::InvalidParams)
    }
}

/// Every check of a classic encoding (see FORMAT.md), before anything is allocated or
/// written: its fields, shape, the payload.
fn open_classic<H: StableHasher>(
    bytes: &[u8],
) -> Result<(Fields, ClassicParams, &[u8]), DecodeError> {
    let (fields, payload) = open(bytes, KIND_CLASSIC, H::ID, |f, _| {
        if f.extra[1] != crate::classic::PROBE_SCHEME {
            return Err(DecodeError::UnsupportedProbeScheme(f.extra[1]));
        }
        if f.extra[2..] != [0; 2] {
            return Err(DecodeError::ReservedNonZero);
        }
        let params = ClassicParams::new(f.extra[0], f.k).map_err(DecodeError::InvalidParams)?;
        if params.blocks() as u64 != f.blocks {
            return Err(DecodeError::Inconsistent);
        }
        Ok(f.blocks * Block::BYTES as u64)
    })?;
    let params =
        ClassicParams::new(fields.extra[0], fields.k).map_err(DecodeError::InvalidParams)?;
    // Bits m.. of the array are the last block's padding: bit j is bit j % 8 of
    // payload byte j / 8 (little-endian words). Checked before anything is allocated.
    let m = params.bits();
    let (first, partial) = ((m / 8) as usize, (m % 8) as u32);
    let tail_set = payload[first..].iter().enumerate().any(|(i, &byte)| {
        let padding = if i == 0 { !0u8 << partial } else { !0 };
        byte & padding != 0
    });
    if tail_set {
        return Err(DecodeError::PaddingNonZero);
    }
    Ok((fields, params, payload))
}

#[cfg(target_endian = "little")]
impl<'a, H: StableHasher> ClassicBloomFilter<&'a [Block], H> {
    /// A read-only classic filter borrowed straight from an encoding: no copy, no
    /// allocation (the checks and conditions of [`crate::BloomFilter::view`], padding
    /// bits included).
    ///
    /// # Errors
    ///
    /// [`DecodeError::Misaligned`], or any error of `from_bytes`.
    ///
    /// ```
    /// use linebloom::{Block, ClassicBloomFilter, ClassicParams, block::blocks_as_bytes_mut};
    /// let mut f = ClassicBloomFilter::new(ClassicParams::new(700, 4)?);
    /// f.insert("a");
    /// let mut aligned = vec![Block::ZERO; f.encoded_len().div_ceil(64)];
    /// let bytes = blocks_as_bytes_mut(&mut aligned);
    /// let n = f.encode_into(bytes)?;
    /// let view = ClassicBloomFilter::<&[Block]>::view(&bytes[..n])?;
    /// assert!(view.contains("a"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn view(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let ((fields, params), blocks) = super::header::view_blocks(bytes, |b| {
            let (fields, params, payload) = open_classic::<H>(b)?;
            Ok(((fields, params), payload))
        })?;
        ClassicBloomFilter::from_storage_with_hasher(blocks, params, H::from_seed(fields.seed))
            .map_err(DecodeError::InvalidParams)
    }
}

#[cfg(feature = "alloc")]
impl ClassicBloomFilter {
    /// Decodes untrusted bytes of a `ClassicBloomFilter` written with the default
    /// hasher, [`crate::IntFold`].
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] naming the first defect: those of every kind (see
    /// [`crate::BloomFilter::from_bytes`]), and [`DecodeError::UnsupportedProbeScheme`],
    /// [`DecodeError::PaddingNonZero`] or [`DecodeError::Inconsistent`] for a classic
    /// header that this build does not read.
    ///
    /// ```
    /// use linebloom::ClassicBloomFilter;
    /// let mut f = ClassicBloomFilter::for_fpr(1000, 0.01)?;
    /// f.insert("a");
    /// assert_eq!(ClassicBloomFilter::from_bytes(&f.to_bytes())?, f);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        ClassicBloomFilter::from_bytes_with_hasher(bytes)
    }
}

impl<S: AsRef<[Block]> + AsMut<[Block]>> ClassicBloomFilter<S, crate::IntFold> {
    /// Decodes untrusted bytes of a `ClassicBloomFilter` written with the default
    /// hasher into the caller's storage, with no allocation; any alignment, any
    /// endianness.
    ///
    /// # Errors
    ///
    /// As for `from_bytes`, and [`ParamsError::StorageLength`] (inside
    /// [`DecodeError::InvalidParams`]) when `storage` does not have exactly the encoded
    /// block count.
    pub fn from_bytes_into(bytes: &[u8], storage: S) -> Result<Self, DecodeError> {
        ClassicBloomFilter::from_bytes_into_with_hasher(bytes, storage)
    }
}
