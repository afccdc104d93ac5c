//! The scalar kernel: plain `u64` code, always compiled, the oracle every SIMD kernel
//! must match bit for bit.
//!
//! ```text
//! contains(block, h, k):  m = pattern(h, k); return (block & m) == m
//! insert(block, h, k):    m = pattern(h, k); new = m & !block; block |= m; return new != 0
//! ```
//!
//! `pattern` is [`crate::hash::pattern`], where the scheme is specified.

use super::Kernel;
use crate::block::Block;
use crate::hash::pattern;

/// The scalar kernel table.
pub static KERNEL: Kernel = Kernel {
    name: "scalar",
    contains,
    insert,
};

/// Is every bit of `h`'s pattern set in `block`?
#[inline]
pub fn contains(block: &Block, h: u64, k: u32) -> bool {
    block.contains_mask(&pattern(h, k))
}

/// Set `h`'s pattern in `block`; true if any of its bits was clear before.
#[inline]
pub fn insert(block: &mut Block, h: u64, k: u32) -> bool {
    let m = pattern(h, k);
    let mut fresh = 0;
    for (word, bits) in block.0.iter_mut().zip(m.0) {
        fresh |= bits & !*word;
        *word |= bits;
    }
    fresh != 0
}
