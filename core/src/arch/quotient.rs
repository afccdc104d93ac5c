//! The vector quotient filter's kernels, as users see them: [`QuotientKernel`], every
//! one compiled for this target in order of preference, and the run-time choice
//! ([`available`], [`detect`], [`by_name`], [`compiled`]). What each kernel does and
//! needs is in `arch/tags/` (the block layout and the per-key algorithm) and in each
//! instruction set's file (`arch/scalar.rs`, `arch/x86_64/avx512.rs`, …).

pub use super::tags::QuotientKernel;

pub(crate) use super::dispatch::count;
pub(crate) use super::tags::{Insertion, QuotientProbe, scheme};

#[cfg(all(target_arch = "aarch64", not(miri)))]
use super::aarch64::neon;
#[cfg(all(target_arch = "x86_64", not(miri)))]
use super::cpu;
#[cfg(linebloom_portable)]
use super::portable;
use super::registry::{Compiled, KernelSet, always, selection};
use super::scalar;
#[cfg(all(target_arch = "x86_64", not(miri)))]
use super::x86_64::{avx2, avx2_bmi2, avx512};

/// Every quotient kernel compiled for this target, scalar first and the preferred last.
static KERNELS: KernelSet<QuotientKernel> = KernelSet::new(&[
    Compiled(&scalar::QUOTIENT_KERNEL, always),
    #[cfg(linebloom_portable)]
    Compiled(&portable::QUOTIENT_KERNEL, always),
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Compiled(&avx2::QUOTIENT_KERNEL, cpu::quotient_avx2),
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Compiled(&avx2_bmi2::QUOTIENT_KERNEL, cpu::quotient_avx2_bmi2),
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Compiled(&avx512::QUOTIENT_KERNEL, cpu::quotient_avx512),
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    Compiled(&neon::QUOTIENT_KERNEL, always),
]);

selection!(QuotientKernel, "quotient kernel");

/// Σ `select(word, rank)` over `words`, each with rank
/// `(popcount · (word >> 59)) >> 5` (a set bit the select finds, varying per word),
/// through `kernel`'s select alone: what `benches`' `quotient_select` times to compare
/// `pdep` with the broadword select. A benchmark hook, not a filter operation; only
/// where the target chooses kernels at run time.
#[cfg(linebloom_table)]
#[doc(hidden)]
#[must_use]
pub fn select_sum(kernel: &QuotientKernel, words: &[u64]) -> u64 {
    // SAFETY: a `&QuotientKernel` comes only from `available`, `by_name` or `detect`
    // (the struct has crate-private fields), which return kernels this CPU runs.
    unsafe { (kernel.select_sum)(words) }
}
