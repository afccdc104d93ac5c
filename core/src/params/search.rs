//! The searches behind sizing: the smallest filter that meets a rate, the per-filter
//! headroom on top of it, the largest key count a shape holds, and the checks every
//! shape's constructor shares.

use super::{MAX_BLOCKS, MAX_BYTES, Params, ParamsError, SIZING_MARGIN};
use crate::block::Block;
use crate::fpr;
use crate::pattern::MAX_K;

impl Params {
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
    // No filter of any kind holds `capacity` keys at rate `fpr` in fewer than
    // `capacity · log2(1/fpr)` bits: past the largest filter, the capacity is what is too
    // large (for a huge capacity the hash floor below would blame the rate).
    if capacity as f64 * libm::log2(1.0 / fpr) / 8.0 > MAX_BYTES as f64 {
        return Err(ParamsError::CapacityTooLarge { capacity });
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
pub(super) fn min_blocks(rate: impl Fn(u64) -> f64, goal: f64, mut lo: u64, mut hi: u64) -> u64 {
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
