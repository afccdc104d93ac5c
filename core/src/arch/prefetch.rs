//! The batch pipeline's parts: prefetch hints (a line about to be read or written) and
//! [`ahead_ring`], the loop that works on each item a fixed distance behind its
//! prefetch, written once for the Bloom and the quotient filters' batches.

use crate::block::Block;

/// Hint that the line at `p` will be read soon. No effect on correctness.
#[inline(always)]
pub(crate) fn prefetch_read(p: *const Block) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: prefetch never faults, whatever the address; SSE is baseline on x86_64.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    // SAFETY: `prfm` is a hint that never faults and touches no register but its input.
    unsafe {
        core::arch::asm!("prfm pldl1keep, [{0}]", in(reg) p, options(nostack, preserves_flags, readonly))
    };
    let _ = p;
}

/// Hint that the line at `p` will be written soon. No effect on correctness.
#[inline(always)]
pub(crate) fn prefetch_write(p: *const Block) {
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    // SAFETY: `prfm` is a hint that never faults and touches no register but its input.
    unsafe {
        core::arch::asm!("prfm pstl1keep, [{0}]", in(reg) p, options(nostack, preserves_flags, readonly))
    };
    // x86 has no stable write-intent prefetch (prefetchw needs a separate feature);
    // a read prefetch still brings the line in.
    #[cfg(not(target_arch = "aarch64"))]
    prefetch_read(p);
    let _ = p;
}

/// Calls `each(i, value)` for every item in order, where `value` is what `ahead` returned
/// for `items[i]`; `ahead` runs `D` items before the `each` of its item, so whatever it
/// starts (a prefetch) has had `D` items' work to finish. The values wait in a ring of
/// `D` on the stack: each item meets `ahead` once, and no buffer as long as the batch is
/// needed.
///
/// `ahead` is called once per item, in order; `each` from one place only, so a closure
/// holding `#[target_feature]` code inlines into its caller. (Filling the ring in the
/// main loop, one call site for `ahead` and a test of the index in every step, made the
/// Bloom filter's batched inserts 3-5% slower at 64 MB.)
#[inline(always)]
pub(crate) fn ahead_ring<I, T: Copy, const D: usize>(
    items: &[I],
    mut ahead: impl FnMut(&I) -> T,
    mut each: impl FnMut(usize, T),
) {
    const { assert!(D.is_power_of_two()) };
    let Some(first) = items.first() else {
        return;
    };
    // Past a short batch's end the ring holds copies of the first value, never used.
    let mut ring = [ahead(first); D];
    for (slot, item) in ring.iter_mut().zip(items).skip(1) {
        *slot = ahead(item);
    }
    for i in 0..items.len() {
        // `i % D` is a mask (D is a power of two), so this index is never out of bounds.
        let slot = &mut ring[i % D];
        let value = *slot;
        if let Some(next) = items.get(i + D) {
            *slot = ahead(next);
        }
        each(i, value);
    }
}

#[cfg(test)]
mod tests {
    use super::ahead_ring;
    use alloc::vec::Vec;

    /// Every item meets `ahead` once, in order, `D` items (or the batch's end) before its
    /// `each`, which gets that item's value; batches shorter than the ring included.
    fn check<const D: usize>() {
        for len in 0..3 * D + 2 {
            let items: Vec<u32> = (0..len as u32).map(|i| i * 7 + 1).collect();
            // (is it an `each`, the item): one log for both closures.
            let events = core::cell::RefCell::new(Vec::new());
            ahead_ring::<u32, u32, D>(
                &items,
                |&item| {
                    events.borrow_mut().push((false, item));
                    item * 3
                },
                |i, value| {
                    assert_eq!(items[i] * 3, value);
                    events.borrow_mut().push((true, value / 3));
                },
            );
            let events = events.into_inner();
            let ahead_calls: Vec<u32> = events.iter().filter(|e| !e.0).map(|e| e.1).collect();
            assert_eq!(ahead_calls, items, "len {len}");
            let eaches: Vec<u32> = events.iter().filter(|e| e.0).map(|e| e.1).collect();
            assert_eq!(eaches, items, "len {len}");
            for (at, &(is_each, item)) in events.iter().enumerate() {
                if is_each {
                    let i = (item - 1) / 7;
                    let ahead_before = events[..at].iter().filter(|e| !e.0).count();
                    assert_eq!(
                        ahead_before,
                        (i as usize + D + 1).min(len),
                        "len {len}, item {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn each_item_comes_its_distance_behind_its_ahead() {
        check::<1>();
        check::<4>();
        check::<16>();
    }
}
