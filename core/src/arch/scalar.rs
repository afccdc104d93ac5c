//! The scalar kernel: plain `u64` code, always compiled, the oracle every SIMD kernel
//! must match bit for bit.
//!
//! ```text
//! contains(block, h, k):  m = pattern(h, k); return (m & !block) == 0
//! insert(block, h, k):    m = pattern(h, k); fresh = m & !block; block |= m; return fresh != 0
//! ```
//!
//! `pattern` is [`crate::hash::pattern`], where the scheme is specified. Batches use the
//! shared prefetching driver; prefetch is a plain hint, so even this kernel benefits.

use super::{BlockOps, kernel_table};
use crate::block::Block;
use crate::hash::pattern;

/// The scalar block operations.
pub(crate) struct Scalar;

impl BlockOps for Scalar {
    #[inline(always)]
    unsafe fn contains(block: &Block, h: u64, k: u32) -> bool {
        block.contains_mask(&pattern(h, k))
    }

    #[inline(always)]
    unsafe fn insert(block: &mut Block, h: u64, k: u32) -> bool {
        let m = pattern(h, k);
        let mut fresh = 0;
        for (word, bits) in block.0.iter_mut().zip(m.0) {
            fresh |= bits & !*word;
            *word |= bits;
        }
        fresh != 0
    }
}

kernel_table!("scalar", Scalar, inline_k8: crate::arch::InlineK8::No);
