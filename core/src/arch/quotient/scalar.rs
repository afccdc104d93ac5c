//! The scalar quotient kernel: the reference every other kernel must match, and the
//! kernel of targets without SIMD. The compare is SWAR on the block's words (a lane
//! equal to the tag is a zero lane of `word ^ broadcast(tag)`, found exactly with the
//! carry-free zero test), read from the words, so it is the same on every endianness;
//! the select is [`broadword`].

use super::TagOps;
use super::quotient_kernel;
use super::select::broadword;
use crate::arch::registry::names;
use crate::block::Block;

/// The lanes of `word` that are zero, as each lane's top bit (`high` holds the top bit
/// of every lane). Exact: no carry crosses a lane, so no lane is reported by mistake.
#[inline(always)]
fn zero_lanes(word: u64, high: u64) -> u64 {
    let low7 = !high;
    !(((word & low7).wrapping_add(low7)) | word | low7)
}

/// The scalar operations.
pub(crate) struct Scalar;

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

quotient_kernel!(names::SCALAR, Scalar);

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
