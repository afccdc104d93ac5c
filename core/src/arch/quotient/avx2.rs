//! The AVX2 quotient kernel: the tag compare is two 32-byte compares and a byte mask
//! (`vpcmpeqb` or `vpcmpeqw`, then `vpmovmskb`; for 16-bit lanes, every other bit);
//! the select is [`broadword`], not `pdep`, because the AVX2 CPUs include AMD's before
//! Zen 3, where `pdep` is microcoded (see the module docs of `arch::quotient`). The
//! `avx2-bmi2` kernel (`avx2_bmi2.rs`) is this compare with `pdep`, where it is fast.

use super::TagOps;
use super::quotient_kernel;
use super::select::broadword;
use crate::arch::registry::names;
use crate::block::Block;
use core::arch::x86_64::*;

/// The AVX2 operations.
pub(crate) struct Avx2;

/// The block's two 32-byte halves.
///
/// # Safety
///
/// Only on a CPU with AVX2.
#[inline(always)]
unsafe fn halves(block: &Block) -> (__m256i, __m256i) {
    let p = block.0.as_ptr() as *const __m256i;
    // SAFETY: a block is 64 bytes, 64-byte aligned, so both 32-byte loads are in bounds
    // and aligned; AVX2 per this function's contract.
    unsafe { (_mm256_load_si256(p), _mm256_load_si256(p.add(1))) }
}

/// Bits 0, 2, 4, … of `x`, packed into the low 32 bits.
#[inline(always)]
fn even_bits(x: u64) -> u32 {
    let mut x = x & 0x5555_5555_5555_5555;
    x = (x | x >> 1) & 0x3333_3333_3333_3333;
    x = (x | x >> 2) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | x >> 4) & 0x00ff_00ff_00ff_00ff;
    x = (x | x >> 8) & 0x0000_ffff_0000_ffff;
    (x | x >> 16) as u32
}

impl TagOps for Avx2 {
    #[inline(always)]
    unsafe fn lanes8(block: &Block, tag: u8) -> u64 {
        // SAFETY: AVX2 per the TagOps contract.
        unsafe {
            let (lo, hi) = halves(block);
            let splat = _mm256_set1_epi8(tag as i8);
            let lo = _mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, splat)) as u32 as u64;
            let hi = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, splat)) as u32 as u64;
            lo | hi << 32
        }
    }

    #[inline(always)]
    unsafe fn lanes16(block: &Block, tag: u16) -> u32 {
        // SAFETY: AVX2 per the TagOps contract.
        unsafe {
            let (lo, hi) = halves(block);
            let splat = _mm256_set1_epi16(tag as i16);
            let lo = _mm256_movemask_epi8(_mm256_cmpeq_epi16(lo, splat)) as u32 as u64;
            let hi = _mm256_movemask_epi8(_mm256_cmpeq_epi16(hi, splat)) as u32 as u64;
            // Two equal bits per 16-bit lane; keep one of each pair. (A pack and a lane
            // permute would do it in vectors, but break LLVM on soft-float targets that
            // compile this kernel, such as x86_64-unknown-none.)
            even_bits(lo | hi << 32)
        }
    }

    #[inline(always)]
    unsafe fn select(word: u64, rank: u32) -> u32 {
        broadword(word, rank)
    }
}

quotient_kernel!(names::AVX2, Avx2, #[target_feature(enable = "avx2,popcnt")]);
