//! [`CountingParams`]: the shape of a [`crate::CountingBloomFilter`], sized with the
//! counting filter's own formula ([`fpr::counting`]: a block holds 128 four-bit
//! counters, not 512 bits). A type of its own, so that a Bloom filter's [`Params`],
//! which would hold a quarter of the positions the rate needs, cannot size one.

use crate::fpr;
use crate::params::{Params, ParamsError, largest_meeting};

/// Shape of a [`crate::CountingBloomFilter`]: 64-byte blocks of 128 four-bit counters,
/// and `k` counters per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CountingParams(Params);

impl CountingParams {
    /// Raw shape: `blocks` blocks of 128 counters, `k` counters per key.
    ///
    /// # Errors
    ///
    /// As for [`Params::new`]: `k` outside `1..=16`, zero blocks, or too many.
    ///
    /// ```
    /// use linebloom::CountingParams;
    /// let p = CountingParams::new(16, 5)?;
    /// assert_eq!((p.blocks(), p.k(), p.bytes()), (16, 5, 1024));
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn new(blocks: u64, k: u32) -> Result<Self, ParamsError> {
        Params::new(blocks, k).map(CountingParams)
    }

    /// The smallest counting filter whose predicted rate after `capacity` keys is at
    /// most `fpr` with [`crate::params::SIZING_MARGIN`] of headroom, with the per-filter
    /// headroom of [`Params::for_fpr`] from the counting filter's own spread
    /// ([`fpr::counting_spread`]).
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidFpr`], [`ParamsError::ZeroCapacity`],
    /// [`ParamsError::CapacityTooLarge`], [`ParamsError::FprBelowHashFloor`] or
    /// [`ParamsError::TooLarge`], as for [`Params::for_fpr`].
    ///
    /// ```
    /// use linebloom::{CountingParams, Params};
    /// let c = CountingParams::for_fpr(10_000, 0.01)?;
    /// let b = Params::for_fpr(10_000, 0.01)?;
    /// assert!(c.blocks() > b.blocks()); // a block holds 128 counters but 512 bits
    /// assert!(c.expected_fpr(10_000) <= 0.01);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        Params::smallest_meeting(capacity, fpr, fpr::counting)?
            .with_per_filter_headroom(capacity, fpr, fpr::counting, fpr::counting_spread)
            .map(CountingParams)
    }

    /// Number of 64-byte blocks.
    #[must_use]
    pub fn blocks(&self) -> usize {
        self.0.blocks()
    }

    /// Counters per key.
    #[must_use]
    pub fn k(&self) -> u32 {
        self.0.k()
    }

    /// Size of the counter array in bytes.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.0.bytes()
    }

    /// Size of the counter array in bits (four per counter): its memory, for bits per
    /// key.
    #[must_use]
    pub fn bits(&self) -> u64 {
        self.0.bits()
    }

    /// Bits of memory per key at `n` keys.
    #[must_use]
    pub fn bits_per_key(&self, n: u64) -> f64 {
        self.0.bits_per_key(n)
    }

    /// The blocks and `k` as a Bloom filter's shape: the shape of
    /// `CountingBloomFilter::to_bloom`'s filter, which answers alike.
    #[must_use]
    pub fn bloom_shape(&self) -> Params {
        self.0
    }

    /// The exact predicted false-positive rate of a counting filter of this shape after
    /// `n` distinct keys ([`fpr::counting`]).
    #[must_use]
    pub fn expected_fpr(&self, n: u64) -> f64 {
        fpr::counting(self.0.blocks() as u64, self.0.k(), n)
    }

    /// The rate that at most about 1% of counting filters of this shape exceed after
    /// `n` keys ([`fpr::per_filter_quantile`] of the average and
    /// [`fpr::counting_spread`]); [`for_fpr`](Self::for_fpr) keeps it at or below the
    /// target.
    #[must_use]
    pub fn per_filter_fpr(&self, n: u64) -> f64 {
        fpr::per_filter_quantile(
            self.expected_fpr(n),
            fpr::counting_spread(self.0.blocks() as u64, self.0.k(), n),
        )
    }

    /// The most distinct keys this shape holds with a predicted rate at most `fpr`: the
    /// capacity to watch [`crate::CountingBloomFilter::estimated_len`] against.
    ///
    /// ```
    /// use linebloom::CountingParams;
    /// let p = CountingParams::for_fpr(10_000, 0.01)?;
    /// assert!(p.capacity_at(0.01) >= 10_000);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn capacity_at(&self, fpr: f64) -> u64 {
        largest_meeting(|n| self.expected_fpr(n) <= fpr)
    }
}
