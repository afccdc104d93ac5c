//! Theoretical false-positive rates: the classic filter and this crate's blocked pattern.
//!
//! All three functions assume an ideal hash (independent uniform positions). The lab
//! plots them against measured rates; [`crate::Params`] sizes filters with [`blocked`].
//!
//! # The blocked formula
//!
//! For the pattern in [`crate::pattern`], with `B` blocks, `k` bits per key and `n` keys:
//! a query's block holds `X ~ Binomial(n, 1/B)` keys (Putze, Sanders and Singler (2007)
//! use the Poisson limit; the binomial is exact, and it matters when `B` is small).
//!
//! * `k ≥ 8`: no rotation, so the words are independent given `X = x`. Word `w` holds
//!   `c_w = 1 + [w < k−8]` of the query's bits and received `c_w·x` uniform throws from
//!   the block's keys. With `q = 63/64`:
//!   `P(c=1 bit set) = 1 − q^x`,
//!   `P(c=2 bits set) = (1/64)(1 − q^{2x}) + (63/64)(1 − 2q^{2x} + (62/64)^{2x})`
//!   (the two query bits coincide with probability 1/64). Then
//!   `FPR = Σ_x P(X=x) · Π_w P_w(x)`.
//! * `k < 8`: one bit per word, in a window of `k` words rotated by a per-key `r`. The
//!   rotation couples the words, so this uses inclusion–exclusion over the query's bits
//!   (query rotation 0, by symmetry). For a subset `S` of the query's words let
//!   `A(S) = (1/8) Σ_r q^{|S ∩ W_r|}` be the chance that one key in the block avoids all of
//!   `S` (`W_r` = the words of rotation `r`). Each of the `n` keys avoids `S` with
//!   probability `1 − (1 − A(S))/B`, so
//!   `FPR = Σ_{S ⊆ {0..k}} (−1)^{|S|} (1 − (1 − A(S))/B)^n`. This is exact (2^k ≤ 128
//!   terms, no cancellation problem at these sizes).
//!
//! Here `q = 63/64` and `62/64` stand for `1 − 1/s` and `1 − 2/s` with `s = 64` positions
//! per word; the counting filter ([`counting`]) uses the same formulas with `s = 16`.
//!
//! Finally the 64-bit hash puts a floor under any filter: a non-member shares its full
//! hash with one of the `n` members with probability `≈ n/2⁶⁴`, and then it is always a
//! false positive. [`blocked`] adds that floor: `FPR + (1 − FPR)·min(1, n/2⁶⁴)`.

use libm::{exp, log1p, pow};

mod spread;
pub use spread::{
    PER_FILTER_Z, blocked_spread, classic_per_filter, classic_spread, counting_spread,
    per_filter_quantile,
};

/// Positions per word: 64 bits for the Bloom filter, 16 four-bit counters for the
/// counting filter. The formulas below take it as `slots`.
const BIT_SLOTS: f64 = 64.0;
/// Counter positions per word of the counting filter.
const COUNTER_SLOTS: f64 = 16.0;

/// The textbook approximation `(1 − e^{−kn/m})^k` for a classic (unblocked) filter of
/// `m` bits.
///
/// ```
/// let p = linebloom::fpr::classic_approx(9_585_059.0, 7, 1_000_000.0);
/// assert!((p - 0.01).abs() < 1e-4);
/// ```
#[must_use]
pub fn classic_approx(m_bits: f64, k: u32, n: f64) -> f64 {
    pow(1.0 - exp(-(k as f64) * n / m_bits), k as f64)
}

/// The exact false-positive rate of a classic filter of `m` bits with `k` independent
/// uniform positions per key (drawn with replacement) after `n` keys.
///
/// It sums over `u`, the number of distinct positions of the query, and uses
/// inclusion–exclusion over them: `Σ_u P(U=u) Σ_s (−1)^s C(u,s) (1 − s/m)^{kn}`, with
/// `P(U=u) = S(k,u)·m(m−1)…(m−u+1)/m^k` (Stirling numbers of the second kind).
///
/// The inner sum alternates, and for large `m` and `k` its terms are up to `C(u, u/2)`
/// times larger than the result: at `m = 33 547`, `k = 23` (1000 keys at 1e-7) it
/// cancels to nothing in `f64`, and sizing once accepted such a filter at 36× its
/// target. Where the sum would keep fewer than 9 significant digits, that `u` uses the
/// product `(1 − (1 − 1/m)^{kn})^u` instead: the events "bit `i` is set" are negatively
/// associated (balls into bins), so the product is an upper bound, tight to `O(u²/m)`
/// relative in exactly the regime (large `m`) where the sum fails.
///
/// ```
/// let exact = linebloom::fpr::classic_exact(1000, 3, 100);
/// let approx = linebloom::fpr::classic_approx(1000.0, 3, 100.0);
/// assert!(exact > approx); // the approximation is optimistic for small m
/// ```
#[must_use]
pub fn classic_exact(m_bits: u64, k: u32, n: u64) -> f64 {
    if m_bits == 0 {
        return 1.0;
    }
    let k = k as usize;
    let m = m_bits as f64;
    let throws = (k as f64) * (n as f64);
    // Stirling numbers of the second kind S(k, u), k ≤ 64 fits comfortably in f64.
    let mut stirling = [[0f64; 65]; 65];
    stirling[0][0] = 1.0;
    for i in 1..=k.min(64) {
        let (prev, row) = stirling.split_at_mut(i);
        let prev = &prev[i - 1];
        for (u, cell) in row[0].iter_mut().enumerate().take(i + 1).skip(1) {
            *cell = u as f64 * prev[u] + prev[u - 1];
        }
    }
    let mut total = 0.0;
    for (u, &s_ku) in stirling[k.min(64)]
        .iter()
        .enumerate()
        .take(k.min(64) + 1)
        .skip(1)
    {
        if u as u64 > m_bits {
            break;
        }
        // P(U = u) = S(k,u) · Π_{i<u} (m − i)/m · m^{u−k}
        let mut p_u = s_ku * pow(m, u as f64 - k as f64);
        for i in 0..u {
            p_u *= (m - i as f64) / m;
        }
        let (mut all_set, mut magnitude) = (0.0, 0.0);
        let mut binom = 1.0;
        for s in 0..=u {
            let term = binom * exp(throws * log1p(-(s as f64) / m));
            all_set += if s % 2 == 0 { term } else { -term };
            magnitude += term;
            binom = binom * (u - s) as f64 / (s + 1) as f64;
        }
        // Rounding leaves an error of about u·ε·magnitude; keep ≥ 9 digits or bound.
        if all_set.is_nan() || all_set <= magnitude * 1e-9 {
            let one_set = -libm::expm1(throws * log1p(-1.0 / m));
            all_set = pow(one_set, u as f64);
        }
        total += p_u * all_set;
    }
    total.clamp(0.0, 1.0)
}

/// `base^exp` for a small non-negative integer exponent, by repeated multiplication
/// (exact to a few ulps; `pow` costs ten times more, and the sums below call this in
/// their inner loops).
#[inline]
fn powi(base: f64, exp: u32) -> f64 {
    let mut out = 1.0;
    for _ in 0..exp {
        out *= base;
    }
    out
}

/// The powers one block load `x` needs, for `k ≥ 8` with `slots` positions a word:
/// `q1^x`, `q1^{2x}` and `q2^{2x}`, where `q1 = 1 − 1/slots` and `q2 = 1 − 2/slots`.
/// [`blocked_unrotated`] steps them from one load to the next by one multiplication.
#[derive(Clone, Copy)]
struct LoadPowers {
    q1x: f64,
    q1_2x: f64,
    q2_2x: f64,
}

/// Probability that a block whose load has the powers `lp` answers "present" to a
/// non-member whose pattern lands there, for `k ≥ 8` (independent words), with `slots`
/// positions a word.
#[inline]
fn block_fpr_unrotated(k: u32, lp: LoadPowers, slots: f64) -> f64 {
    let q1 = 1.0 - 1.0 / slots;
    let single = 1.0 - lp.q1x;
    let double = (1.0 / slots) * (1.0 - lp.q1_2x) + q1 * (1.0 - 2.0 * lp.q1_2x + lp.q2_2x);
    let doubled_words = k.saturating_sub(8);
    powi(single, 8 - doubled_words) * powi(double, doubled_words)
}

/// `FPR` for `k ≥ 8`: the binomial mixture of [`block_fpr_unrotated`] over block loads.
fn blocked_unrotated(blocks: u64, k: u32, n: u64, slots: f64) -> f64 {
    let (q1, q2) = (1.0 - 1.0 / slots, 1.0 - 2.0 / slots);
    let at = |x: f64| LoadPowers {
        q1x: pow(q1, x),
        q1_2x: pow(q1, 2.0 * x),
        q2_2x: pow(q2, 2.0 * x),
    };
    if blocks == 1 {
        return block_fpr_unrotated(k, at(n as f64), slots);
    }
    let nf = n as f64;
    let p = 1.0 / blocks as f64;
    let odds = p / (1.0 - p);
    let mode = libm::floor((nf + 1.0) * p).min(nf);
    let start = at(mode);
    // One load step multiplies (up) or divides (down) the powers by these.
    let (s1, s1_2, s2_2) = (q1, q1 * q1, q2 * q2);
    // Unnormalised weights relative to the mode, walked outwards until they vanish
    // (below 1e-30 of the mode's weight: far beyond any rate this crate sizes for).
    let (mut weight_sum, mut acc) = (1.0, block_fpr_unrotated(k, start, slots));
    let (mut w, mut x, mut lp) = (1.0, mode, start);
    while x < nf {
        w *= (nf - x) / (x + 1.0) * odds;
        x += 1.0;
        lp.q1x *= s1;
        lp.q1_2x *= s1_2;
        lp.q2_2x *= s2_2;
        weight_sum += w;
        acc += w * block_fpr_unrotated(k, lp, slots);
        if w < 1e-30 {
            break;
        }
    }
    let (mut w, mut x, mut lp) = (1.0, mode, start);
    while x > 0.0 {
        w *= x / (nf - x + 1.0) / odds;
        x -= 1.0;
        lp.q1x /= s1;
        lp.q1_2x /= s1_2;
        lp.q2_2x /= s2_2;
        weight_sum += w;
        acc += w * block_fpr_unrotated(k, lp, slots);
        if w < 1e-30 {
            break;
        }
    }
    acc / weight_sum
}

/// `FPR` for `k < 8`: inclusion–exclusion over the query's words (see the module docs).
fn blocked_rotated(blocks: u64, k: u32, n: u64, slots: f64) -> f64 {
    let q1 = 1.0 - 1.0 / slots;
    let q1_pow: [f64; 9] = core::array::from_fn(|c| powi(q1, c as u32));
    // W_r: word w is in the window of rotation r iff (w − r) mod 8 < k.
    let windows: [u32; 8] = core::array::from_fn(|r| {
        (0..k)
            .map(|j| 1u32 << ((r as u32 + j) & 7))
            .fold(0, |a, b| a | b)
    });
    let nf = n as f64;
    let bf = blocks as f64;
    let mut total = 0.0;
    for subset in 0u32..(1 << k) {
        // A(S) = (1/8) Σ_r q^{|S ∩ W_r|}.
        let avoid = windows
            .iter()
            .map(|&window| q1_pow[(subset & window).count_ones() as usize])
            .sum::<f64>()
            / 8.0;
        let term = exp(nf * log1p(-(1.0 - avoid) / bf));
        total += if subset.count_ones() % 2 == 0 {
            term
        } else {
            -term
        };
    }
    total
}

/// The exact false-positive rate of this crate's blocked filter (`blocks` × 512 bits,
/// `k` bits per key) after `n` distinct keys, including the 64-bit hash's floor.
///
/// `k` outside `1..=16` or zero blocks give `1.0` (such a filter cannot exist).
///
/// ```
/// use linebloom::fpr;
/// // 10 bits per key at k = 7: a little worse than the classic filter's 0.82%.
/// let b = fpr::blocked(19_532, 7, 1_000_000);
/// let c = fpr::classic_approx(19_532.0 * 512.0, 7, 1e6);
/// assert!(b > c && b < 0.0125);
/// ```
#[must_use]
pub fn blocked(blocks: u64, k: u32, n: u64) -> f64 {
    with_slots(blocks, k, n, BIT_SLOTS)
}

/// The exact false-positive rate of the counting filter ([`crate::CountingBloomFilter`]):
/// the blocked formula with 16 counter positions per word instead of 64 bits (a
/// counter that is not zero plays the part of a set bit). Saturation does not change
/// it: a saturated counter is still non-zero.
///
/// ```
/// // At the same block count the counting filter has a quarter of the positions.
/// assert!(linebloom::fpr::counting(2_000, 6, 10_000) > linebloom::fpr::blocked(2_000, 6, 10_000));
/// ```
#[must_use]
pub fn counting(blocks: u64, k: u32, n: u64) -> f64 {
    with_slots(blocks, k, n, COUNTER_SLOTS)
}

/// Keys per block at and above which the blocked formula is exactly 1.0 in `f64`, so it
/// is returned without summing.
///
/// Why exact: with a mean load `λ ≥ 10⁴`, the binomial load `X` lies below
/// `λ − 40√λ ≥ 6000` with probability under `e⁻⁸⁰⁰`. For `x ≥ 6000` a word misses one
/// given position with probability at most `(15/16)^6000 < 10⁻¹⁶⁸` (counting filter; less
/// for 64 bit slots), so every factor of the block's rate rounds to 1.0, and so does the
/// mixture. Without this, the walk over loads grows with `√λ`: `for_bits_per_key(2⁶³,
/// 1e-9)` took 7 s, and `Params::new(2, 8).expected_fpr(2⁶³)` did not return.
const SATURATED_LOAD: f64 = 1e4;

/// The blocked formula for `slots` positions per word, plus the 64-bit hash's floor.
fn with_slots(blocks: u64, k: u32, n: u64, slots: f64) -> f64 {
    if blocks == 0 || k == 0 || k > crate::pattern::MAX_K {
        return 1.0;
    }
    if n == 0 {
        return 0.0;
    }
    let ideal = if n as f64 / blocks as f64 >= SATURATED_LOAD {
        1.0
    } else if k >= 8 {
        blocked_unrotated(blocks, k, n, slots)
    } else {
        blocked_rotated(blocks, k, n, slots)
    };
    let ideal = ideal.clamp(0.0, 1.0);
    let floor = hash_floor(n);
    ideal + (1.0 - ideal) * floor
}

/// The floor a 64-bit hash puts under any filter's rate after `n` distinct keys: a
/// non-member shares its full hash with a member with probability `min(1, n/2⁶⁴)`
/// (to first order), and is then always a false positive. No size reaches a rate at or
/// below it; the sizing functions refuse such targets with
/// [`crate::ParamsError::FprBelowHashFloor`].
///
/// ```
/// assert_eq!(linebloom::fpr::hash_floor(1 << 32), 1.0 / 4_294_967_296.0);
/// ```
#[must_use]
pub fn hash_floor(n: u64) -> f64 {
    (n as f64 / 18_446_744_073_709_551_616.0).min(1.0)
}

/// The chance that a non-member's `k` positions in one block all land on set positions,
/// given the fraction `fill[w]` of set positions in each word `w`: the per-block term of
/// the filters' `estimated_fpr`, exact for the pattern given the current bits.
///
/// Each position is uniform within its word, so a word that holds `c` of the query's
/// positions contributes `fill^c` (`k ≥ 8`: `c = 2` in the first `k − 8` words, else 1;
/// `k < 8`: one position in each of `k` consecutive words from a uniform rotation `r`,
/// averaged over the 8 rotations).
pub(crate) fn block_hit_rate(fill: [f64; 8], k: u32) -> f64 {
    if k >= 8 {
        let doubled = (k - 8) as usize;
        fill.iter()
            .enumerate()
            .map(|(w, &f)| if w < doubled { f * f } else { f })
            .product()
    } else {
        (0..8)
            .map(|r| (0..k as usize).map(|j| fill[(r + j) & 7]).product::<f64>())
            .sum::<f64>()
            / 8.0
    }
}

/// Estimated number of distinct keys from the fraction of positions still clear: each
/// key leaves a given position clear with probability `1 − k/positions`, so
/// `n̂ = ln(clear) / ln(1 − k/positions)`. A filter with no clear position gives
/// `f64::INFINITY`.
pub(crate) fn estimated_keys(clear_fraction: f64, k: u32, positions: f64) -> f64 {
    if clear_fraction <= 0.0 {
        return f64::INFINITY;
    }
    libm::log(clear_fraction) / libm::log1p(-(k as f64) / positions)
}

/// The information-theoretic lower bound on bits per key for false-positive rate `p`:
/// `log2(1/p)`.
///
/// ```
/// assert!((linebloom::fpr::bits_per_key_lower_bound(0.01) - 6.644).abs() < 1e-3);
/// ```
#[must_use]
pub fn bits_per_key_lower_bound(p: f64) -> f64 {
    -libm::log2(p)
}
