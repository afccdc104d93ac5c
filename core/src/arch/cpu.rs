//! Every CPU feature check the kernels of either set need (x86_64; aarch64 needs
//! none, NEON being baseline there). Each check tests exactly the features its
//! kernel's `#[target_feature]` enables.
//!
//! With `std`, `is_x86_feature_detected!` (which also checks that the OS saves the
//! YMM/ZMM state); without `std`, the `cpufeatures` crate, which reads CPUID and XGETBV
//! for the same two facts. Each result is cached by its detector.

/// Defines `$name() -> bool`: does this CPU (and OS) have every feature listed?
macro_rules! check {
    ($(#[$doc:meta])* $name:ident: $($feature:tt),+) => {
        $(#[$doc])*
        #[cfg(feature = "std")]
        pub(crate) fn $name() -> bool {
            $(std::is_x86_feature_detected!($feature))&&+
        }

        $(#[$doc])*
        #[cfg(not(feature = "std"))]
        pub(crate) fn $name() -> bool {
            cpufeatures::new!(detector, $($feature),+);
            detector::get()
        }
    };
}

check!(
    /// The Bloom filters' AVX2 kernel.
    bloom_avx2: "avx2"
);
check!(
    /// The Bloom filters' AVX-512 kernel: AVX-512F, and AVX2 (every AVX-512 CPU has it),
    /// because its `k = 8` probe may run as the inline AVX2 block.
    bloom_avx512: "avx512f", "avx2"
);
check!(
    /// The vector quotient filter's AVX2 kernel.
    quotient_avx2: "avx2", "popcnt"
);
check!(
    /// The vector quotient filter's AVX-512 kernel.
    quotient_avx512: "avx512bw", "bmi1", "bmi2", "popcnt"
);
check!(
    /// The features of the vector quotient filter's AVX2 + BMI2 kernel, which
    /// [`quotient_avx2_bmi2`] also asks a fast `pdep` of.
    quotient_avx2_bmi2_features: "avx2", "bmi1", "bmi2", "popcnt"
);

/// The vector quotient filter's AVX2 + BMI2 kernel: its features, and a [`fast_pdep`].
pub(crate) fn quotient_avx2_bmi2() -> bool {
    quotient_avx2_bmi2_features() && fast_pdep()
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
