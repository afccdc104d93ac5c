//! Memory for large filters straight from the OS, advised for transparent huge pages
//! (Linux with `std`, outside Miri: the cfg `linebloom_huge_pages` of `core/build.rs`).
//!
//! With 4 KiB pages a probe of a filter of many megabytes misses the TLB on almost every
//! key, and the page walk adds to the cache miss. A 2 MiB page covers 512 times as
//! much. [`crate::Blocks::zeroed`] therefore maps a filter of at least [`HUGE_PAGE`]
//! bytes itself:
//!
//! * an anonymous private `mmap`, trimmed so that it starts on a 2 MiB boundary and is
//!   exactly the filter's size rounded up to the OS page: it costs no more memory than
//!   the heap would, and the tail past the last whole 2 MiB uses ordinary pages;
//! * `madvise(MADV_HUGEPAGE)` **before any page is touched**. Advice given after the
//!   pages were written (as after `alloc_zeroed` with a 2 MiB alignment, which zeroes
//!   them with `memset`) only lets `khugepaged` merge them later, in the background;
//! * the pages stay untouched and zero until written, as with `calloc`, so a large empty
//!   filter still costs no memory until it is used. Memory is then taken 2 MiB at a
//!   time, and with the kernel's THP `defrag` setting at `madvise` (a common default)
//!   the first write to each 2 MiB may wait for the kernel to compact memory: a
//!   one-time cost while the filter fills.
//!
//! Where the system refuses the advice (`transparent_hugepage` set to `never`) the
//! mapping keeps ordinary pages; where `mmap` fails, the caller falls back to the global
//! allocator. `benches/examples/huge_pages.rs` measures what the pages buy.

use core::ptr::NonNull;

/// The huge-page size the mapping is aligned to: a PMD page on x86_64, and on aarch64
/// with 4 KiB base pages. With larger base pages the alignment is still valid, only the
/// advice buys less.
pub(crate) const HUGE_PAGE: usize = 2 << 20;

/// The OS page size (`sysconf(_SC_PAGESIZE)`), 4 KiB if it cannot be read.
fn page_size() -> usize {
    // SAFETY: `sysconf` only reads a configuration value.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page)
        .ok()
        .filter(|p| p.is_power_of_two())
        .unwrap_or(4096)
}

/// The length of the mapping for `bytes` bytes: whole OS pages.
fn mapped_len(bytes: usize) -> Option<usize> {
    bytes.checked_next_multiple_of(page_size())
}

/// Maps `bytes` zeroed bytes at a [`HUGE_PAGE`] boundary and advises huge pages for them;
/// `None` if the OS refuses the mapping. The flag says whether it accepted the advice.
/// The memory is the caller's until it passes the same pointer and `bytes` to
/// [`unmap`].
pub(crate) fn map_zeroed(bytes: usize) -> Option<(NonNull<u8>, bool)> {
    let len = mapped_len(bytes)?;
    let reserve = len.checked_add(HUGE_PAGE)?;
    // SAFETY: an anonymous private mapping at an address of the kernel's choosing
    // touches no existing memory; failure is reported as MAP_FAILED.
    let base = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            reserve,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return None;
    }
    let head = (base as usize).next_multiple_of(HUGE_PAGE) - base as usize;
    let tail = reserve - head - len;
    // SAFETY: `base .. base + reserve` is the mapping made above and nothing else refers
    // to it. `head < HUGE_PAGE` and `tail ≤ HUGE_PAGE` leave `len` bytes at
    // `base + head`; `base` is page-aligned and `head`, `len` are multiples of the page
    // (HUGE_PAGE is), so every range passed to munmap and madvise is page-aligned and
    // inside the mapping. Unmapping the two ends only shrinks our own reservation.
    unsafe {
        let start = base.cast::<u8>().add(head);
        if head > 0 {
            libc::munmap(base, head);
        }
        if tail > 0 {
            libc::munmap(start.add(len).cast(), tail);
        }
        let advised = libc::madvise(start.cast(), len, libc::MADV_HUGEPAGE) == 0;
        Some((NonNull::new_unchecked(start), advised))
    }
}

/// Returns a mapping made by [`map_zeroed`] to the OS.
///
/// # Safety
///
/// `ptr` and `bytes` are those of one earlier [`map_zeroed`] call whose memory is not
/// unmapped yet and is not referred to after this call.
pub(crate) unsafe fn unmap(ptr: NonNull<u8>, bytes: usize) {
    let len = mapped_len(bytes).expect("the same length map_zeroed accepted");
    // SAFETY: `ptr .. ptr + len` is exactly what `map_zeroed` left mapped (the caller's
    // contract), so this unmaps that mapping and nothing else.
    let rc = unsafe { libc::munmap(ptr.as_ptr().cast(), len) };
    debug_assert_eq!(rc, 0, "munmap of a mapping of our own cannot fail");
}
