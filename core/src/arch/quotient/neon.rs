//! The NEON quotient kernel: the tag compare is four 16-byte `cmeq`s (16-bit lanes
//! narrowed to bytes first), each lane's result weighted by its bit and summed by three
//! rounds of pairwise adds into one mask; the select is [`broadword`] (aarch64 has no
//! `pdep`). NEON is baseline on aarch64, so this kernel is always there.

use super::TagOps;
use super::quotient_kernel;
use super::select::broadword;
use crate::arch::registry::names;
use crate::block::Block;
use core::arch::aarch64::*;

/// The NEON operations.
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

quotient_kernel!(names::NEON, Neon, #[target_feature(enable = "neon")]);
