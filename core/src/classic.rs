//! [`ClassicBloomFilter`]: the textbook, unblocked filter, as a baseline.
//!
//! `m` bits, `k` positions per key anywhere in the array, by enhanced double hashing
//! (Kirsch and Mitzenmacher 2006; Dillinger and Manolios 2004):
//!
//! ```text
//! a = h;  b = fmix64(h) | 1          // the stride is odd: never 0, never even
//! for i in 0..k:
//!     position_i = (a as u128 * m as u128) >> 64      // multiply-shift, any m
//!     a = a + b;  b = b + i                           // the "enhanced" cubic term
//! ```
//!
//! An odd stride avoids the classic pitfalls: a zero stride would put all `k` probes on
//! one bit, and an even one shortens the probe cycle when `m` is a power of two. The
//! growing stride (`b += i`) breaks the pairwise-collision structure of plain double
//! hashing. Reduction by multiply-shift uses `a`'s high bits, so `m` need not be a power
//! of two.
//!
//! Each probe is its own cache miss: this filter has the lowest false-positive rate per
//! bit and costs `k` misses per operation. The lab compares the blocked filter with it.

use crate::block::Block;
use crate::fpr;
use crate::hash::fmix64;
use crate::hasher::{IntFold, Key, KeyHasher};
use crate::params::{MAX_BYTES, ParamsError, SIZING_MARGIN};

/// Largest `k` of the classic filter.
pub const MAX_CLASSIC_K: u32 = 32;

/// Shape of a [`ClassicBloomFilter`]: `bits` bits and `k` probes per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClassicParams {
    bits: u64,
    k: u32,
}

impl ClassicParams {
    /// Raw shape.
    ///
    /// ```
    /// use linebloom::ClassicParams;
    /// assert_eq!(ClassicParams::new(1000, 7).unwrap().blocks(), 2);
    /// assert!(ClassicParams::new(0, 7).is_err());
    /// ```
    pub fn new(bits: u64, k: u32) -> Result<Self, ParamsError> {
        if !(1..=MAX_CLASSIC_K).contains(&k) {
            return Err(ParamsError::InvalidK(k));
        }
        if bits == 0 {
            return Err(ParamsError::ZeroBlocks);
        }
        if bits.div_ceil(8) > MAX_BYTES {
            return Err(ParamsError::TooLarge {
                bytes: bits.div_ceil(8),
            });
        }
        Ok(ClassicParams { bits, k })
    }

    /// Sized by the classic formula, `m = −n ln p / (ln 2)²` and `k = (m/n) ln 2`, then
    /// grown by 0.5% steps until the *exact* rate ([`fpr::classic_exact`]) is at most
    /// `SIZING_MARGIN × p`, as the blocked filter's sizing does.
    ///
    /// ```
    /// use linebloom::{ClassicParams, fpr};
    /// let p = ClassicParams::for_fpr(100_000, 0.01).unwrap();
    /// assert!(fpr::classic_exact(p.bits(), p.k(), 100_000) <= 0.01);
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        if !(fpr > 0.0 && fpr < 1.0) {
            return Err(ParamsError::InvalidFpr(fpr));
        }
        if capacity == 0 {
            return Err(ParamsError::ZeroCapacity);
        }
        let ln2 = core::f64::consts::LN_2;
        let mut m = libm::ceil(-(capacity as f64) * libm::log(fpr) / (ln2 * ln2)).max(1.0);
        loop {
            if m / 8.0 > MAX_BYTES as f64 {
                return Err(ParamsError::TooLarge {
                    bytes: (m / 8.0).min(u64::MAX as f64) as u64,
                });
            }
            let k = (libm::round(m / capacity as f64 * ln2) as u32).clamp(1, MAX_CLASSIC_K);
            if fpr::classic_exact(m as u64, k, capacity) <= fpr * SIZING_MARGIN {
                return ClassicParams::new(m as u64, k);
            }
            m = libm::ceil(m * 1.005);
        }
    }

    /// Bits.
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// Probes per key.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// 64-byte blocks of storage (`⌈bits/512⌉`; the tail of the last one is unused).
    pub fn blocks(&self) -> usize {
        self.bits.div_ceil(Block::BITS as u64) as usize
    }

    /// Calls `f` with each of `hash`'s `k` bit indices in `0..bits`: the positions this
    /// filter sets and tests, for callers that keep the bits elsewhere (a Redis string
    /// with `SETBIT`/`GETBIT`).
    ///
    /// ```
    /// use linebloom::ClassicParams;
    /// let p = ClassicParams::new(1000, 3).unwrap();
    /// let mut bits = Vec::new();
    /// p.for_each_position(42, |b| bits.push(b));
    /// assert_eq!(bits.len(), 3);
    /// assert!(bits.iter().all(|&b| b < 1000));
    /// ```
    pub fn for_each_position(&self, hash: u64, f: impl FnMut(u64)) {
        for_each_probe(hash, self.bits, self.k, f)
    }

    /// The predicted rate after `n` keys ([`fpr::classic_exact`]).
    pub fn expected_fpr(&self, n: u64) -> f64 {
        fpr::classic_exact(self.bits, self.k, n)
    }
}

/// The textbook Bloom filter over owned or borrowed blocks (see the module docs).
#[derive(Clone)]
pub struct ClassicBloomFilter<S = crate::bloom::DefaultStorage, H = IntFold> {
    blocks: S,
    params: ClassicParams,
    hasher: H,
}

/// Calls `f(bit)` for each of the key's `k` bit indices in `0..m`.
#[inline(always)]
fn for_each_probe(hash: u64, m: u64, k: u32, mut f: impl FnMut(u64)) {
    let mut a = hash;
    let mut b = fmix64(hash) | 1;
    for i in 0..k as u64 {
        f(((a as u128 * m as u128) >> 64) as u64);
        a = a.wrapping_add(b);
        b = b.wrapping_add(i);
    }
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
    pub fn new(params: ClassicParams) -> Self {
        ClassicBloomFilter::with_hasher(params, IntFold::default())
    }
}

#[cfg(feature = "alloc")]
impl<H: KeyHasher> ClassicBloomFilter<alloc::boxed::Box<[Block]>, H> {
    /// An empty classic filter with the given hasher.
    pub fn with_hasher(params: ClassicParams, hasher: H) -> Self {
        ClassicBloomFilter {
            blocks: crate::bloom::zeroed_blocks(params.blocks()),
            params,
            hasher,
        }
    }
}

impl<S: AsRef<[Block]>, H: KeyHasher> ClassicBloomFilter<S, H> {
    /// A classic filter of `params` over existing blocks (zeroed for an empty filter);
    /// there must be exactly `params.blocks()` of them.
    ///
    /// ```
    /// use linebloom::{Block, ClassicBloomFilter, ClassicParams, IntFold};
    /// let mut s = [Block::ZERO; 2];
    /// let p = ClassicParams::new(1000, 5).unwrap();
    /// assert!(ClassicBloomFilter::from_storage_with_hasher(&mut s[..], p, IntFold::default()).is_ok());
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

    /// The filter's shape.
    pub fn params(&self) -> ClassicParams {
        self.params
    }

    /// The hasher.
    pub fn hasher(&self) -> &H {
        &self.hasher
    }

    /// The storage blocks.
    pub fn as_blocks(&self) -> &[Block] {
        self.blocks.as_ref()
    }

    /// The 64-bit hash this filter uses for `key`.
    #[inline]
    pub fn hash<K: Key + ?Sized>(&self, key: &K) -> u64 {
        key.hash_key(&self.hasher)
    }

    /// Is `key` possibly in the set?
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) for a caller's hash.
    pub fn contains_hash(&self, hash: u64) -> bool {
        let blocks = self.blocks.as_ref();
        let mut all = true;
        for_each_probe(hash, self.params.bits, self.params.k, |bit| {
            all &=
                blocks[(bit / 512) as usize].0[(bit % 512 / 64) as usize] & (1 << (bit % 64)) != 0;
        });
        all
    }

    /// Fraction of the `m` bits set.
    pub fn fill_ratio(&self) -> f64 {
        crate::block::count_ones(self.blocks.as_ref()) as f64 / self.params.bits as f64
    }
}

impl<S: AsRef<[Block]> + AsMut<[Block]>, H: KeyHasher> ClassicBloomFilter<S, H> {
    /// Adds `key`; `true` if some bit was clear before.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.insert_hash(self.hash(key))
    }

    /// [`insert`](Self::insert) for a caller's hash.
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let blocks = self.blocks.as_mut();
        let mut fresh = false;
        for_each_probe(hash, self.params.bits, self.params.k, |bit| {
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
    pub fn union<S2: AsRef<[Block]>>(
        &mut self,
        other: &ClassicBloomFilter<S2, H>,
    ) -> Result<(), crate::IncompatibleError>
    where
        H: PartialEq,
    {
        if self.params != other.params || self.hasher != other.hasher {
            return Err(crate::IncompatibleError::Hasher);
        }
        for (a, b) in self.blocks.as_mut().iter_mut().zip(other.blocks.as_ref()) {
            for (x, y) in a.0.iter_mut().zip(b.0) {
                *x |= y;
            }
        }
        Ok(())
    }
}

crate::bloom::block_filter_traits!(ClassicBloomFilter, extend);

impl<S: AsRef<[Block]>, H: core::fmt::Debug> core::fmt::Debug for ClassicBloomFilter<S, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ClassicBloomFilter")
            .field("bits", &self.params.bits)
            .field("k", &self.params.k)
            .field("hasher", &self.hasher)
            .finish()
    }
}
