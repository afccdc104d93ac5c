//! [`ClassicBloomFilter`]: the textbook, unblocked filter, as a baseline.
//!
//! `m` bits, `k` positions per key anywhere in the array, each from its own 64-bit value
//! (probe scheme 1 of the format):
//!
//! ```text
//! for i in 1..=k:
//!     x_i = fmix64(h + i · 0x9e3779b97f4a7c15)          // a Weyl sequence, mixed
//!     position_i = (x_i as u128 * m as u128) >> 64      // multiply-shift, any m
//! ```
//!
//! Why not double hashing (`a + i·b`, Kirsch and Mitzenmacher 2006), which this filter
//! used first: its whole pattern follows from two numbers, the start and the stride,
//! each resolved to about `log2 m` bits, so a non-member repeats a member's pattern with
//! probability near `n·k/m²` whatever `k` is. At 1000 keys sized for 1e-7 (`m` = 33,716,
//! `k` = 23) that floor measured 2.7e-6, 27× the target. With one mixed 64-bit value per
//! position, the positions are as independent as the 64-bit hash allows, the exact
//! formula ([`fpr::classic_exact`]) holds, and the only floor left is the hash's own
//! ([`fpr::hash_floor`]). It costs one `fmix64` per probe, next to a cache miss each.
//!
//! Each probe is its own cache miss: this filter has the lowest false-positive rate per
//! bit and costs `k` misses per operation. The lab compares the blocked filter with it.
//!
//! | file | holds |
//! |---|---|
//! | `classic.rs` | [`ClassicBloomFilter`]: constructors, inserts, lookups, `union` |
//! | `classic/params.rs` | [`ClassicParams`]: its sizing, and the probe scheme above |
//!
//! Its format (kind 4) is written and read by `format/classic.rs`.

mod params;

pub use params::{ClassicParams, MAX_CLASSIC_K};
pub(crate) use params::{PROBE_SCHEME, for_each_probe};

use crate::block::Block;
#[cfg(doc)]
use crate::fpr;
use crate::hasher::{IntFold, Key, KeyHasher};
use crate::params::ParamsError;

/// The textbook Bloom filter over owned or borrowed blocks (see the module docs).
#[derive(Clone)]
pub struct ClassicBloomFilter<S = crate::Blocks, H = IntFold> {
    blocks: S,
    params: ClassicParams,
    hasher: H,
}

#[cfg(feature = "alloc")]
impl ClassicBloomFilter {
    /// An empty classic filter with the default stable hasher.
    ///
    /// ```
    /// use linebloom::{ClassicBloomFilter, ClassicParams};
    /// let mut f = ClassicBloomFilter::new(ClassicParams::for_fpr(1000, 0.01)?);
    /// f.insert("x");
    /// assert!(f.contains("x"));
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn new(params: ClassicParams) -> Self {
        ClassicBloomFilter::with_hasher(params, IntFold::default())
    }

    /// An empty classic filter for `capacity` keys at false-positive rate `fpr`
    /// ([`ClassicParams::for_fpr`]), with the default hasher.
    ///
    /// # Errors
    ///
    /// As for [`ClassicParams::for_fpr`].
    ///
    /// ```
    /// use linebloom::{ClassicBloomFilter, ClassicParams};
    /// let f = ClassicBloomFilter::for_fpr(10_000, 0.01)?;
    /// assert_eq!(f.params(), ClassicParams::for_fpr(10_000, 0.01)?);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        Ok(ClassicBloomFilter::new(ClassicParams::for_fpr(
            capacity, fpr,
        )?))
    }
}

impl<S: AsRef<[Block]>> ClassicBloomFilter<S, IntFold> {
    /// A classic filter of `params` over existing blocks (zeroed for an empty filter),
    /// with the default hasher.
    ///
    /// # Errors
    ///
    /// [`ParamsError::StorageLength`] unless there are exactly `params.blocks()` blocks.
    ///
    /// ```
    /// use linebloom::{Block, ClassicBloomFilter, ClassicParams};
    /// let mut storage = [Block::ZERO; 2];
    /// let mut f = ClassicBloomFilter::from_storage(&mut storage[..], ClassicParams::new(1000, 5)?)?;
    /// f.insert("x");
    /// assert!(f.contains("x"));
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn from_storage(blocks: S, params: ClassicParams) -> Result<Self, ParamsError> {
        ClassicBloomFilter::from_storage_with_hasher(blocks, params, IntFold::default())
    }
}

#[cfg(feature = "alloc")]
impl<H: KeyHasher> ClassicBloomFilter<crate::Blocks, H> {
    /// An empty classic filter with the given hasher.
    #[must_use]
    pub fn with_hasher(params: ClassicParams, hasher: H) -> Self {
        ClassicBloomFilter {
            blocks: crate::Blocks::zeroed(params.blocks()),
            params,
            hasher,
        }
    }
}

impl<S: AsRef<[Block]>, H: KeyHasher> ClassicBloomFilter<S, H> {
    /// [`from_storage`](ClassicBloomFilter::from_storage) with the given hasher.
    ///
    /// # Errors
    ///
    /// [`ParamsError::StorageLength`] unless there are exactly `params.blocks()` blocks.
    ///
    /// ```
    /// use linebloom::{Block, ClassicBloomFilter, ClassicParams, IntFold};
    /// let mut s = [Block::ZERO; 2];
    /// let p = ClassicParams::new(1000, 5)?;
    /// assert!(ClassicBloomFilter::from_storage_with_hasher(&mut s[..], p, IntFold::default()).is_ok());
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn from_storage_with_hasher(
        blocks: S,
        params: ClassicParams,
        hasher: H,
    ) -> Result<Self, ParamsError> {
        let got = blocks.as_ref().len();
        if got != params.blocks() {
            return Err(ParamsError::StorageLength {
                expected: params.blocks() as u64,
                got: got as u64,
            });
        }
        Ok(ClassicBloomFilter {
            blocks,
            params,
            hasher,
        })
    }

    /// Is `key` possibly in the set?
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) for a caller's hash.
    pub fn contains_hash(&self, hash: u64) -> bool {
        let blocks = self.blocks.as_ref();
        let mut all = true;
        for_each_probe(hash, self.params.bits(), self.params.k(), |bit| {
            all &=
                blocks[(bit / 512) as usize].0[(bit % 512 / 64) as usize] & (1 << (bit % 64)) != 0;
        });
        all
    }

    /// The false-positive rate as it is now, for a random non-member: `fill^k`, exact
    /// given the bits, since each of the `k` probes is uniform over the `m` bits.
    pub fn estimated_fpr(&self) -> f64 {
        libm::pow(self.fill_ratio(), self.params.k() as f64)
    }
}

impl<S: AsRef<[Block]> + AsMut<[Block]>, H: KeyHasher> ClassicBloomFilter<S, H> {
    /// Adds `key`; `true` if some bit was clear before (new, as `HashSet::insert`; see
    /// [`crate::BloomFilter::insert`] on other crates' conventions).
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.insert_hash(self.hash(key))
    }

    /// [`insert`](Self::insert) for a caller's hash.
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let blocks = self.blocks.as_mut();
        let mut fresh = false;
        for_each_probe(hash, self.params.bits(), self.params.k(), |bit| {
            let word = &mut blocks[(bit / 512) as usize].0[(bit % 512 / 64) as usize];
            fresh |= *word & (1 << (bit % 64)) == 0;
            *word |= 1 << (bit % 64);
        });
        fresh
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.blocks.as_mut().fill(Block::ZERO);
    }

    /// Adds every key of `other` (same shape and hasher).
    ///
    /// # Errors
    ///
    /// [`IncompatibleError::Params`](crate::IncompatibleError::Params)
    /// when the sizes or `k` differ, [`IncompatibleError::Hasher`](crate::IncompatibleError::Hasher)
    /// when the hashers do; `self` is unchanged.
    pub fn union<S2: AsRef<[Block]>>(
        &mut self,
        other: &ClassicBloomFilter<S2, H>,
    ) -> Result<(), crate::IncompatibleError<ClassicParams>>
    where
        H: PartialEq,
    {
        crate::IncompatibleError::check(
            (self.params, &self.hasher),
            (other.params, &other.hasher),
        )?;
        for (a, b) in self.blocks.as_mut().iter_mut().zip(other.blocks.as_ref()) {
            for (x, y) in a.0.iter_mut().zip(b.0) {
                *x |= y;
            }
        }
        Ok(())
    }
}

crate::filter::block_storage_accessors!(ClassicBloomFilter, ClassicParams, bit_array);
crate::filter::family_traits!(
    ClassicBloomFilter<S, H>, [S, H: KeyHasher], hasher: H,
    read: [S: AsRef<[Block]>], write: [S: AsRef<[Block]> + AsMut<[Block]>],
    memory: |f| f.params.bits().div_ceil(8) as usize,
    insert, extend,
);

impl<S: AsRef<[Block]>, H: core::fmt::Debug> core::fmt::Debug for ClassicBloomFilter<S, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ClassicBloomFilter")
            .field("bits", &self.params.bits())
            .field("k", &self.params.k())
            .field("hasher", &self.hasher)
            .finish()
    }
}
