//! The vector quotient filter's kernels: a block's tag compare and the metadata select,
//! per instruction set, under one per-key algorithm (`generic`), chosen at run time.
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
//! `pdep` is microcoded on AMD before Zen 3 (hundreds of cycles), and every such CPU has
//! AVX2 but not AVX-512; so the AVX2 kernel selects without it, and the AVX-512 kernel
//! (Intel, and AMD from Zen 4) with it. `avx2-bmi2` is the AVX2 kernel with `pdep`, for
//! the CPUs with BMI2 and no AVX-512BW whose `pdep` is fast (Intel from Haswell, AMD
//! Zen 3): detection reads the vendor and family from CPUID and leaves it out on AMD
//! and Hygon before family 19h. `benches/README.md` ("Select") has the measured
//! cost of each select on the reference machine.
//!
//! Detection checks exactly the features a kernel's `#[target_feature]` enables. A
//! [`QuotientKernel`] can only be obtained from [`available`], [`by_name`] or
//! [`detect`], so calling its entry points is safe. Every kernel gives bit-identical
//! blocks and answers (`tests/quotient.rs`).

mod generic;
mod scalar;
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

use crate::block::Block;
use core::sync::atomic::AtomicPtr;

/// What a backend supplies: the compare and the select. Everything else is
/// [`generic`].
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
    /// has no such bit or `rank` is 64 or more. Derived from [`TagOps::select`]; `pdep`
    /// backends answer it in one instruction.
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
}

/// The single-key entry points of one tag width.
#[derive(Clone, Copy)]
pub(crate) struct QuotientProbe {
    /// Is the fingerprint in either block?
    pub(crate) contains: unsafe fn(&[Block], u64) -> bool,
    /// Store the fingerprint (look first when the flag is set).
    pub(crate) insert: unsafe fn(&mut [Block], u64, bool) -> Insertion,
    /// Delete one matching fingerprint.
    pub(crate) remove: unsafe fn(&mut [Block], u64) -> bool,
}

/// A vector quotient filter kernel: its entry points for both tag widths, and its name.
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
    pub(crate) eight: QuotientProbe,
    pub(crate) sixteen: QuotientProbe,
    /// The backend's select over many words, for [`QuotientKernel::select_sum`].
    pub(crate) select_sum: unsafe fn(&[u64]) -> u64,
}

impl QuotientKernel {
    /// The entry points for `tag_bits`-bit tags (8 or 16).
    pub(crate) fn probe(&self, tag_bits: u32) -> QuotientProbe {
        if tag_bits == 8 {
            self.eight
        } else {
            self.sixteen
        }
    }

    /// Σ `select(word, rank)` over `words`, each with rank
    /// `(popcount · (word >> 59)) >> 5` (a set bit the select finds, varying per word),
    /// through this kernel's select alone: what `benches`' `quotient_select` times to
    /// compare `pdep` with the broadword select. Not a filter operation.
    #[doc(hidden)]
    #[must_use]
    pub fn select_sum(&self, words: &[u64]) -> u64 {
        // SAFETY: a `&QuotientKernel` comes only from `available`, `by_name` or
        // `detect` (the struct has private fields), which return kernels this CPU runs.
        unsafe { (self.select_sum)(words) }
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

/// Defines a backend's `static KERNEL` from its [`TagOps`] type: the six entry points
/// are [`generic`]'s functions under the given `#[target_feature]` attributes.
macro_rules! quotient_kernel {
    ($name:expr, $ops:ty $(, #[$attr:meta])*) => {
        /// This backend's kernel.
        pub(crate) static KERNEL: $crate::arch::quotient::QuotientKernel =
            $crate::arch::quotient::QuotientKernel {
                name: $name,
                eight: $crate::arch::quotient::QuotientProbe {
                    contains: contains::<$crate::quotient::scheme::Eight>,
                    insert: insert::<$crate::quotient::scheme::Eight>,
                    remove: remove::<$crate::quotient::scheme::Eight>,
                },
                sixteen: $crate::arch::quotient::QuotientProbe {
                    contains: contains::<$crate::quotient::scheme::Sixteen>,
                    insert: insert::<$crate::quotient::scheme::Sixteen>,
                    remove: remove::<$crate::quotient::scheme::Sixteen>,
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
        unsafe fn contains<W: $crate::quotient::scheme::Width>(
            blocks: &[$crate::block::Block],
            h: u64,
        ) -> bool {
            // SAFETY: forwarded contract; this function runs with the backend's features.
            unsafe { $crate::arch::quotient::generic::contains::<W, $ops>(blocks, h) }
        }

        /// # Safety
        ///
        /// As for `contains`; every block well formed.
        $(#[$attr])*
        unsafe fn insert<W: $crate::quotient::scheme::Width>(
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
        unsafe fn remove<W: $crate::quotient::scheme::Width>(
            blocks: &mut [$crate::block::Block],
            h: u64,
        ) -> bool {
            // SAFETY: forwarded contract; this function runs with the backend's features.
            unsafe { $crate::arch::quotient::generic::remove::<W, $ops>(blocks, h) }
        }
    };
}
pub(crate) use quotient_kernel;

/// Every quotient kernel this CPU runs, scalar first and the preferred one last.
pub fn available() -> impl Iterator<Item = &'static QuotientKernel> {
    let simd: [Option<&'static QuotientKernel>; 3] = {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            [avx2::kernel(), avx2_bmi2::kernel(), avx512::kernel()]
        }
        #[cfg(all(target_arch = "aarch64", not(miri)))]
        {
            [Some(&neon::KERNEL), None, None]
        }
        #[cfg(not(any(
            all(target_arch = "x86_64", not(miri)),
            all(target_arch = "aarch64", not(miri))
        )))]
        {
            [None, None, None]
        }
    };
    #[cfg(linebloom_portable)]
    let portable = Some(&portable::KERNEL);
    #[cfg(not(linebloom_portable))]
    let portable = None;
    [Some(&scalar::KERNEL), portable]
        .into_iter()
        .chain(simd)
        .flatten()
}

/// Names of every quotient kernel compiled into this build for this architecture
/// (whether or not this CPU runs it), for tests that must say which were skipped.
#[must_use]
pub fn compiled() -> &'static [&'static str] {
    &[
        "scalar",
        #[cfg(linebloom_portable)]
        "portable",
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        "avx2",
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        "avx2-bmi2",
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        "avx512",
        #[cfg(all(target_arch = "aarch64", not(miri)))]
        "neon",
    ]
}

static ACTIVE: AtomicPtr<QuotientKernel> = AtomicPtr::new(core::ptr::null_mut());

/// The best quotient kernel this CPU runs (detected once, then cached).
pub fn detect() -> &'static QuotientKernel {
    super::detect::cached(&ACTIVE, || {
        if cfg!(miri) {
            &scalar::KERNEL
        } else {
            available().last().unwrap_or(&scalar::KERNEL)
        }
    })
}

/// The quotient kernel called `name`, if this CPU runs it.
#[must_use]
pub fn by_name(name: &str) -> Option<&'static QuotientKernel> {
    available().find(|k| k.name == name)
}
