//! Shared test helpers: a naive model of the blocked scheme, written from the spec in
//! `src/pattern.rs` without using the crate's code, seeded key generators, and aligned
//! copies of encodings for `view`.
#![allow(dead_code)]

use rand::{RngExt, SeedableRng, rngs::StdRng};

/// The scheme's 32-bit salts, re-typed from the spec (Parquet's eight, then SHA-256's
/// K[0..8] with the low bit set) and the rotation salt (K[8] | 1).
const SALTS: [u32; 16] = [
    0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
    0x428a2f99, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a5, 0xab1c5ed5,
];
const ROTATION_SALT: u32 = 0xd807aa99;

/// The top `bits` bits of the 32-bit product `x · salt`, computed in 64-bit arithmetic
/// (a different route from the crate's `wrapping_mul` on `u32`).
fn top_bits(x: u64, salt: u32, bits: u32) -> u64 {
    (((x & 0xffff_ffff) * salt as u64) & 0xffff_ffff) >> (32 - bits)
}

/// The bit indices (0 .. 512·blocks) a hash sets, straight from the spec.
pub fn naive_bits(h: u64, blocks: usize, k: u32) -> Vec<usize> {
    let block = ((h as u128 * blocks as u128) >> 64) as usize;
    let r = top_bits(h, ROTATION_SALT, 3);
    let mut bits = Vec::new();
    for w in 0..8u64 {
        if k >= 8 || (w + 8 - r) % 8 < k as u64 {
            let pos = top_bits(h, SALTS[w as usize], 6) as usize;
            bits.push(block * 512 + (w as usize) * 64 + pos);
        }
    }
    for w in 0..(k.saturating_sub(8) as usize) {
        bits.push(block * 512 + w * 64 + top_bits(h, SALTS[8 + w], 6) as usize);
    }
    bits
}

/// A `Vec<bool>` Bloom filter following the spec bit by bit.
pub struct NaiveFilter {
    pub bits: Vec<bool>,
    pub blocks: usize,
    pub k: u32,
}

impl NaiveFilter {
    pub fn new(blocks: usize, k: u32) -> Self {
        NaiveFilter {
            bits: vec![false; blocks * 512],
            blocks,
            k,
        }
    }
    /// True if some bit was clear.
    pub fn insert_hash(&mut self, h: u64) -> bool {
        let mut fresh = false;
        for b in naive_bits(h, self.blocks, self.k) {
            fresh |= !self.bits[b];
            self.bits[b] = true;
        }
        fresh
    }
    pub fn contains_hash(&self, h: u64) -> bool {
        naive_bits(h, self.blocks, self.k)
            .into_iter()
            .all(|b| self.bits[b])
    }
    /// The model's bits as blocks of little-endian words.
    pub fn words(&self) -> Vec<[u64; 8]> {
        (0..self.blocks)
            .map(|b| {
                let mut w = [0u64; 8];
                for i in 0..512 {
                    if self.bits[b * 512 + i] {
                        w[i / 64] |= 1 << (i % 64);
                    }
                }
                w
            })
            .collect()
    }
}

/// `n` distinct-with-overwhelming-probability member keys (even) and a generator of
/// non-member keys (odd): disjoint by construction.
pub fn members(seed: u64, n: usize) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| rng.random::<u64>() & !1).collect()
}

pub fn non_members(seed: u64) -> impl Iterator<Item = u64> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5555_5555_5555_5555);
    std::iter::repeat_with(move || rng.random::<u64>() | 1)
}

/// Release builds run the full statistical sizes; debug builds a reduced set.
pub const RELEASE: bool = !cfg!(debug_assertions);

/// `bytes` copied into 64-byte aligned blocks, as a memory map would give them (what
/// `view` borrows): the copy's first `bytes.len()` bytes are `bytes`, the rest zero.
pub fn aligned_copy(bytes: &[u8]) -> Vec<linebloom::Block> {
    let mut blocks = vec![linebloom::Block::ZERO; bytes.len().div_ceil(linebloom::Block::BYTES)];
    linebloom::block::blocks_as_bytes_mut(&mut blocks)[..bytes.len()].copy_from_slice(bytes);
    blocks
}

/// Rewrites an encoding's trailing checksum (XXH3-64, seed 0) after an edit, so that the
/// edit reaches the check under test.
pub fn reseal(bytes: &mut [u8]) {
    use linebloom::KeyHasher;
    let body = bytes.len() - 8;
    let sum = linebloom::Xxh3::default().hash_bytes(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum.to_le_bytes());
}

/// Blocks of the static atomic filter in the suite: 32 KiB, a fixed size (it is a
/// const parameter), which holds the suite's up to 1,500 keys at about 0.01%.
pub const STATIC_BLOCKS: usize = 512;
