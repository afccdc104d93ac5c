//! The portable kernel of both sets: `wide` vectors, whose instruction set is fixed at
//! compile time (SSE2 on x86, NEON on aarch64, simd128 on wasm with `+simd128`). It is
//! compiled only there (`core/build.rs`): elsewhere `wide` falls back to plain arrays
//! and this would be the scalar kernel under another name. Those are all little-endian
//! targets, where a block's bytes are its words' bytes.
//!
//! **Bloom filters** (`BlockOps`): the mask itself comes from
//! [`crate::pattern::pattern`] in general-purpose registers. On SSE2 there is no
//! per-lane variable shift (`vpsllvq` is AVX2) and `wide` would emulate one lane at a
//! time, so building the mask in vectors would only add shuffles; shifts in GPRs are one
//! cycle each. What is vectorised is what SSE2 does well: two 32-byte loads, and-not, or
//! and one reduction (see the assembly with
//! `cargo asm -p linebloom --lib linebloom::arch::portable::bloom_contains`).
//!
//! **The quotient filter** (`TagOps`): the tag compare in 16-byte vectors, four
//! compares and four bit masks per block; the select is [`broadword`].
//!
//! `wide` does not turn into AVX2 inside a `#[target_feature]` function, so this is the
//! portable kernel only; the x86 SIMD kernels use `core::arch` directly.

use super::bloom::BlockOps;
use super::table::kernel_tables;
use super::tags::TagOps;
use super::tags::select::broadword;
use crate::block::Block;
use crate::pattern::pattern;
use wide::{u8x16, u16x8, u64x4};

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

/// The `wide` operations, for both kernel sets.
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

/// The block as four 16-byte chunks, in memory order.
#[inline(always)]
fn quarters(block: &Block) -> [[u8; 16]; 4] {
    let bytes = block.to_le_bytes();
    let mut out = [[0u8; 16]; 4];
    for (q, chunk) in out.iter_mut().zip(bytes.chunks_exact(16)) {
        q.copy_from_slice(chunk);
    }
    out
}

impl TagOps for Portable {
    #[inline(always)]
    unsafe fn lanes8(block: &Block, tag: u8) -> u64 {
        let splat = u8x16::splat(tag);
        quarters(block).iter().enumerate().fold(0, |lanes, (i, q)| {
            let equal = u8x16::new(*q).simd_eq(splat).to_bitmask() as u64;
            lanes | equal << (16 * i)
        })
    }

    #[inline(always)]
    unsafe fn lanes16(block: &Block, tag: u16) -> u32 {
        let splat = u16x8::splat(tag);
        quarters(block).iter().enumerate().fold(0, |lanes, (i, q)| {
            let words: [u16; 8] =
                core::array::from_fn(|j| u16::from_le_bytes([q[2 * j], q[2 * j + 1]]));
            let equal = u16x8::new(words).simd_eq(splat).to_bitmask();
            lanes | equal << (8 * i)
        })
    }

    #[inline(always)]
    unsafe fn select(word: u64, rank: u32) -> u32 {
        broadword(word, rank)
    }
}

kernel_tables! {
    backend: Portable,
    bloom: Portable, inline_k8: none;
    quotient: Portable;
}
