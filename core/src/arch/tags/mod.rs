//! The vector quotient filter's kernel set, apart from what each instruction set
//! supplies: how a block holds its tags and where a key goes (`scheme`), the per-key
//! algorithm written once (`generic`), the selects, and the kernel types. Per
//! instruction set, a block's tag compare and the metadata select ([`TagOps`]) are in
//! that instruction set's file (`arch/scalar.rs`, `arch/x86_64/avx2.rs`, …), beside its
//! Bloom kernel; the list of kernels and their selection is `arch/quotient.rs`.
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
//! enables. A [`QuotientKernel`] can only be obtained from
//! [`available`](crate::arch::quotient::available),
//! [`by_name`](crate::arch::quotient::by_name) or
//! [`detect`](crate::arch::quotient::detect), so calling its entry points is safe. Every kernel gives
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
//! | `kernel.rs` | [`TagOps`], [`QuotientKernel`] and its per-width entry points |

pub(crate) mod generic;
mod kernel;
pub(crate) mod scheme;
pub(crate) mod select;

pub(crate) use generic::Insertion;
pub use kernel::QuotientKernel;
pub(crate) use kernel::{QuotientProbe, TagOps};
