//! Sizing: `(capacity, target rate)`, `(capacity, bits per key)` or raw `(blocks, k)`
//! to a checked shape. Each kind has its own shape type, so that one kind's shape
//! cannot be handed to another: [`Params`] (the Bloom, atomic and static filters,
//! here), and in each other kind's folder [`CountingParams`](crate::CountingParams)
//! (`counting/params.rs`), [`ClassicParams`](crate::ClassicParams)
//! (`classic/params.rs`) and [`QuotientParams`](crate::QuotientParams)
//! (`quotient/params.rs`). What they share lives here: [`ParamsError`], the size
//! limits and the search for the smallest shape that meets a target.
//!
//! Block counts are `u64` going in and `usize` coming out: a constructor takes the
//! count asked for as `u64`, so that a shape too large for this target's memory is
//! refused ([`ParamsError::TooLarge`]) rather than truncated on a 32-bit target, and
//! `blocks()` answers `usize`, the length of storage that exists. A filter's
//! `from_storage` takes its storage and what the storage's length does not fix: `k`
//! for the Bloom and counting filters, the tag width for the vector quotient filter,
//! and a `ClassicParams` (bits and `k`) for the classic filter, whose bit count is not
//! a whole number of blocks.
//!
//! Sizing from a target rate uses the blocked pattern's own exact formula
//! ([`crate::fpr::blocked`]), not the classic `(1 − e^{−kn/m})^k`, which under-sizes a
//! blocked filter: at 1% the blocked filter needs about 0.5 more bits per key than the
//! classic formula says.

mod error;
mod search;

pub use error::ParamsError;
use search::min_blocks;
pub(crate) use search::{check_shape, largest_meeting, sizing_goal};

use crate::block::Block;
use crate::fpr;
use crate::pattern::MAX_K;

/// [`Params::for_fpr`] sizes for a predicted rate of at most `SIZING_MARGIN × p`.
///
/// The predicted rate is an expectation over key sets. A real filter's rate spreads
/// around it (about ±1% relative at a million keys, from the uneven block loads), and a
/// measurement adds binomial noise on top. Sizing exactly to `p` would measure above `p`
/// half the time; 5% of headroom costs about 0.1 bit per key and keeps measured rates
/// at or below `p` (see `tests/fpr.rs` for the bound and its slack). Where blocks are
/// few the spread is wider than 5%, and sizing adds more headroom, from the spread
/// itself ([`Params::per_filter_fpr`]).
pub const SIZING_MARGIN: f64 = 0.95;

/// [`Params::for_fpr`] picks a fast shape (`k = 8` or `16`, see [`FAST_K`]) when it
/// needs at most this fraction more memory than the smallest filter that meets the
/// target.
///
/// The fast shapes skip the rotation table of `k < 8` and the enable mask of round 2, so
/// their probe is shorter (the speed gain is measured by the lab's `kernels`
/// experiment). Near 1% the smallest filter has `k = 6` and `k = 8` costs 1.5–1.8%
/// more memory; at 0.1% and 0.01% the fast shapes are already the smallest.
pub const FAST_SHAPE_ALLOWANCE: f64 = 0.02;

/// The `k` whose probe needs neither the rotation of `k < 8` nor a partial second round.
pub const FAST_K: [u32; 2] = [8, 16];

/// The largest filter this crate builds: 1 TiB on 64-bit targets, and half the address
/// space (`isize::MAX` bytes, rounded down to whole blocks) on smaller ones.
pub const MAX_BYTES: u64 = {
    let cap = 1u64 << 40;
    let isize_max = isize::MAX as u64;
    if isize_max < cap {
        isize_max - isize_max % 64
    } else {
        cap
    }
};

/// The largest block count, [`MAX_BYTES`] / 64.
pub const MAX_BLOCKS: u64 = MAX_BYTES / Block::BYTES as u64;

/// Blocks for `capacity` keys at `bits_per_key` bits each, rounded up to whole blocks
/// (at least one): a `const fn`, so firmware can size a [`crate::StaticBlocks`] at
/// compile time without floating point.
///
/// What such a filter delivers at its capacity, with the `k` that suits it (from the
/// exact formula, for large capacities; the example checks every row):
///
/// | bits per key | k | false-positive rate |
/// |---:|---:|---:|
/// | 8 | 5 | 2.34% |
/// | 10 | 6 | 0.97% |
/// | 12 | 7 | 0.42% |
/// | 16 | 8 | 0.091% |
/// | 20 | 8 | 0.026% |
/// | 24 | 16 | 0.0067% |
///
/// ```
/// use linebloom::params::blocks_for;
/// use linebloom::{BloomFilter, Params, StaticBlocks};
/// static STORAGE: StaticBlocks<{ blocks_for(1000, 10) }> = StaticBlocks::new();
/// assert_eq!(blocks_for(1000, 10), 20);
/// let f: BloomFilter = BloomFilter::from_storage(STORAGE.take().unwrap(), 6)?;
///
/// // The table above.
/// for (bits, k, percent) in [(8, 5, 2.34), (10, 6, 0.97), (12, 7, 0.42), (16, 8, 0.091), (20, 8, 0.026), (24, 16, 0.0067)] {
///     let n = 1_000_000;
///     let rate = Params::new(blocks_for(n, bits) as u64, k)?.expected_fpr(n);
///     assert!((100.0 * rate / percent - 1.0).abs() < 0.01, "{bits}: {rate}");
///     assert_eq!(Params::for_bits_per_key(n, bits as f64)?.k(), k);
/// }
/// # Ok::<(), linebloom::ParamsError>(())
/// ```
#[must_use]
pub const fn blocks_for(capacity: u64, bits_per_key: u64) -> usize {
    let blocks = capacity
        .saturating_mul(bits_per_key)
        .div_ceil(Block::BITS as u64);
    if blocks == 0 { 1 } else { blocks as usize }
}

/// A filter's shape: the number of 64-byte blocks and the bits set per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    blocks: usize,
    k: u32,
}

impl Params {
    /// Raw parameters: `blocks` 64-byte blocks, `k` bits per key.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidK`] unless `k` is in `1..=16`, [`ParamsError::ZeroBlocks`]
    /// for zero blocks, [`ParamsError::TooLarge`] past [`MAX_BLOCKS`].
    ///
    /// ```
    /// use linebloom::{Params, ParamsError};
    /// let p = Params::new(100, 8)?;
    /// assert_eq!(p.bytes(), 6400);
    /// assert_eq!(Params::new(100, 17), Err(ParamsError::InvalidK(17)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(blocks: u64, k: u32) -> Result<Self, ParamsError> {
        check_shape(k, MAX_K, blocks.saturating_mul(Block::BYTES as u64))?;
        Ok(Params {
            blocks: blocks as usize,
            k,
        })
    }

    /// The smallest filter whose exact predicted false-positive rate after `capacity`
    /// keys is at most `fpr` (with [`SIZING_MARGIN`] of headroom), and the smallest `k`
    /// that achieves it at that size; or, when a fast shape ([`FAST_K`]) meets the target
    /// with at most [`FAST_SHAPE_ALLOWANCE`] more memory, the smallest such filter. Then,
    /// where blocks are few, more blocks at that `k` until
    /// [`per_filter_fpr`](Self::per_filter_fpr) is at most `fpr`: the target holds for
    /// at least 99% of filters, not only on average (the crate docs state the promise).
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidFpr`] for a rate outside (0, 1),
    /// [`ParamsError::ZeroCapacity`], [`ParamsError::CapacityTooLarge`] for a capacity no
    /// filter of [`MAX_BYTES`] could hold at this rate, [`ParamsError::FprBelowHashFloor`]
    /// for a rate the 64-bit hash cannot deliver at this capacity, or
    /// [`ParamsError::TooLarge`] when no filter up to [`MAX_BYTES`] meets the target.
    ///
    /// ```
    /// use linebloom::{Params, ParamsError};
    /// assert_eq!(
    ///     Params::for_fpr(u64::MAX, 0.01),
    ///     Err(ParamsError::CapacityTooLarge { capacity: u64::MAX })
    /// );
    /// let p = Params::for_fpr(1_000_000, 0.01)?;
    /// assert!(p.expected_fpr(1_000_000) <= 0.01);
    /// assert!(p.bits_per_key(1_000_000) < 11.0);
    /// assert_eq!(p.k(), 8); // the fast shape: 1.5% more memory than k = 6 here
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        let smallest = Params::smallest_meeting(capacity, fpr, fpr::blocked)?;
        let headroom = |params: Params| {
            params.with_per_filter_headroom(capacity, fpr, fpr::blocked, fpr::blocked_spread)
        };
        if FAST_K.contains(&smallest.k) {
            return headroom(smallest);
        }
        let goal = fpr * SIZING_MARGIN;
        let budget = smallest.blocks as u64
            + libm::floor(smallest.blocks as f64 * FAST_SHAPE_ALLOWANCE) as u64;
        let budget = budget.min(MAX_BLOCKS);
        let fast = FAST_K.iter().filter_map(|&k| {
            let rate = |blocks| fpr::blocked(blocks, k, capacity);
            if rate(budget) > goal {
                return None;
            }
            // `smallest.blocks − 1` meets the target with no k at all.
            let blocks = min_blocks(rate, goal, smallest.blocks as u64 - 1, budget);
            Some((blocks, k))
        });
        let chosen = match fast.min() {
            Some((blocks, k)) => Params::new(blocks, k)?,
            None => smallest,
        };
        headroom(chosen)
    }

    /// The rate that at most about 1% of filters of this shape exceed after `n` keys:
    /// [`fpr::per_filter_quantile`] of the average
    /// ([`expected_fpr`](Self::expected_fpr)) and the spread over key sets
    /// ([`fpr::blocked_spread`]). [`Params::for_fpr`] keeps it at or below the target.
    ///
    /// ```
    /// use linebloom::Params;
    /// let p = Params::for_fpr(1_000, 0.01)?;
    /// assert!(p.per_filter_fpr(1_000) <= 0.01);
    /// assert!(p.per_filter_fpr(1_000) > p.expected_fpr(1_000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn per_filter_fpr(&self, n: u64) -> f64 {
        fpr::per_filter_quantile(
            self.expected_fpr(n),
            fpr::blocked_spread(self.blocks as u64, self.k, n),
        )
    }

    /// `bits_per_key × capacity` bits (rounded up to whole blocks), with the `k` that
    /// gives the lowest predicted false-positive rate at `capacity` keys.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidBitsPerKey`] unless `bits_per_key` is finite and positive,
    /// [`ParamsError::ZeroCapacity`], or [`ParamsError::TooLarge`] past [`MAX_BYTES`].
    ///
    /// ```
    /// use linebloom::Params;
    /// let p = Params::for_bits_per_key(10_000, 10.0)?;
    /// assert_eq!(p.blocks(), 196); // ceil(100_000 / 512)
    /// assert!((6..=8).contains(&p.k()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_bits_per_key(capacity: u64, bits_per_key: f64) -> Result<Self, ParamsError> {
        if !(bits_per_key > 0.0 && bits_per_key.is_finite()) {
            return Err(ParamsError::InvalidBitsPerKey);
        }
        if capacity == 0 {
            return Err(ParamsError::ZeroCapacity);
        }
        let bits = libm::ceil(capacity as f64 * bits_per_key);
        let blocks = libm::ceil(bits / Block::BITS as f64);
        if blocks > MAX_BLOCKS as f64 {
            return Err(ParamsError::TooLarge {
                bytes: (blocks * 64.0).min(u64::MAX as f64) as u64,
            });
        }
        let blocks = blocks as u64;
        let mut best = (1, f64::INFINITY);
        for k in 1..=MAX_K {
            let p = fpr::blocked(blocks, k, capacity);
            if p < best.1 {
                best = (k, p);
            }
        }
        Params::new(blocks, best.0)
    }

    /// Number of 64-byte blocks.
    #[must_use]
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Bits set per key.
    #[must_use]
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Size of the bit array in bytes.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.blocks * Block::BYTES
    }

    /// Size of the bit array in bits.
    #[must_use]
    pub fn bits(&self) -> u64 {
        self.blocks as u64 * Block::BITS as u64
    }

    /// Bits of memory per key at `n` keys.
    #[must_use]
    pub fn bits_per_key(&self, n: u64) -> f64 {
        self.bits() as f64 / n as f64
    }

    /// The exact predicted false-positive rate of a [`crate::BloomFilter`] of this shape
    /// after `n` distinct keys ([`crate::fpr::blocked`]).
    #[must_use]
    pub fn expected_fpr(&self, n: u64) -> f64 {
        fpr::blocked(self.blocks as u64, self.k, n)
    }

    /// The most distinct keys this shape holds with a predicted rate
    /// ([`expected_fpr`](Self::expected_fpr)) at most `fpr`: the capacity to watch
    /// [`crate::BloomFilter::estimated_len`] against. 0 if even one key exceeds it (or
    /// `fpr` is not in (0, 1)).
    ///
    /// ```
    /// use linebloom::Params;
    /// let p = Params::for_fpr(100_000, 0.01)?;
    /// let capacity = p.capacity_at(0.01);
    /// assert!(capacity >= 100_000); // sized with headroom (SIZING_MARGIN)
    /// assert!(p.expected_fpr(capacity) <= 0.01 && p.expected_fpr(capacity + 1) > 0.01);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn capacity_at(&self, fpr: f64) -> u64 {
        largest_meeting(|n| self.expected_fpr(n) <= fpr)
    }

    /// Estimated number of distinct keys in a filter of this shape that has `ones` bits
    /// set: [`crate::BloomFilter::estimated_len`]'s estimator, for blocks kept elsewhere
    /// (in Redis, where `BITCOUNT` gives `ones`, or in a memory-mapped file).
    /// `f64::INFINITY` when every bit is set.
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params};
    /// let params = Params::for_fpr(10_000, 0.01)?;
    /// let mut f = BloomFilter::new(params);
    /// f.extend(0..10_000u64);
    /// let ones = (f.fill_ratio() * params.bits() as f64).round() as u64;
    /// assert_eq!(params.estimated_len(ones), f.estimated_len());
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn estimated_len(&self, ones: u64) -> f64 {
        let bits = self.bits();
        let clear = bits.saturating_sub(ones) as f64 / bits as f64;
        fpr::estimated_keys(clear, self.k, bits as f64)
    }
}

/// `"1563 blocks, k = 8"`: the shape, as [`IncompatibleError`](crate::IncompatibleError)
/// names it.
impl core::fmt::Display for Params {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} blocks, k = {}", self.blocks(), self.k())
    }
}
