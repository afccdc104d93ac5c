//! The one dispatch, for both kernel sets: from a filter's kernel to its instruction
//! set's code (`core/DESIGN.md`, "Dispatch", says which path each build takes and why).
//!
//! * A batch of Bloom keys matches once on the kernel's [`Backend`] (`on_backend!`) and
//!   runs the whole loop, hashing included, in that instruction set's code.
//! * A single key, where the target chooses kernels at run time, calls the entry the
//!   filter copied from its kernel's table (for Bloom keys, inlined instead where the
//!   build enables the kernel's features, or for `k = 8` as inline `asm!`).
//! * Where the build fixes the kernels (no `linebloom_table`), every probe of either set
//!   matches on the backend (`with_backend!`) and inlines its code, so a program links
//!   only what it calls.

#[cfg(any(linebloom_compiled_in, not(linebloom_table)))]
use super::bloom::BlockOps;
#[cfg(linebloom_compiled_in)]
use super::bloom::compiled_in;
use super::bloom::{Kernel, Probe};
use super::registry::Backend;
use super::scalar::Scalar;
use super::tags::scheme::{Eight, Sixteen};
use super::tags::{self, Insertion, QuotientProbe};
#[cfg(linebloom_inline_k8)]
use super::x86_64::inline_k8;
use crate::block::Block;

/// Runs `$body` with `$m` naming the file of `$backend`'s instruction set, whose
/// `bloom_contains_keys` and `bloom_insert_keys` (written by `kernel_tables!`) run a
/// whole batch in its code: the one dispatch of a Bloom batch. `Avx2Bmi2` has no Bloom
/// kernel; it names the AVX2 file, whose features it has.
macro_rules! on_backend {
    ($backend:expr, |$m:ident| $body:expr) => {
        match $backend {
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
            Backend::Avx2 | Backend::Avx2Bmi2 => {
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

/// Runs `$body` with `$ops` naming the operations type of `$backend`, which implements
/// both sets' traits, where the build fixes the kernels (only `scalar` and `portable`
/// exist there).
#[cfg(not(linebloom_table))]
macro_rules! with_backend {
    ($backend:expr, |$ops:ident| $body:expr) => {
        match $backend {
            Backend::Scalar => {
                type $ops = crate::arch::scalar::Scalar;
                $body
            }
            #[cfg(linebloom_portable)]
            Backend::Portable => {
                type $ops = crate::arch::portable::Portable;
                $body
            }
        }
    };
}

/// Runs `tags::generic::$op` for the probe's backend and tag width, where the build
/// fixes the kernels.
#[cfg(not(linebloom_table))]
macro_rules! on_tag_width {
    ($probe:expr, $op:ident($($arg:expr),*)) => {
        with_backend!($probe.backend, |Ops| if $probe.sixteen {
            tags::generic::$op::<Sixteen, Ops>($($arg),*)
        } else {
            tags::generic::$op::<Eight, Ops>($($arg),*)
        })
    };
}

/// Defines one single-key operation's dispatch, written once for `contains`, `insert`
/// and `add`: `$op` names the block operation and the kernel entry it runs, `$avx2`
/// and `$avx512` its inline forms, and `$answer` what it returns of the operation's
/// answer (`identity`, or nothing for `add`, which sets without asking):
///
/// * without a table, the backend's block operation, inlined;
/// * else the compiled-in kernel's block operation inlined when the build enables its
///   features (see the module docs);
/// * else the inline `asm!` form for `k = 8` where the probe has one;
/// * else one indirect call to `probe` (the kernel's entry for the filter's `k`).
macro_rules! single_key {
    ($(#[$doc:meta])* $name:ident($blocks:ty, $get:ident) -> $ret:ty,
     $op:ident, inline: [$avx2:ident, $avx512:ident], answer: $answer:path) => {
        $(#[$doc])*
        ///
        /// # Safety
        ///
        /// `kernel` runs on this CPU (it came from `arch::detect`, `arch::available` or
        /// `arch::by_name`) and `probe` is `kernel.probe(k)`;
        /// `blocks` is non-empty; `k ≤ MAX_K`.
        #[inline(always)]
        pub(crate) unsafe fn $name(
            kernel: &'static Kernel,
            probe: &Probe,
            blocks: $blocks,
            h: u64,
            k: u32,
        ) -> $ret {
            // block_index(h, len) < len for len ≥ 1 (multiply-shift), and `blocks` is
            // non-empty by this function's contract: the index is in bounds.
            let i = crate::pattern::block_index(h, blocks.len());
            #[cfg(not(linebloom_table))]
            {
                let _ = probe;
                // SAFETY: i is in bounds (above); the backends without a table (scalar,
                // portable) need no CPU feature the build does not enable; k ≤ MAX_K is
                // this function's contract.
                with_backend!(kernel.backend, |Ops| $answer(unsafe { <Ops as BlockOps>::$op(blocks.$get(i), h, k) }))
            }
            #[cfg(linebloom_table)]
            {
                #[cfg(linebloom_compiled_in)]
                if probe.compiled_in {
                    // SAFETY: i is in bounds (above); the build enables the compiled-in
                    // kernel's features, so every CPU that runs this code has them;
                    // k ≤ MAX_K is this function's contract.
                    let block = unsafe { blocks.$get(i) };
                    // k = 8 with a constant k: no test of k in its code, so a loop over
                    // keys runs it straight (with k from the filter, LLVM compiled the
                    // three cases of `pattern` into every probe and jumped to the test).
                    // SAFETY: as above.
                    return $answer(unsafe {
                        if k == 8 {
                            <compiled_in::Ops as BlockOps>::$op(block, h, 8)
                        } else {
                            <compiled_in::Ops as BlockOps>::$op(block, h, k)
                        }
                    });
                }
                let _ = kernel;
                #[cfg(linebloom_inline_k8)]
                if probe.inline_k8 {
                    if probe.avx512 {
                        // SAFETY: i is in bounds (above). `avx512` is only set on the k = 8
                        // entry of the AVX-512 kernel, so k = 8 and this CPU runs AVX-512F.
                        return $answer(unsafe { inline_k8::$avx512(blocks, i, h) });
                    }
                    // SAFETY: i is in bounds (above). `inline_k8` is only set on the k = 8
                    // entries of the AVX2 and AVX-512 kernels (whose `kernel()` also checks
                    // AVX2), so k = 8 and this CPU runs AVX2.
                    return $answer(unsafe { inline_k8::$avx2(blocks, i, h) });
                }
                let _ = i;
                // SAFETY: the probe belongs to a kernel this CPU runs; blocks non-empty
                // and k ≤ MAX_K (this function's contract).
                $answer(unsafe { (probe.$op)(blocks, h, k) })
            }
        }
    };
}

single_key!(
    /// Tests `h` in its block of `blocks` with `kernel`.
    contains(&[Block], get_unchecked) -> bool,
    contains, inline: [contains_avx2, contains_avx512], answer: core::convert::identity
);
single_key!(
    /// Sets `h` in its block of `blocks` with `kernel`; true if any bit was clear.
    insert(&mut [Block], get_unchecked_mut) -> bool,
    insert, inline: [insert_avx2, insert_avx512], answer: core::convert::identity
);
single_key!(
    /// Sets `h` in its block of `blocks` with `kernel`, without the answer (its inline
    /// forms leave the test out).
    add(&mut [Block], get_unchecked_mut) -> (),
    insert, inline: [add_avx2, add_avx512], answer: no_answer
);

/// What `add` returns of its operation's answer: nothing.
#[inline(always)]
fn no_answer<T>(_: T) {}

/// `out[i]` = is `keys[i]` in `blocks`?, with `hash` giving each key's hash: one
/// dispatch on the kernel's backend, then the whole loop, hashing included, in its code
/// (`bloom::generic::contains_keys`). Callers with hashes already pass them as the
/// keys with `|&h| h`.
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
    on_backend!(kernel.backend, |ops| unsafe {
        ops::bloom_contains_keys(blocks, keys, hash, k, out)
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
    on_backend!(kernel.backend, |ops| unsafe {
        ops::bloom_insert_keys(blocks, keys, hash, k)
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
        crate::arch::bloom::generic::merge(ours, theirs, and)
    }
}

impl QuotientProbe {
    /// Is the fingerprint in either block?
    ///
    /// # Safety
    ///
    /// `blocks.len()` even, ≥ 2; the probe is of a kernel this CPU runs.
    #[inline]
    pub(crate) unsafe fn contains(self, blocks: &[Block], h: u64) -> bool {
        // SAFETY: forwarded contract: the entry is of a kernel this CPU runs.
        #[cfg(linebloom_table)]
        unsafe {
            (self.contains)(blocks, h)
        }
        // SAFETY: forwarded contract; scalar and portable need no feature the build
        // does not enable.
        #[cfg(not(linebloom_table))]
        unsafe {
            on_tag_width!(self, contains(blocks, h))
        }
    }

    /// `out[i]` = is `hashes[i]`'s fingerprint in either of its blocks, prefetching
    /// ahead.
    ///
    /// # Safety
    ///
    /// As for [`QuotientProbe::contains`]; `hashes.len() == out.len()`.
    #[inline]
    pub(crate) unsafe fn contains_batch(self, blocks: &[Block], hashes: &[u64], out: &mut [bool]) {
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(linebloom_table)]
        unsafe {
            (self.contains_batch)(blocks, hashes, out)
        }
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(not(linebloom_table))]
        unsafe {
            on_tag_width!(self, contains_batch(blocks, hashes, out))
        }
    }

    /// Store the fingerprint (look first when `check` is set).
    ///
    /// # Safety
    ///
    /// As for [`QuotientProbe::contains`]; every block well formed.
    #[inline]
    pub(crate) unsafe fn insert(self, blocks: &mut [Block], h: u64, check: bool) -> Insertion {
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(linebloom_table)]
        unsafe {
            (self.insert)(blocks, h, check)
        }
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(not(linebloom_table))]
        unsafe {
            on_tag_width!(self, insert(blocks, h, check))
        }
    }

    /// Delete one matching fingerprint.
    ///
    /// # Safety
    ///
    /// As for [`QuotientProbe::insert`].
    #[inline]
    pub(crate) unsafe fn remove(self, blocks: &mut [Block], h: u64) -> bool {
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(linebloom_table)]
        unsafe {
            (self.remove)(blocks, h)
        }
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(not(linebloom_table))]
        unsafe {
            on_tag_width!(self, remove(blocks, h))
        }
    }
}

/// How many fingerprints equal to `hash`'s its two blocks hold, counted with the scalar
/// backend (a count is rare beside lookups: no kernel table carries it). `blocks` is a
/// filter's: even in number, at least 2, every one well formed.
pub(crate) fn count(blocks: &[Block], hash: u64, tag_bits: u32) -> u32 {
    if tag_bits == 8 {
        // SAFETY: the scalar backend needs no CPU feature; the caller passes a filter's
        // blocks.
        unsafe { tags::generic::count::<Eight, Scalar>(blocks, hash) }
    } else {
        // SAFETY: as above.
        unsafe { tags::generic::count::<Sixteen, Scalar>(blocks, hash) }
    }
}
