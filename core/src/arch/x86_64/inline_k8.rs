//! The `k = 8` probe as inline assembly with AVX2 instructions (two `ymm` halves), for
//! builds that do not enable AVX themselves (the default `x86_64` target) that have SSE
//! registers (soft-float targets such as `x86_64-unknown-none` have none, and call the
//! kernel instead).
//!
//! Such a build cannot inline a `#[target_feature(enable = "avx2")]` function into the
//! caller's loop, so a run-time-dispatched probe costs a call, a return and the spills
//! the call forces. An `asm!` block has no such limit: its instructions are assembled
//! whatever the enclosing function's features, so it inlines into the loop, and only the
//! run-time check (a kernel whose CPU runs AVX2) guards it. It computes exactly the
//! kernels' pattern for `k = 8` (see [`crate::hash`]):
//!
//! ```text
//! pos_w = (x ·₃₂ SALTS[w]) >> 26                        vpmulld, vpsrld
//! contains: every ((block_w >> pos_w) & 1) == 1          vpsrlvq, vpand, vptest
//! insert:   fresh = !contains; block_w |= 1 << pos_w     vpsllvq, vpor
//! ```
//!
//! **One form for the AVX2 and the AVX-512 kernel.** An AVX-512 form (one `zmm`) is four
//! instructions shorter, but with two forms the probe became a three-way branch (call,
//! AVX2, AVX-512), and LLVM laid it out with two taken jumps per key: in L1 the
//! lookup loop measured 1.23× sbbf-rs-safe's speed with two forms and 1.41× with one
//! (an interleaved in-process run on an AMD EPYC, 40 rounds). A flag and one block keep
//! the probe a straight line.
//!
//! **Register contract.** Vector temporaries are `xmm_reg` operands used by their `ymm`
//! names (`{t:y}`): the compiler treats them as clobbered, and code built without AVX
//! keeps no value in the upper parts of any vector register, which the closing
//! `vzeroupper` zeroes (it also avoids the SSE/AVX transition penalty in the caller).
//! That is why this module only exists when the build does **not** enable `avx`: with
//! AVX enabled the compiler could hold a live `ymm` value across the block, and such
//! builds use the compiled-in kernel instead ([`super::super`]'s `compiled_in`).

use crate::block::Block;
use crate::hash::SALTS;
use core::arch::asm;

/// The constants the assembly reads, 64-byte aligned: the eight round-1 salts, each as
/// the low half of a `u64` lane whose high half is 0 (bytes 0..64), then four lanes of 1
/// (bytes 64..96).
///
/// The 1s are loaded from memory rather than made in a register (`vpcmpeqq t,t,t` then
/// a shift): an idiom the CPU does not recognise as dependency-free would chain each
/// insert to the previous one through that register (measured on Zen 4: 3.3 ns an
/// insert instead of about 2.5).
#[repr(C, align(64))]
struct Constants([u64; 12]);

static CONSTANTS: Constants = {
    let mut c = [1u64; 12];
    let mut w = 0;
    while w < 8 {
        c[w] = SALTS[w] as u64;
        w += 1;
    }
    Constants(c)
};

/// The first step, shared by the test and the set: the eight positions
/// `(x ·₃₂ SALTS[w]) >> 26`, words 0..4 in `{b}` and 4..8 in `{a}` (operands: `h`, the
/// constants `c`, vector temporaries `a` and `b`).
///
/// `vpmulld` multiplies the 32-bit lanes: `x` (the hash's low half, in every lane) by
/// the salt in each even lane and by 0 in each odd one, so each 64-bit word holds
/// `x ·₃₂ SALTS[w]` over a zero high half, and a 32-bit shift by 26 leaves the position
/// alone in the word, with no mask. (`vpmuludq` and a 64-bit shift need an `& 63`
/// after: two instructions more.)
macro_rules! positions {
    () => {
        concat!(
            "vmovd {a:x}, {h:e}\n",
            "vpbroadcastd {a:y}, {a:x}\n",
            "vpmulld {b:y}, {a:y}, ymmword ptr [{c}]\n",
            "vpmulld {a:y}, {a:y}, ymmword ptr [{c} + 32]\n",
            "vpsrld {b:y}, {b:y}, 26\n",
            "vpsrld {a:y}, {a:y}, 26\n",
        )
    };
}

/// Is every bit of `h`'s `k = 8` pattern set in `block`?
///
/// Each word is shifted right by its position, so bit 0 is the tested bit; the two
/// halves are ANDed, and `vptest` against the 1s sets CF when no word's bit 0 is clear.
///
/// # Safety
///
/// Only on a CPU that runs AVX2 (and an OS that saves the YMM state).
#[inline(always)]
pub(crate) unsafe fn contains_k8(block: &Block, h: u64) -> bool {
    let all: u8;
    // SAFETY: AVX2 is present (this function's contract). The block is 64-byte aligned
    // and valid for 64 bytes, the constants 64-byte aligned and valid for 96: every
    // aligned load is in bounds. Only the declared operands and the flags are written;
    // see the module docs for the upper halves of the vector registers.
    unsafe {
        asm!(
            positions!(),
            "vmovdqa {t:y}, ymmword ptr [{blk}]",
            "vpsrlvq {b:y}, {t:y}, {b:y}",
            "vmovdqa {t:y}, ymmword ptr [{blk} + 32]",
            "vpsrlvq {a:y}, {t:y}, {a:y}",
            "vpand {a:y}, {a:y}, {b:y}",
            "vptest {a:y}, ymmword ptr [{c} + 64]",
            "setc {out}",
            "vzeroupper",
            h = in(reg) h,
            blk = in(reg) block.0.as_ptr(),
            c = in(reg) CONSTANTS.0.as_ptr(),
            a = out(xmm_reg) _,
            b = out(xmm_reg) _,
            t = out(xmm_reg) _,
            out = lateout(reg_byte) all,
            options(pure, readonly, nostack),
        );
    }
    all != 0
}

/// Sets `h`'s `k = 8` pattern in `block`; true if any of its bits was clear.
///
/// Two blocks: the test is [`contains_k8`], `pure`, so LLVM drops it where the caller
/// ignores the answer (a filter being filled), and the set ORs each half with its mask
/// straight from memory. One block that computed the answer beside the set
/// (`vpcmpeqq` of the old and new halves, `vptest`) cost every insert its six
/// instructions: in L1 an insert whose answer was ignored measured 1.38× sbbf-rs-safe's
/// speed that way and 1.79× this way, while one whose answer is used measured 1.44×
/// and 1.30× (interleaved runs on an AMD EPYC). Loops that build a filter were judged
/// the commoner case; `insert_batch` and `Extend` run the kernel's own loop either way.
///
/// # Safety
///
/// Only on a CPU that runs AVX2 (and an OS that saves the YMM state).
#[inline(always)]
pub(crate) unsafe fn insert_k8(block: &mut Block, h: u64) -> bool {
    // SAFETY: AVX2 is present (this function's contract).
    let present = unsafe { contains_k8(block, h) };
    // SAFETY: as in `contains_k8`; the stores write the same 64 aligned bytes of the
    // block, which the exclusive borrow gives us.
    unsafe {
        asm!(
            positions!(),
            "vmovdqa {t:y}, ymmword ptr [{c} + 64]",
            "vpsllvq {b:y}, {t:y}, {b:y}",
            "vpsllvq {a:y}, {t:y}, {a:y}",
            "vpor {t:y}, {b:y}, ymmword ptr [{blk}]",
            "vmovdqa ymmword ptr [{blk}], {t:y}",
            "vpor {t:y}, {a:y}, ymmword ptr [{blk} + 32]",
            "vmovdqa ymmword ptr [{blk} + 32], {t:y}",
            "vzeroupper",
            h = in(reg) h,
            blk = in(reg) block.0.as_mut_ptr(),
            c = in(reg) CONSTANTS.0.as_ptr(),
            a = out(xmm_reg) _,
            b = out(xmm_reg) _,
            t = out(xmm_reg) _,
            options(nostack, preserves_flags),
        );
    }
    !present
}
