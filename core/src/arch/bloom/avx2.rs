//! The AVX2 kernel: a block is two `__m256i` of four words each.
//!
//! Mask generation multiplies the 32-bit lanes by the salts (`vpmulld`; the salt row's
//! zero high halves zero the high half of every word), shifts the position down
//! (`vpsrld`) and turns it into a bit with the per-lane shift AVX2 added (`vpsllvq`);
//! the test is `vpandn` + `vpor` + `vptest`. No branch depends on the key, so hits and
//! misses run the same instructions. The algorithm itself is `bloom::generic`; this file
//! only maps its `Lanes` operations to intrinsics.

use super::kernel_table;
use crate::arch::bloom::generic::{Lanes, Simd};
use core::arch::x86_64::*;

// SAFETY: every method is an AVX2 (or baseline AVX/SSE2) intrinsic; the `Lanes`
// contract makes callers run them only where `kernel()` confirmed AVX2, and pass
// 32-byte aligned pointers (offsets 0 and 4 words into a 64-byte aligned block or table).
unsafe impl Lanes for __m256i {
    const LANES: usize = 4;
    #[inline(always)]
    unsafe fn splat(x: u64) -> Self {
        // SAFETY: AVX available per the Lanes contract.
        unsafe { _mm256_set1_epi64x(x as i64) }
    }
    #[inline(always)]
    unsafe fn load(p: *const u64) -> Self {
        // SAFETY: p is 32-byte aligned and valid for 4 words (Lanes contract).
        unsafe { _mm256_load_si256(p as *const __m256i) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u64) {
        // SAFETY: p is 32-byte aligned and valid for 4 words (Lanes contract).
        unsafe { _mm256_store_si256(p as *mut __m256i, self) }
    }
    #[inline(always)]
    unsafe fn positions(self, salts: Self) -> Self {
        // SAFETY: AVX2 available per the Lanes contract. `vpmulld` multiplies the 32-bit
        // lanes: each word's low half gives x ·₃₂ salt, its high half (x's high half
        // times the salt row's zero high half) 0, so `vpsrld 26` leaves the position
        // alone in the word, with no mask.
        unsafe { _mm256_srli_epi32::<26>(_mm256_mullo_epi32(self, salts)) }
    }
    #[inline(always)]
    unsafe fn one_shl(pos: Self) -> Self {
        // SAFETY: AVX2 available per the Lanes contract.
        unsafe { _mm256_sllv_epi64(_mm256_set1_epi64x(1), pos) }
    }
    #[inline(always)]
    unsafe fn and(self, other: Self) -> Self {
        // SAFETY: AVX2 available per the Lanes contract.
        unsafe { _mm256_and_si256(self, other) }
    }
    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        // SAFETY: AVX2 available per the Lanes contract.
        unsafe { _mm256_or_si256(self, other) }
    }
    #[inline(always)]
    unsafe fn and_not(self, other: Self) -> Self {
        // SAFETY: AVX2 available; _mm256_andnot_si256(a, b) computes !a & b.
        unsafe { _mm256_andnot_si256(other, self) }
    }
    #[inline(always)]
    unsafe fn is_zero(self) -> bool {
        // SAFETY: AVX available per the Lanes contract.
        unsafe { _mm256_testz_si256(self, self) == 1 }
    }
}

kernel_table!(Avx2, Simd<__m256i, 2>, inline_k8: avx2, #[target_feature(enable = "avx2")]);
