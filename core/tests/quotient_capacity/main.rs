//! How the vector quotient filter's capacity tables (`linebloom::quotient::SMALL_CAPACITY`
//! and `MAX_LOAD`) were derived, as tests that rebuild them: the cheap rows in every
//! optimised x86_64 run, the rest by hand (each `#[ignore]` says how long it takes and
//! its doc comment how to run it). The tables and a short note live in
//! `core/src/quotient/params.rs`; this is the research apparatus behind them.
//!
//! An insert fails only when both of the key's blocks are full. In filters of 64 blocks
//! or more a key goes to its first block while that holds fewer than `T` tags (36 of 48
//! slots for 8-bit tags, 18 of 28 for 16-bit), else to the emptier of its two; in
//! smaller ones always to the emptier (`T = 0` below). `QuotientParams::capacity` is
//! the most keys for which the chance that one of them is refused is at most
//! `FULL_CHANCE` (1e-9). How that is known depends on the size, one file each:
//!
//! * `chain.rs`, 2 to 62 blocks (`SMALL_CAPACITY`): Markov chains of the blocks' loads;
//! * `splitting.rs`, 64 to 8192 blocks (the first rows of `MAX_LOAD`): multilevel
//!   splitting of simulated fills;
//! * `fluid.rs`, from 16 384 blocks: the fluid limit of two-choice insertion.
//!
//! Why the threshold `T`: under the fluid limit, always taking the emptier block would
//! hold half a point more, but then only two thirds of the keys sit in their first
//! block, against 89% and 85%, and a lookup that finds a key in its first block reads
//! one block instead of two.

#![cfg(feature = "alloc")]

use linebloom::quotient::{FULL_CHANCE, MAX_LOAD, SMALL_CAPACITY};
use linebloom::{QuotientParams, VectorQuotientFilter};

mod chain;
mod fluid;
mod splitting;

/// The scheme's first-block threshold for `blocks` blocks of `slots` slots.
fn first_block_below(blocks: usize, slots: u32) -> u32 {
    let tag_bits = if slots == 48 { 8 } else { 16 };
    QuotientParams::new(blocks as u64, tag_bits)
        .unwrap()
        .first_block_below()
}

/// Tag slots in a block of `tag_bits`-bit tags.
fn slots_per_block(tag_bits: u32) -> u32 {
    QuotientParams::new(2, tag_bits).unwrap().slots_per_block()
}

/// The fewest blocks for which an insert prefers the key's first block (checked by
/// `the_scheme_prefers_first_blocks_from_64`).
const FIRST_BLOCK_FROM: usize = 64;

/// The block count of [`MAX_LOAD`]'s first row, `2^MAX_LOAD_FROM` (checked by
/// `the_tables_meet_at_64_blocks`).
const MAX_LOAD_FROM: u32 = 6;

/// How many of `fills` filters of `blocks` blocks of `tag_bits`-bit tags, each
/// cleared and given `n` random hashes from a generator seeded with `seed`, refuse
/// one of them.
fn refused_fills(blocks: usize, tag_bits: u32, n: usize, fills: u32, seed: u64) -> u32 {
    use rand::{RngExt, SeedableRng, rngs::StdRng};
    let params = QuotientParams::new(blocks as u64, tag_bits).unwrap();
    let mut filter = VectorQuotientFilter::new(params);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut refused = 0;
    for _ in 0..fills {
        filter.clear();
        if (0..n).any(|_| filter.add_hash(rng.random()).is_err()) {
            refused += 1;
        }
    }
    refused
}

/// The scheme this file's chains model: every key to the emptier block below
/// [`FIRST_BLOCK_FROM`] blocks, the first block below 36 of 48 (18 of 28) tags from there.
#[test]
fn the_scheme_prefers_first_blocks_from_64() {
    for (tag_bits, below) in [(8u32, 36u32), (16, 18)] {
        let slots = slots_per_block(tag_bits);
        assert_eq!(first_block_below(FIRST_BLOCK_FROM - 2, slots), 0);
        assert_eq!(first_block_below(FIRST_BLOCK_FROM, slots), below);
        assert_eq!(first_block_below(1 << 20, slots), below);
    }
}

/// [`SMALL_CAPACITY`] ends at 62 blocks and [`MAX_LOAD`]'s first row is
/// `2^MAX_LOAD_FROM` blocks, where `QuotientParams::capacity` reads it.
#[test]
fn the_tables_meet_at_64_blocks() {
    for (column, tag_bits) in [8u32, 16].into_iter().enumerate() {
        let capacity = |blocks: u64| QuotientParams::new(blocks, tag_bits).unwrap().capacity();
        let last_small = 2 * SMALL_CAPACITY.len() as u64;
        assert_eq!(last_small + 2, 1 << MAX_LOAD_FROM);
        assert_eq!(
            capacity(last_small),
            u64::from(SMALL_CAPACITY.last().unwrap()[column])
        );
        let slots = u64::from(slots_per_block(tag_bits)) << MAX_LOAD_FROM;
        assert_eq!(
            capacity(1 << MAX_LOAD_FROM),
            slots * u64::from(MAX_LOAD[0][column]) / 10_000
        );
    }
}
