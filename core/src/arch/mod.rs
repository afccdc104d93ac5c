//! Kernels: the code that works inside one 64-byte block, per instruction set, and the
//! run-time choice between them, in two kernel sets: the Bloom filters' and the
//! quotient filter's.
//!
//! Both sets have the same layout: one folder per set, one file per instruction
//! set inside it, the per-key algorithm written once over what each file supplies.
//!
//! | path | holds |
//! |---|---|
//! | `bloom/` | the Bloom filters' kernels: [`Kernel`] and its backends (module docs there) |
//! | `quotient/` | the vector quotient filter's block layout, per-key algorithm and kernels ([`quotient`]) |
//! | `registry.rs` | [`available`], [`detect`], [`by_name`] and [`compiled`], written once over a set's kernel list, and every kernel's name |
//! | `cpu.rs` | every CPU feature check either set's kernels need |
//! | `prefetch.rs` | prefetch hints |
//!
//! A kernel can only be obtained from `available`, `by_name` or `detect`, which return
//! kernels this CPU runs, so forcing one on a filter (`with_kernel`) is safe. Every
//! kernel gives bit-identical blocks and answers (`tests/kernels.rs`,
//! `tests/quotient.rs`). How a filter reaches its kernel, per target, is in
//! `core/DESIGN.md` ("Dispatch").

mod bloom;
#[cfg(all(target_arch = "x86_64", not(miri)))]
mod cpu;
mod prefetch;
pub mod quotient;
mod registry;

pub use bloom::{Kernel, SMALL_BATCH_BLOCKS, active_kernel, available, by_name, compiled, detect};
pub(crate) use bloom::{Probe, add, contains, contains_keys, insert, insert_keys, merge};
pub(crate) use prefetch::{prefetch_read, prefetch_write};
