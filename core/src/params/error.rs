//! [`ParamsError`]: why a shape was refused.

use super::MAX_BYTES;
use crate::pattern::MAX_K;

/// Why parameters were refused.
///
/// It holds no floating-point value (the caller has the one it passed), so formatting
/// it, even through `unwrap`, pulls no float formatting into firmware.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamsError {
    /// The target false-positive rate is not in the open interval (0, 1), or is NaN.
    InvalidFpr,
    /// The target rate is below what a 64-bit hash can deliver for this many keys: a
    /// non-member shares its full hash with one of `capacity` members with probability
    /// about `capacity / 2⁶⁴`, and then it is always a false positive
    /// ([`crate::fpr::hash_floor`]). The sizing margin applies to it as well.
    FprBelowHashFloor {
        /// The capacity asked for.
        capacity: u64,
    },
    /// The capacity is zero.
    ZeroCapacity,
    /// Bits per key is not a finite number greater than zero.
    InvalidBitsPerKey,
    /// `k` is not in `1..=16`.
    InvalidK(u32),
    /// Zero blocks.
    ZeroBlocks,
    /// The storage handed in has the wrong number of blocks for the shape.
    StorageLength {
        /// Blocks the shape needs.
        expected: u64,
        /// Blocks given.
        got: u64,
    },
    /// Growth factor below 1 or tightening ratio outside (0, 1) (scalable filter).
    InvalidGrowth,
    /// A vector quotient filter's tag width is not 8 or 16 bits.
    InvalidTagBits(u32),
    /// A vector quotient filter needs an even number of blocks (each key's second block
    /// is paired with its first through half the filter).
    OddBlocks(u64),
    /// Storage handed to a vector quotient filter holds a block that is not one of its
    /// blocks (zeroed storage is an empty filter): block `index` has more tags than
    /// slots, metadata bits past its last bucket, or a tag in an unused slot.
    MalformedBlock {
        /// The first malformed block.
        index: u64,
    },
    /// No filter of any kind holds this many keys at the rate asked for within
    /// [`MAX_BYTES`]: even the information-theoretic floor, `capacity · log2(1/fpr)`
    /// bits, exceeds it.
    CapacityTooLarge {
        /// The capacity asked for.
        capacity: u64,
    },
    /// The filter would exceed [`MAX_BYTES`] (or overflow `usize`).
    TooLarge {
        /// Bytes the request needs (saturated at `u64::MAX`).
        bytes: u64,
    },
}

impl core::fmt::Display for ParamsError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ParamsError::InvalidFpr => f.write_str("the false-positive rate is not in (0, 1)"),
            ParamsError::FprBelowHashFloor { capacity } => write!(
                f,
                "the false-positive rate is below what a 64-bit hash delivers for {capacity} keys \
                 (about {capacity} / 2^64, from full-hash collisions)"
            ),
            ParamsError::ZeroCapacity => f.write_str("capacity must be at least 1"),
            ParamsError::InvalidBitsPerKey => {
                f.write_str("bits per key must be a finite number greater than 0")
            }
            ParamsError::InvalidK(k) => write!(
                f,
                "k = {k} is out of range (1..={MAX_K} blocked, 1..=32 classic)"
            ),
            ParamsError::StorageLength { expected, got } => {
                write!(f, "storage has {got} blocks, the shape needs {expected}")
            }
            ParamsError::InvalidGrowth => f.write_str(
                "the growth factor must be a finite number ≥ 1 and the tightening ratio in (0, 1)",
            ),
            ParamsError::ZeroBlocks => f.write_str("a filter needs at least one block"),
            ParamsError::InvalidTagBits(bits) => {
                write!(
                    f,
                    "tags of {bits} bits: a vector quotient filter has 8- or 16-bit tags"
                )
            }
            ParamsError::OddBlocks(blocks) => write!(
                f,
                "{blocks} blocks: a vector quotient filter needs an even number of blocks"
            ),
            ParamsError::MalformedBlock { index } => write!(
                f,
                "block {index} is not a vector quotient filter block (start from zeroed storage)"
            ),
            ParamsError::TooLarge { bytes } => {
                write!(
                    f,
                    "filter of {bytes} bytes exceeds the maximum of {MAX_BYTES} bytes"
                )
            }
            ParamsError::CapacityTooLarge { capacity } => write!(
                f,
                "capacity too large: no filter holds {capacity} keys at this rate within the \
                 maximum of {MAX_BYTES} bytes"
            ),
        }
    }
}

impl core::error::Error for ParamsError {}
