//! The scalar kernel of both sets: plain `u64` code, always compiled, the reference
//! every other kernel must match bit for bit, and the kernel of targets without SIMD
//! (Cortex-M, RISC-V).
//!
//! **Bloom filters** (`BlockOps`):
//!
//! ```text
//! contains(block, h, k):  for each (w, pos) of the key: if block[w] bit pos is 0, return false
//!                         return true
//! insert(block, h, k):    fresh = false
//!                         for each (w, pos): fresh |= block[w] bit pos is 0; set it
//!                         return fresh
//! ```
//!
//! The positions come from [`crate::pattern::all_positions`], where the scheme is
//! specified, one word at a time: no 64-byte mask is built, so on a 32-bit
//! microcontroller the probe lives in registers (the `footprint` experiment reports its
//! stack), and a query stops at the first clear bit. Batches use the shared hashing and
//! prefetching pipeline; prefetch is a plain hint, so even this kernel benefits.
//!
//! **The quotient filter** (`TagOps`): the compare is SWAR on the block's words (a lane
//! equal to the tag is a zero lane of `word ^ broadcast(tag)`, found exactly with the
//! carry-free zero test), read from the words, so it is the same on every endianness;
//! the select is [`broadword`].

use super::bloom::BlockOps;
use super::table::kernel_tables;
use super::tags::TagOps;
use super::tags::select::broadword;
use crate::block::Block;
use crate::pattern::{all_positions, for_each_position};

/// The scalar operations, for both kernel sets.
pub(crate) struct Scalar;

impl BlockOps for Scalar {
    #[inline(always)]
    unsafe fn contains(block: &Block, h: u64, k: u32) -> bool {
        all_positions(h, k, |word, field| block.0[word] >> field & 1 == 1)
    }

    #[inline(always)]
    unsafe fn insert(block: &mut Block, h: u64, k: u32) -> bool {
        let mut fresh = false;
        for_each_position(h, k, |word, field| {
            fresh |= block.0[word] >> field & 1 == 0;
            block.0[word] |= 1 << field;
        });
        fresh
    }
}

/// The lanes of `word` that are zero, as each lane's top bit (`high` holds the top bit
/// of every lane). Exact: no carry crosses a lane, so no lane is reported by mistake.
#[inline(always)]
fn zero_lanes(word: u64, high: u64) -> u64 {
    let low7 = !high;
    !(((word & low7).wrapping_add(low7)) | word | low7)
}

impl TagOps for Scalar {
    #[inline(always)]
    unsafe fn lanes8(block: &Block, tag: u8) -> u64 {
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let broadcast = tag as u64 * 0x0101_0101_0101_0101;
        let mut lanes = 0;
        for (i, &word) in block.0.iter().enumerate() {
            // One bit per byte at bit 8j + 7; the multiply gathers them into the top
            // byte, lane j at bit 56 + j (no two partial products meet there).
            let zero = zero_lanes(word ^ broadcast, HIGH) >> 7;
            lanes |= (zero.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * i);
        }
        lanes
    }

    #[inline(always)]
    unsafe fn lanes16(block: &Block, tag: u16) -> u32 {
        const HIGH: u64 = 0x8000_8000_8000_8000;
        let broadcast = tag as u64 * 0x0001_0001_0001_0001;
        let mut lanes = 0;
        for (i, &word) in block.0.iter().enumerate() {
            // Lane j's bit at 16j; gathered into bits 60..64, lane j at 60 + j.
            let zero = zero_lanes(word ^ broadcast, HIGH) >> 15;
            lanes |= ((zero.wrapping_mul(0x1000_2000_4000_8000) >> 60) as u32) << (4 * i);
        }
        lanes
    }

    #[inline(always)]
    unsafe fn select(word: u64, rank: u32) -> u32 {
        broadword(word, rank)
    }
}

kernel_tables! {
    backend: Scalar,
    bloom: Scalar, inline_k8: none;
    quotient: Scalar;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_match_the_bytes() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        for round in 0..if cfg!(miri) { 20 } else { 500u64 } {
            let mut block = Block::ZERO;
            for w in block.0.iter_mut() {
                x = crate::pattern::fmix64(x + round);
                // Many equal lanes: small values.
                *w = if round % 2 == 0 {
                    x & 0x0303_0303_0303_0303
                } else {
                    x & 0x0001_0003_0000_0002
                };
            }
            let bytes = block.to_le_bytes();
            for tag in 0..4u8 {
                // SAFETY: the scalar kernel needs no CPU feature.
                let got = unsafe { Scalar::lanes8(&block, tag) };
                let want = (0..64).fold(0u64, |m, i| m | ((bytes[i] == tag) as u64) << i);
                assert_eq!(got, want);
                // SAFETY: as above.
                let got = unsafe { Scalar::lanes16(&block, tag as u16) };
                let want = (0..32).fold(0u32, |m, i| {
                    let lane = u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]);
                    m | ((lane == tag as u16) as u32) << i
                });
                assert_eq!(got, want);
            }
        }
    }
}
