//! The portable quotient kernel: the tag compare in `wide` 16-byte vectors (SSE2 on x86,
//! NEON on aarch64, simd128 on wasm), four compares and four bit masks per block; the
//! select is [`broadword`]. Compiled where the Bloom `portable` kernel is (`core/build.rs`),
//! all of them little-endian targets, where a block's bytes are its words' bytes.

use super::TagOps;
use super::quotient_kernel;
use super::select::broadword;
use crate::arch::registry::names;
use crate::block::Block;
use wide::{u8x16, u16x8};

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

/// The `wide` operations.
pub(crate) struct Portable;

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

quotient_kernel!(names::PORTABLE, Portable);
