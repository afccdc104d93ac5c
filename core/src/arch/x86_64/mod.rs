//! The x86_64 kernels, one file per instruction set level, each serving both kernel
//! sets (see `arch`'s module docs), and the inline `asm!` form of the AVX2 and AVX-512
//! `k = 8` Bloom probe.

pub(crate) mod avx2;
pub(crate) mod avx2_bmi2;
pub(crate) mod avx512;
// Needs SSE registers for its operands (absent on soft-float targets such as
// x86_64-unknown-none) and a build without AVX (see its module docs).
#[cfg(linebloom_inline_k8)]
pub(crate) mod inline_k8;
