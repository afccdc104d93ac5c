//! Prefetch hints for the batch pipeline: a line about to be read or written.

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
