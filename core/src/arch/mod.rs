//! Kernels: the code that works inside one 64-byte block, per instruction set, and the
//! run-time choice between them, for two kernel sets: the Bloom filters' (bits set in a
//! block) and the quotient filter's (tags in a block).
//!
//! One file per instruction set serves both sets: it supplies what each set's
//! algorithm needs from it, and one macro (`table.rs`) writes its kernels of both sets.
//! Each set's algorithm is written once, over what those files supply.
//!
//! | path | holds |
//! |---|---|
//! | `scalar.rs` | the reference kernels, on every target |
//! | `portable.rs` | `wide` vectors, where `wide` has them (see `core/build.rs`) |
//! | `x86_64/` | `avx2.rs`, `avx2_bmi2.rs` (quotient only), `avx512.rs`, and `inline_k8.rs`, the AVX2 and AVX-512 `k = 8` Bloom probe as inline `asm!` |
//! | `aarch64/` | `neon.rs` |
//! | `bloom/` | the Bloom set: [`Kernel`], its probe and batch pipeline over any instruction set |
//! | `tags/` | the quotient set: the block layout, lookup, insert and remove over any instruction set, [`QuotientKernel`](quotient::QuotientKernel) |
//! | `table.rs` | `kernel_tables!`, the one generator of every instruction set's kernels |
//! | `dispatch.rs` | the one dispatch, from a filter's kernel to its instruction set's code |
//! | `quotient.rs` | the quotient kernels' list and selection ([`quotient`]) |
//! | `registry.rs` | [`available`], [`detect`], [`by_name`] and [`compiled`], written once over a set's kernel list; the `Backend` of every kernel, and its name |
//! | `cpu.rs` | every CPU feature check either set's kernels need |
//! | `prefetch.rs` | prefetch hints |
//!
//! The Bloom kernels' list and selection are here; the quotient kernels' are in
//! [`quotient`]. A kernel can only be obtained from `available`, `by_name` or `detect`,
//! which return kernels this CPU runs, so forcing one on a filter (`with_kernel`) is
//! safe. Every kernel gives bit-identical blocks and answers (`tests/kernels.rs`,
//! `tests/quotient.rs`). How a filter reaches its kernel, per target, is in
//! `core/DESIGN.md` ("Dispatch").

mod bloom;
mod dispatch;
pub mod quotient;
mod registry;
mod table;
mod tags;

#[cfg(linebloom_portable)]
mod portable;
mod scalar;
// Under Miri the SIMD kernels are compiled but never selected (Miri runs no SIMD
// intrinsics it cannot interpret): their entry points are unused there.
#[cfg(target_arch = "aarch64")]
#[cfg_attr(miri, allow(dead_code))]
mod aarch64;
#[cfg(target_arch = "x86_64")]
#[cfg_attr(miri, allow(dead_code))]
mod x86_64;

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod cpu;
mod prefetch;

pub(crate) use bloom::Probe;
pub use bloom::{Kernel, SMALL_BATCH_BLOCKS};
pub(crate) use dispatch::{add, contains, contains_keys, insert, insert_keys, merge};
pub(crate) use prefetch::{prefetch_read, prefetch_write};

use registry::{Compiled, KernelSet, Named, always, selection};

/// Every Bloom kernel compiled for this target, scalar first and the preferred last.
static KERNELS: KernelSet<Kernel> = KernelSet::new(&[
    Compiled(&scalar::BLOOM_KERNEL, always),
    #[cfg(linebloom_portable)]
    Compiled(&portable::BLOOM_KERNEL, always),
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Compiled(&x86_64::avx2::BLOOM_KERNEL, cpu::bloom_avx2),
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Compiled(&x86_64::avx512::BLOOM_KERNEL, cpu::bloom_avx512),
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    Compiled(&aarch64::neon::BLOOM_KERNEL, always),
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
