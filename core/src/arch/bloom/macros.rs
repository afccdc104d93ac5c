//! The macros that write each backend's entry points from its [`BlockOps`] type, and
//! the matches that enter a backend: every kernel body is written once (see
//! `core/DESIGN.md`, "Dispatch").

#[cfg(doc)]
use super::{Backend, BlockOps, contains_keys, generic};

/// Runs `$body` with `$m` naming the module of `$kernel`'s backend, whose
/// `contains_keys` and `insert_keys` (defined by [`keyed_entries`], which every
/// `kernel_table!` invokes) run a whole batch in the backend's code: the one dispatch of
/// a batch.
macro_rules! on_backend {
    ($kernel:expr, |$m:ident| $body:expr) => {
        match $kernel.backend {
            $crate::arch::bloom::Backend::Scalar => {
                use crate::arch::bloom::scalar as $m;
                $body
            }
            #[cfg(linebloom_portable)]
            $crate::arch::bloom::Backend::Portable => {
                use crate::arch::bloom::portable as $m;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::arch::bloom::Backend::Avx2 => {
                use crate::arch::bloom::avx2 as $m;
                $body
            }
            #[cfg(target_arch = "x86_64")]
            $crate::arch::bloom::Backend::Avx512 => {
                use crate::arch::bloom::avx512 as $m;
                $body
            }
            #[cfg(target_arch = "aarch64")]
            $crate::arch::bloom::Backend::Neon => {
                use crate::arch::bloom::neon as $m;
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
            $crate::arch::bloom::Backend::Scalar => {
                type $ops = $crate::arch::bloom::scalar::Scalar;
                $body
            }
            #[cfg(linebloom_portable)]
            $crate::arch::bloom::Backend::Portable => {
                type $ops = $crate::arch::bloom::portable::Portable;
                $body
            }
        }
    };
}

/// Defines a backend's `static KERNEL` and its entry points from a [`BlockOps`] type,
/// under the given `#[target_feature]` attributes. The batch loops and the merge come
/// from [`generic`], so no kernel body is written twice. `inline_k8` names the inline
/// form of its `k = 8` probe: `none`, `avx2` or `avx512` (see `inline_k8`).
#[cfg(linebloom_table)]
macro_rules! kernel_table {
    // The `k = 8` probe's flags (`Probe::inline_k8`, `Probe::avx512`) for each form.
    (@inline none) => { (false, false) };
    (@inline avx2) => { (true, false) };
    (@inline avx512) => { (true, true) };
    ($backend:ident, $ops:ty, inline_k8: $inline:ident $(, #[$attr:meta])*) => {
        /// This backend's kernel table (crate-private: see the module docs of `arch`).
        pub(crate) static KERNEL: $crate::arch::bloom::Kernel = $crate::arch::bloom::Kernel {
            name: $crate::arch::bloom::Backend::$backend.name(),
            backend: $crate::arch::bloom::Backend::$backend,
            probes: [
                $crate::arch::bloom::Probe { inline_k8: false, avx512: false, compiled_in: false, contains: entry_contains::<0>, insert: entry_insert::<0> },
                $crate::arch::bloom::Probe {
                    inline_k8: $crate::arch::bloom::kernel_table!(@inline $inline).0,
                    avx512: $crate::arch::bloom::kernel_table!(@inline $inline).1,
                    compiled_in: false,
                    contains: entry_contains::<8>,
                    insert: entry_insert::<8>,
                },
                $crate::arch::bloom::Probe { inline_k8: false, avx512: false, compiled_in: false, contains: entry_contains::<16>, insert: entry_insert::<16> },
            ],
            merge: entry_merge,
        };

        $crate::arch::bloom::keyed_entries!($ops $(, #[$attr])*);

        /// # Safety
        ///
        /// Only on a CPU with this backend's features.
        $(#[$attr])*
        unsafe fn entry_merge(ours: &mut [$crate::block::Block], theirs: &[$crate::block::Block], and: bool) {
            $crate::arch::bloom::generic::merge(ours, theirs, and)
        }

        /// `K = 0`: any `k`; else the probe is compiled for `k = K` and ignores `k`.
        ///
        /// # Safety
        ///
        /// Only on a CPU with this backend's features; `blocks` non-empty; `k ≤ MAX_K`.
        $(#[$attr])*
        unsafe fn entry_contains<const K: u32>(blocks: &[$crate::block::Block], h: u64, k: u32) -> bool {
            let k = if K == 0 { k } else { K };
            let i = $crate::pattern::block_index(h, blocks.len());
            // SAFETY: i < len for len ≥ 1 (multiply-shift), and len ≥ 1 is this
            // function's contract, as are the features and k ≤ MAX_K.
            unsafe { <$ops as $crate::arch::bloom::BlockOps>::contains(blocks.get_unchecked(i), h, k) }
        }

        /// # Safety
        ///
        /// As for `entry_contains`.
        $(#[$attr])*
        unsafe fn entry_insert<const K: u32>(blocks: &mut [$crate::block::Block], h: u64, k: u32) -> bool {
            let k = if K == 0 { k } else { K };
            let i = $crate::pattern::block_index(h, blocks.len());
            // SAFETY: as in `entry_contains`.
            unsafe { <$ops as $crate::arch::bloom::BlockOps>::insert(blocks.get_unchecked_mut(i), h, k) }
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
            unsafe { $crate::arch::bloom::generic::contains_keys::<$ops, K, F>(blocks, keys, hash, k, out) }
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
            unsafe { $crate::arch::bloom::generic::insert_keys::<$ops, K, F>(blocks, keys, hash, k) }
        }
    };
}

/// Without a table a backend's kernel is its name and [`Backend`]; the probes call its
/// block operations through [`with_backend`], and the batch loops and the merge are
/// instantiated where they are called, so a program links only what it uses.
#[cfg(not(linebloom_table))]
macro_rules! kernel_table {
    ($backend:ident, $ops:ty, inline_k8: $inline:ident $(, #[$attr:meta])*) => {
        /// This backend's kernel (crate-private: see the module docs of `arch`).
        pub(crate) static KERNEL: $crate::arch::bloom::Kernel = $crate::arch::bloom::Kernel {
            name: $crate::arch::bloom::Backend::$backend.name(),
            backend: $crate::arch::bloom::Backend::$backend,
        };

        $crate::arch::bloom::keyed_entries!($ops $(, #[$attr])*);
    };
}

#[cfg(not(linebloom_table))]
pub(crate) use with_backend;
pub(crate) use {kernel_table, keyed_entries, on_backend};
