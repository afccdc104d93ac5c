//! [`Blocks`]: the default storage of every block filter, the same type with and without
//! the `alloc` feature.
//!
//! Features must only add. If the default storage were `Box<[Block]>` with `alloc` and
//! `&'static mut [Block]` without it, a no-alloc crate that names `BloomFilter` would stop
//! compiling as soon as any other crate in the build enabled `alloc`. `Blocks` is one
//! type in both builds: it holds either a `&'static mut [Block]` (always available, for
//! a `static` array) or, with `alloc`, owned memory: a boxed slice, or with `std` on
//! Linux a huge-page mapping for filters of 2 MiB or more ([`Blocks::zeroed`]). Reading
//! it is a pointer and a length, with no branch on which kind it is.
//!
//! ```
//! use linebloom::{Block, Blocks, BloomFilter};
//! // A leaked array stands in for a `static` here; firmware passes its `static` array.
//! let storage: &'static mut [Block] = Box::leak(Box::new([Block::ZERO; 4]));
//! let mut f: BloomFilter = BloomFilter::from_storage(Blocks::from(storage), 8)?;
//! f.insert("sensor-17");
//! assert!(f.contains("sensor-17"));
//! # Ok::<(), linebloom::ParamsError>(())
//! ```

use crate::block::Block;
use core::ptr::NonNull;

/// Owned or `'static` blocks (see the module docs).
pub struct Blocks {
    /// Start of `len` initialised blocks, valid for as long as `self` lives: a
    /// `&'static mut [Block]` given up to this value, or memory `owner` frees on drop.
    ptr: NonNull<Block>,
    len: usize,
    #[cfg(feature = "alloc")]
    owner: Owner,
}

/// Who frees the blocks.
#[cfg(feature = "alloc")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    /// Nobody: a `&'static mut [Block]`.
    Static,
    /// A leaked `Box<[Block]>` of length `len`.
    Boxed,
    /// A `huge_pages::map_zeroed` mapping of `len` blocks; `advised` says whether the OS
    /// accepted the huge-page advice.
    #[cfg(linebloom_huge_pages)]
    Mapped { advised: bool },
}

// SAFETY: `Blocks` is semantically a `Box<[Block]>` or a `&'static mut [Block]` (a mapping
// is owned like a box); both are `Send` and `Sync` because `Block` (plain `u64`s) is.
unsafe impl Send for Blocks {}
// SAFETY: as for `Send`: shared access only hands out `&[Block]`.
unsafe impl Sync for Blocks {}

impl From<&'static mut [Block]> for Blocks {
    fn from(blocks: &'static mut [Block]) -> Self {
        Blocks {
            len: blocks.len(),
            ptr: NonNull::from(blocks).cast(),
            #[cfg(feature = "alloc")]
            owner: Owner::Static,
        }
    }
}

#[cfg(feature = "alloc")]
impl From<alloc::boxed::Box<[Block]>> for Blocks {
    fn from(blocks: alloc::boxed::Box<[Block]>) -> Self {
        let len = blocks.len();
        let raw = alloc::boxed::Box::into_raw(blocks);
        Blocks {
            // SAFETY: `Box::into_raw` never returns null.
            ptr: unsafe { NonNull::new_unchecked(raw.cast::<Block>()) },
            len,
            owner: Owner::Boxed,
        }
    }
}

#[cfg(feature = "alloc")]
impl Blocks {
    /// `n` zeroed blocks on the heap (zeroed allocation: the OS hands out untouched pages
    /// lazily, so a large empty filter costs no memory until it is written).
    ///
    /// On Linux with the `std` feature, `n` blocks of 2 MiB or more are mapped from the
    /// OS instead, at a 2 MiB boundary, and advised for transparent huge pages before
    /// any page is touched: a probe then rarely misses the TLB. The mapping is the
    /// filter's size rounded to the OS page (no memory is wasted), and its pages stay
    /// untouched until written. [`huge_pages_advised`](Self::huge_pages_advised) says
    /// whether the OS took the advice.
    ///
    /// ```
    /// use linebloom::Blocks;
    /// let small = Blocks::zeroed(16);
    /// assert_eq!(small.as_ref().len(), 16);
    /// assert!(!small.huge_pages_advised(), "1 KiB stays on the heap");
    /// ```
    #[must_use]
    pub fn zeroed(n: usize) -> Self {
        #[cfg(linebloom_huge_pages)]
        if let Some(bytes) = n
            .checked_mul(Block::BYTES)
            .filter(|&b| b >= crate::huge_pages::HUGE_PAGE)
            && let Some((ptr, advised)) = crate::huge_pages::map_zeroed(bytes)
        {
            return Blocks {
                ptr: ptr.cast(),
                len: n,
                owner: Owner::Mapped { advised },
            };
        }
        Blocks::from(zeroed_box(n))
    }

    /// The blocks as a boxed slice: the same allocation when they are a boxed slice, a
    /// copy when they borrow a `'static` slice or are mapped on huge pages.
    #[must_use]
    pub fn into_boxed_slice(self) -> alloc::boxed::Box<[Block]> {
        if self.owner != Owner::Boxed {
            return alloc::boxed::Box::from(self.as_ref());
        }
        let this = core::mem::ManuallyDrop::new(self);
        let slice = core::ptr::slice_from_raw_parts_mut(this.ptr.as_ptr(), this.len);
        // SAFETY: boxed blocks came from `Box::into_raw` of a `Box<[Block]>` of this
        // length (`From<Box<[Block]>>`), and `ManuallyDrop` keeps `Drop` from freeing
        // them a second time.
        unsafe { alloc::boxed::Box::from_raw(slice) }
    }
}

impl Blocks {
    /// Did the OS accept the transparent-huge-page advice for these blocks? Only blocks
    /// that `zeroed` mapped ask (2 MiB or more, Linux with `std`);
    /// any other blocks answer `false`. Whether the kernel then backs them with huge
    /// pages is its choice: `AnonHugePages` in `/proc/self/smaps_rollup` tells.
    #[must_use]
    pub fn huge_pages_advised(&self) -> bool {
        #[cfg(linebloom_huge_pages)]
        if let Owner::Mapped { advised } = self.owner {
            return advised;
        }
        false
    }
}

#[cfg(feature = "alloc")]
fn zeroed_box(n: usize) -> alloc::boxed::Box<[Block]> {
    use alloc::alloc::{Layout, alloc_zeroed, handle_alloc_error};
    use alloc::boxed::Box;
    if n == 0 {
        return Box::new([]);
    }
    // `Params` caps the size at MAX_BYTES ≤ isize::MAX, so the layout cannot overflow.
    let layout = Layout::array::<Block>(n).expect("size checked by Params");
    // SAFETY: the layout has non-zero size (n ≥ 1 blocks of 64 bytes).
    let ptr = unsafe { alloc_zeroed(layout) } as *mut Block;
    if ptr.is_null() {
        handle_alloc_error(layout);
    }
    // SAFETY: `ptr` was allocated by the global allocator with the layout of `[Block; n]`,
    // and all-zero bytes are a valid `Block`, so it is an initialised `[Block]` of length
    // n that the box may own and free with the same layout.
    unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, n)) }
}

impl AsRef<[Block]> for Blocks {
    #[inline(always)]
    fn as_ref(&self) -> &[Block] {
        // SAFETY: `ptr` points to `len` initialised blocks that live as long as `self`
        // and that nothing else can reach (the field invariant), and `&self` forbids
        // writes through `self` for the returned borrow.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl AsMut<[Block]> for Blocks {
    #[inline(always)]
    fn as_mut(&mut self) -> &mut [Block] {
        // SAFETY: as in `as_ref`; `&mut self` makes the returned borrow exclusive.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(feature = "alloc")]
impl Drop for Blocks {
    fn drop(&mut self) {
        match self.owner {
            Owner::Static => {}
            Owner::Boxed => {
                let slice = core::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len);
                // SAFETY: boxed blocks came from `Box::into_raw` of a `Box<[Block]>` of
                // this length, and this is the only place that frees them.
                drop(unsafe { alloc::boxed::Box::from_raw(slice) });
            }
            #[cfg(linebloom_huge_pages)]
            Owner::Mapped { .. } => {
                // SAFETY: mapped blocks came from `map_zeroed(len × 64)` in `zeroed`, and
                // this is the only place that unmaps them; `self` is gone after.
                unsafe { crate::huge_pages::unmap(self.ptr.cast(), self.len * Block::BYTES) }
            }
        }
    }
}

/// A deep copy, always owned, in memory of the kind [`Blocks::zeroed`] picks for its
/// size (a copy of `'static` blocks is a new heap allocation).
#[cfg(feature = "alloc")]
impl Clone for Blocks {
    fn clone(&self) -> Self {
        let mut copy = Blocks::zeroed(self.len);
        copy.as_mut().copy_from_slice(self.as_ref());
        copy
    }
}

/// Blocks in a `static`, handed out once, without `unsafe` in the caller: the safe way
/// to give a filter static memory on a microcontroller (no allocator, no `static mut`).
///
/// [`take`](Self::take) returns the blocks as [`Blocks`] the first time and `None` after,
/// so there is never more than one mutable reference to them. Needs atomic
/// compare-and-swap on bytes: every Cortex-M but M0/M0+, which lack it and need the
/// `portable-atomic` feature (see `Cargo.toml`).
///
/// ```
/// use linebloom::{BloomFilter, StaticBlocks};
/// static STORAGE: StaticBlocks<16> = StaticBlocks::new(); // 1 KiB, zeroed
///
/// let mut f: BloomFilter = BloomFilter::from_storage(STORAGE.take().unwrap(), 8)?;
/// f.insert("sensor-17");
/// assert!(f.contains("sensor-17"));
/// assert!(STORAGE.take().is_none(), "handed out once");
/// # Ok::<(), linebloom::ParamsError>(())
/// ```
#[cfg(any(target_has_atomic = "8", feature = "portable-atomic"))]
pub struct StaticBlocks<const N: usize> {
    taken: crate::sync::AtomicBool,
    blocks: core::cell::UnsafeCell<[Block; N]>,
}

// SAFETY: the blocks are reachable only through `take`, which hands them out at most once
// (an atomic swap), so no two threads can ever hold references to them; `Block` is Send.
#[cfg(any(target_has_atomic = "8", feature = "portable-atomic"))]
unsafe impl<const N: usize> Sync for StaticBlocks<N> {}

#[cfg(any(target_has_atomic = "8", feature = "portable-atomic"))]
impl<const N: usize> StaticBlocks<N> {
    /// `N` zeroed blocks, not yet taken (a `const fn`, for a `static` initialiser).
    #[must_use]
    pub const fn new() -> Self {
        StaticBlocks {
            taken: crate::sync::AtomicBool::new(false),
            blocks: core::cell::UnsafeCell::new([Block::ZERO; N]),
        }
    }

    /// The blocks, the first time this is called; `None` every time after.
    pub fn take(&'static self) -> Option<Blocks> {
        if self.taken.swap(true, crate::sync::Ordering::AcqRel) {
            return None;
        }
        // SAFETY: the swap above returned `false` exactly once for this `static`, so this
        // is the only reference to the blocks ever created; they live for `'static`.
        let blocks: &'static mut [Block; N] = unsafe { &mut *self.blocks.get() };
        Some(Blocks::from(&mut blocks[..]))
    }
}

#[cfg(any(target_has_atomic = "8", feature = "portable-atomic"))]
impl<const N: usize> Default for StaticBlocks<N> {
    fn default() -> Self {
        StaticBlocks::new()
    }
}

/// The block count and whether the blocks were handed out (not their contents, which
/// only the holder of the [`Blocks`] may read).
#[cfg(any(target_has_atomic = "8", feature = "portable-atomic"))]
impl<const N: usize> core::fmt::Debug for StaticBlocks<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("StaticBlocks")
            .field("len", &N)
            .field("taken", &self.taken.load(crate::sync::Ordering::Relaxed))
            .finish()
    }
}

impl core::fmt::Debug for Blocks {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Blocks").field("len", &self.len).finish()
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;

    #[test]
    fn owned_and_static_blocks_read_write_and_convert() {
        let mut owned = Blocks::zeroed(3);
        owned.as_mut()[2].0[7] = 9;
        let copy = owned.clone();
        assert_eq!(copy.as_ref()[2].0[7], 9);
        assert_eq!(owned.into_boxed_slice()[2].0[7], 9);

        // A leaked box stands in for a `static`; it is reclaimed at the end, so Miri's
        // leak check still sees whether `Blocks` frees what it owns and only that.
        let raw: *mut [Block; 2] =
            alloc::boxed::Box::into_raw(alloc::boxed::Box::new([Block::ZERO, Block::ZERO]));
        // SAFETY: `raw` is a live, unique allocation, and this is its only reference
        // until `borrowed` (which does not free it) is gone.
        let leaked: &'static mut [Block] = unsafe { &mut *raw };
        let mut borrowed = Blocks::from(leaked);
        borrowed.as_mut()[1].0[0] = 1;
        let boxed = borrowed.into_boxed_slice();
        assert_eq!((boxed.len(), boxed[1].0[0]), (2, 1));
        assert_eq!(Blocks::zeroed(0).as_ref().len(), 0);
        // SAFETY: `borrowed` was consumed and never freed `raw`; nothing else refers to
        // it, so the box may own it again.
        let original = unsafe { alloc::boxed::Box::from_raw(raw) };
        assert_eq!(original[1].0[0], 1);
    }

    /// Filters of 2 MiB or more are mapped: zeroed, writable at both ends, 64-byte
    /// aligned, and they clone and convert to a box with the same contents. The advice
    /// is accepted wherever the kernel has transparent huge pages at all (its sysfs
    /// directory exists); whether it then grants them is the lab's to report.
    #[cfg(linebloom_huge_pages)]
    #[test]
    fn large_blocks_are_mapped_zeroed_and_copy_out() {
        let two_mib = crate::huge_pages::HUGE_PAGE / Block::BYTES;
        assert!(
            !Blocks::zeroed(two_mib - 1).huge_pages_advised(),
            "just under 2 MiB: heap"
        );
        for n in [two_mib, two_mib + 1, 3 * two_mib + 7] {
            let mut blocks = Blocks::zeroed(n);
            let thp = std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists();
            assert_eq!(blocks.huge_pages_advised(), thp, "{n} blocks");
            assert_eq!(blocks.as_ref().as_ptr() as usize % 64, 0);
            assert!(blocks.as_ref().iter().all(|b| *b == Block::ZERO));
            blocks.as_mut()[0].0[0] = 1;
            blocks.as_mut()[n - 1].0[7] = 2;
            let copy = blocks.clone();
            assert_eq!(copy.huge_pages_advised(), thp);
            assert!(copy.as_ref() == blocks.as_ref());
            let boxed = blocks.into_boxed_slice();
            assert_eq!((boxed.len(), boxed[0].0[0], boxed[n - 1].0[7]), (n, 1, 2));
        }
    }
}
