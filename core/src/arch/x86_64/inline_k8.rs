//! The `k = 8` probe as inline assembly, with AVX2 instructions (two `ymm` halves) or
//! AVX-512F (one `zmm`), for builds that do not enable AVX themselves (the default
//! `x86_64` target) that have SSE registers (soft-float targets such as
//! `x86_64-unknown-none` have none, and call the kernel instead).
//!
//! Such a build cannot inline a `#[target_feature(enable = "avx2")]` function into the
//! caller's loop, so a run-time-dispatched probe costs a call, a return and the spills
//! the call forces. An `asm!` block has no such limit: its instructions are assembled
//! whatever the enclosing function's features, so it inlines into the loop, and only the
//! run-time check (a kernel whose CPU runs AVX2) guards it. It computes exactly the
//! kernels' pattern for `k = 8` (see [`crate::hash`]):
//!
//! ```text
//! pos_w = ((x ·₃₂ SALTS[w]) >> 26) & 63                 vpmuludq, vpsrlq, vpand
//! contains: every ((block_w >> pos_w) & 1) == 1          vpsrlvq, vpand, vpsllq 63, vmovmskpd
//! insert:   block_w |= 1 << pos_w; fresh = any bit new   vpsllvq, vpandn, vpor, vptest
//! ```
//!
//! **Register contract.** Vector temporaries are `xmm_reg` operands used by their `ymm`
//! or `zmm` names (`{t:y}`, `{t:z}`): the compiler treats them as clobbered, and code
//! built without AVX keeps no value in the upper parts of any vector register, which the
//! closing `vzeroupper` zeroes (it also avoids the SSE/AVX transition penalty in the
//! caller). Only `xmm0`–`xmm15` can be allocated here, so no `zmm16`–`zmm31` and no mask
//! register is touched: the AVX-512 form reduces through a `ymm` with `vmovmskpd`.
//! That is why this module only exists when the build does **not** enable `avx`: with
//! AVX enabled the compiler could hold a live `ymm` value across the block, and such
//! builds use the compiled-in kernel instead ([`super::super`]'s `compiled_in`).

use crate::block::Block;
use crate::hash::SALTS;
use core::arch::asm;

/// The constants the assembly reads, 64-byte aligned: the eight round-1 salts as `u64`
/// lanes (bytes 0..64), four lanes of 63 (bytes 64..96), and a 1 (byte 96).
///
/// The 1 is broadcast from memory rather than made in a register (`vpternlogq t,t,t`
/// or `vpcmpeqq t,t,t` then a shift): an idiom the CPU does not recognise as
/// dependency-free would chain each insert to the previous one through that register
/// (measured on Zen 4: 3.3 ns an insert instead of about 2.5).
#[repr(C, align(64))]
struct Constants([u64; 13]);

static CONSTANTS: Constants = {
    let mut c = [63u64; 13];
    let mut w = 0;
    while w < 8 {
        c[w] = SALTS[w] as u64;
        w += 1;
    }
    c[12] = 1;
    Constants(c)
};

/// The AVX2 form's first step, shared by its test and its set: the eight positions
/// `((x ·₃₂ SALTS[w]) >> 26) & 63`, words 0..4 in `{b}` and 4..8 in `{a}` (operands: `h`,
/// the constants `c`, vector temporaries `a` and `b`).
macro_rules! positions_avx2 {
    () => {
        concat!(
            "vmovq {a:x}, {h}\n",
            "vpbroadcastq {a:y}, {a:x}\n",
            "vpmuludq {b:y}, {a:y}, ymmword ptr [{c}]\n",
            "vpmuludq {a:y}, {a:y}, ymmword ptr [{c} + 32]\n",
            "vpsrlq {b:y}, {b:y}, 26\n",
            "vpsrlq {a:y}, {a:y}, 26\n",
            "vpand {b:y}, {b:y}, ymmword ptr [{c} + 64]\n",
            "vpand {a:y}, {a:y}, ymmword ptr [{c} + 64]\n",
        )
    };
}

/// The AVX-512 form's first step: the eight positions in `{a}` (one `zmm`).
macro_rules! positions_avx512 {
    () => {
        concat!(
            "vpbroadcastq {a:z}, {h}\n",
            "vpmuludq {a:z}, {a:z}, zmmword ptr [{c}]\n",
            "vpsrlq {a:z}, {a:z}, 26\n",
            "vpandq {a:z}, {a:z}, qword ptr [{c} + 64]{{1to8}}\n",
        )
    };
}

/// Is every bit of `h`'s `k = 8` pattern set in `block`? AVX2 form.
///
/// # Safety
///
/// Only on a CPU that runs AVX2 (and an OS that saves the YMM state).
#[inline(always)]
pub(crate) unsafe fn contains_k8_avx2(block: &Block, h: u64) -> bool {
    let lanes: u32;
    // SAFETY: AVX2 is present (this function's contract). The block is 64-byte aligned
    // and valid for 64 bytes, the constants 64-byte aligned and valid for 104: every
    // aligned load is in bounds. Only the declared operands are written; see the module
    // docs for the upper halves of the vector registers.
    unsafe {
        asm!(
            positions_avx2!(),
            "vmovdqa {t:y}, ymmword ptr [{blk}]",
            "vpsrlvq {b:y}, {t:y}, {b:y}",
            "vmovdqa {t:y}, ymmword ptr [{blk} + 32]",
            "vpsrlvq {a:y}, {t:y}, {a:y}",
            "vpand {a:y}, {a:y}, {b:y}",
            "vpsllq {a:y}, {a:y}, 63",
            "vmovmskpd {out:e}, {a:y}",
            "vzeroupper",
            h = in(reg) h,
            blk = in(reg) block.0.as_ptr(),
            c = in(reg) CONSTANTS.0.as_ptr(),
            a = out(xmm_reg) _,
            b = out(xmm_reg) _,
            t = out(xmm_reg) _,
            out = lateout(reg) lanes,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    lanes == 0xf
}

/// Sets `h`'s `k = 8` pattern in `block`; true if any of its bits was clear. AVX2 form.
///
/// # Safety
///
/// Only on a CPU that runs AVX2 (and an OS that saves the YMM state).
#[inline(always)]
pub(crate) unsafe fn insert_k8_avx2(block: &mut Block, h: u64) -> bool {
    let fresh: u8;
    // SAFETY: as in `contains_k8`; the stores write the same 64 aligned bytes of the
    // block, which the exclusive borrow gives us.
    unsafe {
        asm!(
            positions_avx2!(),
            "vpbroadcastq {t:y}, qword ptr [{c} + 96]",
            "vpsllvq {b:y}, {t:y}, {b:y}",
            "vpsllvq {a:y}, {t:y}, {a:y}",
            "vmovdqa {t:y}, ymmword ptr [{blk}]",
            "vpandn {u:y}, {t:y}, {b:y}",
            "vpor {t:y}, {t:y}, {b:y}",
            "vmovdqa ymmword ptr [{blk}], {t:y}",
            "vmovdqa {t:y}, ymmword ptr [{blk} + 32]",
            "vpandn {b:y}, {t:y}, {a:y}",
            "vpor {t:y}, {t:y}, {a:y}",
            "vmovdqa ymmword ptr [{blk} + 32], {t:y}",
            "vpor {u:y}, {u:y}, {b:y}",
            "vptest {u:y}, {u:y}",
            "setnz {out}",
            "vzeroupper",
            h = in(reg) h,
            blk = in(reg) block.0.as_mut_ptr(),
            c = in(reg) CONSTANTS.0.as_ptr(),
            a = out(xmm_reg) _,
            b = out(xmm_reg) _,
            t = out(xmm_reg) _,
            u = out(xmm_reg) _,
            out = lateout(reg_byte) fresh,
            options(nostack),
        );
    }
    fresh != 0
}

/// [`contains_k8_avx2`] with one `zmm` for the whole line.
///
/// # Safety
///
/// Only on a CPU that runs AVX-512F and AVX2 (and an OS that saves the ZMM state).
#[inline(always)]
pub(crate) unsafe fn contains_k8_avx512(block: &Block, h: u64) -> bool {
    let lanes: u32;
    // SAFETY: AVX-512F and AVX2 are present (this function's contract). The block is
    // 64-byte aligned and valid for 64 bytes, the constants valid for 104 (EVEX memory
    // operands need no alignment). Only the declared operands are written, and only
    // `zmm0`–`zmm15` (see the module docs).
    unsafe {
        asm!(
            positions_avx512!(),
            "vmovdqa64 {t:z}, zmmword ptr [{blk}]",
            "vpsrlvq {a:z}, {t:z}, {a:z}",
            "vpsllq {a:z}, {a:z}, 63",
            "vextracti64x4 {t:y}, {a:z}, 1",
            "vpand {a:y}, {a:y}, {t:y}",
            "vmovmskpd {out:e}, {a:y}",
            "vzeroupper",
            h = in(reg) h,
            blk = in(reg) block.0.as_ptr(),
            c = in(reg) CONSTANTS.0.as_ptr(),
            a = out(xmm_reg) _,
            t = out(xmm_reg) _,
            out = lateout(reg) lanes,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    lanes == 0xf
}

/// [`insert_k8_avx2`] with one `zmm` for the whole line.
///
/// # Safety
///
/// Only on a CPU that runs AVX-512F and AVX2 (and an OS that saves the ZMM state).
#[inline(always)]
pub(crate) unsafe fn insert_k8_avx512(block: &mut Block, h: u64) -> bool {
    let fresh: u8;
    // SAFETY: as in `contains_k8_avx512`; the store writes the same 64 aligned bytes of
    // the block, which the exclusive borrow gives us.
    unsafe {
        asm!(
            positions_avx512!(),
            "vpbroadcastq {t:z}, qword ptr [{c} + 96]",
            "vpsllvq {a:z}, {t:z}, {a:z}",
            "vmovdqa64 {t:z}, zmmword ptr [{blk}]",
            "vpandnq {u:z}, {t:z}, {a:z}",
            "vporq {t:z}, {t:z}, {a:z}",
            "vmovdqa64 zmmword ptr [{blk}], {t:z}",
            "vextracti64x4 {t:y}, {u:z}, 1",
            "vpor {u:y}, {u:y}, {t:y}",
            "vptest {u:y}, {u:y}",
            "setnz {out}",
            "vzeroupper",
            h = in(reg) h,
            blk = in(reg) block.0.as_mut_ptr(),
            c = in(reg) CONSTANTS.0.as_ptr(),
            a = out(xmm_reg) _,
            t = out(xmm_reg) _,
            u = out(xmm_reg) _,
            out = lateout(reg_byte) fresh,
            options(nostack),
        );
    }
    fresh != 0
}
