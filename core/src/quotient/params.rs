//! [`QuotientParams`]: the shape of a [`crate::VectorQuotientFilter`] (its block count
//! and tag width), sized for a capacity and a target rate, with the two numbers it
//! promises: the chance that its capacity of inserts ever finds a full pair of blocks,
//! and its false-positive rate.
//!
//! # Capacity: how full before an insert can fail
//!
//! An insert fails only when both of the key's blocks are full; where a key goes is
//! [`QuotientParams::first_block_below`]'s rule. [`QuotientParams::capacity`] is the
//! most keys for which the chance that one of them is refused is at most
//! [`FULL_CHANCE`] (1e-9), read from two tables:
//!
//! * [`SMALL_CAPACITY`], **2 to 62 blocks**: for 2 to 10 blocks the exact answer of the
//!   Markov chain of the blocks' loads; for 12 to 62 the answer of a chain proved to
//!   refuse at least as often as the scheme's (1 to 3 keys below the exact one where
//!   both are known).
//! * [`MAX_LOAD`], **from 64 blocks**: for 64 to 8192 blocks measured by multilevel
//!   splitting, with two standard errors to spare; from 16 384 blocks the fluid limit of
//!   two-choice insertion at a tenth of [`FULL_CHANCE`], a margin chosen from the
//!   measured trend, not proved, and measured to hold at 16 384 to 131 072 blocks. Past
//!   131 072 blocks it is neither proved nor measured.
//!
//! A block count between two powers of two takes the lower load of the two rows. 8-bit
//! tags reach 91.8% of their slots at a million blocks, 16-bit tags 86.3%.
//!
//! The derivation of each table, and the tests that rebuild it (the longest by hand,
//! for hours), are in `core/tests/quotient_capacity/`. The lab's `quotient_load`
//! experiment fills filters past their capacity until the first refusal, and reports
//! where that happened against this bound.
//!
//! # The false-positive rate
//!
//! A non-member matches a block when one of the tags in its bucket there equals its
//! tag. A block holding `L` tags has a given bucket-and-tag pair with probability at
//! most `L / (BUCKETS · 2^r)`, and over a random non-member the two blocks hold `2n/m`
//! tags on average whatever the loads, so every filter with `n` tags has a rate of at
//! most [`fpr_bound`](QuotientParams::fpr_bound) `= 2n / (m · BUCKETS · 2^r)`, not only
//! on average. The rate at even loads is
//! [`expected_fpr`](QuotientParams::expected_fpr) `= 1 − (1 − 1/(BUCKETS · 2^r))^(2n/m)`,
//! a little below the bound; the filter's `estimated_fpr` computes it from each block's
//! own load.

use crate::block::Block;
use crate::params::{MAX_BLOCKS, MAX_BYTES, ParamsError, largest_meeting, sizing_goal};

/// The chance, at most, that a filter sized by [`QuotientParams::for_capacity`] or
/// [`QuotientParams::for_fpr`] refuses one of its first `capacity` inserts: exact for 2
/// to 10 blocks, proved for 12 to 62, measured (an estimate with two standard errors to
/// spare) for 64 to 8192, and from 16 384 blocks the fluid limit's estimate with a
/// margin of ten, measured to hold at 16 384 to 131 072 (see the module docs for what
/// backs each).
pub const FULL_CHANCE: f64 = 1e-9;

/// The tag widths a vector quotient filter has.
pub const TAG_BITS: [u32; 2] = [8, 16];

/// The largest load (tags per slot, in units of 1e-4) at which a filter of `m = 2^j`
/// blocks refuses one of its first `load · slots` keys with chance at most
/// [`FULL_CHANCE`], for `j = 6..=34` (row `j − 6`): column 0 for 8-bit tags (48 slots),
/// column 1 for 16-bit tags (28 slots). Rows for 64 to 8192 blocks are measured by
/// multilevel splitting, the most keys at which the estimated number of refusals plus
/// two standard errors is at or below [`FULL_CHANCE`] (rebuilt by the tests
/// `the_load_of_64_blocks_is_measured` and, by hand,
/// `the_loads_from_128_blocks_are_measured`). Rows from 16 384 blocks solve the fluid
/// limit of two-choice insertion for `m · s_{SLOTS+1} ≤ FULL_CHANCE / 10`, by RK4 at
/// steps of 0.005 keys per block (rebuilt by `the_load_table_solves_the_fluid_limit`).
/// The module docs say how far each is known; the tests named here are in
/// `core/tests/quotient_capacity/`.
pub const MAX_LOAD: [[u16; 2]; 29] = [
    [9202, 8699],
    [9230, 8716],
    [9243, 8740],
    [9255, 8746],
    [9253, 8751],
    [9253, 8744],
    [9249, 8743],
    [9245, 8732],
    [9220, 8689],
    [9214, 8680],
    [9208, 8669],
    [9202, 8658],
    [9196, 8649],
    [9190, 8641],
    [9185, 8630],
    [9180, 8621],
    [9175, 8612],
    [9169, 8603],
    [9164, 8594],
    [9159, 8585],
    [9154, 8578],
    [9148, 8569],
    [9143, 8560],
    [9139, 8553],
    [9134, 8544],
    [9130, 8537],
    [9125, 8528],
    [9120, 8521],
    [9116, 8514],
];

/// The capacities of the shapes below 64 blocks, 2 to 62 blocks (row `m/2 − 1`):
/// column 0 for 8-bit tags, 1 for 16-bit tags. The fluid limit (see the module docs)
/// understates how often so few blocks crowd: 4 blocks filled to its load refuse about
/// once in two million fills, 12 to 16 blocks with chance up to 8.2e-7. Rows for 2 to
/// 10 blocks are exact: the most keys for which the Markov chain of the blocks' loads,
/// under the scheme's choice of blocks and its emptier-block rule, refuses with chance
/// at most [`FULL_CHANCE`] (rebuilt by the tests `the_small_capacities_are_exact` and,
/// by hand, `the_capacities_of_eight_and_ten_blocks_are_exact`). Rows for 12 to 62
/// blocks come from a chain proved to refuse at least as often as the scheme's, in
/// which the blocks drawn twice as often are always the fullest two by two (rebuilt by
/// `the_capacities_from_12_blocks_are_bounded` and, by hand,
/// `the_capacities_from_20_blocks_are_bounded`): so their chance is at most
/// [`FULL_CHANCE`], and where both are known, at 4 to 10 blocks, that chain's
/// capacity is 1 to 3 keys below the exact one. Two blocks share every key, so they
/// fill every slot. The tests named here are in `core/tests/quotient_capacity/`.
pub const SMALL_CAPACITY: [[u16; 2]; 31] = [
    [96, 56],
    [173, 93],
    [262, 142],
    [351, 191],
    [440, 240],
    [525, 285],
    [614, 334],
    [702, 382],
    [791, 431],
    [880, 480],
    [969, 529],
    [1057, 577],
    [1146, 626],
    [1235, 675],
    [1324, 724],
    [1413, 773],
    [1501, 822],
    [1590, 870],
    [1679, 919],
    [1768, 968],
    [1856, 1017],
    [1945, 1066],
    [2034, 1115],
    [2122, 1163],
    [2211, 1212],
    [2299, 1261],
    [2387, 1310],
    [2476, 1358],
    [2564, 1407],
    [2652, 1456],
    [2740, 1505],
];

/// The block count of [`MAX_LOAD`]'s first row, `2^MAX_LOAD_FROM`.
const MAX_LOAD_FROM: u32 = 6;

/// The load [`QuotientParams::capacity`] takes for `blocks` blocks (at least 64) from
/// [`MAX_LOAD`]'s `column`: the lower of the rows of the powers of two on either side,
/// since the table knows only powers of two and the load rises with the block count up
/// to a few thousand blocks and falls after; past the table, its last row.
fn max_load(blocks: usize, column: usize) -> u16 {
    let row = |log2: u32| (log2.saturating_sub(MAX_LOAD_FROM) as usize).min(MAX_LOAD.len() - 1);
    let below = usize::BITS - 1 - blocks.leading_zeros();
    let above = below + u32::from(!blocks.is_power_of_two());
    MAX_LOAD[row(below)][column].min(MAX_LOAD[row(above)][column])
}

/// Shape of a [`crate::VectorQuotientFilter`]: an even number of 64-byte blocks (at
/// least 2) and the tag width, 8 or 16 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QuotientParams {
    blocks: usize,
    tag_bits: u32,
}

impl QuotientParams {
    /// Raw shape: `blocks` blocks of `tag_bits`-bit tags.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidTagBits`] unless `tag_bits` is 8 or 16,
    /// [`ParamsError::ZeroBlocks`] for zero blocks, [`ParamsError::OddBlocks`] for an
    /// odd count, [`ParamsError::TooLarge`] past [`MAX_BLOCKS`].
    ///
    /// ```
    /// use linebloom::QuotientParams;
    /// let p = QuotientParams::new(16, 8)?;
    /// assert_eq!((p.blocks(), p.tag_bits(), p.slots(), p.bytes()), (16, 8, 768, 1024));
    /// assert!(QuotientParams::new(15, 8).is_err());
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn new(blocks: u64, tag_bits: u32) -> Result<Self, ParamsError> {
        if !TAG_BITS.contains(&tag_bits) {
            return Err(ParamsError::InvalidTagBits(tag_bits));
        }
        if blocks == 0 {
            return Err(ParamsError::ZeroBlocks);
        }
        if blocks > MAX_BLOCKS || blocks > usize::MAX as u64 / Block::BYTES as u64 {
            return Err(ParamsError::TooLarge {
                bytes: blocks.saturating_mul(Block::BYTES as u64),
            });
        }
        if !blocks.is_multiple_of(2) {
            return Err(ParamsError::OddBlocks(blocks));
        }
        Ok(QuotientParams {
            blocks: blocks as usize,
            tag_bits,
        })
    }

    /// The smallest filter of `tag_bits`-bit tags whose chance of refusing one of its
    /// first `capacity` inserts is at most [`FULL_CHANCE`] (see the module docs).
    ///
    /// # Errors
    ///
    /// [`ParamsError::ZeroCapacity`], [`ParamsError::InvalidTagBits`] or
    /// [`ParamsError::TooLarge`].
    ///
    /// ```
    /// use linebloom::QuotientParams;
    /// let p = QuotientParams::for_capacity(1_000_000, 8)?;
    /// assert!(p.capacity() >= 1_000_000);
    /// assert!(p.bits_per_key(1_000_000) < 11.6);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn for_capacity(capacity: u64, tag_bits: u32) -> Result<Self, ParamsError> {
        if capacity == 0 {
            return Err(ParamsError::ZeroCapacity);
        }
        QuotientParams::at_least(capacity, tag_bits, 2)
    }

    /// The smallest filter of `tag_bits`-bit tags with at least `min_blocks` blocks
    /// whose [`capacity`](Self::capacity) is at least `capacity`. Below 64 blocks the
    /// counts are tried in turn. From 64 blocks every count strictly between two powers
    /// of two takes the same load, so there the capacity grows with the count and each
    /// stretch's first count that holds the keys is computed; each power of two, which
    /// takes its own row, is tried on its own.
    fn at_least(capacity: u64, tag_bits: u32, min_blocks: u64) -> Result<Self, ParamsError> {
        let slots = slots_per_block(tag_bits) as u128;
        let mut blocks = min_blocks.max(2).next_multiple_of(2);
        loop {
            let p = QuotientParams::new(blocks, tag_bits)?;
            if p.capacity() >= capacity {
                return Ok(p);
            }
            if blocks < 1 << MAX_LOAD_FROM || blocks.is_power_of_two() {
                blocks += 2;
                continue;
            }
            let next_power = blocks.next_power_of_two();
            let load = max_load(p.blocks, usize::from(tag_bits == 16)) as u128;
            // capacity() = ⌊blocks · slots · load / 10⁴⌋ ≥ capacity.
            let needed = (capacity as u128 * 10_000).div_ceil(slots * load);
            let needed = u64::try_from(needed).unwrap_or(u64::MAX).min(next_power);
            blocks = needed.next_multiple_of(2).clamp(blocks + 2, next_power);
        }
    }

    /// The smallest filter for `capacity` keys at false-positive rate `fpr`: for each
    /// tag width, enough blocks for the capacity ([`for_capacity`](Self::for_capacity))
    /// and for [`fpr_bound`](Self::fpr_bound) to stay at or below
    /// [`crate::params::SIZING_MARGIN`]` · fpr`; then the width that needs fewer blocks.
    ///
    /// Every filter then keeps its rate at or below `0.95 · fpr` up to `capacity` keys
    /// (the bound holds for each filter, not only on average). 8-bit tags serve rates
    /// from about 0.25% up (11.6 bits per key at 0.5% and above), 16-bit tags those
    /// below (about 21 bits per key down to 0.003%, more below).
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidFpr`], [`ParamsError::ZeroCapacity`],
    /// [`ParamsError::CapacityTooLarge`], [`ParamsError::FprBelowHashFloor`] or
    /// [`ParamsError::TooLarge`].
    ///
    /// ```
    /// use linebloom::QuotientParams;
    /// let p = QuotientParams::for_fpr(1_000_000, 0.01)?;
    /// assert_eq!(p.tag_bits(), 8);
    /// assert!(p.fpr_bound(1_000_000) <= 0.0095);
    /// assert_eq!(QuotientParams::for_fpr(1_000_000, 0.0001)?.tag_bits(), 16);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        let goal = sizing_goal(capacity, fpr)?;
        let mut best: Option<QuotientParams> = None;
        for tag_bits in TAG_BITS {
            // fpr_bound(n) = 2n / (m · BUCKETS · 2^r) ≤ goal.
            let tag_space = buckets_per_block(tag_bits) as f64 * (1u64 << tag_bits) as f64;
            let for_rate = libm::ceil(2.0 * capacity as f64 / (tag_space * goal));
            let candidate = if for_rate > MAX_BLOCKS as f64 {
                Err(ParamsError::TooLarge {
                    bytes: (for_rate * Block::BYTES as f64) as u64,
                })
            } else {
                // Enough blocks for the rate, then for the capacity at their count.
                QuotientParams::at_least(capacity, tag_bits, for_rate as u64)
            };
            match (candidate, best) {
                (Ok(c), Some(b)) if c.blocks >= b.blocks => {}
                (Ok(c), _) => best = Some(c),
                (Err(e), None) if tag_bits == TAG_BITS[1] => return Err(e),
                (Err(_), _) => {}
            }
        }
        best.ok_or(ParamsError::TooLarge {
            bytes: MAX_BYTES.saturating_add(1),
        })
    }

    /// Number of 64-byte blocks.
    #[must_use]
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Bits per tag: 8 or 16.
    #[must_use]
    pub fn tag_bits(&self) -> u32 {
        self.tag_bits
    }

    /// Tag slots per block: 48 (8-bit tags) or 28 (16-bit).
    #[must_use]
    pub fn slots_per_block(&self) -> u32 {
        slots_per_block(self.tag_bits)
    }

    /// Buckets per block: 80 (8-bit tags) or 36 (16-bit).
    #[must_use]
    pub fn buckets_per_block(&self) -> u32 {
        buckets_per_block(self.tag_bits)
    }

    /// The load below which an insert puts a key in its first block whatever the second
    /// holds (else in the emptier of the two): 36 of 48 slots for 8-bit tags and 18 of
    /// 28 for 16-bit in filters of 64 blocks or more, 0 (always the emptier) in smaller
    /// ones. [`capacity`](Self::capacity) is derived for this rule.
    ///
    /// ```
    /// use linebloom::QuotientParams;
    /// assert_eq!(QuotientParams::new(64, 8)?.first_block_below(), 36);
    /// assert_eq!(QuotientParams::new(62, 16)?.first_block_below(), 0);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn first_block_below(&self) -> u32 {
        use crate::arch::quotient::scheme::{self, Eight, Sixteen};
        if self.tag_bits == 8 {
            scheme::first_block_below::<Eight>(self.blocks)
        } else {
            scheme::first_block_below::<Sixteen>(self.blocks)
        }
    }

    /// Tag slots in the whole filter: the most tags it can ever hold.
    #[must_use]
    pub fn slots(&self) -> u64 {
        self.blocks as u64 * self.slots_per_block() as u64
    }

    /// Size in bytes.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.blocks * Block::BYTES
    }

    /// Size in bits.
    #[must_use]
    pub fn bits(&self) -> u64 {
        self.bytes() as u64 * 8
    }

    /// Bits of memory per key at `n` keys.
    #[must_use]
    pub fn bits_per_key(&self, n: u64) -> f64 {
        self.bits() as f64 / n as f64
    }

    /// The most keys for which the chance that an insert finds both of its blocks full
    /// is at most [`FULL_CHANCE`] (see the module docs).
    ///
    /// ```
    /// use linebloom::QuotientParams;
    /// let p = QuotientParams::new(1 << 20, 8)?;
    /// assert_eq!(p.capacity(), (48 << 20) * 9185 / 10_000);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn capacity(&self) -> u64 {
        let column = usize::from(self.tag_bits == 16);
        if let Some(small) = SMALL_CAPACITY.get(self.blocks / 2 - 1) {
            return small[column] as u64;
        }
        let load = max_load(self.blocks, column) as u128;
        (self.slots() as u128 * load / 10_000) as u64
    }

    /// The false-positive rate at `n` keys spread as evenly over the blocks as whole
    /// tags allow: `1 − (1 − ε)^(2n/m)` with `ε = 1/(BUCKETS · 2^r)` where `n/m` is a
    /// whole number, interpolated between blocks of `⌊n/m⌋` and `⌈n/m⌉` tags otherwise
    /// (see the module docs).
    ///
    /// ```
    /// use linebloom::QuotientParams;
    /// let p = QuotientParams::new(1000, 8)?;
    /// let at_94 = p.expected_fpr((0.94 * p.slots() as f64) as u64);
    /// assert!((at_94 - 0.0044).abs() < 0.0001); // ≈ 2 · (48/80) · 0.94 · 2⁻⁸
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn expected_fpr(&self, n: u64) -> f64 {
        // A block of L tags matches with x(L) = 1 − (1 − ε)^L, written −expm1(L·log1p(−ε))
        // so that nothing cancels. Loads as even as whole tags allow: a fraction f of
        // the blocks holds ⌈n/m⌉, the rest ⌊n/m⌋; two distinct blocks miss with
        // (1 − x̄)², x̄ their average.
        let log_miss = libm::log1p(-1.0 / self.tag_space());
        let x = |tags: f64| -libm::expm1(tags * log_miss);
        let m = self.blocks as u64;
        let (whole, f) = (n / m, (n % m) as f64 / m as f64);
        let mean = (1.0 - f) * x(whole as f64) + f * x(whole as f64 + 1.0);
        2.0 * mean - mean * mean
    }

    /// The rate no filter of this shape holding `n` tags exceeds, whatever its loads:
    /// `2n / (m · BUCKETS · 2^r)`, capped at 1 (see the module docs).
    #[must_use]
    pub fn fpr_bound(&self, n: u64) -> f64 {
        (2.0 * n as f64 / (self.blocks as f64 * self.tag_space())).min(1.0)
    }

    /// The most keys this shape holds with [`expected_fpr`](Self::expected_fpr) at most
    /// `fpr`, and at most [`capacity`](Self::capacity).
    ///
    /// ```
    /// use linebloom::QuotientParams;
    /// let p = QuotientParams::for_fpr(10_000, 0.01)?;
    /// assert!(p.capacity_at(0.01) >= 10_000);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn capacity_at(&self, fpr: f64) -> u64 {
        largest_meeting(|n| self.expected_fpr(n) <= fpr).min(self.capacity())
    }

    /// Bucket-and-tag pairs a block can tell apart: `BUCKETS · 2^r`.
    fn tag_space(&self) -> f64 {
        self.buckets_per_block() as f64 * (1u64 << self.tag_bits) as f64
    }
}

fn slots_per_block(tag_bits: u32) -> u32 {
    if tag_bits == 8 { 48 } else { 28 }
}

fn buckets_per_block(tag_bits: u32) -> u32 {
    if tag_bits == 8 { 80 } else { 36 }
}
