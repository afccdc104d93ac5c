//! Select without `pdep`: the position of a word's set bit number `r`, from byte
//! population counts and their prefix sums (a broadword select, after Vigna, "Broadword
//! Implementation of Rank/Select Queries", 2008), then a table inside one byte.
//! Plain integer code: the select of every kernel but `avx512` and `avx2-bmi2`, and of
//! every target without BMI2 (Cortex-M0 has no population count either, so the sums are
//! by hand). Those two use [`pdep`].

/// `0x01` in every byte.
const ONES: u64 = 0x0101_0101_0101_0101;
/// `0x80` in every byte.
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Position of set bit number `rank` (from 0) of `word`; 64 when there is none.
///
/// ```text
/// bytes  = population count of each byte of word           (SWAR)
/// prefix = bytes · 0x0101…01: byte i holds the count of bytes 0..=i
/// byte   = how many prefixes are ≤ rank                    (SWAR compare, summed)
/// then IN_BYTE[that byte][rank − the prefix before it]
/// ```
#[inline(always)]
#[must_use]
pub(crate) fn broadword(word: u64, rank: u32) -> u32 {
    if rank >= 64 {
        return 64;
    }
    let mut counts = word - ((word >> 1) & 0x5555_5555_5555_5555);
    counts = (counts & 0x3333_3333_3333_3333) + ((counts >> 2) & 0x3333_3333_3333_3333);
    counts = (counts + (counts >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    let prefix = counts.wrapping_mul(ONES);
    // High bit of byte i set where prefix_i ≤ rank (both below 128, so no borrow
    // crosses a byte): the bytes wholly before the one that holds the bit.
    let at_most = ((rank as u64 * ONES) | HIGHS).wrapping_sub(prefix) & HIGHS;
    let byte = ((at_most >> 7).wrapping_mul(ONES) >> 56) as u32;
    if byte >= 8 {
        return 64;
    }
    let before = if byte == 0 {
        0
    } else {
        ((prefix >> (8 * byte - 8)) & 0xff) as u32
    };
    let bits = ((word >> (8 * byte)) & 0xff) as usize;
    8 * byte + IN_BYTE[bits][((rank - before) & 7) as usize] as u32
}

/// `IN_BYTE[b][r]`: the position of set bit number `r` of the byte `b` (8 where there
/// is none): the last step of [`broadword`], a 2 KiB table instead of a loop whose
/// trip count the branch predictor cannot guess.
static IN_BYTE: [[u8; 8]; 256] = {
    let mut table = [[8u8; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let (mut bit, mut rank) = (0, 0);
        while bit < 8 {
            if byte >> bit & 1 == 1 {
                table[byte][rank] = bit as u8;
                rank += 1;
            }
            bit += 1;
        }
        byte += 1;
    }
    table
};

/// Position of set bit number `rank` (from 0) of `word` with BMI2: `pdep` deposits the
/// rank's bit on the rank-th set bit of `word` (nothing when there is none), `tzcnt`
/// reads its position (64 for nothing).
///
/// # Safety
///
/// Only on a CPU with BMI1 and BMI2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[must_use]
pub(crate) unsafe fn pdep(word: u64, rank: u32) -> u32 {
    use core::arch::x86_64::{_pdep_u64, _tzcnt_u64};
    // SAFETY: BMI1 and BMI2 per this function's contract.
    unsafe { _tzcnt_u64(_pdep_u64(1u64.wrapping_shl(rank), word)) as u32 }
}

/// Set bit number `rank` (from 0) of `word` alone with BMI2 (`pdep` of the rank's bit):
/// 0 when there is none; `rank` below 64 (a larger one is taken modulo 64).
///
/// # Safety
///
/// Only on a CPU with BMI2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[must_use]
pub(crate) unsafe fn pdep_bit(word: u64, rank: u32) -> u64 {
    use core::arch::x86_64::_pdep_u64;
    // SAFETY: BMI2 per this function's contract.
    unsafe { _pdep_u64(1u64.wrapping_shl(rank), word) }
}

/// The select and the one-bit deposit of a backend with BMI2, written once for the
/// `avx2-bmi2` and `avx512` kernels: expands to those items of its `impl TagOps`.
#[cfg(target_arch = "x86_64")]
macro_rules! pdep_tag_ops {
    () => {
        #[inline(always)]
        unsafe fn select(word: u64, rank: u32) -> u32 {
            // SAFETY: BMI1 and BMI2 per the TagOps contract.
            unsafe { $crate::arch::tags::select::pdep(word, rank) }
        }

        const FAST_DEPOSIT: bool = true;

        #[inline(always)]
        unsafe fn deposit(word: u64, rank: u32) -> u64 {
            // SAFETY: BMI2 per the TagOps contract.
            unsafe { $crate::arch::tags::select::pdep_bit(word, rank) }
        }
    };
}
#[cfg(target_arch = "x86_64")]
pub(crate) use pdep_tag_ops;

#[cfg(test)]
mod tests {
    use super::broadword;

    /// The definition: clear `rank` lowest set bits, then the lowest remaining one.
    fn naive(mut word: u64, rank: u32) -> u32 {
        for _ in 0..rank {
            if word == 0 {
                return 64;
            }
            word &= word - 1;
        }
        word.trailing_zeros()
    }

    #[test]
    fn broadword_select_matches_the_definition() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let count = if cfg!(miri) { 40 } else { 3000 };
        let words = (0..count).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Sparse and dense words as well as uniform ones.
            match x % 3 {
                0 => x,
                1 => x & (x >> 1) & (x >> 2),
                _ => x | (x >> 3) | (x << 5),
            }
        });
        for word in words.chain([0, u64::MAX, 1, 1 << 63, 0xff00]) {
            for rank in 0..=64 {
                assert_eq!(broadword(word, rank), naive(word, rank), "{word:#x} {rank}");
            }
        }
    }
}
