//! The `k = 8` probe as inline assembly, for builds that do not enable AVX themselves
//! (the default `x86_64` target) that have SSE registers (soft-float targets such as
//! `x86_64-unknown-none` have none, and call the kernel instead). Two widths: AVX2 (the
//! block as two `ymm` halves) and AVX-512 (the block as one `zmm`).
//!
//! Such a build cannot inline a `#[target_feature(enable = "avx2")]` function into the
//! caller's loop, so a run-time-dispatched probe costs a call, a return and the spills
//! the call forces. An `asm!` block has no such limit: its instructions are assembled
//! whatever the enclosing function's features, so it inlines into the loop, and only the
//! run-time check (a kernel whose CPU runs the instructions) guards it. Each form
//! computes exactly the kernels' pattern for `k = 8` (see [`crate::pattern`]):
//!
//! ```text
//! pos_w = (x ·₃₂ SALTS[w]) >> 26                       vpmulld, vpsrld
//! contains: every ((block_w >> pos_w) & 1) == 1         vpsrlvq, then vptest or vptestnmq
//! insert:   fresh = any (1 << pos_w) & !block_w;        vpsllvq, vpandn or vptestnmq
//!           block_w |= 1 << pos_w                       vpor, store
//! add:      block_w |= 1 << pos_w, no answer            vpsllvq, vpor, store
//! ```
//!
//! Instructions per probe, `vzeroupper` included (`objdump -d` of `compare`):
//!
//! | form | AVX2 | AVX-512 |
//! |---|---:|---:|
//! | contains | 14 | 8 |
//! | insert (reports whether the key was new) | 21 | 11 |
//! | add (sets only) | 14 | 8 |
//!
//! **Which width.** A filter's `k = 8` probe carries two flags, `inline_k8` and
//! `avx512` (see `arch::Probe`), set from the kernel it was built with; the probe
//! branches on them, and they are the same for every key, so LLVM moves both branches
//! out of a caller's loop and each copy of the loop runs one form straight. (One
//! three-valued field became a switch that LLVM left inside the loop, with two taken
//! jumps a key on the AVX-512 path.) The measurements are in `benches/README.md`.
//!
//! **Why `insert` and `add`.** A test before a set needs the block's old bits, and
//! answering costs the AVX2 form seven instructions and the AVX-512 form three. A
//! loop that builds a filter ignores the answer, so `add` leaves it out; `insert` is one
//! block that computes the positions once for both the test and the set.
//!
//! **Register contract.** Vector temporaries are `xmm_reg` operands used by their `ymm`
//! or `zmm` names (`{t:y}`, `{t:z}`): the compiler treats them as clobbered, and code
//! built without AVX keeps no value in the upper parts of any vector register, which
//! the closing `vzeroupper` zeroes (it also avoids the SSE/AVX transition penalty in the
//! caller). The AVX-512 forms write the mask register `k1`, declared as clobbered: code
//! built without AVX-512 keeps nothing in mask registers. That is why this module only
//! exists when the build does **not** enable `avx`: with AVX enabled the compiler could
//! hold a live `ymm` value across the block, and such builds use the compiled-in kernel
//! instead (`arch::bloom::compiled_in`).

use crate::block::Block;
use crate::pattern::SALTS;
use core::arch::asm;

/// The constants the assembly reads, 64-byte aligned: the eight round-1 salts, each as
/// the low half of a `u64` lane whose high half is 0 (bytes 0..64), then eight lanes of
/// 1 (bytes 64..128).
///
/// The 1s are loaded from memory rather than made in a register (`vpcmpeqq t,t,t` then
/// a shift): an idiom the CPU does not recognise as dependency-free would chain each
/// insert to the previous one through that register (measured on Zen 4: 3.3 ns an
/// insert instead of about 2.5).
#[repr(C, align(64))]
struct Constants([u64; 16]);

static CONSTANTS: Constants = {
    let mut c = [1u64; 16];
    let mut w = 0;
    while w < 8 {
        c[w] = SALTS[w] as u64;
        w += 1;
    }
    Constants(c)
};

/// The byte a `setcc` wrote, as a `bool`, with LLVM told that it is 0 or 1 (else it
/// tests the byte again before using it as a bool: two instructions a probe).
///
/// # Safety
///
/// `byte` is 0 or 1.
#[inline(always)]
unsafe fn flag(byte: u8) -> bool {
    // SAFETY: the caller's contract.
    unsafe { core::hint::assert_unchecked(byte <= 1) };
    byte != 0
}

/// The AVX2 forms' first step: the eight positions `(x ·₃₂ SALTS[w]) >> 26`, words
/// 0..4 in `{b}` and 4..8 in `{a}` (operands: `h`, the constants `c`, vector
/// temporaries `a` and `b`).
///
/// `vpmulld` multiplies the 32-bit lanes: `x` (the hash's low half, in every lane) by
/// the salt in each even lane and by 0 in each odd one, so each 64-bit word holds
/// `x ·₃₂ SALTS[w]` over a zero high half, and a 32-bit shift by 26 leaves the position
/// alone in the word, with no mask. (`vpmuludq` and a 64-bit shift need an `& 63`
/// after: two instructions more.)
macro_rules! positions_avx2 {
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

/// The AVX-512 forms' first step: the eight positions in the words of `{a}` (AVX-512F
/// broadcasts a general register, and one `vpmulld` covers the block).
macro_rules! positions_avx512 {
    () => {
        concat!(
            "vpbroadcastd {a:z}, {h:e}\n",
            "vpmulld {a:z}, {a:z}, zmmword ptr [{c}]\n",
            "vpsrld {a:z}, {a:z}, 26\n",
        )
    };
}

/// The AVX2 forms' masks: `1 << pos` in `{b}` (words 0..4) and `{a}` (4..8), after
/// [`positions_avx2`]; `{t}` holds the 1s.
macro_rules! masks_avx2 {
    () => {
        concat!(
            "vmovdqa {t:y}, ymmword ptr [{c} + 64]\n",
            "vpsllvq {b:y}, {t:y}, {b:y}\n",
            "vpsllvq {a:y}, {t:y}, {a:y}\n",
        )
    };
}

/// The AVX-512 forms' mask: `1 << pos` in `{a}`, after [`positions_avx512`], with the
/// 1s broadcast into `{t}` from one word (an 8-byte load, not 64).
macro_rules! mask_avx512 {
    () => {
        concat!(
            "vpbroadcastq {t:z}, qword ptr [{c} + 64]\n",
            "vpsllvq {a:z}, {t:z}, {a:z}\n",
        )
    };
}

/// One probe's `asm!` block: the form's instructions (`$template`, each with its comma),
/// then `vzeroupper`, with the operands every form shares (the hash `h`; the blocks'
/// base and block `i`'s byte offset `off`; the constants `c`; the vector temporaries
/// `a` and `t`) and the form's own (`$operands`: more temporaries, the answer, the
/// options).
macro_rules! probe_asm {
    ($base:expr, $i:expr, $h:expr, [$($template:tt)*], $($operands:tt)*) => {
        asm!(
            $($template)*
            "vzeroupper",
            h = in(reg) $h,
            base = in(reg) $base,
            off = in(reg) $i * 64,
            c = in(reg) CONSTANTS.0.as_ptr(),
            a = out(xmm_reg) _,
            t = out(xmm_reg) _,
            $($operands)*
        )
    };
}

/// Is every bit of `h`'s `k = 8` pattern set in block `i` of `blocks`? (AVX2.)
///
/// Each word is shifted right by its position, so bit 0 is the tested bit; the two
/// halves are ANDed, and `vptest` against the 1s sets CF when no word's bit 0 is clear.
///
/// # Safety
///
/// Only on a CPU that runs AVX2 (and an OS that saves the YMM state); `i < blocks.len()`.
#[inline(always)]
pub(crate) unsafe fn contains_avx2(blocks: &[Block], i: usize, h: u64) -> bool {
    let all: u8;
    // SAFETY: AVX2 is present (this function's contract). Block `i` (`i < len`, the
    // contract) is 64-byte aligned and valid for 64 bytes at `base + 64·i`, the
    // constants 64-byte aligned and valid for 128: every aligned load is in bounds.
    // Only the declared operands and the flags are written; see the module docs for
    // the upper halves of the vector registers.
    unsafe {
        probe_asm!(
            blocks.as_ptr(),
            i,
            h,
            [
                positions_avx2!(),
                "vmovdqa {t:y}, ymmword ptr [{base} + {off}]",
                "vpsrlvq {b:y}, {t:y}, {b:y}",
                "vmovdqa {t:y}, ymmword ptr [{base} + {off} + 32]",
                "vpsrlvq {a:y}, {t:y}, {a:y}",
                "vpand {a:y}, {a:y}, {b:y}",
                "vptest {a:y}, ymmword ptr [{c} + 64]",
                "setc {out}",
            ],
            b = out(xmm_reg) _,
            out = lateout(reg_byte) all,
            options(pure, readonly, nostack),
        );
    }
    // SAFETY: `setc` wrote the byte: 0 or 1.
    unsafe { flag(all) }
}

/// Sets `h`'s `k = 8` pattern in block `i`; true if any of its bits was clear. (AVX2.)
///
/// Per half: the new bits are `mask & !old` (`vpandn`), the stored word `old | mask`;
/// the two halves' new bits are ORed and `vptest` sets ZF when there are none.
///
/// # Safety
///
/// Only on a CPU that runs AVX2 (and an OS that saves the YMM state); `i < blocks.len()`.
#[inline(always)]
pub(crate) unsafe fn insert_avx2(blocks: &mut [Block], i: usize, h: u64) -> bool {
    let fresh: u8;
    // SAFETY: as in `contains_avx2`; the stores write the same 64 aligned bytes of block
    // `i`, which the exclusive borrow gives us.
    unsafe {
        probe_asm!(
            blocks.as_mut_ptr(),
            i,
            h,
            [
                positions_avx2!(),
                masks_avx2!(),
                "vmovdqa {u:y}, ymmword ptr [{base} + {off}]",
                "vpandn {t:y}, {u:y}, {b:y}",
                "vpor {u:y}, {u:y}, {b:y}",
                "vmovdqa ymmword ptr [{base} + {off}], {u:y}",
                "vmovdqa {u:y}, ymmword ptr [{base} + {off} + 32]",
                "vpandn {b:y}, {u:y}, {a:y}",
                "vpor {u:y}, {u:y}, {a:y}",
                "vmovdqa ymmword ptr [{base} + {off} + 32], {u:y}",
                "vpor {t:y}, {t:y}, {b:y}",
                "vptest {t:y}, {t:y}",
                "setnz {out}",
            ],
            b = out(xmm_reg) _,
            u = out(xmm_reg) _,
            out = lateout(reg_byte) fresh,
            options(nostack),
        );
    }
    // SAFETY: `setnz` wrote the byte: 0 or 1.
    unsafe { flag(fresh) }
}

/// Sets `h`'s `k = 8` pattern in block `i`, without the answer. (AVX2.)
///
/// # Safety
///
/// Only on a CPU that runs AVX2 (and an OS that saves the YMM state); `i < blocks.len()`.
#[inline(always)]
pub(crate) unsafe fn add_avx2(blocks: &mut [Block], i: usize, h: u64) {
    // SAFETY: as in `insert_avx2`.
    unsafe {
        probe_asm!(
            blocks.as_mut_ptr(),
            i,
            h,
            [
                positions_avx2!(),
                masks_avx2!(),
                "vpor {t:y}, {b:y}, ymmword ptr [{base} + {off}]",
                "vmovdqa ymmword ptr [{base} + {off}], {t:y}",
                "vpor {t:y}, {a:y}, ymmword ptr [{base} + {off} + 32]",
                "vmovdqa ymmword ptr [{base} + {off} + 32], {t:y}",
            ],
            b = out(xmm_reg) _,
            options(nostack, preserves_flags),
        );
    }
}

/// Is every bit of `h`'s `k = 8` pattern set in block `i` of `blocks`? (AVX-512F.)
///
/// Each word is shifted right by its position; `vptestnmq` marks in `k1` the words
/// whose bit 0 is clear; the mask goes out in a general register (`kmovw`), where the
/// caller's test of it against 0 costs less than a `kortestw`, a `setz` and a
/// zero-extension.
///
/// # Safety
///
/// Only on a CPU that runs AVX-512F (and an OS that saves the ZMM and mask state);
/// `i < blocks.len()`.
#[inline(always)]
pub(crate) unsafe fn contains_avx512(blocks: &[Block], i: usize, h: u64) -> bool {
    let missing: u32;
    // SAFETY: AVX-512F is present (this function's contract). Block `i` (`i < len`,
    // the contract) is 64-byte aligned and valid for 64 bytes at `base + 64·i`, the
    // constants 64-byte aligned and valid for 128: every load is in bounds. Only the
    // declared operands and `k1` are written (no instruction here writes the flags);
    // see the module docs for the vector and mask registers.
    unsafe {
        probe_asm!(
            blocks.as_ptr(),
            i,
            h,
            [
                positions_avx512!(),
                "vmovdqa64 {t:z}, zmmword ptr [{base} + {off}]",
                "vpsrlvq {a:z}, {t:z}, {a:z}",
                "vptestnmq k1, {a:z}, qword ptr [{c} + 64]{{1to8}}",
                "kmovw {missing:e}, k1",
            ],
            out("k1") _,
            missing = lateout(reg) missing,
            options(pure, readonly, nostack, preserves_flags),
        );
    }
    missing == 0
}

/// Sets `h`'s `k = 8` pattern in block `i`; true if any of its bits was clear.
/// (AVX-512F.)
///
/// The mask has one bit in each word, so `vptestnmq` of the mask against the old
/// block marks in `k1` exactly the words whose bit is new. The block is loaded once, into
/// a register, for both the test and the set.
///
/// # Safety
///
/// Only on a CPU that runs AVX-512F (and an OS that saves the ZMM and mask state);
/// `i < blocks.len()`.
#[inline(always)]
pub(crate) unsafe fn insert_avx512(blocks: &mut [Block], i: usize, h: u64) -> bool {
    let fresh: u32;
    // SAFETY: as in `contains_avx512`; the store writes the same 64 aligned bytes of
    // block `i`, which the exclusive borrow gives us.
    unsafe {
        probe_asm!(
            blocks.as_mut_ptr(),
            i,
            h,
            [
                positions_avx512!(),
                mask_avx512!(),
                "vmovdqa64 {t:z}, zmmword ptr [{base} + {off}]",
                "vptestnmq k1, {a:z}, {t:z}",
                "vporq {a:z}, {a:z}, {t:z}",
                "vmovdqa64 zmmword ptr [{base} + {off}], {a:z}",
                "kmovw {fresh:e}, k1",
            ],
            out("k1") _,
            fresh = lateout(reg) fresh,
            options(nostack, preserves_flags),
        );
    }
    fresh != 0
}

/// Sets `h`'s `k = 8` pattern in block `i`, without the answer. (AVX-512F.)
///
/// # Safety
///
/// Only on a CPU that runs AVX-512F (and an OS that saves the ZMM state);
/// `i < blocks.len()`.
#[inline(always)]
pub(crate) unsafe fn add_avx512(blocks: &mut [Block], i: usize, h: u64) {
    // SAFETY: as in `insert_avx512`; no mask register is written.
    unsafe {
        probe_asm!(
            blocks.as_mut_ptr(),
            i,
            h,
            [
                positions_avx512!(),
                mask_avx512!(),
                "vporq {a:z}, {a:z}, zmmword ptr [{base} + {off}]",
                "vmovdqa64 zmmword ptr [{base} + {off}], {a:z}",
            ],
            options(nostack, preserves_flags),
        );
    }
}
