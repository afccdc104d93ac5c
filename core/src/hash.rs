//! Key hash → (block index, in-block bit pattern): the blocked scheme, specified.
//!
//! Every kernel, the binary format and the Redis-held filter rely on this mapping; the
//! golden-vector test pins it. Changing it is a format-version change.
//!
//! # The scheme
//!
//! Let `h` be the key's 64-bit hash, `B` the block count and `k ∈ 1..=16`.
//!
//! ```text
//! block   = (h as u128 * B as u128) >> 64          // multiply-shift range reduction
//! g1      = fmix64(h)                               // MurmurHash3 finalizer, a bijection
//! r       = (g1 >> 48) & 7                          // rotation of the first round
//! for w in 0..8:                                    // the block's eight u64 words
//!     if (w - r) mod 8 < k:      set bit (g1 >> 6w) & 63 of word w      // round 1
//! if k > 8:
//!     g2  = fmix64(g1 ^ ROUND2_KEY)
//!     for w in 0..k-8:           set bit (g2 >> 6w) & 63 of word w      // round 2
//! ```
//!
//! * The block comes from the **high** bits of `h` (any `B`, no modulo, no power-of-two
//!   restriction). The pattern comes from `fmix64(h)`, a full-avalanche bijection, so it
//!   does not correlate with the block choice, even for `B` near 2⁶⁴.
//! * There is no double hashing, so the classic pitfalls (a zero or even stride, short
//!   cycles for power-of-two sizes) cannot occur: each position is its own 6-bit field.
//! * It is *sectorized*: each of the key's bits goes to a different word, except in
//!   round 2. For `k < 8` the per-key rotation `r` spreads the `k` bits over all eight
//!   words, so no word is left idle. For `k ≥ 8` the first round fills every word and
//!   `r` has no effect.
//! * Every step is a shift, a mask or a compare per word: SIMD-friendly with no branch on
//!   key data (`k` is a filter parameter).
//!
//! The exact false-positive rate of this scheme is in [`crate::fpr::blocked`].

use crate::block::Block;

/// The key XOR-ed into `g1` before the second round's finalizer (π's fractional bits).
pub const ROUND2_KEY: u64 = 0x243f_6a88_85a3_08d3;

/// Largest supported `k` (bits per key).
pub const MAX_K: u32 = 16;

/// MurmurHash3's 64-bit finalizer: a bijection with full avalanche.
#[inline(always)]
pub const fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x
}

/// The block a hash lands in, for a filter of `blocks` blocks.
#[inline(always)]
pub const fn block_index(hash: u64, blocks: usize) -> usize {
    ((hash as u128 * blocks as u128) >> 64) as usize
}

/// The in-block pattern of a hash: the scalar reference every kernel matches.
///
/// Exposed so that callers that keep blocks elsewhere (Redis, a memory-mapped file)
/// can set or test a key's bits without re-implementing the scheme.
///
/// ```
/// use linebloom::hash::pattern;
/// let m = pattern(0x1234_5678_9abc_def0, 8);
/// assert_eq!(m.count_ones(), 8); // one bit in each word for k = 8
/// ```
#[inline(always)]
pub fn pattern(hash: u64, k: u32) -> Block {
    let mut m = [0u64; 8];
    for_each_position(hash, k, |word, field| m[word] |= 1 << field);
    Block(m)
}

/// Calls `f(word, field)` for each of the key's `k` positions: `word` in `0..8` and the
/// 6-bit `field` in `0..64`, in the order of the scheme (round 1 by word, then round 2).
///
/// The Bloom filter sets bit `field` of `word`; the counting filter uses counter
/// `field >> 2` of `word` (16 four-bit counters per word), so both share one scheme and a
/// counting filter converts to a plain one bit for bit.
#[inline(always)]
pub fn for_each_position(hash: u64, k: u32, mut f: impl FnMut(usize, u32)) {
    let g1 = fmix64(hash);
    let r = ((g1 >> 48) & 7) as u32;
    for w in 0..8 {
        if ((w as u32).wrapping_sub(r) & 7) < k {
            f(w, ((g1 >> (6 * w)) & 63) as u32);
        }
    }
    if k > 8 {
        let g2 = fmix64(g1 ^ ROUND2_KEY);
        for w in 0..(k as usize - 8) {
            f(w, ((g2 >> (6 * w)) & 63) as u32);
        }
    }
}

/// A key's location: its block index and the bits to set or test there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// Index of the block.
    pub block: usize,
    /// Bits of that block that belong to the key.
    pub mask: Block,
}

/// Where `hash` lives in a filter of `blocks` blocks with `k` bits per key.
///
/// ```
/// use linebloom::hash::location;
/// let loc = location(42, 1000, 7);
/// assert!(loc.block < 1000);
/// assert!(loc.mask.count_ones() <= 7);
/// ```
#[inline]
pub fn location(hash: u64, blocks: usize, k: u32) -> Location {
    Location {
        block: block_index(hash, blocks),
        mask: pattern(hash, k),
    }
}

/// The Redis bit offset (`BITFIELD`/`SETBIT` addressing, most significant bit of each byte
/// first) of bit `bit` (0..512) of block `block`, for a filter stored as its
/// little-endian payload: `512·block + (bit ^ 7)`.
///
/// ```
/// assert_eq!(linebloom::hash::redis_bit_offset(0, 0), 7);
/// assert_eq!(linebloom::hash::redis_bit_offset(2, 9), 1024 + 14);
/// ```
#[inline]
pub const fn redis_bit_offset(block: u64, bit: u32) -> u64 {
    512 * block + (bit ^ 7) as u64
}
