//! Sizing: `(capacity, target rate)`, `(capacity, bits per key)` or raw `(blocks, k)`
//! to a checked shape. Each kind has its own shape type, so that one kind's shape
//! cannot be handed to another: [`Params`] (the Bloom, atomic and static filters,
//! here), [`CountingParams`] (`counting.rs`) and [`ClassicParams`] (`classic.rs`).
//!
//! Sizing from a target rate uses the blocked scheme's own exact formula
//! ([`crate::fpr::blocked`]), not the classic `(1 − e^{−kn/m})^k`, which under-sizes a
//! blocked filter: at 1% the blocked filter needs about 0.5 more bits per key than the
//! classic formula says.

mod classic;
mod counting;

pub use classic::{ClassicParams, MAX_CLASSIC_K};
pub(crate) use classic::{PROBE_SCHEME, for_each_probe};
pub use counting::CountingParams;

use crate::block::Block;
use crate::fpr;
use crate::hash::MAX_K;

/// [`Params::for_fpr`] sizes for a predicted rate of at most `SIZING_MARGIN × p`.
///
/// The predicted rate is an expectation over key sets. A real filter's rate spreads
/// around it (about ±1% relative at a million keys, from the uneven block loads), and a
/// measurement adds binomial noise on top. Sizing exactly to `p` would measure above `p`
/// half the time; 5% of headroom costs about 0.1 bit per key and keeps measured rates
/// at or below `p` (see `tests/fpr.rs` for the bound and its slack). Where blocks are
/// few the spread is wider than 5%, and sizing adds more headroom, from the spread
/// itself ([`Params::per_filter_fpr`]).
pub const SIZING_MARGIN: f64 = 0.95;

/// [`Params::for_fpr`] picks a fast shape (`k = 8` or `16`, see [`FAST_K`]) when it
/// needs at most this fraction more memory than the smallest filter that meets the
/// target.
///
/// The fast shapes skip the rotation table of `k < 8` and the enable mask of round 2, so
/// their probe is shorter (the speed gain is measured by the lab's `kernels`
/// experiment). Near 1% the smallest filter has `k = 6` and `k = 8` costs 1.5–1.8%
/// more memory; at 0.1% and 0.01% the fast shapes are already the smallest.
pub const FAST_SHAPE_ALLOWANCE: f64 = 0.02;

/// The `k` whose probe needs neither the rotation of `k < 8` nor a partial second round.
pub const FAST_K: [u32; 2] = [8, 16];

/// The largest filter this crate builds: 1 TiB on 64-bit targets, and half the address
/// space (`isize::MAX` bytes, rounded down to whole blocks) on smaller ones.
pub const MAX_BYTES: u64 = {
    let cap = 1u64 << 40;
    let isize_max = isize::MAX as u64;
    if isize_max < cap {
        isize_max - isize_max % 64
    } else {
        cap
    }
};

/// The largest block count, [`MAX_BYTES`] / 64.
pub const MAX_BLOCKS: u64 = MAX_BYTES / Block::BYTES as u64;

/// Blocks for `capacity` keys at `bits_per_key` bits each, rounded up to whole blocks
/// (at least one): a `const fn`, so firmware can size a [`crate::StaticBlocks`] at
/// compile time without floating point.
///
/// What such a filter delivers at its capacity, with the `k` that suits it (from the
/// exact formula, for large capacities; the example checks every row):
///
/// | bits per key | k | false-positive rate |
/// |---:|---:|---:|
/// | 8 | 5 | 2.34% |
/// | 10 | 6 | 0.97% |
/// | 12 | 7 | 0.42% |
/// | 16 | 8 | 0.091% |
/// | 20 | 8 | 0.026% |
/// | 24 | 16 | 0.0067% |
///
/// ```
/// use linebloom::{BloomFilter, Params, StaticBlocks, blocks_for};
/// static STORAGE: StaticBlocks<{ blocks_for(1000, 10) }> = StaticBlocks::new();
/// assert_eq!(blocks_for(1000, 10), 20);
/// let f: BloomFilter = BloomFilter::from_storage(STORAGE.take().unwrap(), 6)?;
///
/// // The table above.
/// for (bits, k, percent) in [(8, 5, 2.34), (10, 6, 0.97), (12, 7, 0.42), (16, 8, 0.091), (20, 8, 0.026), (24, 16, 0.0067)] {
///     let n = 1_000_000;
///     let rate = Params::new(blocks_for(n, bits) as u64, k)?.expected_fpr(n);
///     assert!((100.0 * rate / percent - 1.0).abs() < 0.01, "{bits}: {rate}");
///     assert_eq!(Params::for_bits_per_key(n, bits as f64)?.k(), k);
/// }
/// # Ok::<(), linebloom::ParamsError>(())
/// ```
#[must_use]
pub const fn blocks_for(capacity: u64, bits_per_key: u64) -> usize {
    let blocks = capacity
        .saturating_mul(bits_per_key)
        .div_ceil(Block::BITS as u64);
    if blocks == 0 { 1 } else { blocks as usize }
}

/// Why parameters were refused.
///
/// It holds no floating-point value (the caller has the one it passed), so formatting
/// it, even through `unwrap`, pulls no float formatting into firmware.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamsError {
    /// The target false-positive rate is not in the open interval (0, 1), or is NaN.
    InvalidFpr,
    /// The target rate is below what a 64-bit hash can deliver for this many keys: a
    /// non-member shares its full hash with one of `capacity` members with probability
    /// about `capacity / 2⁶⁴`, and then it is always a false positive
    /// ([`crate::fpr::hash_floor`]). The sizing margin applies to it as well.
    FprBelowHashFloor {
        /// The capacity asked for.
        capacity: u64,
    },
    /// The capacity is zero.
    ZeroCapacity,
    /// Bits per key is not a finite number greater than zero.
    InvalidBitsPerKey,
    /// `k` is not in `1..=16`.
    InvalidK(u32),
    /// Zero blocks.
    ZeroBlocks,
    /// The storage handed in has the wrong number of blocks for the shape.
    StorageLength {
        /// Blocks the shape needs.
        expected: u64,
        /// Blocks given.
        got: u64,
    },
    /// Growth factor below 1 or tightening ratio outside (0, 1) (scalable filter).
    InvalidGrowth,
    /// The filter would exceed [`MAX_BYTES`] (or overflow `usize`).
    TooLarge {
        /// Bytes the request needs (saturated at `u64::MAX`).
        bytes: u64,
    },
}

impl core::fmt::Display for ParamsError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ParamsError::InvalidFpr => f.write_str("the false-positive rate is not in (0, 1)"),
            ParamsError::FprBelowHashFloor { capacity } => write!(
                f,
                "the false-positive rate is below what a 64-bit hash delivers for {capacity} keys \
                 (about {capacity} / 2^64, from full-hash collisions)"
            ),
            ParamsError::ZeroCapacity => f.write_str("capacity must be at least 1"),
            ParamsError::InvalidBitsPerKey => {
                f.write_str("bits per key must be a finite number greater than 0")
            }
            ParamsError::InvalidK(k) => write!(
                f,
                "k = {k} is out of range (1..={MAX_K} blocked, 1..=32 classic)"
            ),
            ParamsError::StorageLength { expected, got } => {
                write!(f, "storage has {got} blocks, the shape needs {expected}")
            }
            ParamsError::InvalidGrowth => f.write_str(
                "the growth factor must be a finite number ≥ 1 and the tightening ratio in (0, 1)",
            ),
            ParamsError::ZeroBlocks => f.write_str("a filter needs at least one block"),
            ParamsError::TooLarge { bytes } => {
                write!(
                    f,
                    "filter of {bytes} bytes exceeds the maximum of {MAX_BYTES} bytes"
                )
            }
        }
    }
}

impl core::error::Error for ParamsError {}

/// A filter's shape: the number of 64-byte blocks and the bits set per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Params {
    blocks: usize,
    k: u32,
}

impl Params {
    /// Raw parameters: `blocks` 64-byte blocks, `k` bits per key.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidK`] unless `k` is in `1..=16`, [`ParamsError::ZeroBlocks`]
    /// for zero blocks, [`ParamsError::TooLarge`] past [`MAX_BLOCKS`].
    ///
    /// ```
    /// use linebloom::{Params, ParamsError};
    /// let p = Params::new(100, 8)?;
    /// assert_eq!(p.bytes(), 6400);
    /// assert_eq!(Params::new(100, 17), Err(ParamsError::InvalidK(17)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(blocks: u64, k: u32) -> Result<Self, ParamsError> {
        check_shape(k, MAX_K, blocks.saturating_mul(Block::BYTES as u64))?;
        Ok(Params {
            blocks: blocks as usize,
            k,
        })
    }

    /// The smallest filter whose exact predicted false-positive rate after `capacity`
    /// keys is at most `fpr` (with [`SIZING_MARGIN`] of headroom), and the smallest `k`
    /// that achieves it at that size; or, when a fast shape ([`FAST_K`]) meets the target
    /// with at most [`FAST_SHAPE_ALLOWANCE`] more memory, the smallest such filter. Then,
    /// where blocks are few, more blocks at that `k` until
    /// [`per_filter_fpr`](Self::per_filter_fpr) is at most `fpr`: the target holds for
    /// at least 99% of filters, not only on average (the crate docs state the promise).
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidFpr`] for a rate outside (0, 1),
    /// [`ParamsError::ZeroCapacity`], [`ParamsError::FprBelowHashFloor`] for a rate the
    /// 64-bit hash cannot deliver at this capacity, or [`ParamsError::TooLarge`] when
    /// no filter up to [`MAX_BYTES`] meets the target.
    ///
    /// ```
    /// use linebloom::Params;
    /// let p = Params::for_fpr(1_000_000, 0.01)?;
    /// assert!(p.expected_fpr(1_000_000) <= 0.01);
    /// assert!(p.bits_per_key(1_000_000) < 11.0);
    /// assert_eq!(p.k(), 8); // the fast shape: 1.5% more memory than k = 6 here
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        let smallest = Params::smallest_meeting(capacity, fpr, fpr::blocked)?;
        let headroom = |params: Params| {
            params.with_per_filter_headroom(capacity, fpr, fpr::blocked, fpr::blocked_spread)
        };
        if FAST_K.contains(&smallest.k) {
            return headroom(smallest);
        }
        let goal = fpr * SIZING_MARGIN;
        let budget = smallest.blocks as u64
            + libm::floor(smallest.blocks as f64 * FAST_SHAPE_ALLOWANCE) as u64;
        let budget = budget.min(MAX_BLOCKS);
        let fast = FAST_K.iter().filter_map(|&k| {
            let rate = |blocks| fpr::blocked(blocks, k, capacity);
            if rate(budget) > goal {
                return None;
            }
            // `smallest.blocks − 1` meets the target with no k at all.
            let blocks = min_blocks(rate, goal, smallest.blocks as u64 - 1, budget);
            Some((blocks, k))
        });
        let chosen = match fast.min() {
            Some((blocks, k)) => Params::new(blocks, k)?,
            None => smallest,
        };
        headroom(chosen)
    }

    /// These params, or more blocks at the same `k`: the fewest at which the per-filter
    /// quantile of the rate ([`fpr::per_filter_quantile`] of `rate` and `spread`) is at
    /// most `fpr`, so that the target holds for each filter (at least 99% of key sets),
    /// not only on average. Large filters have a negligible spread and come back
    /// unchanged.
    pub(crate) fn with_per_filter_headroom(
        self,
        capacity: u64,
        fpr: f64,
        rate: fn(u64, u32, u64) -> f64,
        spread: fn(u64, u32, u64) -> f64,
    ) -> Result<Self, ParamsError> {
        let k = self.k;
        let upper = |blocks: u64| {
            fpr::per_filter_quantile(rate(blocks, k, capacity), spread(blocks, k, capacity))
        };
        let base = self.blocks as u64;
        let bound =
            |blocks: u64, spread: f64| fpr::per_filter_quantile(rate(blocks, k, capacity), spread);
        let mut last = (base, spread(base, k, capacity));
        if bound(base, last.1) <= fpr {
            return Ok(self);
        }
        // The spread falls about as blocks^(−1/2) (the load per block changes little),
        // so search on a power law, which only evaluates the cheap average; check the
        // answer and its neighbour below exactly, and refit the exponent to the last two
        // exact spreads where the model was off.
        let mut exponent = 0.5;
        for _ in 0..4 {
            let (at, spread_at) = last;
            let model = |blocks: u64| {
                bound(
                    blocks,
                    // (at/blocks)^exponent, by exp and log: libm's pow takes an
                    // exponent of 0.5 to its sqrt, inline assembly Miri cannot run.
                    spread_at * libm::exp(exponent * libm::log(at as f64 / blocks as f64)),
                )
            };
            let mut hi = base;
            while model(hi) > fpr {
                if hi == MAX_BLOCKS {
                    return Err(ParamsError::TooLarge {
                        bytes: MAX_BYTES + 1,
                    });
                }
                hi = hi.saturating_mul(2).min(MAX_BLOCKS);
            }
            let guess = min_blocks(model, fpr, base.max(hi / 2), hi);
            let spread_guess = spread(guess, k, capacity);
            let next = if bound(guess, spread_guess) > fpr {
                (guess, spread_guess)
            } else {
                if guess == base + 1 {
                    return Params::new(guess, k);
                }
                let spread_below = spread(guess - 1, k, capacity);
                if bound(guess - 1, spread_below) > fpr {
                    return Params::new(guess, k);
                }
                (guess - 1, spread_below)
            };
            if next.0 != at && next.1 > 0.0 && spread_at > 0.0 {
                let fitted = libm::log(spread_at / next.1) / libm::log(next.0 as f64 / at as f64);
                exponent = fitted.clamp(0.25, 1.0);
            }
            last = next;
        }
        // The model did not settle: search on the exact bound.
        let (mut lo, mut hi) = (base, base);
        while upper(hi) > fpr {
            if hi == MAX_BLOCKS {
                return Err(ParamsError::TooLarge {
                    bytes: MAX_BYTES + 1,
                });
            }
            lo = hi;
            hi = hi.saturating_mul(2).min(MAX_BLOCKS);
        }
        Params::new(min_blocks(upper, fpr, lo, hi), k)
    }

    /// The rate that at most about 1% of filters of this shape exceed after `n` keys:
    /// [`fpr::per_filter_quantile`] of the average
    /// ([`expected_fpr`](Self::expected_fpr)) and the spread over key sets
    /// ([`fpr::blocked_spread`]). [`Params::for_fpr`] keeps it at or below the target.
    ///
    /// ```
    /// use linebloom::Params;
    /// let p = Params::for_fpr(1_000, 0.01)?;
    /// assert!(p.per_filter_fpr(1_000) <= 0.01);
    /// assert!(p.per_filter_fpr(1_000) > p.expected_fpr(1_000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn per_filter_fpr(&self, n: u64) -> f64 {
        fpr::per_filter_quantile(
            self.expected_fpr(n),
            fpr::blocked_spread(self.blocks as u64, self.k, n),
        )
    }

    /// The smallest block count (and then the smallest k) whose `rate(blocks, k, n)` is at
    /// most `SIZING_MARGIN × fpr`.
    ///
    /// For each `k` the rate falls as blocks grow, so the answer is the least of the
    /// per-`k` minima. The `k` that is best at the classic formula's size is searched
    /// first; every other `k` costs one evaluation, at one block less than the best size
    /// so far, unless it beats it. About 60 evaluations of the formula in all.
    pub(crate) fn smallest_meeting(
        capacity: u64,
        fpr: f64,
        rate: fn(u64, u32, u64) -> f64,
    ) -> Result<Self, ParamsError> {
        let goal = sizing_goal(capacity, fpr)?;
        let classic_bits = capacity as f64 * libm::log2(1.0 / fpr) / core::f64::consts::LN_2;
        let estimate = libm::ceil(classic_bits / Block::BITS as f64).clamp(1.0, MAX_BLOCKS as f64);
        let estimate = estimate as u64;
        let first = (1..=MAX_K)
            .map(|k| (rate(estimate, k, capacity), k))
            .fold(
                (f64::INFINITY, 1),
                |best, x| if x.0 < best.0 { x } else { best },
            )
            .1;
        let mut best: Option<u64> = None;
        for k in core::iter::once(first).chain((1..=MAX_K).filter(|&k| k != first)) {
            let cap = best.map_or(MAX_BLOCKS, |b| b - 1);
            let rate_k = |blocks| rate(blocks, k, capacity);
            if cap == 0 || rate_k(cap) > goal {
                continue;
            }
            // Bracket around the classic estimate (two evaluations) before searching.
            let (mut lo, mut hi) = (0, cap);
            let above = estimate.saturating_add(estimate / 4);
            if above < hi && rate_k(above) <= goal {
                hi = above;
            }
            let below = estimate - estimate / 4;
            if below > lo && below < hi {
                if rate_k(below) > goal {
                    lo = below;
                } else {
                    hi = below;
                }
            }
            best = Some(min_blocks(rate_k, goal, lo, hi));
        }
        let Some(blocks) = best else {
            let bytes = (classic_bits / 8.0).min(u64::MAX as f64) as u64;
            return Err(ParamsError::TooLarge {
                bytes: bytes.max(MAX_BYTES + 1),
            });
        };
        let k = (1..=MAX_K)
            .find(|&k| rate(blocks, k, capacity) <= goal)
            .expect("some k meets the target at the size found");
        Params::new(blocks, k)
    }

    /// `bits_per_key × capacity` bits (rounded up to whole blocks), with the `k` that
    /// gives the lowest predicted false-positive rate at `capacity` keys.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidBitsPerKey`] unless `bits_per_key` is finite and positive,
    /// [`ParamsError::ZeroCapacity`], or [`ParamsError::TooLarge`] past [`MAX_BYTES`].
    ///
    /// ```
    /// use linebloom::Params;
    /// let p = Params::for_bits_per_key(10_000, 10.0)?;
    /// assert_eq!(p.blocks(), 196); // ceil(100_000 / 512)
    /// assert!((6..=8).contains(&p.k()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_bits_per_key(capacity: u64, bits_per_key: f64) -> Result<Self, ParamsError> {
        if !(bits_per_key > 0.0 && bits_per_key.is_finite()) {
            return Err(ParamsError::InvalidBitsPerKey);
        }
        if capacity == 0 {
            return Err(ParamsError::ZeroCapacity);
        }
        let bits = libm::ceil(capacity as f64 * bits_per_key);
        let blocks = libm::ceil(bits / Block::BITS as f64);
        if blocks > MAX_BLOCKS as f64 {
            return Err(ParamsError::TooLarge {
                bytes: (blocks * 64.0).min(u64::MAX as f64) as u64,
            });
        }
        let blocks = blocks as u64;
        let mut best = (1, f64::INFINITY);
        for k in 1..=MAX_K {
            let p = fpr::blocked(blocks, k, capacity);
            if p < best.1 {
                best = (k, p);
            }
        }
        Params::new(blocks, best.0)
    }

    /// Number of 64-byte blocks.
    #[must_use]
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Bits set per key.
    #[must_use]
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Size of the bit array in bytes.
    #[must_use]
    pub fn bytes(&self) -> usize {
        self.blocks * Block::BYTES
    }

    /// Size of the bit array in bits.
    #[must_use]
    pub fn bits(&self) -> u64 {
        self.blocks as u64 * Block::BITS as u64
    }

    /// Bits of memory per key at `n` keys.
    #[must_use]
    pub fn bits_per_key(&self, n: u64) -> f64 {
        self.bits() as f64 / n as f64
    }

    /// The exact predicted false-positive rate of a [`crate::BloomFilter`] of this shape
    /// after `n` distinct keys ([`crate::fpr::blocked`]).
    #[must_use]
    pub fn expected_fpr(&self, n: u64) -> f64 {
        fpr::blocked(self.blocks as u64, self.k, n)
    }

    /// The most distinct keys this shape holds with a predicted rate
    /// ([`expected_fpr`](Self::expected_fpr)) at most `fpr`: the capacity to watch
    /// [`crate::BloomFilter::estimated_len`] against. 0 if even one key exceeds it (or
    /// `fpr` is not in (0, 1)).
    ///
    /// ```
    /// use linebloom::Params;
    /// let p = Params::for_fpr(100_000, 0.01)?;
    /// let capacity = p.capacity_at(0.01);
    /// assert!(capacity >= 100_000); // sized with headroom (SIZING_MARGIN)
    /// assert!(p.expected_fpr(capacity) <= 0.01 && p.expected_fpr(capacity + 1) > 0.01);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn capacity_at(&self, fpr: f64) -> u64 {
        largest_meeting(|n| self.expected_fpr(n) <= fpr)
    }

    /// Estimated number of distinct keys in a filter of this shape that has `ones` bits
    /// set: [`crate::BloomFilter::estimated_len`]'s estimator, for blocks kept elsewhere
    /// (in Redis, where `BITCOUNT` gives `ones`, or in a memory-mapped file).
    /// `f64::INFINITY` when every bit is set.
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params};
    /// let params = Params::for_fpr(10_000, 0.01)?;
    /// let mut f = BloomFilter::new(params);
    /// f.extend(0..10_000u64);
    /// let ones = (f.fill_ratio() * params.bits() as f64).round() as u64;
    /// assert_eq!(params.estimated_len(ones), f.estimated_len());
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn estimated_len(&self, ones: u64) -> f64 {
        let bits = self.bits();
        let clear = bits.saturating_sub(ones) as f64 / bits as f64;
        fpr::estimated_keys(clear, self.k, bits as f64)
    }
}

/// The rate sizing aims at, `SIZING_MARGIN × fpr`, after the checks every `for_fpr`
/// makes: a rate in (0, 1), a capacity, and a goal above the 64-bit hash's floor.
pub(crate) fn sizing_goal(capacity: u64, fpr: f64) -> Result<f64, ParamsError> {
    if !(fpr > 0.0 && fpr < 1.0) {
        return Err(ParamsError::InvalidFpr);
    }
    if capacity == 0 {
        return Err(ParamsError::ZeroCapacity);
    }
    let goal = fpr * SIZING_MARGIN;
    if goal <= fpr::hash_floor(capacity) {
        return Err(ParamsError::FprBelowHashFloor { capacity });
    }
    Ok(goal)
}

/// The checks every shape's `new` makes: `k` in `1..=max_k`, then a size of `bytes` in
/// `1..=MAX_BYTES`.
pub(crate) fn check_shape(k: u32, max_k: u32, bytes: u64) -> Result<(), ParamsError> {
    if !(1..=max_k).contains(&k) {
        return Err(ParamsError::InvalidK(k));
    }
    if bytes == 0 {
        return Err(ParamsError::ZeroBlocks);
    }
    if bytes > MAX_BYTES {
        return Err(ParamsError::TooLarge { bytes });
    }
    Ok(())
}

/// The largest `n ≥ 1` for which `meets(n)` holds, for a `meets` that holds up to some
/// point and fails after it (a rate that grows with the key count); 0 if `meets(1)`
/// fails. Doubling, then bisection: about 130 evaluations at most.
pub(crate) fn largest_meeting(meets: impl Fn(u64) -> bool) -> u64 {
    if !meets(1) {
        return 0;
    }
    let (mut lo, mut hi) = (1u64, 2u64);
    while meets(hi) {
        if hi == u64::MAX {
            return u64::MAX;
        }
        lo = hi;
        hi = hi.saturating_mul(2);
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if meets(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The smallest `blocks` in `lo + 1 ..= hi` with `rate(blocks) ≤ goal`, given that `hi`
/// meets the goal and `lo` does not (or is 0), for a `rate` that falls as blocks grow.
///
/// Regula falsi on `ln rate − ln goal` with the Illinois rule (the end that stays has its
/// value halved, so neither end sticks), which needs a handful of evaluations where
/// bisection needs `log2(hi − lo)`; after 12 steps it bisects, so it always ends.
fn min_blocks(rate: impl Fn(u64) -> f64, goal: f64, mut lo: u64, mut hi: u64) -> u64 {
    let excess = |blocks: u64| {
        if blocks == 0 {
            -libm::log(goal) // zero blocks: rate 1
        } else {
            libm::log(rate(blocks)) - libm::log(goal)
        }
    };
    let (mut f_lo, mut f_hi) = (excess(lo), excess(hi));
    let mut last_kept_lo: Option<bool> = None;
    let mut steps = 0;
    while hi - lo > 1 {
        steps += 1;
        let x = if steps <= 12 && f_lo.is_finite() && f_hi.is_finite() && f_lo > f_hi {
            let t = f_lo / (f_lo - f_hi);
            let x = lo as f64 + t * (hi - lo) as f64;
            (libm::round(x) as u64).clamp(lo + 1, hi - 1)
        } else {
            lo + (hi - lo) / 2
        };
        let f_x = excess(x);
        if f_x <= 0.0 {
            hi = x;
            f_hi = f_x;
            if last_kept_lo == Some(true) {
                f_lo /= 2.0;
            }
            last_kept_lo = Some(true);
        } else {
            lo = x;
            f_lo = f_x;
            if last_kept_lo == Some(false) {
                f_hi /= 2.0;
            }
            last_kept_lo = Some(false);
        }
    }
    hi
}
