//! Kernels: the code that tests and sets a key's bits inside one block, and the run-time
//! choice between them.
//!
//! | kernel | where | selected |
//! |---|---|---|
//! | `scalar` | everywhere | the reference; under Miri; the kernel of targets without SIMD |
//! | `portable` | where `wide` has vectors: x86 (SSE2), aarch64, wasm32 with `simd128` | `wide` vectors for the block test and set |
//! | `avx2` | x86_64 | run time: `is_x86_feature_detected!` (std) or `cpufeatures` (no std) |
//! | `avx512` | x86_64 | run time, as above (AVX-512F with AVX2, OS-enabled ZMM state) |
//! | `neon` | aarch64 | compile time: NEON is baseline on aarch64 |
//!
//! A [`Kernel`] can only be obtained from [`available`], [`by_name`] or [`detect`], which
//! return kernels this CPU runs, so forcing one on a filter (`with_kernel`) is safe.
//! Every kernel gives bit-identical blocks and answers (`tests/kernels.rs`). How a
//! filter reaches its kernel, per target, is in `core/DESIGN.md` ("Dispatch").
//!
//! | file | holds |
//! |---|---|
//! | `kernel.rs` | [`Kernel`], its probes, the backend tag (the kernels' names), `BlockOps` |
//! | `macros.rs` | the macros that write each backend's entry points from its `BlockOps` |
//! | `dispatch.rs` | single-key, batch and merge dispatch |
//! | `detect.rs` | [`available`], [`detect`], [`by_name`], [`compiled`] |
//! | `prefetch.rs` | prefetch hints |
//! | `generic.rs` | the probe over any vector of `u64` lanes, and the batch pipeline |
//! | `scalar.rs`, `portable.rs`, `x86_64/`, `aarch64/` | one backend each |
//! | `quotient/` | the vector quotient filter's kernels, chosen the same way ([`quotient`]) |

mod detect;
mod dispatch;
mod generic;
mod kernel;
mod macros;
mod prefetch;
pub mod quotient;

#[cfg(linebloom_portable)]
mod portable;
mod scalar;

#[cfg(target_arch = "x86_64")]
mod x86_64;

#[cfg(target_arch = "aarch64")]
mod aarch64;

pub use detect::{active_kernel, available, by_name, compiled, detect};
pub(crate) use dispatch::{add, contains, contains_keys, insert, insert_keys, merge};
pub(crate) use kernel::{Backend, BlockOps, PREFETCH_DISTANCE, Probe};
pub use kernel::{Kernel, SMALL_BATCH_BLOCKS};
#[cfg(not(linebloom_table))]
pub(crate) use macros::with_backend;
pub(crate) use macros::{kernel_table, keyed_entries, on_backend};
pub(crate) use prefetch::{prefetch_read, prefetch_write};
