//! What a running [`VectorQuotientFilter`] reports about itself: how many tags it
//! holds, how full it is, its false-positive rate now and at `n` keys, and each block's
//! load.

use super::VectorQuotientFilter;
use crate::arch::quotient::scheme::{Eight, Sixteen, load};
use crate::block::Block;
use crate::hasher::KeyHasher;

impl<S: AsRef<[Block]>, H: KeyHasher> VectorQuotientFilter<S, H> {
    /// Tags held: every insert not yet removed, each copy of a key inserted again
    /// counted. Exact.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Does the filter hold nothing?
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fraction of the tag slots in use: [`len`](Self::len) over
    /// [`QuotientParams::slots`](crate::QuotientParams::slots).
    #[must_use]
    pub fn load_factor(&self) -> f64 {
        self.len as f64 / self.params.slots() as f64
    }

    /// The false-positive rate of this filter as it is now, for a random non-member,
    /// from each block's load: a block with `L` tags misses a random bucket-and-tag
    /// pair with probability `y = (1 − 1/(BUCKETS · 2^r))^L`, and a non-member's two
    /// blocks are a random pair of distinct blocks, so the rate is
    /// `1 − (Σy² − Σy_i²) / (m(m − 1))`.
    ///
    /// ```
    /// use linebloom::VectorQuotientFilter;
    /// let mut f = VectorQuotientFilter::for_fpr(10_000, 0.01)?;
    /// for k in 0..10_000u64 {
    ///     f.insert(&k)?;
    /// }
    /// let rate = f.estimated_fpr();
    /// assert!((rate / f.expected_fpr(10_000) - 1.0).abs() < 0.01);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn estimated_fpr(&self) -> f64 {
        let tag_space =
            self.params.buckets_per_block() as f64 * (1u64 << self.params.tag_bits()) as f64;
        let log_miss = libm::log1p(-1.0 / tag_space);
        // With y = 1 − x per block: 1 − ((Σy)² − Σy²)/(m(m−1)) in terms of the small x
        // (a block's chance of a match), so nothing cancels:
        // = (2(m−1)Σx − (Σx)² + Σx²) / (m(m−1)).
        let (sum, squares) = self.blocks.as_ref().iter().fold((0.0, 0.0), |(s, q), b| {
            let x = -libm::expm1(self.block_load(b) as f64 * log_miss);
            (s + x, q + x * x)
        });
        let m = self.params.blocks() as f64;
        ((2.0 * (m - 1.0) * sum - sum * sum + squares) / (m * (m - 1.0))).clamp(0.0, 1.0)
    }

    /// The predicted false-positive rate at `n` keys
    /// ([`QuotientParams::expected_fpr`](crate::QuotientParams::expected_fpr)).
    #[must_use]
    pub fn expected_fpr(&self, n: u64) -> f64 {
        self.params.expected_fpr(n)
    }

    /// The most keys this filter holds with a predicted rate at most `fpr`, and within
    /// its capacity ([`QuotientParams::capacity_at`](crate::QuotientParams::capacity_at)).
    #[must_use]
    pub fn capacity_at(&self, fpr: f64) -> u64 {
        self.params.capacity_at(fpr)
    }

    /// Tags in each block, in block order: how evenly two choices spread the keys.
    pub fn block_loads(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks.as_ref().iter().map(|b| self.block_load(b))
    }

    fn block_load(&self, block: &Block) -> u32 {
        if self.params.tag_bits() == 8 {
            load::<Eight>(block)
        } else {
            load::<Sixteen>(block)
        }
    }
}
