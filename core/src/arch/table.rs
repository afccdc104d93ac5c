//! The one generator of kernel tables: [`kernel_tables`], which every instruction set's
//! file invokes once with its description (its backend, and per kernel set the type
//! that implements the set's trait and the `#[target_feature]`s its code runs under),
//! and which writes that instruction set's kernels for both sets. Every kernel body is
//! written once, in `bloom/generic.rs` and `tags/generic.rs` (see `core/DESIGN.md`,
//! "Dispatch").

#[cfg(doc)]
use super::{bloom, tags};

/// Writes an instruction set's kernels from its description:
///
/// ```text
/// kernel_tables! {
///     backend: Avx512,                                    // its `Backend`
///     bloom: Simd<__m512i, 1>, inline_k8: avx512, #[target_feature(enable = "avx512f")];
///     quotient: Avx512, #[target_feature(enable = "avx512bw,bmi1,bmi2,popcnt")];
/// }
/// ```
///
/// * `bloom:` a [`bloom::BlockOps`] type, the inline `asm!` form of its `k = 8` probe
///   (`none`, `avx2` or `avx512`, see `x86_64/inline_k8.rs`) and its features. Writes
///   `BLOOM_KERNEL`, the batch entries `bloom_contains_keys` and `bloom_insert_keys`
///   (generic over the key type and its hash, so that the hash inlines into the
///   backend's code; `arch::dispatch` enters them), and where the target chooses kernels
///   at run time the single-key entries and the merge that `BLOOM_KERNEL` points to.
/// * `quotient:` a [`tags::TagOps`] type and its features. Writes `QUOTIENT_KERNEL`,
///   and where the target chooses kernels at run time its entry points for both tag
///   widths.
///
/// Either set may be left out (`x86_64/avx2_bmi2.rs` has a quotient kernel only).
/// Without a table (`linebloom_table` unset) a kernel is its name and backend, and the
/// probes reach the backend's code through `arch::dispatch`, so a program links only
/// what it calls.
macro_rules! kernel_tables {
    (backend: $backend:ident,
     bloom: $bops:ty, inline_k8: $inline:ident $(, #[$battr:meta])*;
     quotient: $qops:ty $(, #[$qattr:meta])*;) => {
        $crate::arch::table::kernel_tables!(@bloom $backend, $bops, $inline $(, #[$battr])*);
        $crate::arch::table::kernel_tables!(@quotient $backend, $qops $(, #[$qattr])*);
    };
    (backend: $backend:ident, quotient: $qops:ty $(, #[$qattr:meta])*;) => {
        $crate::arch::table::kernel_tables!(@quotient $backend, $qops $(, #[$qattr])*);
    };

    // The `k = 8` probe's flags (`Probe::inline_k8`, `Probe::avx512`) for each form.
    (@inline none) => { (false, false) };
    (@inline avx2) => { (true, false) };
    (@inline avx512) => { (true, true) };

    (@bloom $backend:ident, $ops:ty, $inline:ident $(, #[$attr:meta])*) => {
        /// This instruction set's Bloom kernel (crate-private: see the module docs of
        /// `arch`).
        pub(crate) static BLOOM_KERNEL: $crate::arch::bloom::Kernel = $crate::arch::bloom::Kernel {
            name: $crate::arch::registry::Backend::$backend.name(),
            backend: $crate::arch::registry::Backend::$backend,
            #[cfg(linebloom_table)]
            probes: [
                $crate::arch::bloom::Probe {
                    inline_k8: false,
                    avx512: false,
                    compiled_in: false,
                    contains: bloom_contains::<0>,
                    insert: bloom_insert::<0>,
                },
                $crate::arch::bloom::Probe {
                    inline_k8: $crate::arch::table::kernel_tables!(@inline $inline).0,
                    avx512: $crate::arch::table::kernel_tables!(@inline $inline).1,
                    compiled_in: false,
                    contains: bloom_contains::<8>,
                    insert: bloom_insert::<8>,
                },
                $crate::arch::bloom::Probe {
                    inline_k8: false,
                    avx512: false,
                    compiled_in: false,
                    contains: bloom_contains::<16>,
                    insert: bloom_insert::<16>,
                },
            ],
            #[cfg(linebloom_table)]
            merge: bloom_merge,
        };

        /// `out[i]` = is `keys[i]` (hashed by `hash`) in `blocks`?
        ///
        /// # Safety
        ///
        /// Only on a CPU with this backend's features; `blocks` non-empty; `k ≤ MAX_K`;
        /// `out.len() == keys.len()`.
        $(#[$attr])*
        #[inline]
        pub(crate) unsafe fn bloom_contains_keys<K, F: Fn(&K) -> u64>(
            blocks: &[$crate::block::Block],
            keys: &[K],
            hash: F,
            k: u32,
            out: &mut [bool],
        ) {
            // SAFETY: forwarded contract.
            unsafe { $crate::arch::bloom::generic::contains_keys::<$ops, K, F>(blocks, keys, hash, k, out) }
        }

        /// Inserts every key of `keys` (hashed by `hash`) into `blocks`.
        ///
        /// # Safety
        ///
        /// Only on a CPU with this backend's features; `blocks` non-empty; `k ≤ MAX_K`.
        $(#[$attr])*
        #[inline]
        pub(crate) unsafe fn bloom_insert_keys<K, F: Fn(&K) -> u64>(
            blocks: &mut [$crate::block::Block],
            keys: &[K],
            hash: F,
            k: u32,
        ) {
            // SAFETY: forwarded contract.
            unsafe { $crate::arch::bloom::generic::insert_keys::<$ops, K, F>(blocks, keys, hash, k) }
        }

        /// # Safety
        ///
        /// Only on a CPU with this backend's features.
        #[cfg(linebloom_table)]
        $(#[$attr])*
        unsafe fn bloom_merge(ours: &mut [$crate::block::Block], theirs: &[$crate::block::Block], and: bool) {
            $crate::arch::bloom::generic::merge(ours, theirs, and)
        }

        /// `K = 0`: any `k`; else the probe is compiled for `k = K` and ignores `k`.
        ///
        /// # Safety
        ///
        /// Only on a CPU with this backend's features; `blocks` non-empty; `k ≤ MAX_K`.
        #[cfg(linebloom_table)]
        $(#[$attr])*
        unsafe fn bloom_contains<const K: u32>(blocks: &[$crate::block::Block], h: u64, k: u32) -> bool {
            let k = if K == 0 { k } else { K };
            let i = $crate::pattern::block_index(h, blocks.len());
            // SAFETY: i < len for len ≥ 1 (multiply-shift), and len ≥ 1 is this
            // function's contract, as are the features and k ≤ MAX_K.
            unsafe { <$ops as $crate::arch::bloom::BlockOps>::contains(blocks.get_unchecked(i), h, k) }
        }

        /// # Safety
        ///
        /// As for `bloom_contains`.
        #[cfg(linebloom_table)]
        $(#[$attr])*
        unsafe fn bloom_insert<const K: u32>(blocks: &mut [$crate::block::Block], h: u64, k: u32) -> bool {
            let k = if K == 0 { k } else { K };
            let i = $crate::pattern::block_index(h, blocks.len());
            // SAFETY: as in `bloom_contains`.
            unsafe { <$ops as $crate::arch::bloom::BlockOps>::insert(blocks.get_unchecked_mut(i), h, k) }
        }
    };

    (@quotient $backend:ident, $ops:ty $(, #[$attr:meta])*) => {
        /// This instruction set's quotient kernel.
        pub(crate) static QUOTIENT_KERNEL: $crate::arch::tags::QuotientKernel =
            $crate::arch::tags::QuotientKernel {
                name: $crate::arch::registry::Backend::$backend.name(),
                backend: $crate::arch::registry::Backend::$backend,
                #[cfg(linebloom_table)]
                eight: $crate::arch::tags::QuotientProbe {
                    contains: quotient_contains::<$crate::arch::tags::scheme::Eight>,
                    contains_batch: quotient_contains_batch::<$crate::arch::tags::scheme::Eight>,
                    insert: quotient_insert::<$crate::arch::tags::scheme::Eight>,
                    remove: quotient_remove::<$crate::arch::tags::scheme::Eight>,
                },
                #[cfg(linebloom_table)]
                sixteen: $crate::arch::tags::QuotientProbe {
                    contains: quotient_contains::<$crate::arch::tags::scheme::Sixteen>,
                    contains_batch: quotient_contains_batch::<$crate::arch::tags::scheme::Sixteen>,
                    insert: quotient_insert::<$crate::arch::tags::scheme::Sixteen>,
                    remove: quotient_remove::<$crate::arch::tags::scheme::Sixteen>,
                },
                #[cfg(linebloom_table)]
                select_sum: quotient_select_sum,
            };

        /// # Safety
        ///
        /// Only on a CPU with this backend's features.
        #[cfg(linebloom_table)]
        $(#[$attr])*
        unsafe fn quotient_select_sum(words: &[u64]) -> u64 {
            words
                .iter()
                .map(|&word| {
                    let rank = (word.count_ones() * (word >> 59) as u32) >> 5;
                    // SAFETY: this function runs with the backend's features.
                    u64::from(unsafe {
                        <$ops as $crate::arch::tags::TagOps>::select(word, rank)
                    })
                })
                .sum()
        }

        /// # Safety
        ///
        /// Only on a CPU with this backend's features; `blocks.len()` even, ≥ 2.
        #[cfg(linebloom_table)]
        $(#[$attr])*
        unsafe fn quotient_contains<W: $crate::arch::tags::scheme::Width>(
            blocks: &[$crate::block::Block],
            h: u64,
        ) -> bool {
            // SAFETY: forwarded contract; this function runs with the backend's features.
            unsafe { $crate::arch::tags::generic::contains::<W, $ops>(blocks, h) }
        }

        /// # Safety
        ///
        /// As for `quotient_contains`; `hashes.len() == out.len()`.
        #[cfg(linebloom_table)]
        $(#[$attr])*
        unsafe fn quotient_contains_batch<W: $crate::arch::tags::scheme::Width>(
            blocks: &[$crate::block::Block],
            hashes: &[u64],
            out: &mut [bool],
        ) {
            // SAFETY: forwarded contract; this function runs with the backend's features.
            unsafe {
                $crate::arch::tags::generic::contains_batch::<W, $ops>(blocks, hashes, out)
            }
        }

        /// # Safety
        ///
        /// As for `quotient_contains`; every block well formed.
        #[cfg(linebloom_table)]
        $(#[$attr])*
        unsafe fn quotient_insert<W: $crate::arch::tags::scheme::Width>(
            blocks: &mut [$crate::block::Block],
            h: u64,
            check: bool,
        ) -> $crate::arch::tags::Insertion {
            // SAFETY: forwarded contract; this function runs with the backend's features.
            unsafe { $crate::arch::tags::generic::insert::<W, $ops>(blocks, h, check) }
        }

        /// # Safety
        ///
        /// As for `quotient_insert`.
        #[cfg(linebloom_table)]
        $(#[$attr])*
        unsafe fn quotient_remove<W: $crate::arch::tags::scheme::Width>(
            blocks: &mut [$crate::block::Block],
            h: u64,
        ) -> bool {
            // SAFETY: forwarded contract; this function runs with the backend's features.
            unsafe { $crate::arch::tags::generic::remove::<W, $ops>(blocks, h) }
        }
    };
}
pub(crate) use kernel_tables;
