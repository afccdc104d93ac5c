//! Shared test helpers: a naive model of the blocked scheme, written from the spec in
//! `src/hash.rs` without using the crate's code, and seeded key generators.
#![allow(dead_code)]

use rand::{RngExt, SeedableRng, rngs::StdRng};

/// MurmurHash3 fmix64, re-typed from the spec.
pub fn fmix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ceb9fe1a85ec53);
    x ^ (x >> 33)
}

/// The bit indices (0 .. 512·blocks) a hash sets, straight from the spec.
pub fn naive_bits(h: u64, blocks: usize, k: u32) -> Vec<usize> {
    let block = ((h as u128 * blocks as u128) >> 64) as usize;
    let g1 = fmix(h);
    let r = (g1 >> 48) & 7;
    let mut bits = Vec::new();
    for w in 0..8u64 {
        if (w + 8 - r) % 8 < k as u64 {
            bits.push(block * 512 + (w as usize) * 64 + ((g1 >> (6 * w)) & 63) as usize);
        }
    }
    if k > 8 {
        let g2 = fmix(g1 ^ 0x243f6a8885a308d3);
        for w in 0..(k as u64 - 8) {
            bits.push(block * 512 + (w as usize) * 64 + ((g2 >> (6 * w)) & 63) as usize);
        }
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
