//! [`QuotientParams`]: the shape of a [`crate::VectorQuotientFilter`] (its block count
//! and tag width), sized for a capacity and a target rate, with the two numbers it
//! promises: the chance that its capacity of inserts ever finds a full pair of blocks,
//! and its false-positive rate.
//!
//! # Capacity: how full before an insert can fail
//!
//! An insert fails only when both of the key's blocks are full. In filters of 64 blocks
//! or more a key goes to its first block while that holds fewer than `T` tags (36 of 48
//! slots for 8-bit tags, 18 of 28 for 16-bit), else to the emptier of its two; in
//! smaller ones always to the emptier (`T = 0` below). [`QuotientParams::capacity`] is
//! the most keys for which the chance that one of them is refused is at most
//! [`FULL_CHANCE`] (1e-9). How that is known depends on the size:
//!
//! * **2 to 62 blocks** ([`SMALL_CAPACITY`]): for 2 to 10 blocks the exact answer of
//!   the Markov chain of the blocks' loads; for 12 to 62 the answer of a chain proved to
//!   refuse at least as often as the scheme's (its state is a few counts of the sorted
//!   loads, so it can be walked that far; at 4 to 10 blocks its capacity is 1 to 3 keys
//!   below the exact one).
//! * **64 to 8192 blocks** (the first rows of [`MAX_LOAD`]): measured. Plain fills
//!   cannot see a chance of 1e-9, so the scheme's fills are walked by multilevel
//!   splitting: the walks that reach a crowded state (a block one tag short of full,
//!   two such, one of them full, two full) are continued from there many times over,
//!   and the fractions that reach each next state, times the chance of a refusal summed
//!   over the keys that follow, estimate the expected number of refusals without bias.
//!   A row is the most keys at which six independent estimates put it, plus two
//!   standard errors, at or below [`FULL_CHANCE`]. The estimate agrees with 40 000
//!   fills of a real 64-block filter where the chance is near 2e-3 (a test).
//! * **From 16 384 blocks**: the fluid limit of two-choice insertion, at a tenth of
//!   [`FULL_CHANCE`]. In the limit of many blocks the fraction `s_i(t)` of blocks holding
//!   at least `i` tags after `t·m` inserts follows `ds_i/dt = (s_{i−1} − s_i)(1 + s_T)`
//!   for `i ≤ T` (a block below `T` takes every key that picks it first, and those
//!   whose first block is past `T`) and `ds_i/dt = s_{i−1}² − s_i²` above (Mitzenmacher,
//!   "The Power of Two Choices in Randomized Load Balancing", 2001). A filter that never
//!   refused could only hold `SLOTS + 1` tags in a block where this one refuses, so the
//!   limit puts the chance of a refusal within `n` inserts at `m · s_{SLOTS+1}(n/m)`.
//!   Finite filters crowd more often than that: at the limit's own capacity the
//!   estimate above is 63 times [`FULL_CHANCE`] at 64 blocks of 8-bit tags (33 of
//!   16-bit), 2.4 at 1024 blocks, and 1.2 to 1.6 at 2048 to 8192 blocks (the test
//!   `the_fluid_limit_understates_refusals_within_its_margin`, run by hand), so the
//!   rows past the measured ones take the limit at a tenth of the chance (about 0.2
//!   points of load for 8-bit tags, 0.35 for 16-bit). That margin is chosen from the
//!   measured trend, not proved. Splitting still reaches the first four of these rows:
//!   filled to their capacity, 16 384 blocks refuse with an estimated 0.105 ± 0.013
//!   times [`FULL_CHANCE`] (8-bit tags; 0.107 ± 0.003 for 16-bit), 32 768 blocks with
//!   0.108 ± 0.013 (0.097 ± 0.009), 65 536 blocks with 0.089 ± 0.004 (0.099 ± 0.009)
//!   and 131 072 blocks with 0.092 ± 0.004 (0.086 ± 0.004), where the limit says 0.1:
//!   the means sit within 14% of the limit, and even the mean plus two standard errors
//!   (0.134 at most) leaves a factor of seven to the promise
//!   (`the_fluid_rows_hold_where_splitting_reaches`, run by hand). Past 131 072 blocks
//!   it is neither proved nor measured.
//!
//! A block count between two powers of two takes the lower load of the two rows. 8-bit
//! tags reach 91.8% of their slots at a million blocks, 16-bit tags 86.3%. Under the
//! fluid limit, always taking the emptier block would hold half a point more, but then
//! only two thirds of the keys sit in their first block, against 89% and 85%, and a
//! lookup that finds a key in its first block reads one block instead of two.
//!
//! The lab's `quotient_load` experiment fills filters past their capacity until the
//! first refusal, and reports where that happened against this bound.
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

use super::search::{largest_meeting, sizing_goal};
use super::{MAX_BLOCKS, MAX_BYTES, ParamsError};
use crate::block::Block;

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
/// `the_loads_from_64_blocks_are_measured` and, by hand,
/// `the_loads_from_512_blocks_are_measured`). Rows from 16 384 blocks solve the fluid
/// limit of two-choice insertion for `m · s_{SLOTS+1} ≤ FULL_CHANCE / 10`, by RK4 at
/// steps of 0.005 keys per block (rebuilt by `the_load_table_solves_the_fluid_limit`).
/// The module docs say why, and how far each is known.
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
/// by hand, `the_capacity_of_ten_blocks_is_exact`). Rows for 12 to 62 blocks come from
/// a chain proved to refuse at least as often as the scheme's, in which the blocks
/// drawn twice as often are always the fullest two by two (rebuilt by
/// `the_capacities_from_12_blocks_are_bounded` and, by hand,
/// `the_capacities_from_32_blocks_are_bounded`): so their chance is at most
/// [`FULL_CHANCE`], and where both are known, at 4 to 10 blocks, that chain's
/// capacity is 1 to 3 keys below the exact one. Two blocks share every key, so they
/// fill every slot.
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

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;

    /// The scheme's first-block threshold for `blocks` blocks of `slots` slots.
    fn first_block_below(blocks: usize, slots: u32) -> u32 {
        use crate::arch::quotient::scheme::{self, Eight, Sixteen, Width};
        if slots == Eight::SLOTS {
            scheme::first_block_below::<Eight>(blocks)
        } else {
            scheme::first_block_below::<Sixteen>(blocks)
        }
    }

    /// `s_{SLOTS+1}` along the fluid limit with first-block threshold `below`, by RK4 at
    /// the table's step.
    fn tail_levels(slots: usize, below: u32, until: f64) -> impl Iterator<Item = (f64, f64)> {
        let levels = slots + 3;
        let below = below as usize;
        let mut s = [0.0f64; 64];
        s[0] = 1.0;
        let step = 0.005;
        let derivative = move |s: &[f64; 64]| {
            let mut d = [0.0; 64];
            for i in 1..levels {
                d[i] = if i - 1 < below {
                    (s[i - 1] - s[i]) * (1.0 + s[below])
                } else {
                    s[i - 1] * s[i - 1] - s[i] * s[i]
                };
            }
            d
        };
        let mut t = 0.0;
        core::iter::from_fn(move || {
            if t >= until {
                return None;
            }
            let k1 = derivative(&s);
            let k2 = derivative(&core::array::from_fn(|i| s[i] + step / 2.0 * k1[i]));
            let k3 = derivative(&core::array::from_fn(|i| s[i] + step / 2.0 * k2[i]));
            let k4 = derivative(&core::array::from_fn(|i| s[i] + step * k3[i]));
            for i in 0..64 {
                s[i] += step / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            }
            t += step;
            Some((t, s[slots + 1]))
        })
    }

    /// The chains below walk an even number of blocks up to `most`, which put every key
    /// in the emptier of its blocks.
    fn assert_walkable(blocks: usize, slots: u64, most: usize) {
        assert!(blocks >= 2 && blocks.is_multiple_of(2) && blocks <= most);
        assert_eq!(
            first_block_below(blocks, slots as u32),
            0,
            "the emptier-block rule"
        );
    }

    /// The chance that a filter of `blocks` blocks (even, below
    /// [`FIRST_BLOCK_FROM`](crate::arch::quotient::scheme::FIRST_BLOCK_FROM), at most 20)
    /// of `slots` slots refuses one of its first `n` inserts, for `n` = 0, 1, …: the
    /// Markov chain of the blocks' loads under the scheme's choice of blocks and its
    /// emptier-block rule.
    ///
    /// The scheme draws the first block uniformly and the second as `first + d`, `d`
    /// uniform on `0..m` with `0` sent to `m/2` (for a uniform hash the pair draw is
    /// uniform and independent of the first block). So each unordered pair of blocks at
    /// distance `m/2` (a couple: `x` and `x + m/2`) is drawn with chance `4/m²` and every
    /// other pair with `2/m²`: with chance `(m − 1)/m` a pair uniform over all pairs, else
    /// a couple uniform over the `m/2` couples. The key goes to the emptier block of the
    /// pair, on a tie to the first, which is either with chance ½. That law is unchanged
    /// by any permutation of the blocks that keeps the couples, so a state is the
    /// multiset of the couples' loads, each couple an unordered pair. States below
    /// `floor` are dropped, so each chance is known between what the kept states
    /// refused and that plus the dropped mass.
    fn refusal_chances(blocks: usize, slots: u64, floor: f64) -> alloc::vec::Vec<Refusal> {
        use alloc::vec::Vec;
        let m = blocks;
        assert_walkable(blocks, slots, 20);
        let full = slots as u8;
        let couples = m / 2;
        // A couple as 12 bits (lower load, higher load); a state as its couples sorted,
        // 12 bits each: at most 10 couples fit a u128.
        let couple = |a: u8, b: u8| (a.min(b) as u16) << 6 | a.max(b) as u16;
        let pack = |loads: &[u16]| {
            let mut sorted = loads.to_vec();
            sorted.sort_unstable();
            sorted
                .iter()
                .fold(0u128, |state, &c| state << 12 | c as u128)
        };
        let unpack = |state: u128| -> Vec<u16> {
            (0..couples)
                .rev()
                .map(|i| ((state >> (12 * i)) & 0xfff) as u16)
                .collect()
        };
        let low_high = |c: u16| ((c >> 6) as u8, (c & 63) as u8);
        let uniform = (m - 1) as f64 / m as f64 / (m * (m - 1) / 2) as f64; // a pair
        let antipodal = 2.0 / (m * m) as f64; // a couple, on top of its uniform share
        let mut states: Vec<(u128, f64)> = alloc::vec![(0, 1.0)];
        let (mut refused, mut dropped) = (0.0, 0.0);
        let mut chances = alloc::vec![Refusal {
            at_least: 0.0,
            at_most: 0.0
        }];
        for _ in 0..m as u64 * slots {
            let mut next: Vec<(u128, f64)> = Vec::with_capacity(states.len() * couples);
            for &(state, p) in &states {
                let loads = unpack(state);
                // Blocks at each load, and above it.
                let mut at = [0u32; 64];
                for &c in &loads {
                    let (a, b) = low_high(c);
                    at[a as usize] += 1;
                    at[b as usize] += 1;
                }
                let mut above = [0u32; 65];
                for l in (0..64).rev() {
                    above[l] = above[l + 1] + at[l];
                }
                // Both blocks of the pair full: refused.
                let both_full = at[full as usize] as f64;
                refused += p * uniform * both_full * (both_full - 1.0) / 2.0;
                // Each run of equal couples once, times its length.
                let mut i = 0;
                while i < couples {
                    let same = loads[i..].iter().take_while(|&&c| c == loads[i]).count();
                    let (a, b) = low_high(loads[i]);
                    if a == full {
                        refused += p * antipodal * same as f64;
                    }
                    // The lower block of the couple, then the higher (once if equal).
                    for (load, other, twins) in
                        [(a, b, if a == b { 2.0 } else { 1.0 }), (b, a, 1.0)]
                            .into_iter()
                            .take(if a == b { 1 } else { 2 })
                    {
                        if load == full {
                            continue;
                        }
                        let l = load as usize;
                        // Drawn with a block above it, or with one as loaded and first.
                        let by_pair = uniform * (above[l + 1] as f64 + 0.5 * (at[l] - 1) as f64);
                        let by_couple = antipodal
                            * match load.cmp(&other) {
                                core::cmp::Ordering::Less => 1.0,
                                core::cmp::Ordering::Equal => 0.5,
                                core::cmp::Ordering::Greater => 0.0,
                            };
                        let w = (by_pair + by_couple) * same as f64 * twins;
                        if w > 0.0 {
                            let mut after = loads.clone();
                            after[i] = couple(load + 1, other);
                            next.push((pack(&after), p * w));
                        }
                    }
                    i += same;
                }
            }
            dropped += merge_states(&mut next, &mut states, floor);
            chances.push(Refusal {
                at_least: refused,
                at_most: refused + dropped,
            });
        }
        chances
    }

    /// An upper bound on the chance that a filter of `blocks` blocks (even, below
    /// [`FIRST_BLOCK_FROM`](crate::arch::quotient::scheme::FIRST_BLOCK_FROM)) of `slots`
    /// slots refuses one of its first `n` inserts, for `n` = 0, 1, … until it passes
    /// `stop`: a chain whose state is a few counts of sorted loads, which reaches 62
    /// blocks where the couples of [`refusal_chances`] stop at 10.
    ///
    /// Its key goes, with chance `(m − 1)/m`, to the emptier block of a pair drawn
    /// uniformly, as the scheme's does; else to the emptier of the blocks ranked
    /// `2u − 1` and `2u` from the fullest, `u` uniform on `1..=m/2`: as if the couples
    /// were the fullest blocks two by two, the worst they can be.
    ///
    /// Why that bounds the scheme. Sort both chains' loads from the fullest; `x ≼ y`
    /// (`y` majorizes `x`) when every prefix sum of `x` is at most `y`'s and the totals
    /// are equal. *If `x ≼ y`, a key added to `x` at rank `r` and to `y` at rank
    /// `s ≤ r` keeps `x ≼ y`*: re-sorted, each key moves to the first rank of its run
    /// of equal loads, `r' ≤ r` and `s' ≤ s`, and only a prefix `k` with
    /// `r' ≤ k < s'` gains in `x` alone; if its sums were equal, `x_k ≥ y_k` (the
    /// sums before) and `x_{k+1} ≤ y_{k+1}` (the sums after), where
    /// `x_k = x_{k+1}` (both in `r`'s run), so `y_k = y_{k+1}` and the sums are equal
    /// at `k + 1` too, up to `k + 1 = s'`, where `y_{s'−1} > y_{s'}` (the first of
    /// its run) contradicts it. Now couple the chains a key at a time: the uniform
    /// pairs draw the same two ranks in both, and both keys go to the emptier rank.
    /// The scheme's couple draw puts its key at the emptier rank of a couple, within
    /// the `k` fullest with chance (couples among the `k` fullest) / `(m/2)`
    /// `≤ ⌊k/2⌋ / (m/2)`, which is the chance for this chain's rank, so the two can be
    /// drawn with this chain's rank `s ≤ r`. So the scheme's loads stay majorized by
    /// this chain's, and when the scheme refuses (its key's block at rank `r` is
    /// full, so are its `r` fullest), this chain's `r` fullest hold `r · slots` tags
    /// too, so they are full and its key at rank `s ≤ r` is refused as well.
    ///
    /// The same coupling, with `s = r`, shows that this chain from `y` refuses at least
    /// as often as from any `x ≼ y`; so after each key the state may be replaced by one
    /// that majorizes it. The walk does so to keep few states: the blocks more than
    /// [`WINDOW`] below the fullest are packed, as many as their tags fill, at the
    /// highest load below the window, the rest at one remainder and zero. Then a
    /// state is the fullest load and the counts at the `WINDOW + 1` loads from it
    /// down; the packed blocks follow from how many keys are in. At 12 to 20 blocks the
    /// packing moves the capacity by at most a key from that of the walk of all the
    /// sorted loads. States below `floor` are dropped and counted as refused.
    fn refusal_bound(blocks: usize, slots: u64, floor: f64, stop: f64) -> alloc::vec::Vec<f64> {
        use alloc::vec::Vec;
        assert_walkable(
            blocks,
            slots,
            crate::arch::quotient::scheme::FIRST_BLOCK_FROM - 2,
        );
        let m = blocks;
        let pairs = (m * (m - 1) / 2) as f64;
        // A state: the fullest load in byte 0, then the counts of blocks at each load
        // from it down, a byte each.
        let count = |state: u64, d: usize| ((state >> (8 + 8 * d)) & 0xff) as usize;
        let mut states: Vec<(u64, f64)> = alloc::vec![((m as u64) << 8, 1.0)];
        let mut next: Vec<(u64, f64)> = Vec::new();
        let mut bound = 0.0;
        let mut chances = alloc::vec![0.0];
        let mut keys = 0;
        while bound <= stop && keys < m as u64 * slots {
            next.clear();
            for &(state, p) in &states {
                let top = state & 0xff;
                let (windowed, held) = (0..=WINDOW.min(top as usize)).fold((0, 0), |(n, t), d| {
                    (
                        n + count(state, d),
                        t + count(state, d) as u64 * (top - d as u64),
                    )
                });
                // The packed blocks, all at `cap` or below: `full` at `cap`, one at
                // `rest`, `zeros` empty.
                let (packed, cap) = (m - windowed, top.saturating_sub(WINDOW as u64 + 1));
                let tags = keys - held;
                assert!(
                    tags <= packed as u64 * cap,
                    "the packed blocks hold their tags"
                );
                let full = tags
                    .checked_div(cap)
                    .map_or(packed, |f| (f as usize).min(packed));
                let rest = tags - full as u64 * cap;
                let zeros = packed - full - usize::from(full < packed);
                // The runs of equal loads from the emptiest up, and the state after a
                // key lands in each: (load, blocks, state after).
                let mut runs = [(0u64, 0usize, 0u64); WINDOW + 4];
                runs[0] = (0, zeros, state);
                runs[1] = (rest, usize::from(full < packed), state);
                // A packed block at `cap` moves into the window's lowest load.
                runs[2] = (cap, full, state + (1 << (8 + 8 * WINDOW)));
                for d in (0..=WINDOW.min(top as usize)).rev() {
                    let after = if d == 0 {
                        // A new fullest load: the window moves up one, and its lowest
                        // load joins the packed blocks.
                        let moved = (state & !0xff) << 8 & !(0xff << (8 + 8 * (WINDOW + 1)));
                        (moved | (top + 1) | 1 << 8) - (1 << 16)
                    } else {
                        state - (1 << (8 + 8 * d)) + (1 << (8 + 8 * (d - 1)))
                    };
                    runs[3 + WINDOW - d] = (top - d as u64, count(state, d), after);
                }
                let mut below = 0;
                for (load, same, after) in runs {
                    if same == 0 {
                        continue;
                    }
                    let (i, j) = (below, below + same);
                    below = j;
                    let same = same as f64;
                    // A pair's emptier block is in the run: both in it, or one above.
                    let by_pair = (same * (same - 1.0) / 2.0 + same * (m - j) as f64) / pairs;
                    // Ranks 2u from the fullest are the even places from the emptiest.
                    let by_couple = (j.div_ceil(2) - i.div_ceil(2)) as f64 / (m / 2) as f64;
                    let w = p * ((m - 1) as f64 * by_pair + by_couple) / m as f64;
                    if load == slots {
                        bound += w;
                    } else {
                        next.push((after, w));
                    }
                }
            }
            bound += merge_states(&mut next, &mut states, floor);
            keys += 1;
            chances.push(bound);
        }
        chances
    }

    /// One step's successors `next`, each state's chances summed, into `states`
    /// (sorted), less the states below `floor`, whose total chance it returns.
    fn merge_states<S: Ord + Copy>(
        next: &mut [(S, f64)],
        states: &mut alloc::vec::Vec<(S, f64)>,
        floor: f64,
    ) -> f64 {
        next.sort_unstable_by_key(|&(state, _)| state);
        states.clear();
        for &(state, p) in next.iter() {
            match states.last_mut() {
                Some(last) if last.0 == state => last.1 += p,
                _ => states.push((state, p)),
            }
        }
        let mut dropped = 0.0;
        states.retain(|&(_, p)| {
            if p < floor {
                dropped += p;
            }
            p >= floor
        });
        dropped
    }

    /// The most keys per block at which the fluid limit with first-block threshold
    /// `below` puts `s_{SLOTS+1}` at or below `limit` (at the table's step).
    fn fluid_keys_per_block(slots: usize, below: u32, limit: f64) -> f64 {
        keys_per_block_within(tail_levels(slots, below, 0.97 * slots as f64), limit)
    }

    /// The last keys per block along `path` (from [`tail_levels`]) at which
    /// `s_{SLOTS+1}` is at or below `limit`.
    fn keys_per_block_within(path: impl IntoIterator<Item = (f64, f64)>, limit: f64) -> f64 {
        path.into_iter()
            .take_while(|&(_, tail)| tail <= limit)
            .last()
            .map_or(0.0, |(t, _)| t)
    }

    /// The generator of [`refusal_estimate`]'s walks (wyrand): its rows must come out
    /// the same from every build and platform, so the stream is fixed here.
    struct Wyrand(u64);

    impl Wyrand {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
            let product = self.0 as u128 * (self.0 ^ 0xe703_7ed1_a0b4_28db) as u128;
            (product >> 64) as u64 ^ product as u64
        }

        /// Uniform on `0..k`.
        fn below(&mut self, k: usize) -> usize {
            ((self.next() as u128 * k as u128) >> 64) as usize
        }
    }

    /// A filter's block loads as the scheme fills them: each key's first block uniform,
    /// its second `first + d` with `d` uniform on `0..m` and `0` sent to `m/2` (as
    /// [`refusal_chances`] says), the key in the first block while that holds fewer than
    /// the threshold, else in the emptier (the first on a tie); both full, it is refused
    /// and nothing changes.
    #[derive(Clone)]
    struct Fill {
        loads: alloc::vec::Vec<u8>,
        /// Keys offered so far, refused ones included.
        keys: u64,
        /// `at_least[l]`: the blocks holding at least `l` tags.
        at_least: [u32; 50],
        /// The full blocks.
        full: alloc::vec::Vec<u32>,
    }

    impl Fill {
        fn empty(blocks: usize) -> Self {
            let mut at_least = [0; 50];
            at_least[0] = blocks as u32;
            Fill {
                loads: alloc::vec![0; blocks],
                keys: 0,
                at_least,
                full: alloc::vec::Vec::new(),
            }
        }

        /// Offers one key.
        fn add(&mut self, slots: u8, below: u8, rng: &mut Wyrand) {
            let m = self.loads.len();
            let first = rng.below(m);
            let d = match rng.below(m) {
                0 => m / 2,
                d => d,
            };
            let second = if first + d >= m {
                first + d - m
            } else {
                first + d
            };
            let at_first = self.loads[first];
            let to = if at_first >= below && self.loads[second] < at_first {
                second
            } else {
                first
            };
            self.keys += 1;
            if self.loads[to] < slots {
                self.loads[to] += 1;
                self.at_least[self.loads[to] as usize] += 1;
                if self.loads[to] == slots {
                    self.full.push(to as u32);
                }
            }
        }

        /// The chance that the next key is refused: both its blocks full, which is the
        /// first block full (`1/m` each) and the second another full block (`1/m` each,
        /// `2/m` for its couple).
        fn refusal_chance(&self, slots: u8) -> f64 {
            let m = self.loads.len();
            let full = self.full.len();
            let full_couples = self
                .full
                .iter()
                .filter(|&&b| self.loads[(b as usize + m / 2) % m] == slots)
                .count();
            (full * full.saturating_sub(1) + full_couples) as f64 / (m as f64 * m as f64)
        }

        /// Whether at least `count` blocks hold at least `load` tags, for each pair.
        fn reached(&self, level: &[(u32, u8)]) -> bool {
            level
                .iter()
                .all(|&(count, load)| self.at_least[load as usize] >= count)
        }
    }

    /// The expected number of refusals within the first `horizon − j` keys offered to a
    /// filter of `blocks` blocks of `slots` slots, for `j` in `0..back`, estimated from
    /// `trajectories` walks a stage by multilevel splitting (fixed effort).
    ///
    /// A refusal needs two full blocks, which at a table's capacity is rare (a chance
    /// near 1e-9), so plain fills would never see one. The walks instead pass a ladder of
    /// levels, each implied by the next and by a refusal: a block one tag short of full,
    /// two such, two and one of them full, two full. Stage `k` starts its walks from
    /// states drawn uniformly, with replacement, among those at which the walks of stage
    /// `k − 1` first reached their level, and counts the fraction that reach the next
    /// before `horizon` keys; the product of the fractions estimates the chance of
    /// reaching the last level, without bias. The last stage walks on to `horizon`,
    /// adding each key's [`Fill::refusal_chance`]: the chance of a refusal at a key is
    /// zero until the last level holds, so the product times the mean of those sums
    /// estimates the expected number of refusals, itself at least the chance of one.
    /// Summing only the first `horizon − j` keys gives the earlier counts from the same
    /// walks (they are noisier the further back they reach).
    fn refusal_estimate(
        blocks: usize,
        slots: u8,
        horizon: u64,
        back: usize,
        trajectories: usize,
        seed: u64,
    ) -> alloc::vec::Vec<f64> {
        use alloc::vec::Vec;
        let below = first_block_below(blocks, slots as u32) as u8;
        let s = slots;
        let ladder: [&[(u32, u8)]; 4] = [
            &[(1, s - 1)],
            &[(2, s - 1)],
            &[(2, s - 1), (1, s)],
            &[(2, s)],
        ];
        let mut rng = Wyrand(seed);
        let mut starts = alloc::vec![Fill::empty(blocks)];
        let mut reach = 1.0;
        for level in ladder {
            let mut reached = Vec::new();
            for _ in 0..trajectories {
                let mut fill = starts[rng.below(starts.len())].clone();
                while fill.keys < horizon && !fill.reached(level) {
                    fill.add(slots, below, &mut rng);
                }
                if fill.reached(level) {
                    reached.push(fill);
                }
            }
            reach *= reached.len() as f64 / trajectories as f64;
            if reached.is_empty() {
                return alloc::vec![0.0; back];
            }
            starts = reached;
        }
        // chances[j]: the summed chance of a refusal at key `horizon − j` (1-based).
        let mut chances = alloc::vec![0.0; horizon as usize];
        for _ in 0..trajectories {
            let mut fill = starts[rng.below(starts.len())].clone();
            while fill.keys < horizon {
                chances[(horizon - 1 - fill.keys) as usize] += fill.refusal_chance(slots);
                fill.add(slots, below, &mut rng);
            }
        }
        let scale = reach / trajectories as f64;
        let mut within: f64 = chances.iter().sum();
        (0..back)
            .map(|j| {
                let expected = within * scale;
                within -= chances[j];
                expected
            })
            .collect()
    }

    /// Mean and standard error of `runs` independent [`refusal_estimate`]s (seeds
    /// `seed..seed + runs`), for each of its `back` key counts.
    fn refusal_estimates(
        blocks: usize,
        slots: u8,
        horizon: u64,
        back: usize,
        runs: u64,
        seed: u64,
    ) -> alloc::vec::Vec<(f64, f64)> {
        use alloc::vec::Vec;
        extern crate std;
        // One thread a run, as many at once as the machine has cores (a run holds up to
        // two stages of SPLIT_WALKS fills, 5 GB at 131 072 blocks): each run's
        // arithmetic is the same as alone.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut estimates: Vec<Vec<f64>> = Vec::new();
        for wave in (seed..seed + runs).collect::<Vec<u64>>().chunks(cores) {
            std::thread::scope(|scope| {
                let threads: Vec<_> = wave
                    .iter()
                    .map(|&seed| {
                        scope.spawn(move || {
                            refusal_estimate(blocks, slots, horizon, back, SPLIT_WALKS, seed)
                        })
                    })
                    .collect();
                estimates.extend(threads.into_iter().map(|t| t.join().unwrap()));
            });
        }
        let runs = estimates;
        (0..back)
            .map(|j| {
                let n = runs.len() as f64;
                let mean = runs.iter().map(|run| run[j]).sum::<f64>() / n;
                let spread = runs.iter().map(|run| (run[j] - mean) * (run[j] - mean));
                (mean, libm::sqrt(spread.sum::<f64>() / (n - 1.0) / n))
            })
            .collect()
    }

    /// Walks a stage of [`refusal_estimate`] for the table's rows.
    const SPLIT_WALKS: usize = 20_000;

    /// The most keys at which `estimates` (from [`refusal_estimates`], the first at
    /// `horizon` keys, each next one key fewer) put the mean expected number of
    /// refusals plus two standard errors at or below [`FULL_CHANCE`]; `None` if none.
    fn most_keys_estimated(horizon: u64, estimates: &[(f64, f64)]) -> Option<u64> {
        estimates
            .iter()
            .position(|&(mean, se)| mean + 2.0 * se <= FULL_CHANCE)
            .map(|j| horizon - j as u64)
    }

    /// The capacity [`MAX_LOAD`]'s measured rows are built from, for `blocks` blocks of
    /// `slots` slots, below `ceiling` keys (the fluid limit's capacity, which the walks
    /// never pass at these sizes): a rough answer from 2 estimates over the top 5% below
    /// the ceiling, then 6 estimates over a window of `w = max(8, ceiling/400)` keys either
    /// side of it, the window raised while the answer is its top.
    fn measured_capacity(blocks: usize, slots: u8, ceiling: u64) -> u64 {
        let rough = refusal_estimates(blocks, slots, ceiling, ceiling as usize / 20, 2, 100);
        let rough = most_keys_estimated(ceiling, &rough)
            .expect("the rough pass finds a capacity within 5% of the fluid limit's");
        let w = (ceiling / 400).max(8);
        let mut top = (rough + w).min(ceiling);
        loop {
            let window = refusal_estimates(blocks, slots, top, 2 * w as usize, 6, 200 + top);
            let capacity =
                most_keys_estimated(top, &window).expect("the window holds the capacity");
            if capacity < top || top == ceiling {
                return capacity;
            }
            top = (top + w).min(ceiling);
        }
    }

    /// How many loads below the fullest [`refusal_bound`] keeps apart; the blocks
    /// further down are packed.
    const WINDOW: usize = 3;

    /// The chance of a refusal within `n` inserts, between two bounds (see
    /// [`refusal_chances`]).
    #[derive(Clone, Copy, Debug)]
    struct Refusal {
        at_least: f64,
        at_most: f64,
    }

    /// Row `row` of [`SMALL_CAPACITY`] is the exact chain's answer: the most keys whose
    /// chance of a refusal is at most [`FULL_CHANCE`]. The states the walk drops (each
    /// below `floor`) must move no capacity: counted as refused or not, they give the
    /// same answer.
    fn check_small_capacity(row: usize, floor: f64) {
        for (column, slots) in [(0, 48u64), (1, 28)] {
            let blocks = 2 * (row + 1);
            let chances = refusal_chances(blocks, slots, floor);
            let capacity = most_keys(chances.iter().map(|c| c.at_most));
            assert_eq!(
                capacity,
                most_keys(chances.iter().map(|c| c.at_least)),
                "{blocks} blocks, {slots} slots: the dropped states move the capacity"
            );
            assert_eq!(
                SMALL_CAPACITY[row][column] as usize, capacity,
                "{blocks} blocks, {slots} slots"
            );
            let p = QuotientParams::new(blocks as u64, [8, 16][column]).unwrap();
            assert_eq!(p.capacity(), capacity as u64);
            // The bound that sizes larger filters is one: at or above the exact chain
            // at every count of keys it reaches.
            let bound = refusal_bound(blocks, slots, floor, 1e3 * FULL_CHANCE);
            for (n, (bound, exact)) in bound.iter().zip(&chances).enumerate() {
                assert!(
                    *bound >= exact.at_least,
                    "{blocks} blocks, {slots} slots, {n} keys: bound {bound:e} below the \
                     chain's {:e}",
                    exact.at_least
                );
            }
            // And a close one: its capacity at most 3 keys short.
            let bounded = most_keys(bound.iter().copied());
            assert!(
                bounded <= capacity && capacity - bounded <= 3,
                "{blocks} blocks, {slots} slots: bound's capacity {bounded}, exact {capacity}"
            );
        }
    }

    /// The most keys whose chance of a refusal is at most [`FULL_CHANCE`], from the
    /// chances after 0, 1, 2, … keys.
    fn most_keys(chances: impl IntoIterator<Item = f64>) -> usize {
        chances
            .into_iter()
            .take_while(|&chance| chance <= FULL_CHANCE)
            .count()
            - 1
    }

    /// Rows from 12 blocks up of [`SMALL_CAPACITY`] are the most keys whose chance of a
    /// refusal is at most [`FULL_CHANCE`] by [`refusal_bound`], so at most it.
    fn check_bounded_capacity(row: usize, floor: f64) {
        for (column, slots) in [(0, 48u64), (1, 28)] {
            let blocks = 2 * (row + 1);
            let bound = refusal_bound(blocks, slots, floor, FULL_CHANCE);
            let capacity = most_keys(bound.iter().copied());
            assert_eq!(
                SMALL_CAPACITY[row][column] as usize, capacity,
                "{blocks} blocks, {slots} slots"
            );
            let p = QuotientParams::new(blocks as u64, [8, 16][column]).unwrap();
            assert_eq!(p.capacity(), capacity as u64);
        }
    }

    /// The floor below which [`refusal_bound`] drops states for the table's rows. The
    /// dropped states count as refused, so a higher floor can only lower the rows.
    const BOUND_FLOOR: f64 = 1e-17;

    /// [`SMALL_CAPACITY`] for 12 to 30 blocks, from the bound.
    #[test]
    #[cfg_attr(
        any(miri, debug_assertions, not(target_arch = "x86_64")),
        ignore = "walks the bounding chain of up to 30 blocks: a minute optimised on x86_64, \
                  far longer in debug or under an emulator; the arithmetic is the same anywhere"
    )]
    fn the_capacities_from_12_blocks_are_bounded() {
        for row in 5..15 {
            check_bounded_capacity(row, BOUND_FLOOR);
        }
    }

    /// [`SMALL_CAPACITY`] for 32 to 62 blocks. Run by hand:
    /// `cargo test --profile tests -p linebloom --lib from_32_blocks -- --ignored`.
    #[test]
    #[ignore = "walks the bounding chain of 32 to 62 blocks: about 30 minutes optimised"]
    fn the_capacities_from_32_blocks_are_bounded() {
        for row in 15..SMALL_CAPACITY.len() {
            check_bounded_capacity(row, BOUND_FLOOR);
        }
    }

    /// [`SMALL_CAPACITY`] for 2 to 8 blocks.
    #[test]
    #[cfg_attr(
        any(miri, debug_assertions, not(target_arch = "x86_64")),
        ignore = "walks the load states of up to eight blocks: 20 s optimised on x86_64, \
                  minutes in debug or under an emulator; the arithmetic is the same anywhere"
    )]
    fn the_small_capacities_are_exact() {
        for row in 0..4 {
            check_small_capacity(row, 1e-16);
        }
    }

    /// [`SMALL_CAPACITY`] for 10 blocks, whose walk keeps 1.8 million states at a time
    /// (at a floor of 1e-16 the dropped states would move the capacity). Run by hand:
    /// `cargo test --profile tests -p linebloom --lib ten_blocks -- --ignored`.
    #[test]
    #[ignore = "walks 1.8 million states a step: about 20 minutes optimised"]
    fn the_capacity_of_ten_blocks_is_exact() {
        check_small_capacity(4, 1e-20);
    }

    /// The chain is the filter: small filters filled past their capacity, to where the
    /// chain puts the chance of a refusal near 1e-3, refuse as often as it says. 100 000
    /// seeded fills a shape; the count must sit within 5 standard deviations of the
    /// chain's mean (about ±16%; a correct chain misses that once in 3 million).
    #[test]
    #[cfg_attr(
        any(miri, debug_assertions, not(target_arch = "x86_64")),
        ignore = "fills 300 000 filters: 10 s optimised on x86_64, minutes in debug or under \
                  an emulator; where a key goes is the same on every platform (tests/golden.rs)"
    )]
    fn the_filter_refuses_as_often_as_the_chain_says() {
        for (blocks, tag_bits) in [(4usize, 16u32), (4, 8), (6, 16)] {
            let slots = slots_per_block(tag_bits) as u64;
            let chances = refusal_chances(blocks, slots, 1e-16);
            let n = chances.iter().position(|c| c.at_least >= 1e-3).unwrap();
            let fills = 100_000u32;
            let seed = blocks as u64 * 100 + tag_bits as u64;
            let refused = refused_fills(blocks, tag_bits, n, fills, seed);
            let chance = chances[n].at_least;
            let mean = fills as f64 * chance;
            let sd = libm::sqrt(mean * (1.0 - chance));
            assert!(
                (refused as f64 - mean).abs() <= 5.0 * sd,
                "{blocks} blocks of {tag_bits}-bit tags, {n} keys: {refused} refused in \
                 {fills} fills, the chain says {mean:.1}"
            );
        }
    }

    /// How many of `fills` filters of `blocks` blocks of `tag_bits`-bit tags, each
    /// cleared and given `n` random hashes from a generator seeded with `seed`, refuse
    /// one of them.
    fn refused_fills(blocks: usize, tag_bits: u32, n: usize, fills: u32, seed: u64) -> u32 {
        use crate::VectorQuotientFilter;
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

    /// The bound holds for the filter: 12 blocks of 16-bit tags filled to where
    /// [`refusal_bound`] puts the chance near 1e-3 refuse no more often than it says.
    /// 100 000 seeded fills; the count must not pass the bound's mean by more than 5
    /// standard deviations (a filter that refuses at the bound's rate passes that once
    /// in 3 million runs). The bound is loose this far up: 40 of the fills refuse
    /// where it says 149.
    #[test]
    #[cfg_attr(
        any(miri, debug_assertions, not(target_arch = "x86_64")),
        ignore = "fills 100 000 filters: seconds optimised on x86_64, minutes in debug or \
                  under an emulator; where a key goes is the same on every platform"
    )]
    fn the_filter_refuses_no_more_often_than_the_bound_says() {
        let (blocks, tag_bits) = (12usize, 16u32);
        let bound = refusal_bound(blocks, slots_per_block(tag_bits) as u64, BOUND_FLOOR, 1e-3);
        let n = bound.len() - 1;
        let fills = 100_000u32;
        let refused = refused_fills(blocks, tag_bits, n, fills, 1216);
        let mean = fills as f64 * bound[n];
        let sd = libm::sqrt(mean * (1.0 - bound[n]));
        assert!(
            refused as f64 <= mean + 5.0 * sd,
            "{blocks} blocks of {tag_bits}-bit tags, {n} keys: {refused} refused in {fills} \
             fills, the bound says at most {mean:.1}"
        );
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "integrates the fluid limit: seconds natively, too slow under Miri"
    )]
    fn the_load_table_solves_the_fluid_limit() {
        for (column, slots) in [(0, 48usize), (1, 28)] {
            let below = first_block_below(64, slots as u32);
            let path: alloc::vec::Vec<_> = tail_levels(slots, below, 0.97 * slots as f64).collect();
            for (row, loads) in MAX_LOAD.iter().enumerate() {
                let blocks = (1u64 << (row as u32 + MAX_LOAD_FROM)) as f64;
                let table = loads[column] as f64 / 10_000.0 * slots as f64;
                let at_full_chance =
                    keys_per_block_within(path.iter().copied(), FULL_CHANCE / blocks);
                if row < MEASURED_ROWS {
                    // The measured rows sit below the fluid limit's.
                    assert!(table < at_full_chance, "row {row} column {column}");
                    continue;
                }
                let last_ok = keys_per_block_within(
                    path.iter().copied(),
                    FULL_CHANCE / FLUID_MARGIN / blocks,
                );
                // The table is what the solution gives, rounded down to 1e-4 of a load.
                assert!(table <= last_ok + 1e-9, "row {row} column {column}");
                assert!(
                    last_ok - table < 0.0051 + 1e-4 * slots as f64,
                    "row {row} column {column}"
                );
            }
        }
    }

    /// The rows of [`MAX_LOAD`] measured by [`measured_capacity`], for 64 to 8192 blocks.
    const MEASURED_ROWS: usize = 8;

    /// How far below [`FULL_CHANCE`] the fluid limit is taken for the rows past the
    /// measured ones.
    const FLUID_MARGIN: f64 = 10.0;

    /// The fluid limit's capacity at `chance` for `blocks` blocks of `slots` slots under
    /// the scheme's threshold.
    fn fluid_capacity(blocks: usize, slots: u8, chance: f64) -> u64 {
        let below = first_block_below(blocks, slots as u32);
        let per_block = fluid_keys_per_block(slots as usize, below, chance / blocks as f64);
        (per_block * blocks as f64) as u64
    }

    /// Row `row` of [`MAX_LOAD`] is [`measured_capacity`]'s answer as a load, rounded
    /// down, and the shape's capacity.
    fn check_measured_load(row: usize) {
        for (column, tag_bits) in [(0, 8u32), (1, 16)] {
            let blocks = 64usize << row;
            let slots = slots_per_block(tag_bits) as u8;
            let measured =
                measured_capacity(blocks, slots, fluid_capacity(blocks, slots, FULL_CHANCE));
            let load = measured * 10_000 / (blocks as u64 * slots as u64);
            assert_eq!(
                MAX_LOAD[row][column] as u64, load,
                "{blocks} blocks, {slots} slots: measured {measured} keys"
            );
            let p = QuotientParams::new(blocks as u64, tag_bits).unwrap();
            assert!(p.capacity() <= measured);
        }
    }

    /// [`MAX_LOAD`] for 64 to 256 blocks.
    #[test]
    #[cfg_attr(
        any(miri, debug_assertions, not(target_arch = "x86_64")),
        ignore = "walks millions of partial fills by splitting: 20 s optimised on x86_64, far \
                  longer in debug or under an emulator; the arithmetic is the same anywhere"
    )]
    fn the_loads_from_64_blocks_are_measured() {
        for row in 0..3 {
            check_measured_load(row);
        }
    }

    /// [`MAX_LOAD`] for 512 to 8192 blocks. Run by hand:
    /// `cargo test --profile tests -p linebloom --lib from_512_blocks -- --ignored`.
    #[test]
    #[ignore = "walks fills of up to 8192 blocks by splitting: about 10 minutes optimised"]
    fn the_loads_from_512_blocks_are_measured() {
        for row in 3..MEASURED_ROWS {
            check_measured_load(row);
        }
    }

    /// Block counts between powers of two take the lower of the two rows, and refuse no
    /// more often than [`FULL_CHANCE`]: at their capacity, the estimate plus two
    /// standard errors is at or below it.
    #[test]
    #[cfg_attr(
        any(miri, debug_assertions, not(target_arch = "x86_64")),
        ignore = "walks fills of 96 and 192 blocks by splitting: seconds optimised on x86_64"
    )]
    fn the_loads_between_powers_of_two_hold() {
        for blocks in [96usize, 192] {
            for tag_bits in [8u32, 16] {
                assert_capacity_holds(blocks, tag_bits, 300);
            }
        }
    }

    /// Asserts that a filter of `blocks` blocks of `tag_bits`-bit tags filled to its
    /// capacity refuses with an estimated chance (six estimates from seed `seed`, plus two
    /// standard errors) at or below [`FULL_CHANCE`]; returns the capacity and the
    /// estimate's mean and standard error.
    fn assert_capacity_holds(blocks: usize, tag_bits: u32, seed: u64) -> (u64, f64, f64) {
        let capacity = QuotientParams::new(blocks as u64, tag_bits)
            .unwrap()
            .capacity();
        let slots = slots_per_block(tag_bits) as u8;
        let (mean, se) = refusal_estimates(blocks, slots, capacity, 1, 6, seed)[0];
        assert!(
            mean + 2.0 * se <= FULL_CHANCE,
            "{blocks} blocks of {tag_bits}-bit tags: {mean:e} ± {se:e} at {capacity} keys"
        );
        (capacity, mean, se)
    }

    /// Why the rows past the measured ones take the fluid limit at a tenth of
    /// [`FULL_CHANCE`]: at its own capacity (at [`FULL_CHANCE`]) the fluid limit
    /// understates the estimated chance at every measured size, but by less than
    /// [`FLUID_MARGIN`] (two standard errors either way) from 2048 blocks. Run by hand:
    /// `cargo test --profile tests -p linebloom --lib understates -- --ignored --nocapture`.
    #[test]
    #[ignore = "walks fills of up to 8192 blocks by splitting: about 8 minutes optimised"]
    fn the_fluid_limit_understates_refusals_within_its_margin() {
        extern crate std;
        for row in 0..MEASURED_ROWS {
            let blocks = 64usize << row;
            for slots in [48u8, 28] {
                let fluid = fluid_capacity(blocks, slots, FULL_CHANCE);
                let (mean, se) = refusal_estimates(blocks, slots, fluid, 1, 6, 400)[0];
                std::println!(
                    "{blocks} blocks, {slots} slots, {fluid} keys: {:.2} ± {:.2} times FULL_CHANCE",
                    mean / FULL_CHANCE,
                    se / FULL_CHANCE
                );
                assert!(
                    mean - 2.0 * se > FULL_CHANCE,
                    "{blocks} blocks, {slots} slots"
                );
                if blocks >= 2048 {
                    assert!(
                        mean + 2.0 * se < FLUID_MARGIN * FULL_CHANCE,
                        "{blocks} blocks, {slots} slots"
                    );
                }
            }
        }
    }

    /// The first rows past the measured ones, taken from the fluid limit at a tenth of
    /// [`FULL_CHANCE`], hold where splitting still reaches: at 16 384, 32 768, 65 536 and
    /// 131 072 blocks a filter filled to its capacity refuses with an estimated chance
    /// (plus two standard errors) at or below [`FULL_CHANCE`]. Run by hand:
    /// `cargo test --profile tests -p linebloom --lib fluid_rows -- --ignored --nocapture`;
    /// `LINEBLOOM_FLUID_BLOCKS=131072` (a comma-separated list) walks only those rows.
    #[test]
    #[ignore = "walks fills of 16 384 to 131 072 blocks by splitting: about two hours optimised"]
    fn the_fluid_rows_hold_where_splitting_reaches() {
        extern crate std;
        use alloc::vec::Vec;
        let only: Option<Vec<usize>> = std::env::var("LINEBLOOM_FLUID_BLOCKS").ok().map(|list| {
            list.split(',')
                .map(|b| {
                    b.trim()
                        .parse()
                        .expect("LINEBLOOM_FLUID_BLOCKS: block counts")
                })
                .collect()
        });
        for row in MEASURED_ROWS..MEASURED_ROWS + 4 {
            let blocks = 64usize << row;
            if only.as_ref().is_some_and(|only| !only.contains(&blocks)) {
                continue;
            }
            for tag_bits in [8u32, 16] {
                let started = std::time::Instant::now();
                let (capacity, mean, se) = assert_capacity_holds(blocks, tag_bits, 600);
                std::println!(
                    "{blocks} blocks of {tag_bits}-bit tags, {capacity} keys: {:.3} ± {:.3} \
                     times FULL_CHANCE ({:.0} s)",
                    mean / FULL_CHANCE,
                    se / FULL_CHANCE,
                    started.elapsed().as_secs_f64()
                );
            }
        }
    }

    /// The estimate is the filter: 64 blocks filled to where it puts the chance of a
    /// refusal near 2e-3 refuse as often as it says. 40 000 seeded fills a tag width;
    /// the count must sit within 5 standard deviations of the estimate's mean, counting
    /// the spread of the fills and of the estimate.
    #[test]
    #[cfg_attr(
        any(miri, debug_assertions, not(target_arch = "x86_64")),
        ignore = "fills 80 000 filters of 64 blocks: seconds optimised on x86_64, minutes in \
                  debug or under an emulator"
    )]
    fn the_filter_refuses_as_often_as_the_estimate_says() {
        for tag_bits in [8u32, 16] {
            let (blocks, slots) = (64usize, slots_per_block(tag_bits) as u8);
            let n = fluid_capacity(blocks, slots, 2e-3);
            let (mean, se) = refusal_estimates(blocks, slots, n, 1, 6, 500)[0];
            let fills = 40_000u32;
            let refused = refused_fills(blocks, tag_bits, n as usize, fills, 64 + tag_bits as u64);
            let expected = fills as f64 * mean;
            let sd = libm::sqrt(expected + (fills as f64 * se) * (fills as f64 * se));
            assert!(
                (refused as f64 - expected).abs() <= 5.0 * sd,
                "{blocks} blocks of {tag_bits}-bit tags, {n} keys: {refused} refused in \
                 {fills} fills, the estimate says {expected:.1} ± {:.1}",
                fills as f64 * se
            );
        }
    }
}
