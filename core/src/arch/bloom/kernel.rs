//! The Bloom kernel handle and what it is made of: [`Kernel`], its single-key [`Probe`]
//! entries, the [`BlockOps`] trait each instruction set implements, and the two batch
//! tuning constants.

use crate::arch::registry::Backend;
use crate::block::Block;

/// How many keys ahead the batch operations hash and prefetch (a power of two: the
/// length of the batch pipeline's ring, see `generic::pipelined`). Measured with
/// `cargo run --release -p linebloom-benches --bin compare` (miss table, 1e8 keys,
/// `linebloom-batch` against `random-read`); the figures are in `benches/README.md`.
pub(crate) const PREFETCH_DISTANCE: usize = 64;

/// The largest filter, in blocks, whose batch operations (`contains_batch`,
/// `insert_batch`, `Extend`, and the vector quotient filter's `contains_batch`) run the
/// single-key loop in the kernel's code instead of the prefetching ring: 128 KiB, where
/// the ring only costs instructions. Measured with the
/// direct-loop and ring batches interleaved (`benches/README.md`, "Small batches").
/// Under Miri it is 2 blocks, so that `tests/miri.rs` reaches both loops at sizes Miri
/// runs in seconds; the answers do not depend on the loop.
#[doc(hidden)]
pub const SMALL_BATCH_BLOCKS: usize = if cfg!(miri) { 2 } else { (128 << 10) / 64 };

/// A kernel: function pointers for one instruction set, plus its name.
///
/// The functions are `unsafe` because SIMD kernels may only run on a CPU that has their
/// features; a `Kernel` obtained from [`detect`](crate::arch::detect) or
/// [`available`](crate::arch::available) always does.
pub struct Kernel {
    /// Short name used everywhere: module, CSV column, plot legend (`scalar`, `portable`,
    /// `avx2`, `avx512`, `neon`).
    pub name: &'static str,
    /// Which backend: the batch operations match on it (`arch::dispatch`), and so do the
    /// single-key probes where the build fixes the kernel set.
    pub(crate) backend: Backend,
    #[cfg(linebloom_table)]
    /// Single-key probes: `[any k, k = 8, k = 16]` (see [`Kernel::probe`]).
    pub(crate) probes: [Probe; 3],
    #[cfg(linebloom_table)]
    /// `ours[i] |= theirs[i]` (or `&=` when the flag is true) over equal-length slices.
    pub(crate) merge: unsafe fn(&mut [Block], &[Block], bool),
}

/// One key's test and set over a filter's blocks: the kernel finds the block
/// (`block_index(h, blocks.len())`) and probes it, so the caller's loop only hashes and
/// calls. The `k = 8` and `k = 16` entries are compiled for that `k` (no rotation table,
/// no enable mask, no test of `k`); a filter picks its entry once, when it is built.
#[cfg(linebloom_table)]
#[derive(Clone, Copy)]
pub(crate) struct Probe {
    /// Does a build without AVX probe with an inline `asm!` form instead of calling?
    /// Set only on the `k = 8` entries of the AVX2 and AVX-512 kernels (see
    /// `inline_k8`).
    #[cfg_attr(not(linebloom_inline_k8), allow(dead_code))]
    pub(crate) inline_k8: bool,
    /// With `inline_k8`: the AVX-512 form (one `zmm`) rather than the AVX2 form (two
    /// `ymm` halves). Set only on the AVX-512 kernel's `k = 8` entry.
    ///
    /// Two flags, not one three-valued field: a filter copies its probe in when it is
    /// built, so both are fields a caller's loop keeps in registers, and LLVM moves a
    /// branch on each out of the loop (one copy of the loop per form), where it left a
    /// three-way switch on one field inside, with two taken jumps a key on the AVX-512
    /// path.
    #[cfg_attr(not(linebloom_inline_k8), allow(dead_code))]
    pub(crate) avx512: bool,
    /// Is this the kernel the build compiles in (its features enabled by the build,
    /// as with `-C target-cpu=native`), whose block operations then inline into the
    /// caller? Set by [`Kernel::probe`], so that the test is a field of the filter, like
    /// the two flags above, which LLVM moves out of a caller's loop (a comparison of
    /// the kernel with the compiled-in one's address stayed inside an insert loop).
    #[cfg_attr(not(linebloom_compiled_in), allow(dead_code))]
    pub(crate) compiled_in: bool,
    /// Is every bit of the hash's pattern set in its block?
    pub(crate) contains: unsafe fn(&[Block], u64, u32) -> bool,
    /// Set the hash's pattern in its block; true if any bit was clear before.
    pub(crate) insert: unsafe fn(&mut [Block], u64, u32) -> bool,
}

/// Where the build fixes the kernel set there are no entry points to pick: a probe
/// calls the kernel's block operations directly.
#[cfg(not(linebloom_table))]
#[derive(Clone, Copy)]
pub(crate) struct Probe;

impl Kernel {
    /// The single-key entry points for `k`.
    #[cfg(linebloom_table)]
    pub(crate) fn probe(&'static self, k: u32) -> Probe {
        let mut probe = match k {
            8 => self.probes[1],
            16 => self.probes[2],
            _ => self.probes[0],
        };
        probe.compiled_in = super::compiled_in::BACKEND == Some(self.backend);
        probe
    }

    /// The single-key entry points for `k`: none to pick without a table.
    #[cfg(not(linebloom_table))]
    pub(crate) fn probe(&'static self, _k: u32) -> Probe {
        Probe
    }
}

/// What an instruction set supplies to the Bloom kernels: its block operations,
/// inlined into its `#[target_feature]` entry points.
pub(crate) trait BlockOps {
    /// Is every bit of `h`'s pattern set in `block`? (The block operation behind a
    /// filter's `contains`.)
    ///
    /// # Safety
    ///
    /// Only on a CPU with the backend's features; `k ≤ MAX_K`.
    unsafe fn contains(block: &Block, h: u64, k: u32) -> bool;
    /// Sets `h`'s pattern in `block`; true if any bit was clear. (Behind a filter's
    /// `insert`.)
    ///
    /// # Safety
    ///
    /// Only on a CPU with the backend's features; `k ≤ MAX_K`.
    unsafe fn insert(block: &mut Block, h: u64, k: u32) -> bool;
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
