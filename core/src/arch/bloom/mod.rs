//! The Bloom filters' kernel set, apart from what each instruction set supplies: the
//! kernel handle, and the probe and the batch pipeline written once over any
//! instruction set's block operations. Each instruction set's [`BlockOps`] (and for the
//! SIMD ones, its [`generic::Lanes`]) is in that instruction set's file, beside its
//! quotient kernel; the list of kernels and their selection is in `arch/mod.rs`.
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
//! | `kernel.rs` | [`Kernel`], its probes, `BlockOps` |
//! | `generic.rs` | the probe over any vector of `u64` lanes, and the batch pipeline |
//! | `compiled_in.rs` | the kernel the build's own features choose, whose block operations inline |

#[cfg(linebloom_table)]
pub(crate) mod compiled_in;
pub(crate) mod generic;
mod kernel;

pub(crate) use kernel::{BlockOps, PREFETCH_DISTANCE, Probe};
pub use kernel::{Kernel, SMALL_BATCH_BLOCKS};
