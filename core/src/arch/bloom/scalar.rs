//! The scalar kernel: plain `u64` code, always compiled, the oracle every SIMD kernel
//! must match bit for bit, and the kernel of targets without SIMD (Cortex-M, RISC-V).
//!
//! ```text
//! contains(block, h, k):  for each (w, pos) of the key: if block[w] bit pos is 0, return false
//!                         return true
//! insert(block, h, k):    fresh = false
//!                         for each (w, pos): fresh |= block[w] bit pos is 0; set it
//!                         return fresh
//! ```
//!
//! The positions come from [`crate::pattern::all_positions`], where the scheme is
//! specified, one word at a time: no 64-byte mask is built, so on a 32-bit
//! microcontroller the probe lives in registers (the `footprint` experiment reports its
//! stack), and a query stops at the first clear bit. Batches use the shared hashing and
//! prefetching pipeline; prefetch is a plain hint, so even this kernel benefits.

use super::{BlockOps, kernel_table};
use crate::block::Block;
use crate::pattern::{all_positions, for_each_position};

/// The scalar block operations.
pub(crate) struct Scalar;

impl BlockOps for Scalar {
    #[inline(always)]
    unsafe fn contains(block: &Block, h: u64, k: u32) -> bool {
        all_positions(h, k, |word, field| block.0[word] >> field & 1 == 1)
    }

    #[inline(always)]
    unsafe fn insert(block: &mut Block, h: u64, k: u32) -> bool {
        let mut fresh = false;
        for_each_position(h, k, |word, field| {
            fresh |= block.0[word] >> field & 1 == 0;
            block.0[word] |= 1 << field;
        });
        fresh
    }
}

kernel_table!(Scalar, Scalar, inline_k8: none);
