//! The AVX2 kernel of both sets.
//!
//! **Bloom filters**: a block is two `__m256i` of four words each. Mask generation
//! multiplies the 32-bit lanes by the salts (`vpmulld`; the salt row's zero high halves
//! zero the high half of every word), shifts the position down (`vpsrld`) and turns it
//! into a bit with the per-lane shift AVX2 added (`vpsllvq`); the test is `vpandn` +
//! `vpor` + `vptest`. No branch depends on the key, so hits and misses run the same
//! instructions. The algorithm itself is `bloom::generic`; this file only maps its
//! `Lanes` operations to intrinsics.
//!
//! **The quotient filter**: the tag compare is two 32-byte compares and a byte mask
//! (`vpcmpeqb` or `vpcmpeqw`, then `vpmovmskb`; for 16-bit lanes, every other bit); the
//! select is [`broadword`], not `pdep`, because the AVX2 CPUs include AMD's before Zen
//! 3, where `pdep` is microcoded (see the module docs of `arch::tags`). The `avx2-bmi2`
//! kernel (`avx2_bmi2.rs`) is this compare with `pdep`, where it is fast. Both move an
//! insert's or a delete's tags in the block's two 256-bit halves: each 16-byte lane
//! shifted by one tag (`vpalignr`), the neighbouring lane's edge tag brought in by
//! `vperm2i128`, and byte masks from the slot keep what does not move.

use crate::arch::bloom::generic::{Lanes, Simd};
use crate::arch::table::kernel_tables;
use crate::arch::tags::TagOps;
use crate::arch::tags::scheme::Width;
use crate::arch::tags::select::broadword;
use crate::block::Block;
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

/// The quotient filter's AVX2 operations (`TagOps`); the Bloom filters' are
/// `Simd<__m256i, 2>` over the `Lanes` above.
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

    #[inline(always)]
    unsafe fn shift_in<W: Width>(block: &mut Block, slot: u32, tag: u32) {
        // SAFETY: AVX2 per the TagOps contract; `halves` and `store` stay in the block.
        unsafe {
            let (lo, hi) = halves(block);
            // Each half shifted up by one tag, the top tag of the 16 bytes below carried
            // into each 16-byte lane (`alignr` works within lanes).
            let lane_below_hi = _mm256_permute2x128_si256::<0x21>(lo, hi);
            let lane_below_lo = _mm256_permute2x128_si256::<0x21>(_mm256_setzero_si256(), lo);
            let (up_lo, up_hi) = if W::TAG_BITS == 8 {
                (
                    _mm256_alignr_epi8::<15>(lo, lane_below_lo),
                    _mm256_alignr_epi8::<15>(hi, lane_below_hi),
                )
            } else {
                (
                    _mm256_alignr_epi8::<14>(lo, lane_below_lo),
                    _mm256_alignr_epi8::<14>(hi, lane_below_hi),
                )
            };
            let byte = tag_byte::<W>(slot);
            let (from_lo, from_hi) = bytes_from(byte);
            let (at_lo, at_hi) = tag_at::<W>(byte);
            let tag = if W::TAG_BITS == 8 {
                _mm256_set1_epi8(tag as i8)
            } else {
                _mm256_set1_epi16(tag as i16)
            };
            let lo = _mm256_blendv_epi8(_mm256_blendv_epi8(lo, up_lo, from_lo), tag, at_lo);
            let hi = _mm256_blendv_epi8(_mm256_blendv_epi8(hi, up_hi, from_hi), tag, at_hi);
            store(block, lo, hi);
        }
    }

    #[inline(always)]
    unsafe fn shift_out<W: Width>(block: &mut Block, slot: u32) {
        // SAFETY: as in `shift_in`.
        unsafe {
            let (lo, hi) = halves(block);
            // Each half shifted down by one tag, the bottom tag of the 16 bytes above
            // carried into each lane; the top tag becomes zero.
            let lane_above_lo = _mm256_permute2x128_si256::<0x21>(lo, hi);
            let lane_above_hi = _mm256_permute2x128_si256::<0x21>(hi, _mm256_setzero_si256());
            let (down_lo, down_hi) = if W::TAG_BITS == 8 {
                (
                    _mm256_alignr_epi8::<1>(lane_above_lo, lo),
                    _mm256_alignr_epi8::<1>(lane_above_hi, hi),
                )
            } else {
                (
                    _mm256_alignr_epi8::<2>(lane_above_lo, lo),
                    _mm256_alignr_epi8::<2>(lane_above_hi, hi),
                )
            };
            let (from_lo, from_hi) = bytes_from(tag_byte::<W>(slot));
            store(
                block,
                _mm256_blendv_epi8(lo, down_lo, from_lo),
                _mm256_blendv_epi8(hi, down_hi, from_hi),
            );
        }
    }
}

/// The first byte of slot `slot`, the slot clamped to the last as `scheme`'s shifts
/// clamp it.
#[inline(always)]
fn tag_byte<W: Width>(slot: u32) -> i8 {
    (W::TAG_WORD as u32 * 8 + slot.min(W::SLOTS - 1) * W::TAG_BITS / 8) as i8
}

/// Byte masks of the two halves: every byte from `byte` up.
///
/// # Safety
///
/// Only on a CPU with AVX2.
#[inline(always)]
unsafe fn bytes_from(byte: i8) -> (__m256i, __m256i) {
    // SAFETY: AVX2 per this function's contract.
    unsafe {
        let before = _mm256_set1_epi8(byte - 1);
        (
            _mm256_cmpgt_epi8(byte_index(0), before),
            _mm256_cmpgt_epi8(byte_index(32), before),
        )
    }
}

/// Byte masks of the two halves: the tag that starts at byte `byte`.
///
/// # Safety
///
/// Only on a CPU with AVX2.
#[inline(always)]
unsafe fn tag_at<W: Width>(byte: i8) -> (__m256i, __m256i) {
    // SAFETY: AVX2 per this function's contract.
    unsafe {
        if W::TAG_BITS == 8 {
            let at = _mm256_set1_epi8(byte);
            (
                _mm256_cmpeq_epi8(byte_index(0), at),
                _mm256_cmpeq_epi8(byte_index(32), at),
            )
        } else {
            // Both bytes of the 16-bit lane: compare lane indices.
            let at = _mm256_set1_epi16(byte as i16 / 2);
            (
                _mm256_cmpeq_epi16(lane16_index(0), at),
                _mm256_cmpeq_epi16(lane16_index(16), at),
            )
        }
    }
}

/// Bytes `from, from + 1, …, from + 31`.
///
/// # Safety
///
/// Only on a CPU with AVX2.
#[inline(always)]
unsafe fn byte_index(from: i8) -> __m256i {
    // SAFETY: AVX2 per this function's contract.
    unsafe {
        _mm256_add_epi8(
            _mm256_set1_epi8(from),
            _mm256_setr_epi8(
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                23, 24, 25, 26, 27, 28, 29, 30, 31,
            ),
        )
    }
}

/// 16-bit lanes `from, from + 1, …, from + 15`.
///
/// # Safety
///
/// Only on a CPU with AVX2.
#[inline(always)]
unsafe fn lane16_index(from: i16) -> __m256i {
    // SAFETY: AVX2 per this function's contract.
    unsafe {
        _mm256_add_epi16(
            _mm256_set1_epi16(from),
            _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        )
    }
}

/// Writes the block's two 32-byte halves.
///
/// # Safety
///
/// Only on a CPU with AVX2.
#[inline(always)]
unsafe fn store(block: &mut Block, lo: __m256i, hi: __m256i) {
    let p = block.0.as_mut_ptr() as *mut __m256i;
    // SAFETY: a block is 64 bytes, 64-byte aligned, so both 32-byte stores are in
    // bounds and aligned; AVX2 per this function's contract.
    unsafe {
        _mm256_store_si256(p, lo);
        _mm256_store_si256(p.add(1), hi);
    }
}

kernel_tables! {
    backend: Avx2,
    bloom: Simd<__m256i, 2>, inline_k8: avx2, #[target_feature(enable = "avx2")];
    quotient: Avx2, #[target_feature(enable = "avx2,popcnt")];
}
