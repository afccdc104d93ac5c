//! The vector quotient filter's kernel set, apart from what each instruction set
//! supplies: how a block holds its tags and where a key goes (`scheme`), the per-key
//! algorithm written once (`generic`), the selects, and the kernel types. Per
//! instruction set, a block's tag compare and the metadata select ([`TagOps`]) are in
//! that instruction set's file (`arch/scalar.rs`, `arch/x86_64/avx2.rs`, …), beside its
//! Bloom kernel; the list of kernels and their selection is `arch/quotient.rs`.
//!
//! What each kernel compares and selects with, and what it needs, is in the docs of
//! `arch/quotient.rs` (public: [`crate::arch::quotient`]).
//!
//! | file | holds |
//! |---|---|
//! | `scheme.rs` | where a key goes and how a block holds tags (`core/FORMAT.md`, kind 5) |
//! | `generic.rs` | insert, lookup and remove over a backend's `TagOps` |
//! | `select.rs` | the broadword and `pdep` selects |
//! | `kernel.rs` | [`TagOps`], [`QuotientKernel`] and its per-width entry points |

pub(crate) mod generic;
mod kernel;
pub(crate) mod scheme;
pub(crate) mod select;

pub(crate) use generic::Insertion;
pub use kernel::QuotientKernel;
pub(crate) use kernel::{QuotientProbe, TagOps};
