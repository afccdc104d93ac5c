//! The quotient filter's kernel types: what a backend supplies ([`TagOps`]), a
//! kernel ([`QuotientKernel`]) and its per-width entry points ([`QuotientProbe`]).

#[cfg(linebloom_table)]
use super::Insertion;
use super::scheme;
use crate::arch::registry::{Backend, Named};
use crate::block::Block;

#[cfg(doc)]
use super::generic;

/// What a backend supplies: the compare and the select, and where it has a faster way
/// than `scheme`'s word shifts, the moves of tags for an insert and a delete.
/// Everything else is [`generic`].
pub(crate) trait TagOps {
    /// Bit `i` set when byte `i` of `block` (0..64, in memory order) equals `tag`.
    ///
    /// # Safety
    ///
    /// Only on a CPU with the backend's features.
    unsafe fn lanes8(block: &Block, tag: u8) -> u64;
    /// Bit `i` set when the little-endian `u16` at bytes `2i..2i+2` equals `tag`.
    ///
    /// # Safety
    ///
    /// Only on a CPU with the backend's features.
    unsafe fn lanes16(block: &Block, tag: u16) -> u32;
    /// Position of set bit number `rank` (from 0) of `word`; any value up to 64 when
    /// `word` has no such bit (callers never ask for one in a well-formed block).
    ///
    /// # Safety
    ///
    /// Only on a CPU with the backend's features.
    unsafe fn select(word: u64, rank: u32) -> u32;
    /// Whether [`TagOps::deposit`] is one instruction (`pdep`), so that a run's lanes
    /// are cheaper as two deposits than as a select and a leading-zero count.
    const FAST_DEPOSIT: bool = false;
    /// Set bit number `rank` (from 0) of `word` alone, as a one-bit word; 0 when `word`
    /// has no such bit. Callers pass a rank below 64 (for a larger one the answer is a
    /// word of at most one bit, which one unspecified). Derived from
    /// [`TagOps::select`]; `pdep` backends answer it in one instruction.
    ///
    /// # Safety
    ///
    /// Only on a CPU with the backend's features.
    #[inline(always)]
    unsafe fn deposit(word: u64, rank: u32) -> u64 {
        // SAFETY: the same contract as this function's.
        let position = unsafe { Self::select(word, rank) };
        if rank >= 64 {
            0
        } else {
            1u64.checked_shl(position).unwrap_or(0)
        }
    }

    /// Moves the tags from `slot` (below `W::SLOTS`) up by one slot, dropping the last,
    /// and writes `tag` into `slot`: [`scheme::shift_in`], which backends may do in
    /// vector registers. Only the tag words change.
    ///
    /// # Safety
    ///
    /// Only on a CPU with the backend's features.
    #[inline(always)]
    unsafe fn shift_in<W: scheme::Width>(block: &mut Block, slot: u32, tag: u32) {
        scheme::shift_in::<W>(block, slot, tag);
    }

    /// Removes the tag in `slot` (below `W::SLOTS`): the tags above move down by one
    /// slot and the last slot becomes zero, as [`scheme::shift_out`]. Only the tag words
    /// change.
    ///
    /// # Safety
    ///
    /// Only on a CPU with the backend's features.
    #[inline(always)]
    unsafe fn shift_out<W: scheme::Width>(block: &mut Block, slot: u32) {
        scheme::shift_out::<W>(block, slot);
    }
}

/// The single-key entry points of one tag width: a table of the kernel's functions
/// where the target chooses kernels at run time.
#[cfg(linebloom_table)]
#[derive(Clone, Copy)]
pub(crate) struct QuotientProbe {
    pub(crate) contains: unsafe fn(&[Block], u64) -> bool,
    pub(crate) contains_batch: unsafe fn(&[Block], &[u64], &mut [bool]),
    pub(crate) insert: unsafe fn(&mut [Block], u64, bool) -> Insertion,
    pub(crate) remove: unsafe fn(&mut [Block], u64) -> bool,
}

/// The single-key entry points of one tag width where the build fixes the kernels: the
/// tag width and the kernel's backend, which `arch::dispatch` matches on to call
/// [`generic`] directly.
#[cfg(not(linebloom_table))]
#[derive(Clone, Copy)]
pub(crate) struct QuotientProbe {
    pub(crate) sixteen: bool,
    pub(crate) backend: Backend,
}

/// A vector quotient filter kernel: its name and, where the target chooses kernels at
/// run time, its entry points for both tag widths.
///
/// Obtained only from [`available`](crate::arch::quotient::available),
/// [`by_name`](crate::arch::quotient::by_name) or
/// [`detect`](crate::arch::quotient::detect), which return kernels this CPU runs; a
/// filter takes one with `VectorQuotientFilter::with_kernel`.
pub struct QuotientKernel {
    /// The kernel's name (`scalar`, `portable`, `avx2`, `avx2-bmi2`, `avx512`, `neon`),
    /// after the main instruction set it uses; what each needs is in the module docs'
    /// table, which is not always what the Bloom kernel of the same name needs
    /// (`avx512` here also needs AVX-512BW and BMI2, `avx2-bmi2` is `avx2` with BMI2's
    /// `pdep`).
    pub name: &'static str,
    /// Which backend: where the build fixes the kernels, the probes match on it.
    #[cfg_attr(linebloom_table, allow(dead_code))]
    pub(crate) backend: Backend,
    /// The entry points for 8-bit tags.
    #[cfg(linebloom_table)]
    pub(crate) eight: QuotientProbe,
    /// The entry points for 16-bit tags.
    #[cfg(linebloom_table)]
    pub(crate) sixteen: QuotientProbe,
    /// The backend's select over many words, for
    /// [`select_sum`](crate::arch::quotient::select_sum).
    #[cfg(linebloom_table)]
    pub(crate) select_sum: unsafe fn(&[u64]) -> u64,
}

impl QuotientKernel {
    /// The entry points for `tag_bits`-bit tags (8 or 16).
    #[cfg(linebloom_table)]
    pub(crate) fn probe(&self, tag_bits: u32) -> QuotientProbe {
        if tag_bits == 8 {
            self.eight
        } else {
            self.sixteen
        }
    }

    /// The entry points for `tag_bits`-bit tags (8 or 16).
    #[cfg(not(linebloom_table))]
    pub(crate) fn probe(&self, tag_bits: u32) -> QuotientProbe {
        QuotientProbe {
            sixteen: tag_bits == 16,
            backend: self.backend,
        }
    }
}

impl Named for QuotientKernel {
    fn name(&self) -> &'static str {
        self.name
    }
}

impl core::fmt::Debug for QuotientKernel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for QuotientKernel {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
