//! [`AtomicBloomFilter`]: the blocked filter shared between threads through `&self`.
//!
//! Blocks are eight `AtomicU64` words with the same layout as [`Block`]. A query loads
//! the key's words one at a time and stops at the first clear bit (a miss usually reads
//! one or two words). An insert loads each word and issues a `fetch_or` only where one of
//! the key's bits is still clear, so inserting into a filling filter mostly reads. Both
//! are lock-free, and both compute positions with the scalar form of the scheme
//! ([`crate::pattern::all_positions`]): one 32-bit multiply and shift per bit.
//!
//! **No insert is lost.** `fetch_or` is an atomic read-modify-write, so concurrent ORs
//! into the same word all take effect whatever their interleaving, and OR is commutative
//! and idempotent, so the final bits are the union of every thread's keys. `Relaxed`
//! ordering suffices for that; a key inserted by one thread is seen by another after
//! any synchronisation between them (a `join`, a channel, a mutex), which gives the
//! happens-before edge. Without such an edge a concurrent `contains` may or may not see
//! a key whose insert is still in progress, exactly as with any concurrent set.
//!
//! **Why no loom test.** loom explores interleavings of loom's own atomics; the filter
//! would need a loom-only build of its storage. The one property at stake (no lost OR)
//! is a single RMW per word with no ordering between words to get wrong, so loom would
//! only re-check `fetch_or`'s atomicity. The stress test in `tests/family.rs` (threads
//! inserting disjoint keys, then every key checked after the join) checks the property
//! on real hardware instead.
//!
//! Conversions to and from [`BloomFilter`] move a boxed payload without copying:
//! `AtomicU64` has the same size, alignment and bit validity as `u64`. The atomic
//! filter's storage is always a heap box, so a plain filter on huge pages (2 MiB or more
//! on Linux, see `Blocks::zeroed`) is copied once on the way in.

use crate::block::Block;
use crate::bloom::BloomFilter;
use crate::hasher::{IntFold, Key, KeyHasher};
use crate::params::{Params, ParamsError};
use crate::pattern::{all_positions, block_index, for_each_position};
use core::sync::atomic::{AtomicU64, Ordering};

/// A 64-byte block of atomic words, laid out exactly like [`Block`].
#[repr(C, align(64))]
pub struct AtomicBlock(pub [AtomicU64; 8]);

/// The words as they are now (each loaded `Relaxed`), as [`Block`]'s `Debug` shows them.
impl core::fmt::Debug for AtomicBlock {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        Block(core::array::from_fn(|w| self.0[w].load(Ordering::Relaxed))).fmt(f)
    }
}

const _: () = assert!(core::mem::size_of::<AtomicBlock>() == core::mem::size_of::<Block>());
const _: () = assert!(core::mem::align_of::<AtomicBlock>() == core::mem::align_of::<Block>());

/// A blocked Bloom filter for concurrent inserts and queries through `&self`.
pub struct AtomicBloomFilter<H = IntFold> {
    blocks: alloc::boxed::Box<[AtomicBlock]>,
    params: Params,
    hasher: H,
}

impl AtomicBloomFilter {
    /// An empty filter of this shape with the default stable hasher.
    ///
    /// ```
    /// use linebloom::{AtomicBloomFilter, Params};
    /// let f = AtomicBloomFilter::new(Params::for_fpr(10_000, 0.01)?);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| f.insert("from a thread"));
    /// });
    /// assert!(f.contains("from a thread"));
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn new(params: Params) -> Self {
        AtomicBloomFilter::from(BloomFilter::new(params))
    }

    /// An empty filter for `capacity` keys at false-positive rate `fpr`
    /// ([`Params::for_fpr`]), with the default hasher.
    ///
    /// # Errors
    ///
    /// As for [`Params::for_fpr`].
    ///
    /// ```
    /// use linebloom::{AtomicBloomFilter, Params};
    /// let f = AtomicBloomFilter::for_fpr(10_000, 0.01)?;
    /// assert_eq!(f.params(), Params::for_fpr(10_000, 0.01)?);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        Ok(AtomicBloomFilter::new(Params::for_fpr(capacity, fpr)?))
    }
}

impl<H: KeyHasher> AtomicBloomFilter<H> {
    /// The filter's shape.
    #[must_use]
    pub fn params(&self) -> Params {
        self.params
    }

    /// The hasher.
    #[must_use]
    pub fn hasher(&self) -> &H {
        &self.hasher
    }

    /// The 64-bit hash this filter uses for `key`.
    #[inline]
    pub fn hash<K: Key + ?Sized>(&self, key: &K) -> u64 {
        key.hash_key(&self.hasher)
    }

    /// Adds `key` (lock-free). Returns `true` if some bit was clear before this call
    /// (new, as `HashSet::insert`; see [`BloomFilter::insert`] on other crates).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.insert_hash(self.hash(key))
    }

    /// [`insert`](Self::insert) for a caller's hash.
    #[inline]
    pub fn insert_hash(&self, hash: u64) -> bool {
        let block = &self.blocks[block_index(hash, self.blocks.len())];
        let mut fresh = false;
        for_each_position(hash, self.params.k(), |w, field| {
            let bit = 1u64 << field;
            // A bit once seen set stays set (only `clear(&mut self)` resets), so skipping
            // the RMW for it loses nothing; a clear bit gets an atomic OR, whose result
            // says whether this call or a racing one set it.
            if block.0[w].load(Ordering::Relaxed) & bit == 0 {
                fresh |= block.0[w].fetch_or(bit, Ordering::Relaxed) & bit == 0;
            }
        });
        fresh
    }

    /// Is `key` possibly in the set?
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) for a caller's hash.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let block = &self.blocks[block_index(hash, self.blocks.len())];
        all_positions(hash, self.params.k(), |w, field| {
            block.0[w].load(Ordering::Relaxed) >> field & 1 == 1
        })
    }

    /// Fraction of bits set (a snapshot while other threads insert).
    pub fn fill_ratio(&self) -> f64 {
        self.ones() as f64 / self.params.bits() as f64
    }

    /// Bits set (a snapshot while other threads insert).
    fn ones(&self) -> u64 {
        self.blocks
            .iter()
            .flat_map(|b| &b.0)
            .map(|w| w.load(Ordering::Relaxed).count_ones() as u64)
            .sum()
    }

    /// Estimated number of distinct keys inserted ([`BloomFilter::estimated_len`]'s
    /// estimator, on a snapshot of the bits).
    pub fn estimated_len(&self) -> f64 {
        self.params.estimated_len(self.ones())
    }

    /// The false-positive rate as it is now ([`BloomFilter::estimated_fpr`]'s formula, on
    /// a snapshot of the bits).
    pub fn estimated_fpr(&self) -> f64 {
        let total: f64 = self
            .blocks
            .iter()
            .map(|b| {
                let fill = core::array::from_fn(|w| {
                    b.0[w].load(Ordering::Relaxed).count_ones() as f64 / 64.0
                });
                crate::fpr::block_hit_rate(fill, self.params.k())
            })
            .sum();
        total / self.blocks.len() as f64
    }

    /// Removes every key. Needs `&mut self`: no thread may be inserting meanwhile.
    pub fn clear(&mut self) {
        for w in self.blocks.iter_mut().flat_map(|b| &mut b.0) {
            *w.get_mut() = 0;
        }
    }

    /// Adds every key of `other` (bitwise OR, word by word with atomic `fetch_or`), through
    /// `&self`: lock-free, and safe while other threads insert into either filter (each
    /// word OR-ed in holds every key `other` held when that word was read). Both must
    /// have the same parameters and hasher.
    ///
    /// # Errors
    ///
    /// [`IncompatibleError::Params`](crate::IncompatibleError::Params) when the shapes
    /// differ, [`IncompatibleError::Hasher`](crate::IncompatibleError::Hasher) when the
    /// hashers do; `self` is unchanged.
    ///
    /// ```
    /// use linebloom::{AtomicBloomFilter, Params};
    /// let p = Params::new(8, 6)?;
    /// let (a, b) = (AtomicBloomFilter::new(p), AtomicBloomFilter::new(p));
    /// a.insert("x");
    /// b.insert("y");
    /// a.union(&b)?;
    /// assert!(a.contains("x") && a.contains("y"));
    /// assert!(a.union(&AtomicBloomFilter::new(Params::new(9, 6)?)).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn union(&self, other: &AtomicBloomFilter<H>) -> Result<(), crate::IncompatibleError>
    where
        H: PartialEq,
    {
        crate::IncompatibleError::check(
            (self.params, &self.hasher),
            (other.params, &other.hasher),
        )?;
        for (ours, theirs) in self.blocks.iter().zip(other.blocks.iter()) {
            for (a, b) in ours.0.iter().zip(&theirs.0) {
                a.fetch_or(b.load(Ordering::Relaxed), Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// A plain copy of the current bits (each word read atomically; a snapshot if other
    /// threads are inserting meanwhile). Use it to serialize a shared filter.
    pub fn to_bloom(&self) -> BloomFilter<crate::Blocks, H>
    where
        H: Clone,
    {
        let blocks: alloc::boxed::Box<[Block]> = self
            .blocks
            .iter()
            .map(|b| Block(core::array::from_fn(|w| b.0[w].load(Ordering::Relaxed))))
            .collect();
        let blocks = crate::Blocks::from(blocks);
        BloomFilter::from_storage_with_hasher(blocks, self.params.k(), self.hasher.clone())
            .expect("params were valid for the atomic filter")
    }

    /// The plain filter, without copying the payload.
    pub fn into_bloom(self) -> BloomFilter<crate::Blocks, H> {
        let len = self.blocks.len();
        let raw = alloc::boxed::Box::into_raw(self.blocks) as *mut Block;
        // SAFETY: AtomicBlock and Block have the same size and alignment (checked above)
        // and AtomicU64 has the same in-memory representation as u64, so the allocation
        // is a valid `[Block; len]` with the same layout the box will free it with; we
        // own it exclusively (moved out of `self`).
        let blocks =
            unsafe { alloc::boxed::Box::from_raw(core::ptr::slice_from_raw_parts_mut(raw, len)) };
        let blocks = crate::Blocks::from(blocks);
        BloomFilter::from_storage_with_hasher(blocks, self.params.k(), self.hasher)
            .expect("params were valid for the atomic filter")
    }
}

impl<H: KeyHasher> From<BloomFilter<crate::Blocks, H>> for AtomicBloomFilter<H> {
    /// Shares a plain filter between threads, without copying a payload on the heap. A
    /// payload on huge pages (`Blocks::zeroed` maps filters of 2 MiB or more on Linux) is
    /// copied once to the heap, which the atomic filter's storage is.
    fn from(f: BloomFilter<crate::Blocks, H>) -> Self {
        let params = f.params();
        let (blocks, hasher) = f.into_parts();
        let blocks = blocks.into_boxed_slice();
        let len = blocks.len();
        let raw = alloc::boxed::Box::into_raw(blocks) as *mut AtomicBlock;
        // SAFETY: as in `into_bloom`, in the other direction: same size, alignment and
        // representation, exclusively owned.
        let blocks =
            unsafe { alloc::boxed::Box::from_raw(core::ptr::slice_from_raw_parts_mut(raw, len)) };
        AtomicBloomFilter {
            blocks,
            params,
            hasher,
        }
    }
}

impl<H: core::fmt::Debug> core::fmt::Debug for AtomicBloomFilter<H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AtomicBloomFilter")
            .field("blocks", &self.params.blocks())
            .field("k", &self.params.k())
            .field("hasher", &self.hasher)
            .finish()
    }
}

crate::filter::family_traits!(
    AtomicBloomFilter<H>, [H: KeyHasher], hasher: H, read: [], write: [],
    memory: |f| f.params.bytes(),
    insert, extend,
);
