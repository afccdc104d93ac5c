//! Dispatch: the single-key probes, the batch entry, and the merge, from a filter's
//! `&'static Kernel` to the backend's code (`core/DESIGN.md`, "Dispatch", says which
//! path each build takes and why).

#[cfg(linebloom_inline_k8)]
use super::inline_k8;
#[cfg(not(linebloom_table))]
use super::with_backend;
use super::{Kernel, Probe, on_backend};
#[cfg(doc)]
use super::{available, by_name, detect};
use crate::block::Block;

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
                with_backend!(kernel, |Ops| $answer(unsafe { <Ops as super::BlockOps>::$op(blocks.$get(i), h, k) }))
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
                            <compiled_in::Ops as super::BlockOps>::$op(block, h, 8)
                        } else {
                            <compiled_in::Ops as super::BlockOps>::$op(block, h, k)
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
/// ([`super::generic::contains_keys`]). Callers with hashes already pass them as the
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
        super::generic::merge(ours, theirs, and)
    }
}

/// Is `kernel` the one the build compiles in (`compiled_in`), whose block operations
/// inline into the caller? (Read once, when a filter picks its probe.)
#[cfg(linebloom_table)]
pub(crate) fn is_compiled_in(kernel: &'static Kernel) -> bool {
    #[cfg(linebloom_compiled_in)]
    return core::ptr::eq(kernel, compiled_in::TABLE);
    #[cfg(not(linebloom_compiled_in))]
    {
        let _ = kernel;
        false
    }
}

/// The best kernel whose features the build itself enables, so that every CPU this
/// binary runs on has them: its table, and its block operations, which then inline
/// into code compiled without `#[target_feature]`.
#[cfg(linebloom_compiled_in)]
mod compiled_in {
    use super::Kernel;

    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    pub(super) type Ops = super::super::generic::Simd<core::arch::x86_64::__m512i, 1>;
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    pub(super) static TABLE: &Kernel = &super::super::avx512::KERNEL;

    #[cfg(all(target_arch = "x86_64", not(target_feature = "avx512f")))]
    pub(super) type Ops = super::super::generic::Simd<core::arch::x86_64::__m256i, 2>;
    #[cfg(all(target_arch = "x86_64", not(target_feature = "avx512f")))]
    pub(super) static TABLE: &Kernel = &super::super::avx2::KERNEL;

    #[cfg(target_arch = "aarch64")]
    pub(super) type Ops = super::super::generic::Simd<core::arch::aarch64::uint64x2_t, 4>;
    #[cfg(target_arch = "aarch64")]
    pub(super) static TABLE: &Kernel = &super::super::neon::KERNEL;
}
