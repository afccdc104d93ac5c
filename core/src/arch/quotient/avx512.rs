//! The AVX-512 quotient kernel: the tag compare is one 64-byte compare straight into a
//! mask register (`vpcmpeqb` or `vpcmpeqw`, AVX-512BW); the select is `pdep` of the
//! rank's bit into the word, then `tzcnt` (BMI2, BMI1). Every CPU with AVX-512BW has a
//! fast `pdep` (Intel since Haswell, AMD since Zen 3).

use super::TagOps;
use super::quotient_kernel;
use super::select::pdep_tag_ops;
use crate::arch::registry::names;
use crate::block::Block;
use core::arch::x86_64::*;

/// The AVX-512 operations.
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
}

quotient_kernel!(
    names::AVX512,
    Avx512,
    #[target_feature(enable = "avx512bw,bmi1,bmi2,popcnt")]
);
