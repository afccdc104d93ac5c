//! Kernels: the code that tests and sets a key's bits inside one block.
//!
//! Each backend has one crate-private `static KERNEL: Kernel` and, for SIMD backends, a
//! public `fn kernel() -> Option<&'static Kernel>` that is `None` when the CPU lacks the
//! feature. Those checked functions, [`available`], [`by_name`] and [`detect`] are the
//! only ways to obtain a `&'static Kernel` outside this crate, so every kernel a filter
//! holds runs on this CPU, and forcing one for a test or a benchmark (`with_kernel`)
//! stays safe (memchr keeps its tables private for the same reason).
//!
//! What a `Kernel` holds depends on the target (`core/build.rs` names the two cases as
//! the cfg `linebloom_table`):
//!
//! * **x86_64 and aarch64**, where the CPU decides at run time: a table of function
//!   pointers. A filter copies its `&'static Kernel` when it is built. Union and
//!   intersect make one call into the kernel's table; batch lookups and inserts match
//!   once on the kernel's `Backend` and enter its generic entry point, which hashes,
//!   prefetches and probes every key in `#[target_feature]` code (`generic::pipelined`;
//!   a filter of at most [`SMALL_BATCH_BLOCKS`] runs the single-key loop there instead;
//!   `Extend` hashes chunks of 256 keys and enters it once per chunk). Each runs its
//!   whole loop in the kernel's code. A single-key probe is one indirect call to
//!   the kernel's entry for the filter's `k`, with two exceptions that inline into the
//!   caller instead:
//!   * where the build itself enables the kernel's features (`-C target-cpu=native`, or
//!     NEON on every aarch64 target), `arch::contains` and `arch::insert` call the
//!     kernel's block operation directly, as memchr does;
//!   * on x86_64 builds without AVX (the default target), the `k = 8` probe of the AVX2
//!     and AVX-512 kernels is one inline `asm!` block of AVX2 instructions
//!     (`x86_64::inline_k8`), guarded by the probe's flag, so the default build pays no
//!     call for the shape sizing picks near 1%.
//! * **Every other target** (Cortex-M, RISC-V, wasm32, i686, armv7, s390x), where the
//!   build fixes the kernel set: no table, only a name and a `Backend` tag. Probes and
//!   batch loops match on the tag and inline the backend's code where they are called,
//!   so a program links only what it calls: with one kernel (no `portable`, see below)
//!   there is not even a branch. A table would keep every entry point of every kernel
//!   alive: on a Cortex-M4 that was 5.5 KB of code for a program that calls `insert`
//!   and `contains`, where it is now about 0.5 KB (the lab's `footprint` experiment).
//!
//! | kernel | where | selected |
//! |---|---|---|
//! | `scalar` | everywhere | the reference; under Miri; the kernel of targets without SIMD |
//! | `portable` | where `wide` has vectors: x86 (SSE2), aarch64, wasm32 with `simd128` | `wide` vectors for the block test/set (SIMD chosen at compile time) |
//! | `avx2` | x86_64 | run time: `is_x86_feature_detected!` (std) or `cpufeatures` (no std) |
//! | `avx512` | x86_64 | run time, as above (AVX-512F, OS-enabled ZMM state) |
//! | `neon` | aarch64 | compile time: NEON is baseline on aarch64 |
//!
//! [`detect`] tries avx512 → avx2 → neon → portable → scalar and caches the answer in
//! one `AtomicPtr` (null = not yet detected). Relaxed ordering suffices: every thread
//! computes the same answer, so a race only repeats the detection.
//!
//! Every kernel gives bit-identical blocks and answers; `tests/kernels.rs` checks that for
//! each kernel [`available`] lists.

mod generic;
#[cfg(linebloom_portable)]
pub mod portable;
pub mod scalar;

#[cfg(target_arch = "x86_64")]
pub mod x86_64;

#[cfg(target_arch = "aarch64")]
pub mod aarch64;

use crate::block::Block;
use core::sync::atomic::{AtomicPtr, Ordering};

/// How many keys ahead the batch operations hash and prefetch (a power of two: the
/// length of the batch pipeline's ring, see `generic::pipelined`).
///
/// Chosen with `compare` (the miss table's `linebloom-batch` against `random-read`, both
/// on huge pages, 1e8 keys) on this run's 2-core AMD EPYC (avx2), with the hashing inside
/// the pipeline. Each figure is one run of 11 rounds: the random read's speed-up over
/// sbbf-rs-safe divided by the batch's (both medians of per-round ratios against the same
/// sbbf-rs-safe passes, so the machine's drift between rounds cancels); below 1, the
/// batch took less time a key than the reads:
///
/// | distance | batch ÷ random read, two alternating runs |
/// |---:|---|
/// | 32  | 0.93, 0.97 |
/// | 64  | 0.80, 0.98 |
/// | 128 | 0.79, 1.06 |
///
/// Against real memory every distance from 32 up keeps the batch at the reads' pace, and
/// the differences are within the machine's noise; 64 was kept. (Before `random-read`
/// wrote its buffer it read the kernel's shared zero page, and against that 16 and 32
/// looked worse than 64: 1.37–1.60 against 1.14–1.35.)
pub(crate) const PREFETCH_DISTANCE: usize = 64;

/// The largest filter, in blocks, whose batch operations (`contains_batch`,
/// `insert_batch`, `Extend`) run the single-key loop, hash then probe, in the kernel's
/// code: 128 KiB. Larger filters hash and prefetch 64 keys ahead through a ring. A
/// filter this small stays in L1 or L2, where the ring's stores and loads, the
/// prefetches and the ring's second block index only cost instructions.
///
/// Chosen on the 2-core AMD EPYC VM of 2026-12-01 (Zen 3: 32 KiB L1d, 512 KiB L2; avx2):
/// `contains_batch` and `insert_batch` of 2¹⁶ random keys, each way interleaved 15
/// times in one process, the direct loop's speed-up over the ring's:
///
/// | filter | lookups | inserts |
/// |---:|---|---|
/// | 16 KiB | 1.13–1.19 | 1.48 |
/// | 64 KiB | 0.99–1.09 | 1.16 |
/// | 128 KiB | 1.06–1.09 | 1.21 |
/// | 256 KiB | 0.84–0.99 | 1.06 |
/// | 512 KiB | 0.75–0.82 | 0.90 |
/// | 2 MiB | 0.73–0.74 | 0.85 |
///
/// (a control copy of the ring read 0.89–1.02).
///
/// Under Miri it is 2 blocks, so that `tests/miri.rs` reaches both loops at sizes Miri
/// runs in seconds; the answers do not depend on the loop.
pub const SMALL_BATCH_BLOCKS: usize = if cfg!(miri) { 2 } else { (128 << 10) / 64 };

/// A kernel: function pointers for one instruction set, plus its name.
///
/// The functions are `unsafe` because SIMD kernels may only run on a CPU that has their
/// features; a `Kernel` obtained from [`detect`] or [`available`] always does.
pub struct Kernel {
    /// Short name used everywhere: module, CSV column, plot legend (`scalar`, `portable`,
    /// `avx2`, `avx512`, `neon`).
    pub name: &'static str,
    /// Which backend: the batch operations match on it (see [`contains_keys`]), and so
    /// do the single-key probes where the build fixes the kernel set.
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
    /// May builds without AVX probe with the inline AVX2 block instead of calling? Set
    /// only on the `k = 8` entries of the AVX2 and AVX-512 kernels, whose CPUs run AVX2
    /// (see `x86_64::inline_k8`).
    #[cfg_attr(
        not(all(
            target_arch = "x86_64",
            target_feature = "sse2",
            not(target_feature = "avx"),
            not(miri)
        )),
        allow(dead_code)
    )]
    pub(crate) inline_k8: bool,
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

/// The backend of a kernel (see [`Kernel`]'s `backend`). The batch operations match on
/// it to enter the backend's generic entry points, which hash the keys inside the
/// backend's `#[target_feature]` code (see [`contains_keys`]). Without a table the
/// single-key probes match on it too, so a build with one kernel has no branch and links
/// no entry point it does not call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// [`scalar::Scalar`].
    Scalar,
    /// [`portable::Portable`].
    #[cfg(linebloom_portable)]
    Portable,
    /// [`x86_64::avx2`].
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// [`x86_64::avx512`].
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// [`aarch64::neon`].
    #[cfg(target_arch = "aarch64")]
    Neon,
}

/// Runs `$body` with `$m` naming the module of `$kernel`'s backend, whose
/// `contains_keys` and `insert_keys` (defined by [`keyed_entries`], which every
/// `kernel_table!` invokes) run a whole batch in the backend's code: the one dispatch of
/// a batch.
macro_rules! on_backend {
    ($kernel:expr, |$m:ident| $body:expr) => {
        match $kernel.backend {
            Backend::Scalar => {
                use crate::arch::scalar as $m;
                $body
            }
            #[cfg(linebloom_portable)]
            Backend::Portable => {
                use crate::arch::portable as $m;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => {
                use crate::arch::x86_64::avx2 as $m;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => {
                use crate::arch::x86_64::avx512 as $m;
                $body
            }
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => {
                use crate::arch::aarch64::neon as $m;
                $body
            }
        }
    };
}

/// Runs `$body` with `$ops` naming the [`BlockOps`] type of `$kernel`'s backend.
#[cfg(not(linebloom_table))]
macro_rules! with_backend {
    ($kernel:expr, |$ops:ident| $body:expr) => {
        match $kernel.backend {
            Backend::Scalar => {
                type $ops = scalar::Scalar;
                $body
            }
            #[cfg(linebloom_portable)]
            Backend::Portable => {
                type $ops = portable::Portable;
                $body
            }
        }
    };
}

impl Kernel {
    /// The single-key entry points for `k`.
    #[cfg(linebloom_table)]
    pub(crate) fn probe(&'static self, k: u32) -> Probe {
        match k {
            8 => self.probes[1],
            16 => self.probes[2],
            _ => self.probes[0],
        }
    }

    /// The single-key entry points for `k`: none to pick without a table.
    #[cfg(not(linebloom_table))]
    pub(crate) fn probe(&'static self, _k: u32) -> Probe {
        Probe
    }
}

/// A backend's block operations, inlined into its `#[target_feature]` entry points.
pub(crate) trait BlockOps {
    /// Is every bit of `h`'s pattern set in `block`? (The block operation behind
    /// [`contains`].)
    ///
    /// # Safety
    ///
    /// Only on a CPU with the backend's features; `k ≤ MAX_K`.
    unsafe fn contains(block: &Block, h: u64, k: u32) -> bool;
    /// Sets `h`'s pattern in `block`; true if any bit was clear. (Behind [`insert`].)
    ///
    /// # Safety
    ///
    /// Only on a CPU with the backend's features; `k ≤ MAX_K`.
    unsafe fn insert(block: &mut Block, h: u64, k: u32) -> bool;
}

/// Defines a backend's `static KERNEL` and its entry points from a [`BlockOps`] type,
/// under the given `#[target_feature]` attributes. The batch loops and the merge come
/// from [`generic`], so no kernel body is written twice.
#[cfg(linebloom_table)]
macro_rules! kernel_table {
    ($name:literal, $backend:ident, $ops:ty, inline_k8: $inline:expr $(, #[$attr:meta])*) => {
        /// This backend's kernel table (crate-private: see the module docs of `arch`).
        pub(crate) static KERNEL: $crate::arch::Kernel = $crate::arch::Kernel {
            name: $name,
            backend: $crate::arch::Backend::$backend,
            probes: [
                $crate::arch::Probe { inline_k8: false, contains: entry_contains::<0>, insert: entry_insert::<0> },
                $crate::arch::Probe { inline_k8: $inline, contains: entry_contains::<8>, insert: entry_insert::<8> },
                $crate::arch::Probe { inline_k8: false, contains: entry_contains::<16>, insert: entry_insert::<16> },
            ],
            merge: entry_merge,
        };

        $crate::arch::keyed_entries!($ops $(, #[$attr])*);

        /// # Safety
        ///
        /// Only on a CPU with this backend's features.
        $(#[$attr])*
        unsafe fn entry_merge(ours: &mut [$crate::block::Block], theirs: &[$crate::block::Block], and: bool) {
            $crate::arch::generic::merge(ours, theirs, and)
        }

        /// `K = 0`: any `k`; else the probe is compiled for `k = K` and ignores `k`.
        ///
        /// # Safety
        ///
        /// Only on a CPU with this backend's features; `blocks` non-empty; `k ≤ MAX_K`.
        $(#[$attr])*
        unsafe fn entry_contains<const K: u32>(blocks: &[$crate::block::Block], h: u64, k: u32) -> bool {
            let k = if K == 0 { k } else { K };
            let i = $crate::hash::block_index(h, blocks.len());
            // SAFETY: i < len for len ≥ 1 (multiply-shift), and len ≥ 1 is this
            // function's contract, as are the features and k ≤ MAX_K.
            unsafe { <$ops as $crate::arch::BlockOps>::contains(blocks.get_unchecked(i), h, k) }
        }

        /// # Safety
        ///
        /// As for `entry_contains`.
        $(#[$attr])*
        unsafe fn entry_insert<const K: u32>(blocks: &mut [$crate::block::Block], h: u64, k: u32) -> bool {
            let k = if K == 0 { k } else { K };
            let i = $crate::hash::block_index(h, blocks.len());
            // SAFETY: as in `entry_contains`.
            unsafe { <$ops as $crate::arch::BlockOps>::insert(blocks.get_unchecked_mut(i), h, k) }
        }
    };
}

/// Defines a backend's batch entry points, generic over the key type and its hash
/// function so that the hash inlines into the backend's `#[target_feature]` loop (see
/// [`generic::contains_keys`]): `contains_keys` and `insert_keys`, entered through
/// [`on_backend`].
macro_rules! keyed_entries {
    ($ops:ty $(, #[$attr:meta])*) => {
        /// `out[i]` = is `keys[i]` (hashed by `hash`) in `blocks`?
        ///
        /// # Safety
        ///
        /// Only on a CPU with this backend's features; `blocks` non-empty; `k ≤ MAX_K`;
        /// `out.len() == keys.len()`.
        $(#[$attr])*
        #[inline]
        pub(crate) unsafe fn contains_keys<K, F: Fn(&K) -> u64>(
            blocks: &[$crate::block::Block],
            keys: &[K],
            hash: F,
            k: u32,
            out: &mut [bool],
        ) {
            // SAFETY: forwarded contract.
            unsafe { $crate::arch::generic::contains_keys::<$ops, K, F>(blocks, keys, hash, k, out) }
        }

        /// Inserts every key of `keys` (hashed by `hash`) into `blocks`.
        ///
        /// # Safety
        ///
        /// Only on a CPU with this backend's features; `blocks` non-empty; `k ≤ MAX_K`.
        $(#[$attr])*
        #[inline]
        pub(crate) unsafe fn insert_keys<K, F: Fn(&K) -> u64>(
            blocks: &mut [$crate::block::Block],
            keys: &[K],
            hash: F,
            k: u32,
        ) {
            // SAFETY: forwarded contract.
            unsafe { $crate::arch::generic::insert_keys::<$ops, K, F>(blocks, keys, hash, k) }
        }
    };
}
pub(crate) use keyed_entries;

/// Without a table a backend's kernel is its name and [`Backend`]; the probes call its
/// block operations through [`with_backend`], and the batch loops and the merge are
/// instantiated where they are called, so a program links only what it uses.
#[cfg(not(linebloom_table))]
macro_rules! kernel_table {
    ($name:literal, $backend:ident, $ops:ty, inline_k8: $inline:expr $(, #[$attr:meta])*) => {
        /// This backend's kernel (crate-private: see the module docs of `arch`).
        pub(crate) static KERNEL: $crate::arch::Kernel = $crate::arch::Kernel {
            name: $name,
            backend: $crate::arch::Backend::$backend,
        };

        $crate::arch::keyed_entries!($ops $(, #[$attr])*);
    };
}
pub(crate) use kernel_table;

/// Defines one single-key operation's dispatch, written once for `contains` and
/// `insert`:
///
/// * without a table, the backend's block operation, inlined;
/// * else the compiled-in kernel's block operation inlined when the build enables its
///   features (see the module docs);
/// * else the inline `asm!` form for `k = 8` where the probe has one;
/// * else one indirect call to `probe` (the kernel's entry for the filter's `k`).
macro_rules! single_key {
    ($(#[$doc:meta])* $name:ident($blocks:ty, $get:ident, $inline:ident)) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// `kernel` runs on this CPU (it came from [`detect`], [`available`],
        /// [`by_name`] or a backend's `kernel()`) and `probe` is `kernel.probe(k)`;
        /// `blocks` is non-empty; `k ≤ MAX_K`.
        #[inline(always)]
        pub(crate) unsafe fn $name(
            kernel: &'static Kernel,
            probe: &Probe,
            blocks: $blocks,
            h: u64,
            k: u32,
        ) -> bool {
            // block_index(h, len) < len for len ≥ 1 (multiply-shift), and `blocks` is
            // non-empty by this function's contract: the index is in bounds.
            let i = crate::hash::block_index(h, blocks.len());
            #[cfg(not(linebloom_table))]
            {
                let _ = probe;
                // SAFETY: i is in bounds (above); the backends without a table (scalar,
                // portable) need no CPU feature the build does not enable; k ≤ MAX_K is
                // this function's contract.
                with_backend!(kernel, |Ops| unsafe { <Ops as BlockOps>::$name(blocks.$get(i), h, k) })
            }
            #[cfg(linebloom_table)]
            {
                #[cfg(any(
                    all(target_arch = "x86_64", target_feature = "avx2", not(miri)),
                    all(target_arch = "aarch64", target_feature = "neon", not(miri))
                ))]
                if core::ptr::eq(kernel, compiled_in::TABLE) {
                    // SAFETY: i is in bounds (above); the build enables the compiled-in
                    // kernel's features, so every CPU that runs this code has them;
                    // k ≤ MAX_K is this function's contract.
                    let block = unsafe { blocks.$get(i) };
                    // k = 8 with a constant k: no test of k in its code, so a loop over
                    // keys runs it straight (with k from the filter, LLVM compiled the
                    // three cases of `pattern` into every probe and jumped to the test).
                    // SAFETY: as above.
                    return unsafe {
                        if k == 8 {
                            <compiled_in::Ops as BlockOps>::$name(block, h, 8)
                        } else {
                            <compiled_in::Ops as BlockOps>::$name(block, h, k)
                        }
                    };
                }
                let _ = kernel;
                #[cfg(all(
                    target_arch = "x86_64",
                    target_feature = "sse2",
                    not(target_feature = "avx"),
                    not(miri)
                ))]
                if probe.inline_k8 {
                    // SAFETY: i is in bounds (above). `inline_k8` is only set on the
                    // k = 8 entries of the AVX2 kernel and of the AVX-512 kernel (whose
                    // `kernel()` also checks AVX2), so k = 8 and this CPU runs AVX2.
                    return unsafe { x86_64::inline_k8::$inline(blocks.$get(i), h) };
                }
                let _ = i;
                // SAFETY: the probe belongs to a kernel this CPU runs; blocks non-empty
                // and k ≤ MAX_K (this function's contract).
                unsafe { (probe.$name)(blocks, h, k) }
            }
        }
    };
}

single_key!(
    /// Tests `h` in its block of `blocks` with `kernel`.
    contains(&[Block], get_unchecked, contains_k8)
);
single_key!(
    /// Sets `h` in its block of `blocks` with `kernel`; true if any bit was clear.
    insert(&mut [Block], get_unchecked_mut, insert_k8)
);

/// `out[i]` = is `keys[i]` in `blocks`?, with `hash` giving each key's hash: one
/// dispatch on the kernel's backend, then the whole loop, hashing included, in its code
/// ([`generic::contains_keys`]). Callers with hashes already pass them as the keys with
/// `|&h| h`.
///
/// # Safety
///
/// `kernel` runs on this CPU (as for [`contains`]); `blocks` is non-empty;
/// `k ≤ MAX_K`; `out.len() == keys.len()`.
#[inline]
pub(crate) unsafe fn contains_keys<K, F: Fn(&K) -> u64>(
    kernel: &'static Kernel,
    blocks: &[Block],
    keys: &[K],
    hash: F,
    k: u32,
    out: &mut [bool],
) {
    // SAFETY: forwarded contract: the backend is the one of a kernel this CPU runs.
    on_backend!(kernel, |ops| unsafe {
        ops::contains_keys(blocks, keys, hash, k, out)
    })
}

/// Inserts every key of `keys` into `blocks`, dispatched like [`contains_keys`].
///
/// # Safety
///
/// As for [`contains_keys`] (without `out`).
#[inline]
pub(crate) unsafe fn insert_keys<K, F: Fn(&K) -> u64>(
    kernel: &'static Kernel,
    blocks: &mut [Block],
    keys: &[K],
    hash: F,
    k: u32,
) {
    // SAFETY: forwarded contract: the backend is the one of a kernel this CPU runs.
    on_backend!(kernel, |ops| unsafe {
        ops::insert_keys(blocks, keys, hash, k)
    })
}

/// `ours[i] |= theirs[i]` (`&=` when `and`) over equal-length slices, in `kernel`'s code.
///
/// # Safety
///
/// `kernel` runs on this CPU (as for [`contains`]).
#[inline]
pub(crate) unsafe fn merge(
    kernel: &'static Kernel,
    ours: &mut [Block],
    theirs: &[Block],
    and: bool,
) {
    #[cfg(linebloom_table)]
    // SAFETY: forwarded contract: the entry belongs to a kernel this CPU runs.
    unsafe {
        (kernel.merge)(ours, theirs, and)
    }
    #[cfg(not(linebloom_table))]
    {
        let _ = kernel;
        generic::merge(ours, theirs, and)
    }
}

/// The best kernel whose features the build itself enables, so that every CPU this
/// binary runs on has them: its table, and its block operations, which then inline
/// into code compiled without `#[target_feature]`.
#[cfg(any(
    all(target_arch = "x86_64", target_feature = "avx2", not(miri)),
    all(target_arch = "aarch64", target_feature = "neon", not(miri))
))]
mod compiled_in {
    use super::Kernel;

    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    pub(super) type Ops = super::generic::Simd<core::arch::x86_64::__m512i, 1>;
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    pub(super) static TABLE: &Kernel = &super::x86_64::avx512::KERNEL;

    #[cfg(all(target_arch = "x86_64", not(target_feature = "avx512f")))]
    pub(super) type Ops = super::generic::Simd<core::arch::x86_64::__m256i, 2>;
    #[cfg(all(target_arch = "x86_64", not(target_feature = "avx512f")))]
    pub(super) static TABLE: &Kernel = &super::x86_64::avx2::KERNEL;

    #[cfg(target_arch = "aarch64")]
    pub(super) type Ops = super::generic::Simd<core::arch::aarch64::uint64x2_t, 4>;
    #[cfg(target_arch = "aarch64")]
    pub(super) static TABLE: &Kernel = &super::aarch64::neon::KERNEL;
}

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

/// Every kernel this CPU runs, scalar first and the preferred one last.
pub fn available() -> impl Iterator<Item = &'static Kernel> {
    let simd: [Option<&'static Kernel>; 3] = {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            [x86_64::avx2::kernel(), x86_64::avx512::kernel(), None]
        }
        #[cfg(all(target_arch = "aarch64", not(miri)))]
        {
            [aarch64::neon::kernel(), None, None]
        }
        #[cfg(not(any(
            all(target_arch = "x86_64", not(miri)),
            all(target_arch = "aarch64", not(miri))
        )))]
        {
            [None, None, None]
        }
    };
    #[cfg(linebloom_portable)]
    let portable = Some(&portable::KERNEL);
    #[cfg(not(linebloom_portable))]
    let portable = None;
    [Some(&scalar::KERNEL), portable]
        .into_iter()
        .chain(simd)
        .flatten()
}

/// Names of every kernel compiled into this build for this architecture (whether or
/// not this CPU runs it), for tests that must say which were skipped.
pub fn compiled() -> &'static [&'static str] {
    #[cfg(target_arch = "x86_64")]
    {
        &["scalar", "portable", "avx2", "avx512"]
    }
    #[cfg(target_arch = "aarch64")]
    {
        &["scalar", "portable", "neon"]
    }
    #[cfg(all(
        linebloom_portable,
        not(any(target_arch = "x86_64", target_arch = "aarch64"))
    ))]
    {
        &["scalar", "portable"]
    }
    #[cfg(not(linebloom_portable))]
    {
        &["scalar"]
    }
}

static ACTIVE: AtomicPtr<Kernel> = AtomicPtr::new(core::ptr::null_mut());

/// The best kernel this CPU runs (detected once, then cached).
pub fn detect() -> &'static Kernel {
    let cached = ACTIVE.load(Ordering::Relaxed);
    if !cached.is_null() {
        // SAFETY: ACTIVE only ever holds null or a pointer made from a `&'static Kernel`
        // below, so a non-null value is a valid shared reference for 'static.
        return unsafe { &*cached };
    }
    let best = if cfg!(miri) {
        &scalar::KERNEL
    } else {
        available().last().unwrap_or(&scalar::KERNEL)
    };
    ACTIVE.store(best as *const Kernel as *mut Kernel, Ordering::Relaxed);
    best
}

/// The kernel called `name`, if this CPU runs it.
pub fn by_name(name: &str) -> Option<&'static Kernel> {
    available().find(|k| k.name == name)
}

/// Name of the kernel [`detect`] picks on this CPU; the lab records it with every result.
pub fn active_kernel() -> &'static str {
    detect().name
}
