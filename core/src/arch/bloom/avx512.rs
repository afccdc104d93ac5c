//! The AVX-512 kernel: a block is one `__m512i`, so mask generation, the test and the
//! set are one vector operation each (AVX-512F only: `vpmuludq`, `vpsrlq`, `vpandq`,
//! `vpsllvq`, `vpandnq`, `vptestmq`). The algorithm is `bloom::generic`; this file maps its `Lanes`
//! operations to intrinsics.
//!
//! There is no AVX-512 machine in CI: `tests/kernels.rs` skips this kernel, and says so,
//! where the CPU lacks it. Runs on AVX-512 hosts are recorded under `results/`.

use super::kernel_table;
use crate::arch::bloom::generic::{Lanes, Simd};
use core::arch::x86_64::*;

// SAFETY: every method is an AVX-512F intrinsic; the `Lanes` contract makes callers run
// them only where `kernel()` confirmed AVX-512F (with OS-enabled ZMM state), and pass
// 64-byte aligned pointers to a whole block or table row.
unsafe impl Lanes for __m512i {
    const LANES: usize = 8;
    #[inline(always)]
    unsafe fn splat(x: u64) -> Self {
        // SAFETY: AVX-512F available per the Lanes contract.
        unsafe { _mm512_set1_epi64(x as i64) }
    }
    #[inline(always)]
    unsafe fn load(p: *const u64) -> Self {
        // SAFETY: p is 64-byte aligned and valid for 8 words (Lanes contract).
        unsafe { _mm512_load_si512(p as *const __m512i) }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut u64) {
        // SAFETY: p is 64-byte aligned and valid for 8 words (Lanes contract).
        unsafe { _mm512_store_si512(p as *mut __m512i, self) }
    }
    #[inline(always)]
    unsafe fn positions(self, salts: Self) -> Self {
        // SAFETY: AVX-512F available per the Lanes contract. `vpmuludq` gives each word
        // the 64-bit product of the low halves; bits 26..32 are the position. The
        // `& 63` lets LLVM see that every shift count is below 64, so `one_shl` is a
        // bare `vpsllvq` (without it LLVM adds a compare and a masked shift).
        unsafe {
            _mm512_and_si512(
                _mm512_srli_epi64::<26>(_mm512_mul_epu32(self, salts)),
                _mm512_set1_epi64(63),
            )
        }
    }
    #[inline(always)]
    unsafe fn one_shl(pos: Self) -> Self {
        // SAFETY: AVX-512F available per the Lanes contract.
        unsafe { _mm512_sllv_epi64(_mm512_set1_epi64(1), pos) }
    }
    #[inline(always)]
    unsafe fn and(self, other: Self) -> Self {
        // SAFETY: AVX-512F available per the Lanes contract.
        unsafe { _mm512_and_si512(self, other) }
    }
    #[inline(always)]
    unsafe fn or(self, other: Self) -> Self {
        // SAFETY: AVX-512F available per the Lanes contract.
        unsafe { _mm512_or_si512(self, other) }
    }
    #[inline(always)]
    unsafe fn and_not(self, other: Self) -> Self {
        // SAFETY: AVX-512F available; _mm512_andnot_si512(a, b) computes !a & b.
        unsafe { _mm512_andnot_si512(other, self) }
    }
    #[inline(always)]
    unsafe fn is_zero(self) -> bool {
        // SAFETY: AVX-512F available per the Lanes contract.
        unsafe { _mm512_test_epi64_mask(self, self) == 0 }
    }
}

kernel_table!(Avx512, Simd<__m512i, 1>, inline_k8: avx512, #[target_feature(enable = "avx512f")]);
