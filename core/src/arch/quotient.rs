//! The vector quotient filter's kernels, as users see them: [`QuotientKernel`], every
//! one compiled for this target in order of preference, and the run-time choice
//! ([`available`], [`detect`], [`by_name`], [`compiled`]). The block layout and the
//! per-key algorithm are in `arch/tags/`; what each kernel supplies, in its instruction
//! set's file (`arch/scalar.rs`, `arch/x86_64/avx512.rs`, …).
//!
//! | kernel | compare (lanes of a block equal to the tag) | select | needs |
//! |---|---|---|---|
//! | `scalar` | SWAR zero-lane test on the words | broadword (`select`) | nothing; the reference |
//! | `portable` | `wide` 16-byte compares, `to_bitmask` | broadword | where `wide` has vectors (see `arch`) |
//! | `avx2` | two `vpcmpeqb`/`vpcmpeqw`, `vpmovmskb` | broadword | AVX2, POPCNT |
//! | `avx2-bmi2` | as `avx2` | `pdep` + `tzcnt` | AVX2, BMI1, BMI2, POPCNT, and a fast `pdep` |
//! | `avx512` | one `vpcmpeqb`/`vpcmpeqw` into a mask register | `pdep` + `tzcnt` | AVX-512BW, BMI1, BMI2, POPCNT |
//! | `neon` | four `cmeq`, bit-weight and pairwise-add reduction | broadword | NEON (aarch64 baseline) |
//!
//! The x86 kernels also move an insert's or a delete's tags in vector registers
//! (`TagOps::shift_in`, `shift_out`: `avx512` the block as one 512-bit register, `avx2`
//! and `avx2-bmi2` as two 256-bit halves); the others use the word shifts of
//! `arch/tags/scheme.rs`.
//!
//! `pdep` is microcoded on AMD before Zen 3 (hundreds of cycles), and every such CPU has
//! AVX2 but not AVX-512; so the AVX2 kernel selects without it, and the AVX-512 kernel
//! (Intel, and AMD from Zen 4) with it. `avx2-bmi2` is the AVX2 kernel with `pdep`, for
//! the CPUs with BMI2 and no AVX-512BW whose `pdep` is fast (Intel from Haswell, AMD
//! Zen 3): detection reads the vendor and family from CPUID and leaves it out on AMD
//! and Hygon before family 19h. `benches/README.md` ("Select") has the measured
//! cost of each select on the reference machine.
//!
//! Detection (`arch/cpu.rs`) checks exactly the features a kernel's `#[target_feature]`
//! enables. A [`QuotientKernel`] can only be obtained from [`available`], [`by_name`]
//! or [`detect`], so calling its entry points is safe. Every kernel gives bit-identical
//! blocks and answers (`tests/quotient.rs`).
//!
//! Where the target chooses among kernels at run time (x86_64, aarch64) a kernel is a
//! table of entry points; elsewhere (`scalar`, and `portable` where it exists) a probe
//! calls the per-key algorithm directly, so a firmware links no table and only the
//! operations it calls.

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
