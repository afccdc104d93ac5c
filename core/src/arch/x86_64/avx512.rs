//! The AVX-512 kernel of both sets.
//!
//! **Bloom filters**: a block is one `__m512i`, so mask generation, the test and the set
//! are one vector operation each (AVX-512F only: `vpmuludq`, `vpsrlq`, `vpandq`,
//! `vpsllvq`, `vpandnq`, `vptestmq`). The algorithm is `bloom::generic`; this file maps
//! its `Lanes` operations to intrinsics.
//!
//! **The quotient filter**: the tag compare is one 64-byte compare straight into a mask
//! register (`vpcmpeqb` or `vpcmpeqw`, AVX-512BW); the select is `pdep` of the rank's
//! bit into the word, then `tzcnt` (BMI2, BMI1). Every CPU with AVX-512BW has a fast
//! `pdep` (Intel since Haswell, AMD since Zen 3). An insert's or a delete's tags move in
//! one 512-bit register: each 16-byte lane shifted by one tag, the edge tag of the
//! neighbouring lane carried in (`valignq`), and a blend under the mask of the lanes
//! from the slot up.
//!
//! There is no AVX-512 machine in CI: `tests/kernels.rs` and `tests/quotient.rs` skip
//! these kernels, and say so, where the CPU lacks them. Runs on AVX-512 hosts are
//! recorded under `results/`.

use crate::arch::bloom::generic::{Lanes, Simd};
use crate::arch::table::kernel_tables;
use crate::arch::tags::TagOps;
use crate::arch::tags::scheme::Width;
use crate::arch::tags::select::pdep_tag_ops;
use crate::block::Block;
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

/// The quotient filter's AVX-512 operations (`TagOps`); the Bloom filters' are
/// `Simd<__m512i, 1>` over the `Lanes` above.
pub(crate) struct Avx512;

impl TagOps for Avx512 {
    #[inline(always)]
    unsafe fn lanes8(block: &Block, tag: u8) -> u64 {
        // SAFETY: AVX-512BW per the TagOps contract; a block is 64 bytes, 64-byte
        // aligned.
        unsafe {
            let v = _mm512_load_si512(block.0.as_ptr() as *const __m512i);
            _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(tag as i8))
        }
    }

    #[inline(always)]
    unsafe fn lanes16(block: &Block, tag: u16) -> u32 {
        // SAFETY: as above.
        unsafe {
            let v = _mm512_load_si512(block.0.as_ptr() as *const __m512i);
            _mm512_cmpeq_epi16_mask(v, _mm512_set1_epi16(tag as i16))
        }
    }

    pdep_tag_ops!();

    #[inline(always)]
    unsafe fn shift_in<W: Width>(block: &mut Block, slot: u32, tag: u32) {
        // SAFETY: AVX-512BW per the TagOps contract; a block is 64 bytes, 64-byte
        // aligned.
        unsafe {
            let p = block.0.as_mut_ptr() as *mut __m512i;
            let v = _mm512_load_si512(p);
            // The block as one 512-bit number shifted up by one tag: each 16-byte lane
            // shifted, and the top tag of the lane below carried in.
            let below = _mm512_alignr_epi64::<6>(v, _mm512_setzero_si512());
            let lane = tag_lane::<W>(slot);
            let stored = if W::TAG_BITS == 8 {
                let up = _mm512_or_si512(
                    _mm512_bslli_epi128::<1>(v),
                    _mm512_bsrli_epi128::<15>(below),
                );
                let moved = _mm512_mask_blend_epi8(u64::MAX << lane, v, up);
                _mm512_mask_set1_epi8(moved, 1 << lane, tag as i8)
            } else {
                let up = _mm512_or_si512(
                    _mm512_bslli_epi128::<2>(v),
                    _mm512_bsrli_epi128::<14>(below),
                );
                let moved = _mm512_mask_blend_epi16(u32::MAX << lane, v, up);
                _mm512_mask_set1_epi16(moved, 1 << lane, tag as i16)
            };
            _mm512_store_si512(p, stored);
        }
    }

    #[inline(always)]
    unsafe fn shift_out<W: Width>(block: &mut Block, slot: u32) {
        // SAFETY: as in `shift_in`.
        unsafe {
            let p = block.0.as_mut_ptr() as *mut __m512i;
            let v = _mm512_load_si512(p);
            // The block shifted down by one tag: each 16-byte lane shifted, and the
            // bottom tag of the lane above carried in; the top tag becomes zero.
            let above = _mm512_alignr_epi64::<2>(_mm512_setzero_si512(), v);
            let lane = tag_lane::<W>(slot);
            let stored = if W::TAG_BITS == 8 {
                let down = _mm512_or_si512(
                    _mm512_bsrli_epi128::<1>(v),
                    _mm512_bslli_epi128::<15>(above),
                );
                _mm512_mask_blend_epi8(u64::MAX << lane, v, down)
            } else {
                let down = _mm512_or_si512(
                    _mm512_bsrli_epi128::<2>(v),
                    _mm512_bslli_epi128::<14>(above),
                );
                _mm512_mask_blend_epi16(u32::MAX << lane, v, down)
            };
            _mm512_store_si512(p, stored);
        }
    }
}

/// The lane (of the tag's width) of slot `slot`, the slot clamped to the last as
/// `scheme`'s shifts clamp it.
#[inline(always)]
fn tag_lane<W: Width>(slot: u32) -> u32 {
    W::FIRST_LANE + slot.min(W::SLOTS - 1)
}

kernel_tables! {
    backend: Avx512,
    bloom: Simd<__m512i, 1>, inline_k8: avx512, #[target_feature(enable = "avx512f")];
    quotient: Avx512, #[target_feature(enable = "avx512bw,bmi1,bmi2,popcnt")];
}
