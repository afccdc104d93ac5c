//! The vector quotient filter's kernels: how a block holds its tags and where a key
//! goes (`scheme`), the per-key algorithm written once (`generic`), and per
//! instruction set a block's tag compare and the metadata select, chosen at run time.
//!
//! | kernel | compare (lanes of a block equal to the tag) | select | needs |
//! |---|---|---|---|
//! | `scalar` | SWAR zero-lane test on the words | broadword (`select`) | nothing; the reference |
//! | `portable` | `wide` 16-byte compares, `to_bitmask` | broadword | where `wide` has vectors (see `arch`) |
//! | `avx2` | two `vpcmpeqb`/`vpcmpeqw`, `vpmovmskb` | broadword | AVX2, POPCNT |
//! | `avx2-bmi2` | as `avx2` | `pdep` + `tzcnt` | AVX2, BMI1, BMI2, POPCNT, and a fast `pdep` |
//! | `avx512` | one `vpcmpeqb`/`vpcmpeqw` into a mask register | `pdep` + `tzcnt` | AVX-512BW, BMI1, BMI2, POPCNT |
//! | `neon` | four `cmeq`, bit-weight and pairwise-add reduction | broadword | NEON (aarch64 baseline) |
//!
//! The x86 kernels also move an insert's or a delete's tags in vector registers
//! (`TagOps::shift_in`, `shift_out`: `avx512` the block as one 512-bit register, `avx2`
//! and `avx2-bmi2` as two 256-bit halves); the others use `scheme`'s word shifts.
//!
//! `pdep` is microcoded on AMD before Zen 3 (hundreds of cycles), and every such CPU has
//! AVX2 but not AVX-512; so the AVX2 kernel selects without it, and the AVX-512 kernel
//! (Intel, and AMD from Zen 4) with it. `avx2-bmi2` is the AVX2 kernel with `pdep`, for
//! the CPUs with BMI2 and no AVX-512BW whose `pdep` is fast (Intel from Haswell, AMD
//! Zen 3): detection reads the vendor and family from CPUID and leaves it out on AMD
//! and Hygon before family 19h. `benches/README.md` ("Select") has the measured
//! cost of each select on the reference machine.
//!
//! Detection (`arch/cpu.rs`) checks exactly the features a kernel's `#[target_feature]`
//! enables. A [`QuotientKernel`] can only be obtained from [`available`], [`by_name`]
//! or [`detect`], so calling its entry points is safe. Every kernel gives
//! bit-identical blocks and answers (`tests/quotient.rs`).
//!
//! Where the target chooses among kernels at run time (x86_64, aarch64) a kernel is a
//! table of entry points; elsewhere (`scalar`, and `portable` where it exists) a probe
//! calls the per-key algorithm directly, so a firmware links no table and only the
//! operations it calls.
//!
//! | file | holds |
//! |---|---|
//! | `scheme.rs` | where a key goes and how a block holds tags (`core/FORMAT.md`, kind 5) |
//! | `generic.rs` | insert, lookup and remove over a backend's `TagOps` |
//! | `select.rs` | the broadword and `pdep` selects |
//! | `scalar.rs`, `portable.rs`, `avx2.rs`, `avx2_bmi2.rs`, `avx512.rs`, `neon.rs` | one backend each |

mod generic;
mod scalar;
pub(crate) mod scheme;
pub(crate) mod select;

#[cfg(linebloom_portable)]
mod portable;

#[cfg(all(target_arch = "x86_64", not(miri)))]
mod avx2;
#[cfg(all(target_arch = "x86_64", not(miri)))]
mod avx2_bmi2;
#[cfg(all(target_arch = "x86_64", not(miri)))]
mod avx512;

#[cfg(all(target_arch = "aarch64", not(miri)))]
mod neon;

pub(crate) use generic::Insertion;

#[cfg(all(target_arch = "x86_64", not(miri)))]
use super::cpu;
use super::registry::{Compiled, KernelSet, Named, always, selection};
use crate::block::Block;

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
    contains: unsafe fn(&[Block], u64) -> bool,
    contains_batch: unsafe fn(&[Block], &[u64], &mut [bool]),
    insert: unsafe fn(&mut [Block], u64, bool) -> Insertion,
    remove: unsafe fn(&mut [Block], u64) -> bool,
}

/// The single-key entry points of one tag width where the build fixes the kernels: the
/// tag width, and whether the kernel is `portable` (else `scalar`).
#[cfg(not(linebloom_table))]
#[derive(Clone, Copy)]
pub(crate) struct QuotientProbe {
    sixteen: bool,
    portable: bool,
}

/// Runs `generic::$op` for the probe's tag width and backend, with no table.
#[cfg(not(linebloom_table))]
macro_rules! on_fixed_backend {
    ($probe:expr, $op:ident($($arg:expr),*)) => {
        match ($probe.portable, $probe.sixteen) {
            #[cfg(linebloom_portable)]
            (true, false) => generic::$op::<scheme::Eight, portable::Portable>($($arg),*),
            #[cfg(linebloom_portable)]
            (true, true) => generic::$op::<scheme::Sixteen, portable::Portable>($($arg),*),
            (_, false) => generic::$op::<scheme::Eight, scalar::Scalar>($($arg),*),
            (_, true) => generic::$op::<scheme::Sixteen, scalar::Scalar>($($arg),*),
        }
    };
}

impl QuotientProbe {
    /// Is the fingerprint in either block?
    ///
    /// # Safety
    ///
    /// `blocks.len()` even, ≥ 2; the probe is of a kernel this CPU runs.
    #[inline]
    pub(crate) unsafe fn contains(self, blocks: &[Block], h: u64) -> bool {
        // SAFETY: forwarded contract: the entry is of a kernel this CPU runs.
        #[cfg(linebloom_table)]
        unsafe {
            (self.contains)(blocks, h)
        }
        // SAFETY: forwarded contract; scalar and portable need no feature the build
        // does not enable.
        #[cfg(not(linebloom_table))]
        unsafe {
            on_fixed_backend!(self, contains(blocks, h))
        }
    }

    /// `out[i]` = is `hashes[i]`'s fingerprint in either of its blocks, prefetching
    /// ahead.
    ///
    /// # Safety
    ///
    /// As for [`QuotientProbe::contains`]; `hashes.len() == out.len()`.
    #[inline]
    pub(crate) unsafe fn contains_batch(self, blocks: &[Block], hashes: &[u64], out: &mut [bool]) {
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(linebloom_table)]
        unsafe {
            (self.contains_batch)(blocks, hashes, out)
        }
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(not(linebloom_table))]
        unsafe {
            on_fixed_backend!(self, contains_batch(blocks, hashes, out))
        }
    }

    /// Store the fingerprint (look first when `check` is set).
    ///
    /// # Safety
    ///
    /// As for [`QuotientProbe::contains`]; every block well formed.
    #[inline]
    pub(crate) unsafe fn insert(self, blocks: &mut [Block], h: u64, check: bool) -> Insertion {
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(linebloom_table)]
        unsafe {
            (self.insert)(blocks, h, check)
        }
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(not(linebloom_table))]
        unsafe {
            on_fixed_backend!(self, insert(blocks, h, check))
        }
    }

    /// Delete one matching fingerprint.
    ///
    /// # Safety
    ///
    /// As for [`QuotientProbe::insert`].
    #[inline]
    pub(crate) unsafe fn remove(self, blocks: &mut [Block], h: u64) -> bool {
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(linebloom_table)]
        unsafe {
            (self.remove)(blocks, h)
        }
        // SAFETY: forwarded contract, as in `contains`.
        #[cfg(not(linebloom_table))]
        unsafe {
            on_fixed_backend!(self, remove(blocks, h))
        }
    }
}

/// A vector quotient filter kernel: its name and, where the target chooses kernels at
/// run time, its entry points for both tag widths.
///
/// Obtained only from [`available`], [`by_name`] or [`detect`], which return kernels
/// this CPU runs; a filter takes one with `VectorQuotientFilter::with_kernel`.
pub struct QuotientKernel {
    /// The kernel's name (`scalar`, `portable`, `avx2`, `avx2-bmi2`, `avx512`, `neon`),
    /// after the main instruction set it uses; what each needs is in the module docs'
    /// table, which is not always what the Bloom kernel of the same name needs
    /// (`avx512` here also needs AVX-512BW and BMI2, `avx2-bmi2` is `avx2` with BMI2's
    /// `pdep`).
    pub name: &'static str,
    #[cfg(linebloom_table)]
    eight: QuotientProbe,
    #[cfg(linebloom_table)]
    sixteen: QuotientProbe,
    /// The backend's select over many words, for [`select_sum`].
    #[cfg(linebloom_table)]
    select_sum: unsafe fn(&[u64]) -> u64,
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
            #[cfg(linebloom_portable)]
            portable: core::ptr::eq(self, &portable::KERNEL),
            #[cfg(not(linebloom_portable))]
            portable: false,
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

/// How many fingerprints equal to `hash`'s its two blocks hold, counted with the scalar
/// backend (a count is rare beside lookups: no kernel table carries it). `blocks` is a
/// filter's: even in number, at least 2, every one well formed.
pub(crate) fn count(blocks: &[Block], hash: u64, tag_bits: u32) -> u32 {
    use scheme::{Eight, Sixteen};
    if tag_bits == 8 {
        // SAFETY: the scalar backend needs no CPU feature; the caller passes a filter's
        // blocks.
        unsafe { generic::count::<Eight, scalar::Scalar>(blocks, hash) }
    } else {
        // SAFETY: as above.
        unsafe { generic::count::<Sixteen, scalar::Scalar>(blocks, hash) }
    }
}

/// Σ `select(word, rank)` over `words`, each with rank
/// `(popcount · (word >> 59)) >> 5` (a set bit the select finds, varying per word),
/// through `kernel`'s select alone: what `benches`' `quotient_select` times to compare
/// `pdep` with the broadword select. A benchmark hook, not a filter operation; only
/// where the target chooses kernels at run time.
#[cfg(linebloom_table)]
#[doc(hidden)]
#[must_use]
pub fn select_sum(kernel: &QuotientKernel, words: &[u64]) -> u64 {
    // SAFETY: a `&QuotientKernel` comes only from `available`, `by_name` or `detect`
    // (the struct has private fields), which return kernels this CPU runs.
    unsafe { (kernel.select_sum)(words) }
}

/// Defines a backend's `static KERNEL` from its name and [`TagOps`] type: the entry
/// points are [`generic`]'s functions under the given `#[target_feature]` attributes.
#[cfg(linebloom_table)]
macro_rules! quotient_kernel {
    ($name:expr, $ops:ty $(, #[$attr:meta])*) => {
        /// This backend's kernel.
        pub(crate) static KERNEL: $crate::arch::quotient::QuotientKernel =
            $crate::arch::quotient::QuotientKernel {
                name: $name,
                eight: $crate::arch::quotient::QuotientProbe {
                    contains: contains::<$crate::arch::quotient::scheme::Eight>,
                    contains_batch: contains_batch::<$crate::arch::quotient::scheme::Eight>,
                    insert: insert::<$crate::arch::quotient::scheme::Eight>,
                    remove: remove::<$crate::arch::quotient::scheme::Eight>,
                },
                sixteen: $crate::arch::quotient::QuotientProbe {
                    contains: contains::<$crate::arch::quotient::scheme::Sixteen>,
                    contains_batch: contains_batch::<$crate::arch::quotient::scheme::Sixteen>,
                    insert: insert::<$crate::arch::quotient::scheme::Sixteen>,
                    remove: remove::<$crate::arch::quotient::scheme::Sixteen>,
                },
                select_sum,
            };

        /// # Safety
        ///
        /// Only on a CPU with this backend's features.
        $(#[$attr])*
        unsafe fn select_sum(words: &[u64]) -> u64 {
            words
                .iter()
                .map(|&word| {
                    let rank = (word.count_ones() * (word >> 59) as u32) >> 5;
                    // SAFETY: this function runs with the backend's features.
                    u64::from(unsafe {
                        <$ops as $crate::arch::quotient::TagOps>::select(word, rank)
                    })
                })
                .sum()
        }

        /// # Safety
        ///
        /// Only on a CPU with this backend's features; `blocks.len()` even, ≥ 2.
        $(#[$attr])*
        unsafe fn contains<W: $crate::arch::quotient::scheme::Width>(
            blocks: &[$crate::block::Block],
            h: u64,
        ) -> bool {
            // SAFETY: forwarded contract; this function runs with the backend's features.
            unsafe { $crate::arch::quotient::generic::contains::<W, $ops>(blocks, h) }
        }

        /// # Safety
        ///
        /// As for `contains`; `hashes.len() == out.len()`.
        $(#[$attr])*
        unsafe fn contains_batch<W: $crate::arch::quotient::scheme::Width>(
            blocks: &[$crate::block::Block],
            hashes: &[u64],
            out: &mut [bool],
        ) {
            // SAFETY: forwarded contract; this function runs with the backend's features.
            unsafe {
                $crate::arch::quotient::generic::contains_batch::<W, $ops>(blocks, hashes, out)
            }
        }

        /// # Safety
        ///
        /// As for `contains`; every block well formed.
        $(#[$attr])*
        unsafe fn insert<W: $crate::arch::quotient::scheme::Width>(
            blocks: &mut [$crate::block::Block],
            h: u64,
            check: bool,
        ) -> $crate::arch::quotient::Insertion {
            // SAFETY: forwarded contract; this function runs with the backend's features.
            unsafe { $crate::arch::quotient::generic::insert::<W, $ops>(blocks, h, check) }
        }

        /// # Safety
        ///
        /// As for `insert`.
        $(#[$attr])*
        unsafe fn remove<W: $crate::arch::quotient::scheme::Width>(
            blocks: &mut [$crate::block::Block],
            h: u64,
        ) -> bool {
            // SAFETY: forwarded contract; this function runs with the backend's features.
            unsafe { $crate::arch::quotient::generic::remove::<W, $ops>(blocks, h) }
        }
    };
}

/// Where the build fixes the kernels, a backend's kernel is its name: the probes call
/// [`generic`] directly (see [`QuotientProbe`]).
#[cfg(not(linebloom_table))]
macro_rules! quotient_kernel {
    ($name:expr, $ops:ty $(, #[$attr:meta])*) => {
        /// This backend's kernel.
        pub(crate) static KERNEL: $crate::arch::quotient::QuotientKernel =
            $crate::arch::quotient::QuotientKernel { name: $name };
    };
}
pub(crate) use quotient_kernel;

/// Every quotient kernel compiled for this target, scalar first and the preferred last.
static KERNELS: KernelSet<QuotientKernel> = KernelSet::new(&[
    Compiled(&scalar::KERNEL, always),
    #[cfg(linebloom_portable)]
    Compiled(&portable::KERNEL, always),
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Compiled(&avx2::KERNEL, cpu::quotient_avx2),
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Compiled(&avx2_bmi2::KERNEL, cpu::quotient_avx2_bmi2),
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Compiled(&avx512::KERNEL, cpu::quotient_avx512),
    #[cfg(all(target_arch = "aarch64", not(miri)))]
    Compiled(&neon::KERNEL, always),
]);

selection!(QuotientKernel, "quotient kernel");
