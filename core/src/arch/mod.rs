//! Kernels: the code that tests and sets a key's bits inside one block.
//!
//! Each backend exposes one `static KERNEL: Kernel` table of function pointers. A filter
//! copies its `&'static Kernel` when it is built, so a probe is one indirect call and no
//! atomic load. [`detect`] picks the best kernel this CPU runs; [`available`] lists every
//! kernel it can run, for tests and benchmarks.
//!
//! Only `scalar` exists so far; SIMD kernels slot in here without touching the filter
//! types.

pub mod scalar;

use crate::block::Block;

/// A kernel: function pointers for one instruction set, plus its name.
///
/// The functions are `unsafe` because SIMD kernels may only run on a CPU that has their
/// features; a `Kernel` obtained from [`detect`] or [`available`] always does.
pub struct Kernel {
    /// Short name used everywhere: module, CSV column, plot legend (`scalar`, …).
    pub name: &'static str,
    /// Is every bit of the hash's pattern set in the block?
    pub(crate) contains: unsafe fn(&Block, u64, u32) -> bool,
    /// Set the hash's pattern; true if any bit was clear before.
    pub(crate) insert: unsafe fn(&mut Block, u64, u32) -> bool,
}

impl core::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for Kernel {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// The best kernel this CPU runs.
pub fn detect() -> &'static Kernel {
    &scalar::KERNEL
}

/// Every kernel this CPU runs, best last; scalar always first.
pub fn available() -> impl Iterator<Item = &'static Kernel> {
    [&scalar::KERNEL].into_iter()
}

/// The kernel called `name`, if this CPU runs it.
pub fn by_name(name: &str) -> Option<&'static Kernel> {
    available().find(|k| k.name == name)
}

/// Name of the kernel [`detect`] picks on this CPU; the lab records it with every result.
pub fn active_kernel() -> &'static str {
    detect().name
}
