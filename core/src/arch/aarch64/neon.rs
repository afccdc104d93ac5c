//! The NEON kernel of both sets. NEON is baseline on aarch64, so it is always there.
//!
//! **Bloom filters**: a block is four `uint64x2_t` of two words each. NEON's `ushl`
//! shifts each lane by its own signed count (negative = right), which is the per-lane
//! shift the shared algorithm in `bloom::generic` needs. The test is `bic` + `orr` and a
//! `umaxv` reduction.
//!
//! **The quotient filter**: the tag compare is four 16-byte `cmeq`s (16-bit lanes
//! narrowed to bytes first), each lane's result weighted by its bit and summed by three
//! rounds of pairwise adds into one mask; the select is [`broadword`] (aarch64 has no
//! `pdep`).

use crate::arch::bloom::generic::{Lanes, Simd};
use crate::arch::table::kernel_tables;
use crate::arch::tags::TagOps;
use crate::arch::tags::select::broadword;
use crate::block::Block;
use core::arch::aarch64::*;

// SAFETY: every method is a NEON intrinsic, and NEON is part of every aarch64 target this
// module compiles for; pointers are 16-byte aligned (offsets of 2 words into a 64-byte
// aligned block or table), per the `Lanes` contract.
unsafe impl Lanes for uint64x2_t {
    const LANES: usize = 2;
    #[inline(always)]
    unsafe fn splat(x: u64) -> Self {
        // SAFETY: NEON is baseline on aarch64.
        unsafe { vdupq_n_u64(x) }
    }
    #[inline(always)]
    unsafe fn load(p: *const u64) -> Self {
        // SAFETY: p is valid for 2 words (Lanes contract); vld1q has no alignment need.
        unsafe { vld1q_u64(p) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u64) {
        // SAFETY: p is valid for 2 words (Lanes contract).
        unsafe { vst1q_u64(p, self) }
    }
    #[inline(always)]
    unsafe fn positions(self, salts: Self) -> Self {
        // SAFETY: NEON is baseline. `mul` over the 32-bit lanes: each word's low half
        // gives x ·₃₂ salt, its high half (x's high half times the salt row's zero high
        // half) 0, so `ushr #26` leaves the position alone in the word.
        unsafe {
            let product = vmulq_u32(vreinterpretq_u32_u64(self), vreinterpretq_u32_u64(salts));
            vreinterpretq_u64_u32(vshrq_n_u32::<26>(product))
        }
    }
    #[inline(always)]
    unsafe fn one_shl(pos: Self) -> Self {
        // SAFETY: NEON is baseline.
        unsafe { vshlq_u64(vdupq_n_u64(1), vreinterpretq_s64_u64(pos)) }
    }
    #[inline(always)]
    unsafe fn and(self, other: Self) -> Self {
        // SAFETY: NEON is baseline.
        unsafe { vandq_u64(self, other) }
    }
    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        // SAFETY: NEON is baseline.
        unsafe { vorrq_u64(self, other) }
    }
    #[inline(always)]
    unsafe fn and_not(self, other: Self) -> Self {
        // SAFETY: NEON is baseline; vbicq(a, b) computes a & !b.
        unsafe { vbicq_u64(self, other) }
    }
    #[inline(always)]
    unsafe fn is_zero(self) -> bool {
        // SAFETY: NEON is baseline.
        unsafe { vmaxvq_u32(vreinterpretq_u32_u64(self)) == 0 }
    }
}

/// The quotient filter's NEON operations (`TagOps`); the Bloom filters' are
/// `Simd<uint64x2_t, 4>` over the `Lanes` above.
pub(crate) struct Neon;

/// Each byte lane's bit weight within its half of a 16-byte vector.
const WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];

impl TagOps for Neon {
    #[inline(always)]
    unsafe fn lanes8(block: &Block, tag: u8) -> u64 {
        // SAFETY: NEON per the TagOps contract; the four loads cover the block's 64
        // bytes.
        unsafe {
            let p = block.0.as_ptr() as *const u8;
            let splat = vdupq_n_u8(tag);
            let weights = vld1q_u8(WEIGHTS.as_ptr());
            let q: [uint8x16_t; 4] = core::array::from_fn(|i| {
                vandq_u8(vceqq_u8(vld1q_u8(p.add(16 * i)), splat), weights)
            });
            let pairs = (vpaddq_u8(q[0], q[1]), vpaddq_u8(q[2], q[3]));
            let quads = vpaddq_u8(pairs.0, pairs.1);
            let octets = vpaddq_u8(quads, quads);
            vgetq_lane_u64::<0>(vreinterpretq_u64_u8(octets))
        }
    }

    #[inline(always)]
    unsafe fn lanes16(block: &Block, tag: u16) -> u32 {
        // SAFETY: as above.
        unsafe {
            let p = block.0.as_ptr() as *const u16;
            let splat = vdupq_n_u16(tag);
            let n: [uint8x8_t; 4] =
                core::array::from_fn(|i| vmovn_u16(vceqq_u16(vld1q_u16(p.add(8 * i)), splat)));
            let weights = vld1q_u8(WEIGHTS.as_ptr());
            let a = vandq_u8(vcombine_u8(n[0], n[1]), weights);
            let b = vandq_u8(vcombine_u8(n[2], n[3]), weights);
            let pairs = vpaddq_u8(a, b);
            let quads = vpaddq_u8(pairs, pairs);
            let octets = vpaddq_u8(quads, quads);
            vgetq_lane_u32::<0>(vreinterpretq_u32_u8(octets))
        }
    }

    #[inline(always)]
    unsafe fn select(word: u64, rank: u32) -> u32 {
        broadword(word, rank)
    }
}

kernel_tables! {
    backend: Neon,
    bloom: Simd<uint64x2_t, 4>, inline_k8: none, #[target_feature(enable = "neon")];
    quotient: Neon, #[target_feature(enable = "neon")];
}
