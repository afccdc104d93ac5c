//! [`CountingBloomFilter`]: the blocked filter with 4-bit counters, so keys can be removed.
//!
//! A 64-byte block holds 128 four-bit counters: eight `u64` words of 16 counters each.
//! A key uses the same block and the same positions as in [`crate::BloomFilter`] (see
//! [`crate::pattern::for_each_position`]): where the Bloom filter sets bit `f` of word `w`,
//! the counting filter counts in counter `f >> 2` of word `w`. So [`to_bloom`] can produce
//! a plain filter with the same parameters that answers exactly like this one, in a
//! quarter of the memory per position.
//!
//! # Counters
//!
//! * `insert` adds one to each of the key's `k` counters (twice where two of its positions
//!   share a counter, so `remove` undoes it exactly).
//! * Counters **saturate** at 15 and then stay there: a saturated counter is never
//!   decremented, because after an overflow nobody knows how many keys it stands for.
//!   Saturation therefore never causes a false negative; its cost is that keys whose
//!   counters all saturated can no longer be fully removed (they keep answering
//!   "maybe").
//! * `remove` of a key with any zero counter is refused with [`RemoveError::NotPresent`]
//!   and changes nothing: that key was certainly never inserted (or already removed).
//!   Removing a key that *was* inserted never causes a false negative for any other key,
//!   because every counter it decrements was incremented by it.
//!   Removing a key that was never inserted but looks present (a false positive) does
//!   damage other keys, as in every counting Bloom filter: only remove what you inserted.
//!
//! # Overflow probability
//!
//! With `m` counters and `k = (m/n) ln 2` (Fan, Cao, Almeida and Broder, 2000), the
//! probability that *any* counter reaches 16 is at most `m · (e ln 2 / 16)^16 ≈ 1.37e-15 · m`.
//! A blocked filter loads some blocks more than average, so the bound here is looser; the
//! test `counters_rarely_saturate` measures zero saturated counters at 1e5 keys sized for 1%.
//!
//! Its sizing, [`CountingParams`], is in `counting/params.rs`; its format (kind 2) is
//! the Bloom filter's block codec, `format/blocks.rs`.
//!
//! [`to_bloom`]: CountingBloomFilter::to_bloom

mod params;

pub use params::CountingParams;

use crate::block::Block;
use crate::filter::RemoveError;
use crate::hasher::{IntFold, Key, KeyHasher};
use crate::params::ParamsError;
use crate::pattern::{block_index, for_each_position};

/// Counters per word, and the saturation value.
const COUNTERS_PER_WORD: u32 = 16;
const SATURATED: u64 = 15;

/// A blocked counting Bloom filter over owned or borrowed blocks (see the module docs).
#[derive(Clone)]
pub struct CountingBloomFilter<S = crate::Blocks, H = IntFold> {
    blocks: S,
    params: CountingParams,
    hasher: H,
}

#[inline]
fn counter(word: u64, slot: u32) -> u64 {
    (word >> (4 * slot)) & 0xf
}

#[cfg(feature = "alloc")]
impl CountingBloomFilter {
    /// An empty counting filter for `capacity` keys at false-positive rate `fpr`, sized
    /// with the counting filter's own formula ([`CountingParams::for_fpr`]).
    ///
    /// # Errors
    ///
    /// As for [`CountingParams::for_fpr`].
    ///
    /// ```
    /// use linebloom::{CountingBloomFilter, CountingParams};
    /// let f = CountingBloomFilter::for_fpr(10_000, 0.01)?;
    /// assert_eq!(f.params(), CountingParams::for_fpr(10_000, 0.01)?);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        Ok(CountingBloomFilter::new(CountingParams::for_fpr(
            capacity, fpr,
        )?))
    }

    /// An empty counting filter of this shape with the default stable hasher.
    ///
    /// ```
    /// use linebloom::{CountingBloomFilter, CountingParams};
    /// let mut f = CountingBloomFilter::new(CountingParams::for_fpr(1000, 0.01)?);
    /// f.insert("sku-1");
    /// assert!(f.contains("sku-1"));
    /// f.remove("sku-1")?;
    /// assert!(!f.contains("sku-1"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn new(params: CountingParams) -> Self {
        CountingBloomFilter::with_hasher(params, IntFold::default())
    }
}

#[cfg(feature = "alloc")]
impl<H: KeyHasher> CountingBloomFilter<crate::Blocks, H> {
    /// An empty counting filter with the given hasher.
    ///
    /// ```
    /// use linebloom::{CountingBloomFilter, CountingParams, Xxh3};
    /// let f = CountingBloomFilter::with_hasher(CountingParams::new(4, 6)?, Xxh3::with_seed(3));
    /// assert_eq!(f.params().blocks(), 4);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn with_hasher(params: CountingParams, hasher: H) -> Self {
        CountingBloomFilter {
            blocks: crate::Blocks::zeroed(params.blocks()),
            params,
            hasher,
        }
    }
}

impl<S: AsRef<[Block]>> CountingBloomFilter<S, IntFold> {
    /// A counting filter over existing blocks (zeroed for an empty filter), `k` per key.
    ///
    /// # Errors
    ///
    /// As for [`CountingParams::new`] with the storage's block count.
    ///
    /// ```
    /// use linebloom::{Block, CountingBloomFilter};
    /// let mut storage = [Block::ZERO; 8];
    /// let mut f = CountingBloomFilter::from_storage(&mut storage[..], 4)?;
    /// f.insert(&7u32);
    /// assert_eq!(f.count_estimate(&7u32), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_storage(blocks: S, k: u32) -> Result<Self, ParamsError> {
        CountingBloomFilter::from_storage_with_hasher(blocks, k, IntFold::default())
    }
}

impl<S: AsRef<[Block]>, H: KeyHasher> CountingBloomFilter<S, H> {
    /// Like [`from_storage`](CountingBloomFilter::from_storage), with the given hasher.
    ///
    /// # Errors
    ///
    /// As for [`from_storage`](CountingBloomFilter::from_storage).
    pub fn from_storage_with_hasher(blocks: S, k: u32, hasher: H) -> Result<Self, ParamsError> {
        let params = CountingParams::new(blocks.as_ref().len() as u64, k)?;
        Ok(CountingBloomFilter {
            blocks,
            params,
            hasher,
        })
    }

    fn block(&self, hash: u64) -> &Block {
        let blocks = self.blocks.as_ref();
        &blocks[block_index(hash, blocks.len())]
    }

    /// The smallest of the key's counters: 0 means certainly absent; otherwise an upper
    /// bound on how many times the key was inserted (15 = saturated).
    pub fn count_estimate<K: Key + ?Sized>(&self, key: &K) -> u8 {
        self.count_estimate_hash(self.hash(key))
    }

    /// [`count_estimate`](Self::count_estimate) for a caller's hash.
    pub fn count_estimate_hash(&self, hash: u64) -> u8 {
        let b = self.block(hash);
        let mut min = SATURATED;
        for_each_position(hash, self.params.k(), |w, f| {
            min = min.min(counter(b.0[w], f >> 2))
        });
        min as u8
    }

    /// Is `key` possibly in the set?
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) for a caller's hash.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.count_estimate_hash(hash) > 0
    }

    /// Fraction of counters that are not zero.
    pub fn fill_ratio(&self) -> f64 {
        let nonzero: u64 = self
            .blocks
            .as_ref()
            .iter()
            .flat_map(|b| b.0)
            .map(|w| {
                (0..COUNTERS_PER_WORD)
                    .filter(|&i| counter(w, i) != 0)
                    .count() as u64
            })
            .sum();
        nonzero as f64 / (self.params.blocks() as f64 * 128.0)
    }

    /// Number of saturated counters (15): those can no longer be decremented.
    pub fn saturated_counters(&self) -> u64 {
        let blocks = self.blocks.as_ref().iter().flat_map(|b| b.0);
        blocks
            .map(|w| {
                (0..COUNTERS_PER_WORD)
                    .filter(|&i| counter(w, i) == SATURATED)
                    .count() as u64
            })
            .sum()
    }

    /// Estimated number of keys: the sum of all counters divided by `k`. Exact while no
    /// counter has saturated.
    pub fn estimated_len(&self) -> f64 {
        let blocks = self.blocks.as_ref().iter().flat_map(|b| b.0);
        let total: u64 = blocks
            .map(|w| (0..COUNTERS_PER_WORD).map(|i| counter(w, i)).sum::<u64>())
            .sum();
        total as f64 / self.params.k() as f64
    }

    /// The predicted false-positive rate after `n` distinct keys, with this filter's own
    /// formula ([`crate::fpr::counting`]).
    ///
    /// ```
    /// use linebloom::CountingBloomFilter;
    /// let f = CountingBloomFilter::for_fpr(100_000, 0.01)?;
    /// assert!(f.expected_fpr(100_000) <= 0.01);
    /// assert!(f.expected_fpr(100_000) > 0.005); // not the plain filter's 0.001%
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn expected_fpr(&self, n: u64) -> f64 {
        self.params.expected_fpr(n)
    }

    /// The most distinct keys this filter holds with a predicted rate at most `fpr`
    /// ([`CountingParams::capacity_at`]): watch [`estimated_len`](Self::estimated_len)
    /// against it.
    pub fn capacity_at(&self, fpr: f64) -> u64 {
        self.params.capacity_at(fpr)
    }

    /// The false-positive rate of this filter as it is now, for a random non-member: per
    /// block, the chance that the query's positions all land on non-zero counters, from
    /// each word's fraction of non-zero counters ([`crate::BloomFilter::estimated_fpr`]'s
    /// formula with 16 positions per word), averaged over blocks.
    pub fn estimated_fpr(&self) -> f64 {
        let k = self.params.k();
        let blocks = self.blocks.as_ref();
        let total: f64 = blocks
            .iter()
            .map(|b| {
                let nonzero = b.0.map(|w| {
                    let set = (0..COUNTERS_PER_WORD).filter(|&i| counter(w, i) != 0);
                    set.count() as f64 / COUNTERS_PER_WORD as f64
                });
                crate::fpr::block_hit_rate(nonzero, k)
            })
            .sum();
        total / blocks.len() as f64
    }

    /// The plain [`crate::BloomFilter`] with the same parameters and hasher that answers
    /// exactly like this one: bit `f` of word `w` is set when counter `f >> 2` is not zero.
    ///
    /// Its [`estimated_fpr`](crate::BloomFilter::estimated_fpr) equals this filter's, but
    /// its [`estimated_len`](crate::BloomFilter::estimated_len) is about 4× the number of
    /// keys (each non-zero counter becomes 4 set bits, and its estimator assumes one bit
    /// per position): monitor the counting filter itself.
    ///
    /// ```
    /// use linebloom::{CountingBloomFilter, CountingParams};
    /// let mut c = CountingBloomFilter::new(CountingParams::new(16, 7)?);
    /// c.extend(0..200u64);
    /// let plain = c.to_bloom();
    /// assert!((0..200u64).all(|k| plain.contains(&k)));
    /// assert!((1000..3000u64).all(|k| plain.contains(&k) == c.contains(&k)));
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[cfg(feature = "alloc")]
    pub fn to_bloom(&self) -> crate::BloomFilter<crate::Blocks, H>
    where
        H: Clone,
    {
        let mut out =
            crate::BloomFilter::with_hasher(self.params.bloom_shape(), self.hasher.clone());
        self.write_bloom_blocks(out.blocks_mut());
        out
    }

    /// Writes the plain filter's blocks (see `to_bloom`, with `alloc`) into `out`,
    /// with no allocation. `out.len()` must equal the block count.
    ///
    /// # Panics
    ///
    /// If `out.len()` differs from the block count.
    pub fn write_bloom_blocks(&self, out: &mut [Block]) {
        assert_eq!(
            out.len(),
            self.params.blocks(),
            "write_bloom_blocks: wrong block count"
        );
        for (dst, src) in out.iter_mut().zip(self.blocks.as_ref()) {
            for (dw, &sw) in dst.0.iter_mut().zip(&src.0) {
                let mut bits = 0u64;
                for i in 0..COUNTERS_PER_WORD {
                    if counter(sw, i) != 0 {
                        bits |= 0xf << (4 * i);
                    }
                }
                *dw = bits;
            }
        }
    }
}

impl<S: AsRef<[Block]> + AsMut<[Block]>, H: KeyHasher> CountingBloomFilter<S, H> {
    /// Adds `key`; returns `true` if it was certainly absent before (new, as
    /// `HashSet::insert`; see [`crate::BloomFilter::insert`] on other crates').
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.insert_hash(self.hash(key))
    }

    /// [`insert`](Self::insert) for a caller's hash.
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let was_absent = !self.contains_hash(hash);
        let k = self.params.k();
        let blocks = self.blocks.as_mut();
        let b = &mut blocks[block_index(hash, blocks.len())];
        for_each_position(hash, k, |w, f| {
            let slot = f >> 2;
            if counter(b.0[w], slot) < SATURATED {
                b.0[w] += 1 << (4 * slot);
            }
        });
        was_absent
    }

    /// Removes one insertion of `key`. Refused, with nothing changed, when one of its
    /// counters is zero (the key is certainly absent). Saturated counters stay at 15.
    ///
    /// # Errors
    ///
    /// [`RemoveError::NotPresent`] when one of the key's counters is zero; nothing
    /// changes.
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> Result<(), RemoveError> {
        self.remove_hash(self.hash(key))
    }

    /// [`remove`](Self::remove) for a caller's hash.
    ///
    /// # Errors
    ///
    /// As for [`remove`](Self::remove).
    pub fn remove_hash(&mut self, hash: u64) -> Result<(), RemoveError> {
        if !self.contains_hash(hash) {
            return Err(RemoveError::NotPresent);
        }
        let k = self.params.k();
        let blocks = self.blocks.as_mut();
        let b = &mut blocks[block_index(hash, blocks.len())];
        for_each_position(hash, k, |w, f| {
            let slot = f >> 2;
            // Non-zero by the check above (a counter hit twice by this key was raised
            // twice by its insert, so it is at least 2 unless saturated).
            let c = counter(b.0[w], slot);
            if c != SATURATED && c > 0 {
                b.0[w] -= 1 << (4 * slot);
            }
        });
        Ok(())
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.blocks.as_mut().fill(Block::ZERO);
    }

    /// Adds every insertion of `other`: the counters add, each saturating at 15 (and a
    /// saturated counter stays, as any saturated counter does), so a key inserted into
    /// either side is held, and removing it works as it would have there. Both must have
    /// the same parameters and hasher.
    ///
    /// # Errors
    ///
    /// [`IncompatibleError::Params`](crate::IncompatibleError::Params) when the shapes
    /// differ, [`IncompatibleError::Hasher`](crate::IncompatibleError::Hasher) when the
    /// hashers do; `self` is unchanged.
    ///
    /// ```
    /// use linebloom::{CountingBloomFilter, CountingParams};
    /// let p = CountingParams::new(4, 5)?;
    /// let (mut a, mut b) = (CountingBloomFilter::new(p), CountingBloomFilter::new(p));
    /// a.insert("x");
    /// b.insert("x");
    /// b.insert("y");
    /// a.union(&b)?;
    /// assert_eq!(a.count_estimate("x"), 2);
    /// a.remove("x")?;
    /// assert!(a.contains("x") && a.contains("y"));
    /// assert!(a.union(&CountingBloomFilter::new(CountingParams::new(5, 5)?)).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn union<S2: AsRef<[Block]>>(
        &mut self,
        other: &CountingBloomFilter<S2, H>,
    ) -> Result<(), crate::IncompatibleError>
    where
        H: PartialEq,
    {
        crate::IncompatibleError::check(
            (self.params.bloom_shape(), &self.hasher),
            (other.params.bloom_shape(), &other.hasher),
        )?;
        for (ours, theirs) in self.blocks.as_mut().iter_mut().zip(other.blocks.as_ref()) {
            for (a, &b) in ours.0.iter_mut().zip(&theirs.0) {
                *a = add_counters(*a, b);
            }
        }
        Ok(())
    }
}

/// The sixteen 4-bit counters of two words added, each saturating at 15.
fn add_counters(a: u64, b: u64) -> u64 {
    (0..16).fold(0, |sum, slot| {
        sum | (counter(a, slot) + counter(b, slot)).min(SATURATED) << (4 * slot)
    })
}

crate::filter::block_storage_accessors!(CountingBloomFilter, CountingParams);
crate::filter::family_traits!(
    CountingBloomFilter<S, H>, [S, H: KeyHasher], hasher: H,
    read: [S: AsRef<[Block]>], write: [S: AsRef<[Block]> + AsMut<[Block]>],
    memory: |f| f.params.bytes(),
    insert, extend,
);

impl<S: AsRef<[Block]> + AsMut<[Block]>, H: KeyHasher> crate::RemoveFilter
    for CountingBloomFilter<S, H>
{
    fn remove_hash(&mut self, hash: u64) -> Result<(), RemoveError> {
        CountingBloomFilter::remove_hash(self, hash)
    }
}

impl<S: AsRef<[Block]>, H: core::fmt::Debug> core::fmt::Debug for CountingBloomFilter<S, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("CountingBloomFilter")
            .field("blocks", &self.params.blocks())
            .field("k", &self.params.k())
            .field("hasher", &self.hasher)
            .finish()
    }
}
