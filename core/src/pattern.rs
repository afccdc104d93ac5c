//! Key hash → (block index, in-block bit pattern): the blocked pattern, specified.
//!
//! Every kernel, the binary format and the Redis-held filter rely on this mapping; the
//! golden-vector test pins it. Changing it is a format-version change (this is the
//! pattern of format version 2, see `core/FORMAT.md`).
//!
//! # The pattern
//!
//! Let `h` be the key's 64-bit hash, `B` the block count, `k ∈ 1..=16`, and
//! `x = h mod 2³²` its low 32 bits. All products below are 32-bit wrapping products.
//!
//! ```text
//! block   = (h as u128 * B as u128) >> 64           // multiply-shift range reduction
//! for w in 0..8:                                     // round 1: the block's eight words
//!     if k ≥ 8 or (w − r) mod 8 < k:                 //   r = (x · ROTATION_SALT) >> 29
//!         set bit (x · SALTS[w]) >> 26 of word w
//! for w in 0..k−8:                                   // round 2, only for k > 8
//!     set bit (x · SALTS[8 + w]) >> 26 of word w
//! ```
//!
//! * This is the split-block pattern of Parquet's Bloom filters (one multiplicative
//!   salt per word, the product's top bits as the position), widened to 64-bit words.
//!   A position costs one 32-bit multiply and one shift: in AVX2, one `vpmulld` and one
//!   shift per vector of words, with no second mixing round.
//! * The block comes from the **high** bits of `h`, the pattern from its **low** 32
//!   bits, so the two are independent for any `B < 2³²` (a 256 GiB filter); above that
//!   the block index also reads the top bits of `x`, which only couples block and
//!   pattern through the carry of one product.
//! * It is *sectorized*: each of the key's bits goes to a different word, except in
//!   round 2. For `k < 8` the per-key rotation `r` spreads the `k` bits over all eight
//!   words, so no word is left idle. `k = 8`, the shape sizing picks near 1%, sets one
//!   bit in every word and needs neither the rotation nor the second round.
//! * Every step is a multiply, shift or mask per word: SIMD-friendly with no branch on
//!   key data (`k` is a filter parameter).
//!
//! The salts are odd (a multiply by an odd number permutes `x`, so each position is
//! uniform over `0..64` for a uniform `x`). The first eight are Parquet's; the next nine
//! are SHA-256's first nine round constants with the low bit set.
//!
//! The exact false-positive rate of this pattern, for ideal positions, is in
//! [`crate::fpr::blocked`]; `tests/fpr.rs` and the lab's `fpr_vs_bits` experiment check
//! measured rates against it.

use crate::block::Block;

/// The 32-bit multiplicative salt of each position: `SALTS[w]` for word `w` in round 1,
/// `SALTS[8 + w]` for word `w` in round 2.
pub const SALTS: [u32; 16] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d, // Parquet's split-block salts
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
    0x428a_2f99,
    0x7137_4491,
    0xb5c0_fbcf,
    0xe9b5_dba5, // SHA-256 K[0..8] | 1
    0x3956_c25b,
    0x59f1_11f1,
    0x923f_82a5,
    0xab1c_5ed5,
];

/// The salt whose product's top three bits give the rotation `r` for `k < 8`
/// (SHA-256 `K[8] | 1`).
pub const ROTATION_SALT: u32 = 0xd807_aa99;

/// Largest supported `k` (bits per key).
pub const MAX_K: u32 = 16;

/// MurmurHash3's 64-bit finalizer: a bijection with full avalanche (used by the classic
/// filter's double hashing; the blocked pattern does not need it).
#[inline(always)]
#[must_use]
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
#[must_use]
pub const fn block_index(hash: u64, blocks: usize) -> usize {
    ((hash as u128 * blocks as u128) >> 64) as usize
}

/// The name of this pattern where blocks live outside the binary format (a filter held
/// in Redis): the first word of the Redis-held filter's metadata, and an argument of
/// every command of the linebloom Redis module, so that a client or a module of another
/// pattern refuses rather than answering with other bits. It changes with the format
/// version, whose pattern it names.
///
/// ```
/// assert_eq!(linebloom::pattern::NAME, format!("linebloom-v{}", linebloom::format::VERSION));
/// ```
pub const NAME: &str = "linebloom-v2";

/// The 6-bit position (`0..64`) that salt `salt` picks for hash `hash`.
#[inline(always)]
#[must_use]
pub(crate) const fn position(hash: u64, salt: u32) -> u32 {
    (hash as u32).wrapping_mul(salt) >> 26
}

/// The rotation `r ∈ 0..8` of the first round (used only when `k < 8`).
#[inline(always)]
#[must_use]
pub(crate) const fn rotation(hash: u64) -> u32 {
    (hash as u32).wrapping_mul(ROTATION_SALT) >> 29
}

/// The in-block pattern of a hash: the scalar reference every kernel matches.
///
/// Exposed so that callers that keep blocks elsewhere (Redis, a memory-mapped file)
/// can set or test a key's bits without re-implementing the pattern.
///
/// ```
/// use linebloom::pattern::pattern;
/// let m = pattern(0x1234_5678_9abc_def0, 8);
/// assert_eq!(m.count_ones(), 8); // one bit in each word for k = 8
/// ```
#[inline(always)]
#[must_use]
pub fn pattern(hash: u64, k: u32) -> Block {
    let mut m = [0u64; 8];
    for_each_position(hash, k, |word, field| m[word] |= 1 << field);
    Block(m)
}

/// Calls `f(word, field)` for each of the key's `k` positions: `word` in `0..8` and the
/// 6-bit `field` in `0..64`, in the order of the pattern (round 1 by word, then round 2).
///
/// The Bloom filter sets bit `field` of `word`; the counting filter uses counter
/// `field >> 2` of `word` (16 four-bit counters per word), so both share one pattern and a
/// counting filter converts to a plain one bit for bit.
#[inline(always)]
pub fn for_each_position(hash: u64, k: u32, mut f: impl FnMut(usize, u32)) {
    all_positions(hash, k, |word, field| {
        f(word, field);
        true
    });
}

/// Like [`for_each_position`], stopping at the first position for which `f` returns
/// `false`; returns whether every call returned `true`. A query that reads words one at
/// a time (the atomic filter) stops at the first clear bit.
#[inline(always)]
pub(crate) fn all_positions(hash: u64, k: u32, mut f: impl FnMut(usize, u32) -> bool) -> bool {
    let r = if k < 8 { rotation(hash) } else { 0 };
    for (w, &salt) in SALTS[..8].iter().enumerate() {
        if (k >= 8 || ((w as u32).wrapping_sub(r) & 7) < k) && !f(w, position(hash, salt)) {
            return false;
        }
    }
    for (w, &salt) in SALTS[8..]
        .iter()
        .enumerate()
        .take(k.saturating_sub(8) as usize)
    {
        if !f(w, position(hash, salt)) {
            return false;
        }
    }
    true
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
/// use linebloom::pattern::location;
/// let loc = location(42, 1000, 7);
/// assert!(loc.block < 1000);
/// assert!(loc.mask.count_ones() <= 7);
/// ```
#[inline]
#[must_use]
pub fn location(hash: u64, blocks: usize, k: u32) -> Location {
    Location {
        block: block_index(hash, blocks),
        mask: pattern(hash, k),
    }
}
