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
    /// the smallest `m` from there (with `k = round((m/n) ln 2)`, at most 32) whose
    /// predicted rate ([`expected_fpr`](Self::expected_fpr): [`fpr::classic_exact`] plus
    /// the 64-bit hash's floor) is at most `SIZING_MARGIN × p`, as the blocked filter's
    /// sizing does: steps that double from 0.5% until one meets the target, then
    /// bisection.
    ///
    /// Refused with [`ParamsError::FprBelowHashFloor`] when `p` (with the margin) is at or
    /// below [`fpr::hash_floor`]: no size can deliver it.
    ///
    /// ```
    /// use linebloom::{ClassicParams, ParamsError};
    /// let p = ClassicParams::for_fpr(100_000, 0.01).unwrap();
    /// assert!(p.expected_fpr(100_000) <= 0.01);
    /// let floor = ClassicParams::for_fpr(1 << 32, 1e-12);
    /// assert_eq!(floor, Err(ParamsError::FprBelowHashFloor { capacity: 1 << 32 }));
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        if !(fpr > 0.0 && fpr < 1.0) {
            return Err(ParamsError::InvalidFpr);
        }
        if capacity == 0 {
            return Err(ParamsError::ZeroCapacity);
        }
        let goal = fpr * SIZING_MARGIN;
        if goal <= fpr::hash_floor(capacity) {
            return Err(ParamsError::FprBelowHashFloor { capacity });
        }
        let ln2 = core::f64::consts::LN_2;
        let max_bits = MAX_BYTES.saturating_mul(8);
        let shape = |m: u64| {
            let k = libm::round(m as f64 / capacity as f64 * ln2) as u32;
            ClassicParams::new(m, k.clamp(1, MAX_CLASSIC_K))
        };
        let meets = |m: u64| {
            shape(m).is_ok_and(|p| {
                let mean = p.expected_fpr(capacity);
                mean <= goal && fpr::classic_per_filter(m, p.k, capacity) <= fpr
            })
        };
        let start = libm::ceil(-(capacity as f64) * libm::log(fpr) / (ln2 * ln2)).max(1.0);
        if start > max_bits as f64 {
            return Err(ParamsError::TooLarge {
                bytes: (start / 8.0).min(u64::MAX as f64) as u64,
            });
        }
        let start = start as u64;
        // `lo` fails (or is below the start), `hi` meets.
        let (mut lo, mut hi) = (start - 1, start);
        let mut step = 0.005;
        while !meets(hi) {
            if hi >= max_bits {
                return Err(ParamsError::TooLarge {
                    bytes: (hi as f64 * (1.0 + step) / 8.0).min(u64::MAX as f64) as u64,
                });
            }
            lo = hi;
            hi = (libm::ceil(start as f64 * (1.0 + step)) as u64).clamp(hi + 1, max_bits);
            step *= 2.0;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if meets(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        shape(hi)
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

    /// The most distinct keys this shape holds with a predicted rate at most `fpr` (see
    /// [`crate::Params::capacity_at`]).
    ///
    /// ```
    /// use linebloom::ClassicParams;
    /// let p = ClassicParams::for_fpr(10_000, 0.01)?;
    /// assert!(p.capacity_at(0.01) >= 10_000);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn capacity_at(&self, fpr: f64) -> u64 {
        crate::params::largest_meeting(|n| self.expected_fpr(n) <= fpr)
    }

    /// Estimated number of distinct keys in a classic filter of this shape with `ones`
    /// of its `m` bits set ([`ClassicBloomFilter::estimated_len`]'s estimator), for bits
    /// kept elsewhere, such as a Redis string counted with `BITCOUNT`.
    ///
    /// ```
    /// use linebloom::{ClassicBloomFilter, ClassicParams};
    /// let params = ClassicParams::for_fpr(10_000, 0.01)?;
    /// let mut f = ClassicBloomFilter::new(params);
    /// for key in 0..10_000u64 { f.insert(&key); }
    /// let ones = (f.fill_ratio() * params.bits() as f64).round() as u64;
    /// assert_eq!(params.estimated_len(ones), f.estimated_len());
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn estimated_len(&self, ones: u64) -> f64 {
        let clear = self.bits.saturating_sub(ones) as f64 / self.bits as f64;
        fpr::estimated_keys(clear, self.k, self.bits as f64)
    }

    /// The predicted rate after `n` distinct keys: [`fpr::classic_exact`] plus the 64-bit
    /// hash's floor ([`fpr::hash_floor`]), as [`crate::fpr::blocked`] includes it.
    pub fn expected_fpr(&self, n: u64) -> f64 {
        let ideal = fpr::classic_exact(self.bits, self.k, n);
        ideal + (1.0 - ideal) * fpr::hash_floor(n)
    }
}

/// The textbook Bloom filter over owned or borrowed blocks (see the module docs).
#[derive(Clone)]
pub struct ClassicBloomFilter<S = crate::Blocks, H = IntFold> {
    blocks: S,
    params: ClassicParams,
    hasher: H,
}

/// The step of the Weyl sequence the probes are drawn from: `2⁶⁴/φ`, odd.
const PROBE_STEP: u64 = 0x9e37_79b9_7f4a_7c15;

/// The format's id of the probe scheme above (bytes 40..48 of a classic encoding).
pub(crate) const PROBE_SCHEME: u64 = 1;

/// Calls `f(bit)` for each of the key's `k` bit indices in `0..m`.
#[inline(always)]
fn for_each_probe(hash: u64, m: u64, k: u32, mut f: impl FnMut(u64)) {
    let mut state = hash;
    for _ in 0..k {
        state = state.wrapping_add(PROBE_STEP);
        f(((fmix64(state) as u128 * m as u128) >> 64) as u64);
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
impl<H: KeyHasher> ClassicBloomFilter<crate::Blocks, H> {
    /// An empty classic filter with the given hasher.
    pub fn with_hasher(params: ClassicParams, hasher: H) -> Self {
        ClassicBloomFilter {
            blocks: crate::Blocks::zeroed(params.blocks()),
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

    /// Estimated number of distinct keys inserted, from the fraction of clear bits (see
    /// [`crate::BloomFilter::estimated_len`]).
    pub fn estimated_len(&self) -> f64 {
        self.params
            .estimated_len(crate::block::count_ones(self.blocks.as_ref()))
    }

    /// The false-positive rate as it is now, for a random non-member: `fill^k`, exact
    /// given the bits, since each of the `k` probes is uniform over the `m` bits.
    pub fn estimated_fpr(&self) -> f64 {
        libm::pow(self.fill_ratio(), self.params.k as f64)
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
    ///
    /// # Errors
    ///
    /// [`IncompatibleError::ClassicParams`](crate::IncompatibleError::ClassicParams)
    /// when the sizes or `k` differ, [`IncompatibleError::Hasher`](crate::IncompatibleError::Hasher)
    /// when the hashers do; `self` is unchanged.
    pub fn union<S2: AsRef<[Block]>>(
        &mut self,
        other: &ClassicBloomFilter<S2, H>,
    ) -> Result<(), crate::IncompatibleError>
    where
        H: PartialEq,
    {
        if self.params != other.params {
            return Err(crate::IncompatibleError::ClassicParams {
                ours: self.params,
                theirs: other.params,
            });
        }
        if self.hasher != other.hasher {
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
