//! The vector quotient filter's per-key operations, written once over a backend's
//! [`TagOps`] (the tag compare and the select) and a tag [`Width`]. Every kernel's entry
//! points are these functions inlined into its `#[target_feature]` code, so kernels
//! differ only in how they compare and select, and their blocks stay bit-identical.
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
    Width, first_block_below, load, locate, metadata_insert, metadata_remove, shift_in, shift_out,
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

/// The lane just past the run of `bucket`, as a one-bit word: lane `FIRST_LANE +
/// select₀(bucket) − bucket`, or 0 where that lane is 64 (a full block's last run).
/// One deposit per metadata word (the bucket's closing zero is in exactly one of them),
/// shifted so that the zero's position becomes its slot's lane.
#[inline(always)]
unsafe fn run_end_lane<W: Width, O: TagOps>(metadata: u128, bucket: u32) -> u64 {
    let low = !(metadata as u64);
    // SAFETY: the caller's CPU has O's features (this function's contract). A rank of
    // 64 or more deposits nothing, so the shift's masking never matters.
    let in_low = unsafe { O::deposit(low, bucket) } >> (bucket & 63) << W::FIRST_LANE;
    if W::TAG_WORD == 1 {
        return in_low;
    }
    let high = !((metadata >> 64) as u64);
    // A bucket whose zero is in the low word wraps to a huge rank: nothing deposited.
    // SAFETY: as above.
    let deposited = unsafe { O::deposit(high, bucket.wrapping_sub(low.count_ones())) };
    // Zero number `bucket` at bit `p` of the high word is slot `64 + p − bucket`.
    let in_high = deposited
        .checked_shl((64 + W::FIRST_LANE).wrapping_sub(bucket))
        .unwrap_or(0);
    in_low | in_high
}

/// The lanes of the run's slots whose tag equals `tag`, as bits of the backend's lane
/// mask (lane `FIRST_LANE + s` is slot `s`).
///
/// The compare comes first: most blocks hold no slot with the tag at all (at 94% load
/// with 8-bit tags, 84% of them), and those need no select. With a fast deposit
/// (`pdep`) the run's lanes are the difference of two one-bit words, the lanes just past
/// the run and just past the bucket before (the first slot's lane for bucket 0), as in
/// the C VQF; with the broadword select, whose cost is the select itself, one select
/// finds the run's end and a leading-zero count its start.
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
    let metadata = W::metadata(block);
    // SAFETY: as above.
    let end = unsafe { run_end_lane::<W, O>(metadata, bucket) };
    let start = if bucket == 0 {
        1 << W::FIRST_LANE
    } else {
        // SAFETY: as above.
        unsafe { run_end_lane::<W, O>(metadata, bucket - 1) }
    };
    // Where the run reaches the last slot, `end` is 0 and the difference wraps to every
    // lane from `start` up, as it should.
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
    let (first, second) = (&blocks[at.first], &blocks[at.second]);
    prefetch_read(second);
    // SAFETY: the caller's CPU has O's features (this function's contract).
    unsafe {
        matches::<W, O>(first, at.bucket, at.tag) != 0
            || matches::<W, O>(second, at.bucket, at.tag) != 0
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
    W::set_metadata(block, metadata_insert(metadata, position));
    shift_in::<W>(block, position.saturating_sub(at.bucket), at.tag);
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
            W::set_metadata(block, metadata_remove(metadata, slot + at.bucket));
            shift_out::<W>(block, slot);
            return true;
        }
    }
    false
}
