//! The scalable filter's codec (kind 3): its options in the kind-specific words, then
//! a prefix (the key counts and the mode), one record per layer, and every layer's
//! blocks. Every layer's shape is checked against the one its options give.

use super::header::{Fields, le_u32, le_u64, open, seal, write_blocks};
use super::{CHECKSUM_LEN, DecodeError, HEADER_LEN, KIND_SCALABLE};
use crate::block::Block;
use crate::bloom::BloomFilter;
use crate::hasher::StableHasher;
use crate::params::{Params, ParamsError};

/// Scalable filter: bytes of the payload prefix (len, newest layer's len, mode, reserved).
const SCALABLE_PREFIX: usize = 32;
/// Scalable filter: bytes of each layer record (blocks u64, k u32, reserved u32).
const LAYER_RECORD: usize = 16;

impl<H: StableHasher + Clone> crate::ScalableBloomFilter<H> {
    /// Length of the encoding: header (layer count in `k`, total blocks, options in the
    /// kind-specific words, kind tag 3), a 32-byte prefix, one 16-byte record per layer,
    /// every layer's blocks, checksum.
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        let blocks: usize = self
            .layer_filters()
            .iter()
            .map(|l| l.params().blocks())
            .sum();
        HEADER_LEN
            + SCALABLE_PREFIX
            + LAYER_RECORD * self.layers()
            + blocks * Block::BYTES
            + CHECKSUM_LEN
    }

    /// The encoding as a new vector.
    ///
    /// ```
    /// use linebloom::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::for_fpr(100, 0.01)?;
    /// for i in 0..1000u32 { f.insert(&i); }
    /// let g = ScalableBloomFilter::from_bytes(&f.to_bytes())?;
    /// assert_eq!(g, f);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        let options = self.options();
        let layers = self.layer_filters();
        let blocks: usize = layers.iter().map(|l| l.params().blocks()).sum();
        let fields = Fields {
            kind: KIND_SCALABLE,
            hasher_id: H::ID,
            k: layers.len() as u32,
            blocks: blocks as u64,
            seed: layers[0].hasher().seed(),
            extra: [
                options.initial_capacity(),
                options.fpr().to_bits(),
                options.growth().to_bits(),
                options.tightening().to_bits(),
            ],
        };
        let mut out = alloc::vec![0u8; self.encoded_len()];
        let payload_len = out.len() - HEADER_LEN - CHECKSUM_LEN;
        seal(&mut out, &fields, payload_len, |p| {
            p[0..8].copy_from_slice(&self.len().to_le_bytes());
            p[8..16].copy_from_slice(&self.newest_len().to_le_bytes());
            let mode = match options.mode() {
                crate::scalable::Mode::Scaling => 0u64,
                crate::scalable::Mode::Fixed => 1,
            };
            p[16..24].copy_from_slice(&mode.to_le_bytes());
            let mut at = SCALABLE_PREFIX;
            for l in layers {
                p[at..at + 8].copy_from_slice(&(l.params().blocks() as u64).to_le_bytes());
                p[at + 8..at + 12].copy_from_slice(&l.params().k().to_le_bytes());
                at += LAYER_RECORD;
            }
            for l in layers {
                let len = l.params().bytes();
                write_blocks(&mut p[at..at + len], l.as_blocks());
                at += len;
            }
        })
        .expect("buffer has encoded_len bytes");
        out
    }

    /// [`from_bytes`](crate::ScalableBloomFilter::from_bytes) for bytes written with
    /// hasher `H`.
    ///
    /// # Errors
    ///
    /// As for `from_bytes`.
    pub fn from_bytes_with_hasher(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (fields, payload) = open(bytes, KIND_SCALABLE, H::ID, |f, _| {
            let layers = f.k as u64;
            if layers == 0 || layers > crate::scalable::MAX_LAYERS as u64 {
                return Err(DecodeError::Inconsistent);
            }
            if f.blocks > crate::params::MAX_BLOCKS {
                return Err(DecodeError::InvalidParams(ParamsError::TooLarge {
                    bytes: f.blocks.saturating_mul(64),
                }));
            }
            Ok(SCALABLE_PREFIX as u64
                + LAYER_RECORD as u64 * layers
                + f.blocks * Block::BYTES as u64)
        })?;
        let [initial, fpr, growth, tightening] = fields.extra;
        let (fpr, growth, tightening) = (
            f64::from_bits(fpr),
            f64::from_bits(growth),
            f64::from_bits(tightening),
        );
        let mode = match le_u64(payload, 16) {
            0 => crate::scalable::Mode::Scaling,
            1 => crate::scalable::Mode::Fixed,
            _ => return Err(DecodeError::Inconsistent),
        };
        let options = crate::ScalableOptions::new(initial, fpr)
            .with_growth(growth)
            .with_tightening(tightening)
            .with_mode(mode);
        options.check().map_err(DecodeError::InvalidParams)?;
        if le_u64(payload, 24) != 0 {
            return Err(DecodeError::ReservedNonZero);
        }
        // Check every layer record against the shape the options give, before
        // allocating anything: the records' block counts add up to the header's total,
        // which the input length has already justified.
        let layers = fields.k as usize;
        let mut shapes = alloc::vec::Vec::with_capacity(layers);
        let mut capacities = alloc::vec::Vec::with_capacity(layers);
        let mut total = 0u64;
        for i in 0..layers {
            let rec = SCALABLE_PREFIX + LAYER_RECORD * i;
            let (blocks, k) = (le_u64(payload, rec), le_u32(payload, rec + 8));
            if le_u32(payload, rec + 12) != 0 {
                return Err(DecodeError::ReservedNonZero);
            }
            let (cap, p) = options.layer_shape(i);
            let expected = Params::for_fpr(cap, p).map_err(DecodeError::InvalidParams)?;
            if expected.blocks() as u64 != blocks || expected.k() != k {
                return Err(DecodeError::Inconsistent);
            }
            total += blocks;
            shapes.push(expected);
            capacities.push(cap);
        }
        if total != fields.blocks {
            return Err(DecodeError::Inconsistent);
        }
        // Inserts fill each layer to exactly its capacity before the next one starts, so
        // `len` is the full layers' capacities plus the newest layer's count, which its
        // capacity bounds. Anything else (such as len = 2⁶⁴ − 1, whose next insert would
        // overflow) did not come from this library.
        let (len, newest_len) = (le_u64(payload, 0), le_u64(payload, 8));
        let (newest_cap, full) = capacities.split_last().expect("1..=MAX_LAYERS layers");
        let full_keys = full.iter().try_fold(0u64, |sum, &c| sum.checked_add(c));
        if newest_len > *newest_cap
            || full_keys.and_then(|f| f.checked_add(newest_len)) != Some(len)
        {
            return Err(DecodeError::Inconsistent);
        }
        let hasher = H::from_seed(fields.seed);
        let mut at = SCALABLE_PREFIX + LAYER_RECORD * layers;
        let mut filters = alloc::vec::Vec::with_capacity(layers);
        for params in shapes {
            let len = params.bytes();
            let layer = BloomFilter::from_storage_with_hasher(
                super::header::read_blocks(&payload[at..at + len]),
                params.k(),
                hasher.clone(),
            )
            .map_err(DecodeError::InvalidParams)?;
            filters.push(layer);
            at += len;
        }
        let filter =
            crate::ScalableBloomFilter::from_parts(options, hasher, filters, len, newest_len);
        Ok(filter)
    }
}

impl crate::ScalableBloomFilter {
    /// Decodes untrusted bytes of a `ScalableBloomFilter` written with the default
    /// hasher, [`crate::IntFold`]. Every layer's shape is checked against the shape the
    /// stored options give for that layer.
    ///
    /// # Errors
    ///
    /// A [`DecodeError`] naming the first defect: those of every kind (see
    /// [`crate::BloomFilter::from_bytes`]), and [`DecodeError::Inconsistent`] for
    /// layers, counts or a mode that the stored options would not have produced.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        crate::ScalableBloomFilter::from_bytes_with_hasher(bytes)
    }
}
