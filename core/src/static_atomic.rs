//! [`StaticAtomicBloomFilter`]: a concurrent blocked filter that lives in a `static`,
//! for microcontrollers: no allocator, no 64-bit atomics, no `unsafe` in user code.
//!
//! Each 64-byte block is sixteen `AtomicU32` words; word `2w + h` holds bits
//! `32h..32h+32` of the plain [`Block`]'s word `w`. Keys use the same block and the same
//! bit positions as every other kind ([`crate::pattern::for_each_position`]), so the filter
//! answers exactly like a [`crate::BloomFilter`] of the same shape and hasher, and
//! [`write_blocks`](StaticAtomicBloomFilter::write_blocks) turns it into one (to encode
//! it, or to query it without atomics).
//!
//! Inserts go through `&self` with `fetch_or`, only for bits still clear, as in
//! [`crate::AtomicBloomFilter`]: an interrupt handler and the main loop can share one
//! filter. Needs 32-bit atomic read-modify-write (Cortex-M3 and up, RISC-V with the A
//! extension), or the `portable-atomic` feature where the target lacks it (Cortex-M0:
//! the QEMU firmware runs it on a micro:bit with `critical-section`).
//!
//! ```
//! use linebloom::StaticAtomicBloomFilter;
//! static SEEN: StaticAtomicBloomFilter<16> = StaticAtomicBloomFilter::new(8); // 1 KiB
//!
//! assert!(SEEN.insert(&0xbeef_u32)); // new
//! assert!(!SEEN.insert(&0xbeef_u32)); // already there
//! assert!(SEEN.contains(&0xbeef_u64)); // integers are keys by value
//! ```

use crate::block::Block;
use crate::hasher::{IntFold, Key, KeyHasher};
use crate::params::Params;
use crate::pattern::{MAX_K, all_positions, block_index, for_each_position};
use crate::sync::{AtomicU32, Ordering};

/// A 64-byte block of sixteen atomic 32-bit words (see the module docs for the layout).
#[repr(C, align(64))]
struct AtomicBlock32([AtomicU32; 16]);

impl AtomicBlock32 {
    /// A block with every bit clear.
    const fn new() -> Self {
        AtomicBlock32([const { AtomicU32::new(0) }; 16])
    }

    /// The 32-bit word and the bit within it that hold bit `field` of plain word `w`.
    #[inline(always)]
    fn bit(&self, w: usize, field: u32) -> (&AtomicU32, u32) {
        (&self.0[2 * w + (field >> 5) as usize], 1 << (field & 31))
    }

    /// The plain block: word `w` is `lo | hi << 32` (a snapshot if others insert).
    fn load(&self) -> Block {
        Block(core::array::from_fn(|w| {
            let lo = self.0[2 * w].load(Ordering::Relaxed) as u64;
            let hi = self.0[2 * w + 1].load(Ordering::Relaxed) as u64;
            lo | hi << 32
        }))
    }
}

/// A blocked Bloom filter of `BLOCKS` blocks in a `static`, shared through `&self`
/// (see the module docs).
pub struct StaticAtomicBloomFilter<const BLOCKS: usize, H = IntFold> {
    blocks: [AtomicBlock32; BLOCKS],
    k: u32,
    hasher: H,
}

impl<const BLOCKS: usize> StaticAtomicBloomFilter<BLOCKS, IntFold> {
    /// An empty filter with `k` bits per key and the default hasher ([`IntFold`], seed 0).
    /// A `const fn`: size it with [`crate::params::blocks_for`].
    ///
    /// # Panics
    ///
    /// At compile time (in a `static`) if `k` is not in `1..=16` or `BLOCKS` is 0.
    #[must_use]
    pub const fn new(k: u32) -> Self {
        StaticAtomicBloomFilter::with_hasher(k, IntFold::with_seed(0))
    }
}

impl<const BLOCKS: usize, H: KeyHasher> StaticAtomicBloomFilter<BLOCKS, H> {
    /// An empty filter with `k` bits per key and the given hasher.
    ///
    /// # Panics
    ///
    /// If `k` is not in `1..=16` or `BLOCKS` is 0 (at compile time in a `static`).
    pub const fn with_hasher(k: u32, hasher: H) -> Self {
        assert!(k >= 1 && k <= MAX_K, "k must be in 1..=16");
        assert!(BLOCKS >= 1, "a filter needs at least one block");
        StaticAtomicBloomFilter {
            blocks: [const { AtomicBlock32::new() }; BLOCKS],
            k,
            hasher,
        }
    }

    /// The filter's shape.
    pub fn params(&self) -> Params {
        Params::new(BLOCKS as u64, self.k).expect("checked by the constructor")
    }

    /// The hasher.
    pub fn hasher(&self) -> &H {
        &self.hasher
    }

    /// Adds `key` (lock-free). `true` if some bit was clear before this call (new, as
    /// `HashSet::insert`).
    pub fn insert<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.insert_hash(key.hash_key(&self.hasher))
    }

    /// [`insert`](Self::insert) for a caller's hash.
    pub fn insert_hash(&self, hash: u64) -> bool {
        let block = &self.blocks[block_index(hash, BLOCKS)];
        let mut new = false;
        for_each_position(hash, self.k, |w, field| {
            let (word, bit) = block.bit(w, field);
            if word.load(Ordering::Relaxed) & bit == 0 {
                word.fetch_or(bit, Ordering::Relaxed);
                new = true;
            }
        });
        new
    }

    /// Is `key` possibly in the set? `false` means certainly not.
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(key.hash_key(&self.hasher))
    }

    /// [`contains`](Self::contains) for a caller's hash.
    pub fn contains_hash(&self, hash: u64) -> bool {
        let block = &self.blocks[block_index(hash, BLOCKS)];
        all_positions(hash, self.k, |w, field| {
            let (word, bit) = block.bit(w, field);
            word.load(Ordering::Relaxed) & bit != 0
        })
    }

    /// Removes every key. Needs `&mut self`: nothing may be inserting meanwhile.
    pub fn clear(&mut self) {
        for word in self.blocks.iter().flat_map(|b| &b.0) {
            word.store(0, Ordering::Relaxed);
        }
    }

    /// Writes the plain blocks into `out` (a snapshot if others insert meanwhile): the
    /// storage of a [`crate::BloomFilter`] with the same `k` and hasher that answers
    /// alike, to encode or to query without atomics.
    ///
    /// # Panics
    ///
    /// If `out.len()` is not `BLOCKS`.
    pub fn write_blocks(&self, out: &mut [Block]) {
        assert_eq!(out.len(), BLOCKS, "write_blocks: wrong block count");
        for (dst, src) in out.iter_mut().zip(&self.blocks) {
            *dst = src.load();
        }
    }

    /// Sets every bit that is set in `blocks` (a bitwise OR, atomic per word, through
    /// `&self`): loads a filter saved by [`write_blocks`](Self::write_blocks), for
    /// example one decoded from flash with `BloomFilter::from_bytes_into`, or adds the
    /// keys of a plain filter with the same `k` and hasher.
    ///
    /// # Panics
    ///
    /// If `blocks.len()` is not `BLOCKS`.
    ///
    /// ```
    /// use linebloom::{Block, BloomFilter, StaticAtomicBloomFilter};
    /// let mut storage = [Block::ZERO; 4];
    /// let mut saved = BloomFilter::from_storage(&mut storage[..], 8)?;
    /// saved.insert("sensor-17");
    /// static F: StaticAtomicBloomFilter<4> = StaticAtomicBloomFilter::new(8);
    /// F.union_blocks(saved.as_blocks());
    /// assert!(F.contains("sensor-17"));
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn union_blocks(&self, blocks: &[Block]) {
        assert_eq!(blocks.len(), BLOCKS, "union_blocks: wrong block count");
        for (dst, src) in self.blocks.iter().zip(blocks) {
            for (w, &word) in src.0.iter().enumerate() {
                let (lo, hi) = (word as u32, (word >> 32) as u32);
                if lo != 0 {
                    dst.0[2 * w].fetch_or(lo, Ordering::Relaxed);
                }
                if hi != 0 {
                    dst.0[2 * w + 1].fetch_or(hi, Ordering::Relaxed);
                }
            }
        }
    }

    /// Fraction of bits set (a snapshot).
    pub fn fill_ratio(&self) -> f64 {
        self.ones() as f64 / (BLOCKS as f64 * Block::BITS as f64)
    }

    /// Bits set (a snapshot while other threads insert).
    fn ones(&self) -> u64 {
        self.blocks
            .iter()
            .map(|b| b.load().count_ones() as u64)
            .sum()
    }

    /// Estimated number of distinct keys inserted ([`crate::BloomFilter::estimated_len`]'s
    /// estimator).
    pub fn estimated_len(&self) -> f64 {
        self.params().estimated_len(self.ones())
    }

    /// The false-positive rate as it is now ([`crate::BloomFilter::estimated_fpr`]'s
    /// formula, on a snapshot).
    pub fn estimated_fpr(&self) -> f64 {
        let total: f64 = self
            .blocks
            .iter()
            .map(|b| {
                let fill = b.load().0.map(|w| w.count_ones() as f64 / 64.0);
                crate::fpr::block_hit_rate(fill, self.k)
            })
            .sum();
        total / BLOCKS as f64
    }
}

impl<const BLOCKS: usize, H: core::fmt::Debug> core::fmt::Debug
    for StaticAtomicBloomFilter<BLOCKS, H>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StaticAtomicBloomFilter")
            .field("blocks", &BLOCKS)
            .field("k", &self.k)
            .field("hasher", &self.hasher)
            .finish()
    }
}

crate::filter::family_traits!(
    StaticAtomicBloomFilter<BLOCKS, H>, [const BLOCKS: usize, H: KeyHasher], hasher: H,
    read: [], write: [],
    memory: |_f| BLOCKS * Block::BYTES,
    insert, extend,
);
