//! The AVX2 + BMI2 kernel, of the quotient filter only: the `avx2` kernel's tag compare
//! with the `avx512` kernel's select (`pdep`, then `tzcnt`). Chosen only where `pdep` is
//! fast: every Intel CPU with BMI2, and AMD from Zen 3 (family 19h); before that AMD
//! runs `pdep` in microcode (see the module docs of `arch::tags`). The Bloom filters
//! have no use for `pdep`, so they have no kernel here.

use super::avx2::Avx2;
use crate::arch::table::kernel_tables;
use crate::arch::tags::TagOps;
use crate::arch::tags::scheme::Width;
use crate::arch::tags::select::pdep_tag_ops;
use crate::block::Block;

/// The AVX2 compare and the BMI2 select.
pub(crate) struct Avx2Bmi2;

impl TagOps for Avx2Bmi2 {
    #[inline(always)]
    unsafe fn lanes8(block: &Block, tag: u8) -> u64 {
        // SAFETY: AVX2 per the TagOps contract (this backend's features include it).
        unsafe { Avx2::lanes8(block, tag) }
    }

    #[inline(always)]
    unsafe fn lanes16(block: &Block, tag: u16) -> u32 {
        // SAFETY: as above.
        unsafe { Avx2::lanes16(block, tag) }
    }

    pdep_tag_ops!();

    #[inline(always)]
    unsafe fn shift_in<W: Width>(block: &mut Block, slot: u32, tag: u32) {
        // SAFETY: AVX2 per the TagOps contract.
        unsafe { Avx2::shift_in::<W>(block, slot, tag) }
    }

    #[inline(always)]
    unsafe fn shift_out<W: Width>(block: &mut Block, slot: u32) {
        // SAFETY: AVX2 per the TagOps contract.
        unsafe { Avx2::shift_out::<W>(block, slot) }
    }
}

kernel_tables! {
    backend: Avx2Bmi2,
    quotient: Avx2Bmi2, #[target_feature(enable = "avx2,bmi1,bmi2,popcnt")];
}
