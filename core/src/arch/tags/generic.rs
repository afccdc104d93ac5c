//! The vector quotient filter's per-key operations, written once over a backend's
//! [`TagOps`] (the tag compare and the select) and a tag [`Width`]. Every kernel's entry
//! points are these functions inlined into its `#[target_feature]` code, so kernels
//! differ only in how they compare, select and move tags, and their blocks stay
//! bit-identical.
//!
//! ```text
//! contains(h):  (first, second, bucket, tag) = locate(h)
//!               hit(first) or hit(second)
//! hit(block):   lanes of the bucket's run: end − start, two one-bit deposits of the metadata
//!               any slot in it equal to tag (one vector compare of the block)
//! insert(h):    from 64 blocks up, first while it holds < FIRST_BLOCK_BELOW; else the
//!               emptier of first and second (first on a tie); both full: Full
//!               metadata: a 1 at select₀(bucket); tags: shift in at select₀(bucket) − bucket
//! remove(h):    the first slot of the run that holds tag, in first, else in second
//!               metadata: delete bit slot + bucket; tags: shift out
//! ```

use super::TagOps;
use super::scheme::{
    Location, Width, first_block_below, load, locate, metadata_insert, metadata_remove,
};
use crate::arch::prefetch_read;
use crate::block::Block;

/// What an insert did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Insertion {
    /// Both blocks were full: nothing changed.
    Full,
    /// Stored; the key was absent before (or the insert did not look).
    New,
    /// Stored; a matching fingerprint was already there.
    Again,
}

/// Position of metadata zero number `rank` (from 0): the end of bucket `rank`. Both
/// words are searched and the answer picked without a branch (which word holds a
/// bucket's end is a coin toss for the branch predictor); 16-bit tags have one word.
#[inline(always)]
unsafe fn select_zero<W: Width, O: TagOps>(metadata: u128, rank: u32) -> u32 {
    let low = !(metadata as u64);
    // SAFETY: the caller's CPU has O's features (this function's contract).
    let in_low = unsafe { O::select(low, rank) };
    if W::TAG_WORD == 1 {
        return in_low;
    }
    let high = !((metadata >> 64) as u64);
    // A rank past the low word's zeros wraps to a huge one: `select` then answers 64
    // or another position, which is not picked.
    let zeros_low = low.count_ones();
    // SAFETY: as above.
    let in_high = 64 + unsafe { O::select(high, rank.wrapping_sub(zeros_low)) };
    core::hint::select_unpredictable(rank < zeros_low, in_low, in_high)
}

/// The run of `bucket` as slots `[start, end)`: its end is the bucket's closing zero
/// (one select), its start just above the highest zero below that (a leading-zero
/// count; none for bucket 0, so the start is 0).
#[inline(always)]
unsafe fn run<W: Width, O: TagOps>(block: &Block, bucket: u32) -> (u32, u32) {
    let metadata = W::metadata(block);
    // SAFETY: the caller's CPU has O's features.
    let end = unsafe { select_zero::<W, O>(metadata, bucket) }.min(127);
    let zeros_below = !metadata & ((1u128 << end) - 1);
    let start = 128 - zeros_below.leading_zeros();
    (
        start.saturating_sub(bucket),
        end.saturating_sub(bucket).max(start.saturating_sub(bucket)),
    )
}

/// The lane of bucket-end number `bucket` in `ends` (a set bit where the metadata has a
/// zero), as a one-bit word: lane `FIRST_LANE + p − bucket` for the end at bit `p`, the
/// slot just past the bucket's run; a full block's last run ends at lane 64, which
/// wraps to lane 0, below every slot's lane.
///
/// One deposit: the end is in the low word while `bucket` is below the low word's
/// count of ends, else in the high one (16-bit tags have one word), and the word and
/// rank are picked without a branch. The rotation maps the end's bit, at `p` or at
/// `p − 64`, to its lane in either word: `p − bucket` is below 64. In a well-formed
/// 8-bit block the low word holds at least 16 ends, so the rank is below 64 in either
/// word.
#[inline(always)]
unsafe fn end_lane<W: Width, O: TagOps>(ends: u128, bucket: u32) -> u64 {
    let low = ends as u64;
    let (word, rank) = if W::TAG_WORD == 1 {
        (low, bucket)
    } else {
        let ends_low = low.count_ones();
        let in_high = bucket >= ends_low;
        (
            core::hint::select_unpredictable(in_high, (ends >> 64) as u64, low),
            core::hint::select_unpredictable(in_high, bucket.wrapping_sub(ends_low), bucket),
        )
    };
    // SAFETY: the caller's CPU has O's features (this function's contract).
    let deposited = unsafe { O::deposit(word, rank) };
    // Rotation is modulo 64, and 2^32 is a multiple of 64.
    deposited.rotate_left(W::FIRST_LANE.wrapping_sub(bucket))
}

/// The lanes of the run's slots whose tag equals `tag`, as bits of the backend's lane
/// mask (lane `FIRST_LANE + s` is slot `s`).
///
/// The compare comes first: most blocks hold no slot with the tag at all (at 94% load
/// with 8-bit tags, 84% of them), and those need no select. With a fast deposit
/// (`pdep`) the run's lanes are the difference of two one-bit words, the lanes just past
/// the run and just past the bucket before (the first slot's lane for bucket 0), as in
/// the C VQF, with one deposit each where the C code makes two (one per metadata word);
/// with the broadword select, whose cost is the select itself, one select finds the
/// run's end and a leading-zero count its start.
#[inline(always)]
unsafe fn matches<W: Width, O: TagOps>(block: &Block, bucket: u32, tag: u32) -> u64 {
    let lanes = if W::TAG_BITS == 8 {
        // SAFETY: the caller's CPU has O's features.
        unsafe { O::lanes8(block, tag as u8) }
    } else {
        // SAFETY: as above.
        unsafe { O::lanes16(block, tag as u16) as u64 }
    };
    let slot_lanes = (u64::MAX >> (64 - W::SLOTS)) << W::FIRST_LANE;
    let candidates = lanes & slot_lanes;
    if candidates == 0 {
        return 0;
    }
    if !O::FAST_DEPOSIT {
        // SAFETY: as above.
        let (start, end) = unsafe { run::<W, O>(block, bucket) };
        let run_lanes = u64::MAX.checked_shr(64 - (end - start)).unwrap_or(0);
        return candidates & run_lanes << W::FIRST_LANE << start;
    }
    // The ends shifted up one place, with an end below bit 0: end number `bucket` of
    // these is one place past end number `bucket − 1` of the block's (bit 0 for bucket
    // 0), so its lane is the run's first. The top end lost to the shift is the last
    // bucket's, which no start needs.
    let ends = !W::metadata(block);
    let ends_before = ends << 1 | 1;
    // SAFETY: as above.
    let (start, end) = unsafe {
        (
            end_lane::<W, O>(ends_before, bucket),
            end_lane::<W, O>(ends, bucket),
        )
    };
    // Where the run reaches the last slot, `end` is lane 0 (lane 64, wrapped), and the
    // difference is every lane from `start` up, and lane 0, which holds no slot.
    candidates & end.wrapping_sub(start)
}

/// Is the key with this hash's fingerprint in either of its blocks?
///
/// # Safety
///
/// Only on a CPU with `O`'s features; `blocks.len()` even and at least 2.
#[inline(always)]
pub(crate) unsafe fn contains<W: Width, O: TagOps>(blocks: &[Block], h: u64) -> bool {
    let at = locate::<W>(h, blocks.len());
    prefetch_read(&blocks[at.second]);
    // SAFETY: the caller's CPU has O's features (this function's contract).
    unsafe { contains_at::<W, O>(blocks, &at) }
}

/// [`contains`] for a key already located: its first block, then its second.
///
/// # Safety
///
/// Only on a CPU with `O`'s features.
#[inline(always)]
unsafe fn contains_at<W: Width, O: TagOps>(blocks: &[Block], at: &Location) -> bool {
    // SAFETY: the caller's CPU has O's features (this function's contract).
    unsafe {
        matches::<W, O>(&blocks[at.first], at.bucket, at.tag) != 0
            || matches::<W, O>(&blocks[at.second], at.bucket, at.tag) != 0
    }
}

/// How many fingerprints equal to the key's its two blocks hold: the copies a
/// [`remove`] of the key could take, its own and any other key's that collided.
///
/// # Safety
///
/// As for [`contains`].
#[inline(always)]
pub(crate) unsafe fn count<W: Width, O: TagOps>(blocks: &[Block], h: u64) -> u32 {
    let at = locate::<W>(h, blocks.len());
    // SAFETY: the caller's CPU has O's features (this function's contract).
    unsafe {
        matches::<W, O>(&blocks[at.first], at.bucket, at.tag).count_ones()
            + matches::<W, O>(&blocks[at.second], at.bucket, at.tag).count_ones()
    }
}

/// How many keys ahead [`contains_batch`] prefetches a key's two blocks (a power of two:
/// the length of its ring; 16 and 32 measured alike at 10^7 keys, 8 slower).
const PREFETCH_DISTANCE: usize = 16;

/// `out[i] = contains(hashes[i])`. In a filter larger than
/// [`SMALL_BATCH_BLOCKS`](crate::arch::SMALL_BATCH_BLOCKS) (128 KiB, as for the Bloom
/// filter's batches: at 10^4 keys, 15 KB, the prefetching loop took 9.7 ns a key against
/// the plain loop's 8.6), the key [`PREFETCH_DISTANCE`] places ahead is located and its
/// two blocks prefetched before each lookup, so that lookups overlap their cache misses;
/// the locations wait in a ring on the stack, so each key is located once.
///
/// # Safety
///
/// As for [`contains`]; `hashes.len() == out.len()`.
#[inline(always)]
pub(crate) unsafe fn contains_batch<W: Width, O: TagOps>(
    blocks: &[Block],
    hashes: &[u64],
    out: &mut [bool],
) {
    if blocks.len() <= crate::arch::SMALL_BATCH_BLOCKS {
        for (&h, answer) in hashes.iter().zip(out.iter_mut()) {
            // SAFETY: the caller's CPU has O's features (this function's contract).
            *answer = unsafe { contains::<W, O>(blocks, h) };
        }
        return;
    }
    const D: usize = PREFETCH_DISTANCE;
    const { assert!(D.is_power_of_two()) };
    let locate_ahead = |h: u64| {
        let at = locate::<W>(h, blocks.len());
        prefetch_read(&blocks[at.first]);
        prefetch_read(&blocks[at.second]);
        at
    };
    // Past a short batch's end the ring holds hash 0's blocks: prefetched, never read.
    let mut ring: [Location; D] =
        core::array::from_fn(|i| locate_ahead(hashes.get(i).copied().unwrap_or(0)));
    for (i, answer) in out.iter_mut().enumerate() {
        // `i % D` is a mask (D is a power of two), so this index is never out of bounds.
        let slot = &mut ring[i % D];
        let at = *slot;
        if let Some(&ahead) = hashes.get(i + D) {
            *slot = locate_ahead(ahead);
        }
        // SAFETY: the caller's CPU has O's features (this function's contract).
        *answer = unsafe { contains_at::<W, O>(blocks, &at) };
    }
}

/// Stores the key's fingerprint in its first block while that holds fewer than
/// [`first_block_below`] tags, else in the emptier of its blocks; with `check`, first looks
/// whether it was there already.
///
/// # Safety
///
/// As for [`contains`]; every block well formed.
#[inline(always)]
pub(crate) unsafe fn insert<W: Width, O: TagOps>(
    blocks: &mut [Block],
    h: u64,
    check: bool,
) -> Insertion {
    let at = locate::<W>(h, blocks.len());
    prefetch_read(&blocks[at.second]);
    let (first, second) = (&blocks[at.first], &blocks[at.second]);
    // SAFETY: the caller's CPU has O's features (this function's contract).
    let again = check
        && unsafe {
            matches::<W, O>(first, at.bucket, at.tag) != 0
                || matches::<W, O>(second, at.bucket, at.tag) != 0
        };
    // The second block's metadata is read only where the rule needs it: below the
    // threshold the first block takes the key, and a filter in DRAM then waits for one
    // line, not two.
    let load_first = load::<W>(first);
    let target = if load_first < first_block_below::<W>(blocks.len()) {
        at.first
    } else {
        let load_second = load::<W>(second);
        if load_first.min(load_second) >= W::SLOTS {
            return Insertion::Full;
        }
        if load_first <= load_second {
            at.first
        } else {
            at.second
        }
    };
    let block = &mut blocks[target];
    let metadata = W::metadata(block);
    // SAFETY: as above.
    let position = unsafe { select_zero::<W, O>(metadata, at.bucket) };
    // The tags first: a backend may move them as one vector, loaded before the
    // metadata's stores, not read back from them.
    // SAFETY: as above.
    unsafe { O::shift_in::<W>(block, position.saturating_sub(at.bucket), at.tag) };
    W::set_metadata(block, metadata_insert(metadata, position));
    if again {
        Insertion::Again
    } else {
        Insertion::New
    }
}

/// Deletes one matching fingerprint from the key's first block, else its second; false
/// when neither holds one (nothing changes).
///
/// # Safety
///
/// As for [`insert`].
#[inline(always)]
pub(crate) unsafe fn remove<W: Width, O: TagOps>(blocks: &mut [Block], h: u64) -> bool {
    let at = locate::<W>(h, blocks.len());
    prefetch_read(&blocks[at.second]);
    for index in [at.first, at.second] {
        let block = &mut blocks[index];
        // SAFETY: the caller's CPU has O's features (this function's contract).
        let found = unsafe { matches::<W, O>(block, at.bucket, at.tag) };
        if found != 0 {
            let slot = found.trailing_zeros().saturating_sub(W::FIRST_LANE);
            let metadata = W::metadata(block);
            // The tags first, as in `insert`.
            // SAFETY: as above.
            unsafe { O::shift_out::<W>(block, slot) };
            W::set_metadata(block, metadata_remove(metadata, slot + at.bucket));
            return true;
        }
    }
    false
}
