//! The portable kernel: the block test and set in `wide` vectors, whose instruction set
//! is fixed at compile time (SSE2 on x86, NEON on aarch64, simd128 on wasm with
//! `+simd128`). It is compiled only there (`core/build.rs`): elsewhere `wide` falls back
//! to plain arrays and this would be the scalar kernel under another name.
//!
//! The mask itself comes from [`crate::pattern::pattern`] in general-purpose registers. On
//! SSE2 there is no per-lane variable shift (`vpsllvq` is AVX2) and `wide` would emulate
//! one lane at a time, so building the mask in vectors would only add shuffles; shifts
//! in GPRs are one cycle each. What is vectorised is what SSE2 does well: two 32-byte
//! loads, and-not, or and one reduction (see the assembly with
//! `cargo asm -p linebloom --lib linebloom::arch::portable::entry_contains`).
//!
//! `wide` does not turn into AVX2 inside a `#[target_feature]` function, so this is the
//! portable kernel only; the x86 SIMD kernels use `core::arch` directly.

use super::{BlockOps, kernel_table};
use crate::block::Block;
use crate::pattern::pattern;
use wide::u64x4;

/// The two 256-bit halves of a block.
#[inline(always)]
fn halves(b: &Block) -> [u64x4; 2] {
    let w = b.0;
    [
        u64x4::new([w[0], w[1], w[2], w[3]]),
        u64x4::new([w[4], w[5], w[6], w[7]]),
    ]
}

/// Is the vector all zeros? (An OR-reduction; `wide` has no cheap `testz` on SSE2.)
#[inline(always)]
fn is_zero(v: u64x4) -> bool {
    let a = v.to_array();
    (a[0] | a[1] | a[2] | a[3]) == 0
}

/// The `wide` block operations.
pub(crate) struct Portable;

impl BlockOps for Portable {
    #[inline(always)]
    unsafe fn contains(block: &Block, h: u64, k: u32) -> bool {
        let [m0, m1] = halves(&pattern(h, k));
        let [b0, b1] = halves(block);
        is_zero((m0 & !b0) | (m1 & !b1))
    }

    #[inline(always)]
    unsafe fn insert(block: &mut Block, h: u64, k: u32) -> bool {
        let [m0, m1] = halves(&pattern(h, k));
        let [b0, b1] = halves(block);
        let fresh = (m0 & !b0) | (m1 & !b1);
        let (lo, hi) = ((b0 | m0).to_array(), (b1 | m1).to_array());
        block.0[..4].copy_from_slice(&lo);
        block.0[4..].copy_from_slice(&hi);
        !is_zero(fresh)
    }
}

kernel_table!(Portable, Portable, inline_k8: none);
