//! x86_64 kernels: AVX2 and AVX-512, chosen at run time.
//!
//! Detection: with `std`, `is_x86_feature_detected!` (which also checks that the OS saves
//! the YMM/ZMM state); without `std`, the `cpufeatures` crate, which reads CPUID and
//! XGETBV for the same two facts. Each result is cached by its detector.

pub mod avx2;
pub mod avx512;
// Needs SSE registers for its operands (absent on soft-float targets such as
// x86_64-unknown-none) and a build without AVX (see its module docs).
#[cfg(linebloom_inline_k8)]
pub(crate) mod inline_k8;

/// Does this CPU (and OS) run AVX2 code?
#[cfg(feature = "std")]
pub(crate) fn has_avx2() -> bool {
    std::is_x86_feature_detected!("avx2")
}

/// Does this CPU (and OS) run AVX-512F code?
#[cfg(feature = "std")]
pub(crate) fn has_avx512f() -> bool {
    std::is_x86_feature_detected!("avx512f")
}

#[cfg(not(feature = "std"))]
cpufeatures::new!(cpuid_avx2, "avx2");
#[cfg(not(feature = "std"))]
cpufeatures::new!(cpuid_avx512f, "avx512f");

/// Does this CPU (and OS) run AVX2 code?
#[cfg(not(feature = "std"))]
pub(crate) fn has_avx2() -> bool {
    cpuid_avx2::get()
}

/// Does this CPU (and OS) run AVX-512F code?
#[cfg(not(feature = "std"))]
pub(crate) fn has_avx512f() -> bool {
    cpuid_avx512f::get()
}

/// Does this CPU (and OS) run the AVX2 quotient kernel (AVX2, POPCNT)?
#[cfg(feature = "std")]
pub(crate) fn has_quotient_avx2() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt")
}

/// Does this CPU (and OS) run the AVX-512 quotient kernel (AVX-512BW, BMI1, BMI2,
/// POPCNT)?
#[cfg(feature = "std")]
pub(crate) fn has_quotient_avx512() -> bool {
    std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("popcnt")
}

/// Does this CPU (and OS) run the AVX2 + BMI2 quotient kernel (AVX2, BMI1, BMI2,
/// POPCNT), with a [`fast_pdep`]?
#[cfg(feature = "std")]
pub(crate) fn has_quotient_avx2_bmi2() -> bool {
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("popcnt")
        && fast_pdep()
}

/// Does this CPU run `pdep` in hardware? Every Intel CPU with BMI2 does; AMD's, and
/// Hygon's (a licensed Zen 1), ran it in microcode, at hundreds of cycles, before
/// family 19h (Zen 3). From CPUID: the vendor (leaf 0) and the family (leaf 1, with
/// its extension where the base family is 0xF).
fn fast_pdep() -> bool {
    use core::arch::x86_64::__cpuid;
    let vendor = __cpuid(0).ebx.to_le_bytes();
    if &vendor != b"Auth" && &vendor != b"Hygo" {
        return true;
    }
    let signature = __cpuid(1).eax;
    let base = (signature >> 8) & 0xf;
    let family = if base == 0xf {
        base + ((signature >> 20) & 0xff)
    } else {
        base
    };
    family >= 0x19
}

#[cfg(not(feature = "std"))]
cpufeatures::new!(cpuid_quotient_avx2, "avx2", "popcnt");
#[cfg(not(feature = "std"))]
cpufeatures::new!(cpuid_quotient_avx2_bmi2, "avx2", "bmi1", "bmi2", "popcnt");
#[cfg(not(feature = "std"))]
cpufeatures::new!(cpuid_quotient_avx512, "avx512bw", "bmi1", "bmi2", "popcnt");

/// Does this CPU (and OS) run the AVX2 quotient kernel (AVX2, POPCNT)?
#[cfg(not(feature = "std"))]
pub(crate) fn has_quotient_avx2() -> bool {
    cpuid_quotient_avx2::get()
}

/// Does this CPU (and OS) run the AVX2 + BMI2 quotient kernel (AVX2, BMI1, BMI2,
/// POPCNT), with a [`fast_pdep`]?
#[cfg(not(feature = "std"))]
pub(crate) fn has_quotient_avx2_bmi2() -> bool {
    cpuid_quotient_avx2_bmi2::get() && fast_pdep()
}

/// Does this CPU (and OS) run the AVX-512 quotient kernel (AVX-512BW, BMI1, BMI2,
/// POPCNT)?
#[cfg(not(feature = "std"))]
pub(crate) fn has_quotient_avx512() -> bool {
    cpuid_quotient_avx512::get()
}
