//! The Bloom filters' kernels: the code that tests and sets a key's bits inside one
//! block, one file per instruction set, and their list for run-time selection.
//!
//! | kernel | where | selected |
//! |---|---|---|
//! | `scalar` | everywhere | the reference; under Miri; the kernel of targets without SIMD |
//! | `portable` | where `wide` has vectors: x86 (SSE2), aarch64, wasm32 with `simd128` | `wide` vectors for the block test and set |
//! | `avx2` | x86_64 | run time: `is_x86_feature_detected!` (std) or `cpufeatures` (no std) |
//! | `avx512` | x86_64 | run time, as above (AVX-512F with AVX2, OS-enabled ZMM state) |
//! | `neon` | aarch64 | compile time: NEON is baseline on aarch64 |
//!
//! | file | holds |
//! |---|---|
//! | `kernel.rs` | [`Kernel`], its probes, the backend tag, `BlockOps` |
//! | `macros.rs` | the macros that write each backend's entry points from its `BlockOps` |
//! | `dispatch.rs` | single-key, batch and merge dispatch |
//! | `generic.rs` | the probe over any vector of `u64` lanes, and the batch pipeline |
//! | `scalar.rs`, `portable.rs`, `avx2.rs`, `avx512.rs`, `neon.rs` | one backend each |
//! | `inline_k8.rs` | the `k = 8` probe of `avx2` and `avx512` as inline `asm!` |

mod dispatch;
mod generic;
// Needs SSE registers for its operands (absent on soft-float targets such as
// x86_64-unknown-none) and a build without AVX (see its module docs).
#[cfg(linebloom_inline_k8)]
mod inline_k8;
mod kernel;
mod macros;

#[cfg(linebloom_portable)]
mod portable;
mod scalar;

// Under Miri the x86 kernels are compiled but never selected (Miri runs no SIMD
// intrinsics it cannot interpret): their entry points are unused there.
#[cfg(target_arch = "x86_64")]
#[cfg_attr(miri, allow(dead_code))]
mod avx2;
#[cfg(target_arch = "x86_64")]
#[cfg_attr(miri, allow(dead_code))]
mod avx512;

#[cfg(target_arch = "aarch64")]
mod neon;

pub(crate) use dispatch::{add, contains, contains_keys, insert, insert_keys, merge};
pub(crate) use kernel::{Backend, BlockOps, PREFETCH_DISTANCE, Probe};
pub use kernel::{Kernel, SMALL_BATCH_BLOCKS};
#[cfg(not(linebloom_table))]
pub(crate) use macros::with_backend;
pub(crate) use macros::{kernel_table, keyed_entries, on_backend};

#[cfg(all(target_arch = "x86_64", not(miri)))]
use super::cpu;
use super::registry::{Compiled, KernelSet, Named, always, selection};

/// Every Bloom kernel compiled for this target, scalar first and the preferred last.
static KERNELS: KernelSet<Kernel> = KernelSet::new(&[
    Compiled(&scalar::KERNEL, always),
    #[cfg(linebloom_portable)]
    Compiled(&portable::KERNEL, always),
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Compiled(&avx2::KERNEL, cpu::bloom_avx2),
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Compiled(&avx512::KERNEL, cpu::bloom_avx512),
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    Compiled(&neon::KERNEL, always),
]);

impl Named for Kernel {
    fn name(&self) -> &'static str {
        self.name
    }
}

selection!(Kernel, "kernel");

/// Name of the kernel [`detect`] picks on this CPU; the lab records it with every result.
#[must_use]
pub fn active_kernel() -> &'static str {
    detect().name
}
