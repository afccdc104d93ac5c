//! The vector quotient filter's scheme: where a key goes (two blocks, a bucket, a tag)
//! and how a 64-byte block holds its tags. Specified here and in `core/FORMAT.md`
//! (kind 5), pinned by `tests/golden.rs`, and implemented once for every kernel, each
//! of which only supplies the byte compares and the select (`TagOps`).
//!
//! # A block
//!
//! A block is a small quotient filter: `BUCKETS` buckets and `SLOTS` tag slots, with a
//! metadata bit string that says where each bucket's run of tags ends.
//!
//! | tag bits | metadata | tags | buckets | slots |
//! |---:|---|---|---:|---:|
//! | 8 | words 0–1 (128 bits, word 0 low) | bytes 16..64: slot `s` is byte `16 + s` | 80 | 48 |
//! | 16 | word 0 (64 bits) | bytes 8..64: slot `s` is the little-endian `u16` at `8 + 2s` | 36 | 28 |
//!
//! The metadata lists the buckets in order: for bucket `b`, one `1` bit per tag in it,
//! then one `0` bit that closes it. With `L` tags in the block the metadata uses
//! `BUCKETS + L` bits from bit 0; every bit above is `0`, and so is every slot from `L`
//! up. So the all-zero block is the empty block, the block's load is the metadata's
//! population count, and bucket `b`'s tags are the slots `select₀(b − 1) + 1 − b` up to
//! `select₀(b) − b` (`select₀(i)` is the position of the `i`-th zero bit, from 0;
//! the start is 0 for bucket 0). Tags of one bucket keep their insertion order.
//!
//! A block that breaks any of these rules is *malformed* ([`is_well_formed`]); decoding
//! and `from_storage` refuse it.
//!
//! # A key
//!
//! With `h` the key's 64-bit hash, `m` the (even) block count and `r` the tag bits:
//!
//! ```text
//! first  = (h · m) >> 64                                  (128-bit product: the high half)
//! bucket = (((h · m) mod 2^64) · BUCKETS) >> 64            (its low half, scaled)
//! tag    = h mod 2^r
//! f      = bucket · 2^16 + tag                             (the fingerprint)
//! pair   = (((f + 1) · 0x9e3779b97f4a7c15 mod 2^64) · m) >> 64
//! second = (pair − first) mod m, or (first + m/2) mod m where that is first
//! ```
//!
//! One product gives both the block and the bucket: for a uniform `h`, the low half of
//! `h · m` is uniform whatever the high half is, so the bucket is independent of the
//! block; the tag is `h`'s low bits, which the bucket's top bits do not depend on.
//!
//! The second block depends only on the first and the fingerprint, and the map from one
//! to the other is its own inverse: every key whose fingerprint sits in a block has the
//! same two blocks as every other key with that fingerprint there. That is what makes
//! removal safe: removing a key deletes *a* matching fingerprint from its two blocks,
//! and any key that put one there shares both blocks, bucket and tag with it, so it
//! stays found through the copy that remains. Which of the two blocks an insert picks
//! does not matter for that, since a lookup and a removal look in both.
//!
//! # Which of the two blocks
//!
//! In a filter of 64 blocks or more, an insert puts the key in its first block while
//! that block holds fewer than `FIRST_BLOCK_BELOW` tags (36 of 48 for 8-bit tags, 18
//! of 28 for 16-bit), else in the emptier of the two (the first on a tie); a key whose
//! blocks are both full is refused. At the load of a filter's capacity about 89% of
//! keys (85% for 16-bit tags) then sit in their first block, where a lookup that finds
//! them stops, against 66% when every key goes to the emptier block; the loads still
//! even out once blocks pass the threshold, at the cost of about half a percent of
//! capacity (`QuotientParams`). Smaller filters put every key in the emptier block:
//! with few blocks the first-block phase crowds pairs of blocks far more often (at 4
//! blocks of 8-bit tags the exact capacity would fall from 173 keys to 147, where the
//! fluid limit says 179 under either rule). Where that gap closes was not computed;
//! 64 blocks is a margin (benches/README.md has the measurements).

use crate::block::Block;

/// The scheme's name, for stores that keep blocks outside the binary format.
pub const SCHEME: &str = "linebloom-vqf-v3";

/// The scheme's number in the format's header (bytes 32..40 of kind 5), written by
/// every encoder.
///
/// Decoders also read [`SCHEME_ID_EMPTIER_BLOCK`]. They refuse `0` (bucket and tag from
/// `fmix64(h)`): under this scheme the same blocks would answer differently.
pub const SCHEME_ID: u64 = 3;

/// The scheme that put every key in the emptier of its two blocks. Its locations are
/// this scheme's, so its blocks answer every lookup and removal the same way; decoders
/// read it, and the filter goes on under [`SCHEME_ID`].
pub const SCHEME_ID_EMPTIER_BLOCK: u64 = 2;

/// The golden-ratio multiplier that spreads a fingerprint over the blocks.
const PAIR_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

/// Where a key lives: its two blocks, its bucket in each and its tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// The first block (a lookup tries it first; an insert prefers it on a tie).
    pub first: usize,
    /// The second block: never `first`.
    pub second: usize,
    /// The bucket, the same in both blocks.
    pub bucket: u32,
    /// The tag (`tag_bits` low bits).
    pub tag: u32,
}

/// Where `hash` lives in a filter of `blocks` blocks with `tag_bits`-bit tags.
///
/// # Panics
///
/// If `blocks` is odd or below 2, or `tag_bits` is neither 8 nor 16 (a filter's
/// parameters never are: see `QuotientParams::new`).
///
/// ```
/// use linebloom::quotient::location;
/// let at = location(42, 1000, 8);
/// assert!(at.first < 1000 && at.second < 1000 && at.first != at.second);
/// assert!(at.bucket < 80 && at.tag < 256);
/// ```
#[must_use]
pub fn location(hash: u64, blocks: usize, tag_bits: u32) -> Location {
    assert!(
        blocks >= 2 && blocks.is_multiple_of(2),
        "a quotient filter has an even number of blocks, at least 2"
    );
    match tag_bits {
        8 => locate::<Eight>(hash, blocks),
        16 => locate::<Sixteen>(hash, blocks),
        _ => panic!("tag bits must be 8 or 16"),
    }
}

/// [`location`] for a width known at compile time; `blocks` is even and at least 2.
#[inline(always)]
pub(crate) fn locate<W: Width>(hash: u64, blocks: usize) -> Location {
    let m = blocks as u64;
    let product = hash as u128 * m as u128;
    let first = (product >> 64) as u64;
    let tag = (hash as u32) & W::TAG_MASK;
    let bucket = (((product as u64) as u128 * W::BUCKETS as u128) >> 64) as u32;
    let fingerprint = ((bucket as u64) << 16) | tag as u64;
    let spread = fingerprint.wrapping_add(1).wrapping_mul(PAIR_MULTIPLIER);
    let pair = ((spread as u128 * m as u128) >> 64) as u64;
    let mut second = if pair >= first {
        pair - first
    } else {
        pair + m - first
    };
    if second == first {
        let half = m / 2;
        second = if first >= half {
            first - half
        } else {
            first + half
        };
    }
    Location {
        first: first as usize,
        second: second as usize,
        bucket,
        tag,
    }
}

/// A tag width: where its metadata and tags sit in a block. Implemented by [`Eight`]
/// and [`Sixteen`] only.
pub(crate) trait Width: Copy + 'static {
    /// Bits per tag.
    const TAG_BITS: u32;
    /// `2^TAG_BITS − 1`.
    const TAG_MASK: u32 = (1u32 << Self::TAG_BITS) - 1;
    /// Tag slots per block.
    const SLOTS: u32;
    /// Buckets per block.
    const BUCKETS: u32;
    /// In a filter of at least [`FIRST_BLOCK_FROM`] blocks, an insert puts the key in
    /// its first block while that holds fewer tags than this (three quarters of the
    /// slots, or fewer), else in the emptier of its two.
    const FIRST_BLOCK_BELOW: u32;
    /// The word where the tags start.
    const TAG_WORD: usize;
    /// Lanes (of the tag's width) before the first slot: the metadata's.
    const FIRST_LANE: u32 = (Self::TAG_WORD as u32 * 64) / Self::TAG_BITS;

    /// The metadata bits (the high word zero for 16-bit tags).
    fn metadata(block: &Block) -> u128;
    /// Writes the metadata bits.
    fn set_metadata(block: &mut Block, metadata: u128);
}

/// 8-bit tags: 128 bits of metadata, 48 slots, 80 buckets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Eight;

/// 16-bit tags: 64 bits of metadata, 28 slots, 36 buckets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sixteen;

impl Width for Eight {
    const TAG_BITS: u32 = 8;
    const SLOTS: u32 = 48;
    const BUCKETS: u32 = 80;
    const FIRST_BLOCK_BELOW: u32 = 36;
    const TAG_WORD: usize = 2;
    #[inline(always)]
    fn metadata(block: &Block) -> u128 {
        block.0[0] as u128 | (block.0[1] as u128) << 64
    }
    #[inline(always)]
    fn set_metadata(block: &mut Block, metadata: u128) {
        block.0[0] = metadata as u64;
        block.0[1] = (metadata >> 64) as u64;
    }
}

impl Width for Sixteen {
    const TAG_BITS: u32 = 16;
    const SLOTS: u32 = 28;
    const BUCKETS: u32 = 36;
    const FIRST_BLOCK_BELOW: u32 = 18;
    const TAG_WORD: usize = 1;
    #[inline(always)]
    fn metadata(block: &Block) -> u128 {
        block.0[0] as u128
    }
    #[inline(always)]
    fn set_metadata(block: &mut Block, metadata: u128) {
        block.0[0] = metadata as u64;
    }
}

/// The fewest blocks for which an insert prefers the key's first block; smaller filters
/// put every key in the emptier block (see the module docs).
pub(crate) const FIRST_BLOCK_FROM: usize = 64;

/// The load below which an insert into a filter of `blocks` blocks takes the key's first
/// block whatever the second holds: [`Width::FIRST_BLOCK_BELOW`] from
/// [`FIRST_BLOCK_FROM`] blocks up, else 0.
#[inline(always)]
pub(crate) fn first_block_below<W: Width>(blocks: usize) -> u32 {
    #[cfg(linebloom_placement_sweep)]
    if let Some(below) = placement_sweep::first_block_below(W::TAG_BITS) {
        return below;
    }
    if blocks >= FIRST_BLOCK_FROM {
        W::FIRST_BLOCK_BELOW
    } else {
        0
    }
}

/// A run-time first-block threshold, to measure other thresholds against the scheme's
/// in one process (`benches/examples/quotient_placement.rs`). Compiled only with
/// `RUSTFLAGS="--cfg linebloom_placement_sweep"`: filters built under another threshold
/// are still read right (lookups and removals look in both blocks), but their capacity
/// is not the one `QuotientParams` promises.
#[cfg(linebloom_placement_sweep)]
#[doc(hidden)]
pub mod placement_sweep {
    use core::sync::atomic::{AtomicU32, Ordering::Relaxed};

    /// Per tag width (8, 16): the threshold set, `u32::MAX` for the scheme's.
    static BELOW: [AtomicU32; 2] = [AtomicU32::new(u32::MAX), AtomicU32::new(u32::MAX)];

    /// Sets the threshold inserts use for `tag_bits`-bit tags, at every block count,
    /// from now on; `None` restores the scheme's.
    pub fn set_first_block_below(tag_bits: u32, below: Option<u32>) {
        BELOW[usize::from(tag_bits == 16)].store(below.unwrap_or(u32::MAX), Relaxed);
    }

    /// The threshold set for `tag_bits`-bit tags, if any.
    pub(crate) fn first_block_below(tag_bits: u32) -> Option<u32> {
        let below = BELOW[usize::from(tag_bits == 16)].load(Relaxed);
        (below != u32::MAX).then_some(below)
    }
}

/// Tags in a block (its metadata's population count).
#[inline(always)]
pub(crate) fn load<W: Width>(block: &Block) -> u32 {
    W::metadata(block).count_ones()
}

/// The tag in slot `slot` (any slot below `SLOTS`), read from the words, so the same on
/// every endianness.
#[inline]
pub(crate) fn tag_at<W: Width>(block: &Block, slot: u32) -> u32 {
    let bit = slot * W::TAG_BITS;
    ((block.0[W::TAG_WORD + (bit / 64) as usize] >> (bit % 64)) as u32) & W::TAG_MASK
}

/// Where slot `slot` starts: its word and the bit offset in it.
#[inline(always)]
fn slot_bits<W: Width>(slot: u32) -> (usize, u32) {
    let bit = slot.min(W::SLOTS - 1) * W::TAG_BITS;
    (W::TAG_WORD + (bit / 64) as usize, bit % 64)
}

/// The part of word `i` below slot `(at, offset)` (all of it below `at`, none above).
#[inline(always)]
fn below(i: usize, at: usize, offset: u32) -> u64 {
    if i < at {
        u64::MAX
    } else if i == at {
        (1u64 << offset) - 1
    } else {
        0
    }
}

/// Moves the tags from `slot` up by one slot (the last slot, empty in a block that is
/// not full, drops out) and writes `tag` into `slot`. Word shifts with carries, the
/// same on every endianness and for every kernel.
#[inline(always)]
pub(crate) fn shift_in<W: Width>(block: &mut Block, slot: u32, tag: u32) {
    let width = W::TAG_BITS;
    let (at, offset) = slot_bits::<W>(slot);
    let words = &mut block.0;
    for i in (at + 1..8).rev() {
        words[i] = (words[i] << width) | (words[i - 1] >> (64 - width));
    }
    let word = words[at];
    let keep = below(at, at, offset);
    words[at] = (word & keep) | ((tag as u64) << offset) | ((word & !keep) << width);
}

/// Removes the tag in `slot`: the tags above move down by one slot and the last slot
/// becomes zero. Every word is computed, with no branch on where the slot is (a loop
/// from the slot up mispredicts its length: measured 10% slower deletes).
#[inline(always)]
pub(crate) fn shift_out<W: Width>(block: &mut Block, slot: u32) {
    let width = W::TAG_BITS;
    let (at, offset) = slot_bits::<W>(slot);
    let old = block.0;
    for i in W::TAG_WORD..8 {
        let carry = if i < 7 { old[i + 1] << (64 - width) } else { 0 };
        let shifted = (old[i] >> width) | carry;
        let keep = below(i, at, offset);
        block.0[i] = (old[i] & keep) | (shifted & !keep);
    }
}

/// Sets a `1` bit (one more tag) at metadata position `position`, moving the bits from
/// there up by one.
#[inline(always)]
pub(crate) fn metadata_insert(metadata: u128, position: u32) -> u128 {
    let below = low_bits(position);
    (metadata & below) | (1u128 << (position & 127)) | ((metadata & !below) << 1)
}

/// Deletes the bit at metadata position `position`, moving the bits above down by one.
#[inline(always)]
pub(crate) fn metadata_remove(metadata: u128, position: u32) -> u128 {
    let below = low_bits(position);
    (metadata & below) | ((metadata >> 1) & !below)
}

/// The bits below `position` (all of them from 128 up).
#[inline(always)]
fn low_bits(position: u32) -> u128 {
    if position >= 128 {
        u128::MAX
    } else {
        (1u128 << position) - 1
    }
}

/// Does `block` follow the layout: at most `SLOTS` tags, metadata zero above its
/// `BUCKETS + L` bits, the last of those bits the last bucket's closing `0` (so every
/// tag sits in a bucket), every slot from `L` up zero? Decoding and `from_storage`
/// check every block with it.
pub(crate) fn is_well_formed<W: Width>(block: &Block) -> bool {
    let metadata = W::metadata(block);
    let tags = metadata.count_ones();
    if tags > W::SLOTS {
        return false;
    }
    let used = W::BUCKETS + tags;
    let metadata_bits = 64 * W::TAG_WORD as u32;
    if used < metadata_bits && metadata >> used != 0 {
        return false;
    }
    // The used bits hold the `L` ones and so `BUCKETS` zeros; ones after the last zero
    // would be tags of no bucket, which no lookup or remove reaches.
    if (metadata >> (used - 1)) & 1 != 0 {
        return false;
    }
    (tags..W::SLOTS).all(|slot| tag_at::<W>(block, slot) == 0)
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use crate::pattern::fmix64;
    use alloc::vec::Vec;

    /// Slots as a vector, for comparing with a model.
    fn slots<W: Width>(block: &Block) -> Vec<u32> {
        (0..W::SLOTS).map(|s| tag_at::<W>(block, s)).collect()
    }

    fn shifts<W: Width>() {
        let mut block = Block::ZERO;
        let mut model: Vec<u32> = Vec::new();
        let mut x = 0x1234_5678_9abc_def1u64;
        for step in 0..400u32 {
            x = fmix64(x.wrapping_add(step as u64));
            let grow = model.len() < W::SLOTS as usize && (x & 3 != 0 || model.is_empty());
            if grow {
                let slot = (x >> 8) as u32 % (model.len() as u32 + 1);
                let tag = (x >> 32) as u32 & W::TAG_MASK;
                shift_in::<W>(&mut block, slot, tag);
                model.insert(slot as usize, tag);
            } else {
                let slot = (x >> 8) as u32 % model.len() as u32;
                shift_out::<W>(&mut block, slot);
                model.remove(slot as usize);
            }
            let mut expected = model.clone();
            expected.resize(W::SLOTS as usize, 0);
            assert_eq!(slots::<W>(&block), expected, "step {step}");
            assert_eq!(block.0[..W::TAG_WORD], [0; 8][..W::TAG_WORD]);
        }
    }

    #[test]
    fn shifts_match_a_vector() {
        shifts::<Eight>();
        shifts::<Sixteen>();
    }

    #[test]
    fn metadata_insert_and_remove_are_inverse() {
        let m = 0b1011_0110u128 | 1 << 100;
        for p in 0..120 {
            let ins = metadata_insert(m, p);
            assert_eq!(ins.count_ones(), m.count_ones() + 1);
            assert_eq!(ins >> p & 1, 1);
            assert_eq!(metadata_remove(ins, p), m, "position {p}");
        }
    }

    #[test]
    fn pairs_are_symmetric_and_distinct() {
        for blocks in [2usize, 4, 6, 10, 1000, 1 << 20] {
            for h in (0..2000u64).map(|i| fmix64(i ^ blocks as u64)) {
                let at = locate::<Eight>(h, blocks);
                assert!(at.first < blocks && at.second < blocks && at.first != at.second);
                // A key with the same fingerprint whose first block is our second has
                // our first as its second.
                let fingerprint = ((at.bucket as u64) << 16) | at.tag as u64;
                let spread = fingerprint.wrapping_add(1).wrapping_mul(PAIR_MULTIPLIER);
                let pair = ((spread as u128 * blocks as u128) >> 64) as usize;
                let partner = |first: usize| {
                    let s = (pair + blocks - first) % blocks;
                    if s == first {
                        (first + blocks / 2) % blocks
                    } else {
                        s
                    }
                };
                assert_eq!(partner(at.first), at.second);
                assert_eq!(partner(at.second), at.first);
            }
        }
    }

    #[test]
    fn the_empty_block_is_well_formed_and_junk_is_not() {
        assert!(is_well_formed::<Eight>(&Block::ZERO));
        assert!(is_well_formed::<Sixteen>(&Block::ZERO));
        let mut b = Block::ZERO;
        b.0[7] = 1; // a tag in slot 40/24 of an empty block
        assert!(!is_well_formed::<Eight>(&b));
        assert!(!is_well_formed::<Sixteen>(&b));
        let mut b = Block::ZERO;
        b.0[1] = 1 << 63; // metadata bit 127: above the 80 used bits of an empty block
        assert!(!is_well_formed::<Eight>(&b));
        let b = Block([u64::MAX; 8]);
        assert!(!is_well_formed::<Eight>(&b));
        assert!(!is_well_formed::<Sixteen>(&b));
        // Tags after the last bucket's closing zero: in no bucket.
        let mut b = Block::ZERO;
        b.0[0] = !0u64 << 36; // 36 empty buckets, then 28 ones
        assert!(!is_well_formed::<Sixteen>(&b));
        let mut b = Block::ZERO;
        b.0[1] = 1 << 16; // metadata bit 80: one tag after 80 empty buckets
        assert!(!is_well_formed::<Eight>(&b));
        // One tag in the last bucket is fine: its one, then its closing zero.
        let mut b = Block::ZERO;
        b.0[0] = 1 << 35; // 35 empty buckets, a one, the last bucket's zero at 36
        assert!(is_well_formed::<Sixteen>(&b));
    }
}
