//! The NEON kernel: a block is four `uint64x2_t` of two words each.
//!
//! NEON's `ushl` shifts each lane by its own signed count (negative = right), which is
//! the per-lane shift the shared algorithm in `bloom::generic` needs. The test
//! is `bic` + `orr` and a `umaxv` reduction.

use super::kernel_table;
use crate::arch::bloom::generic::{Lanes, Simd};
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

kernel_table!(Neon, Simd<uint64x2_t, 4>, inline_k8: none, #[target_feature(enable = "neon")]);
