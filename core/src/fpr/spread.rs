//! How far one filter's rate strays from the average: the spread over key sets (or,
//! equally, hash seeds) that sizing adds as headroom so that the target holds for each
//! filter, not only on average.
//!
//! # The blocked filter
//!
//! A filter's rate for a random non-member is `R = (1/B) Σ_b g_b`, where `g_b` is the
//! chance that a query landing in block `b` finds all its positions set
//! ([`super::block_hit_rate`]). Over key sets the blocks are exchangeable, so
//! `Var R = Var(g)/B + (1 − 1/B)·Cov(g_1, g_2)`. `Var(g) = E[g²] − E[g]²` counts both
//! sources of spread: the uneven loads and, given a load, which positions the keys
//! happened to set. The covariance is negative: the loads sum to `n`, so a block with
//! more keys leaves fewer for the others, and the part of `g` that is linear in the load
//! cancels in the average. Dropping the covariance would overstate the spread 2–3×
//! (measured at 20–200 blocks); [`blocked_spread`] instead removes the linear part,
//! `Cov(g, L)² / Var(L)` with `L` a block's load (the conditioning of independent loads
//! on their sum), and returns `√((Var(g) − Cov(g, L)²/Var(L)) / B)`. That is an
//! estimate, not a bound: `tests/per_filter.rs` checks it against the spread measured
//! over 300 seeds (within ±15% from 10 blocks up; measured ÷ estimate read 0.94–1.03);
//! at one or two blocks the measured spread was up to 23% above the estimate, which the
//! tail quantile's margin (3 spreads, log-normal) absorbs, as the per-filter counts show.
//!
//! * `k ≥ 8`: given a load `x`, the words are independent, and a word holding `c` of the
//!   query's positions contributes `Y^c`, with `Y` its fraction of set positions. So
//!   `E[g² | x] = Π_w E[Y_w^{2c_w}]`, from the falling moments of the occupancy of `s`
//!   slots after `t = c·x` throws: `E[(X)_j] = (s)_j Σ_i (−1)^i C(j,i) (1 − i/s)^t`, and
//!   `Y² = ((X)_2 + X)/s²`, `Y⁴ = ((X)_4 + 6(X)_3 + 7(X)_2 + X)/s⁴`. The binomial
//!   mixture over loads is walked as in [`super::blocked`].
//! * `k < 8`: `g = (1/8) Σ_r P_r`, with `P_r` the product over the window of rotation
//!   `r`. By symmetry `E[g²] = (1/8) Σ_d E[P_0 P_d]`, and `E[P_0 P_d]` is the chance that
//!   two queries, with rotations 0 and `d`, both hit: a word in both windows holds two
//!   independent positions. Inclusion–exclusion over how many of a word's query
//!   positions a key must avoid (`c_w ≤ a_w`, with `a_w ∈ {1, 2}` positions) gives
//!   `E[P_0 P_d] = Σ_c Π_w coef(a_w, c_w) · (1 − (1 − A(c))/B)^n`, where
//!   `A(c) = (1/8) Σ_r Π_{w ∈ W_r} (1 − c_w/s)` is the chance one key avoids them,
//!   `coef(1, ·) = (1, −1)` and, for two positions that coincide with probability `1/s`,
//!   `coef(2, ·) = (1, −(2s − 1)/s, (s − 1)/s)`. At most `8 · 3⁷` terms; their
//!   magnitudes sum to at most `4⁷`, so rounding costs about `2·10⁻¹²` absolutely, far
//!   below the `E[g]²` (≥ 10⁻⁴ where `k < 8` is chosen) it is compared with.
//!
//! # The classic filter
//!
//! Its rate given the bits is `F^k`, with `F` the fraction set. The spread comes from
//! `Var F` (occupancy of `m` bits after `kn` throws, exact) by the delta method,
//! `σ_R ≈ k·E[F]^{k−1}·σ_F`. For a filter of at most 512 bits the delta method fails,
//! and [`classic_per_filter`] walks the exact distribution of set bits instead.

use super::{BIT_SLOTS, COUNTER_SLOTS, SATURATED_LOAD};
use libm::{exp, expm1, log1p, pow};

/// How far into the tail sizing reaches: a filter is sized so that the
/// `PER_FILTER_Z`-sigma quantile of its rate ([`per_filter_quantile`]: a log-normal with
/// the average and the spread as its moments) is at most the target. A normal tail at
/// 2.33 would be the 99th percentile; a filter of few blocks has a rate skewed to the
/// right (its worst blocks dominate at `k = 16`, and the counting filter's 16 positions
/// a word skew it more), and with `mean + 2.58·spread` up to 2.5% of 400 seeds broke a
/// target of 1e-4 or 1e-5. With 3 and the log-normal, none of 84 cells of 400 seeds
/// (p = 0.2 to 1e-5, n = 1 to 30 000) had more than 1% of its `BloomFilter`s or
/// counting filters above the target; `tests/per_filter.rs` and the lab's
/// `sizing_per_filter` experiment keep counting.
pub const PER_FILTER_Z: f64 = 3.0;

/// The rate that at most about 1% of filters exceed, from the average `mean` and the
/// spread `spread` over key sets: the `PER_FILTER_Z` quantile of a log-normal with those
/// moments, `mean / √(1 + c²) · exp(Z·√ln(1 + c²))` with `c = spread / mean`. A filter's
/// rate is a product of fill fractions, skewed to the right, and the log-normal follows
/// that skew; for a small spread it is `mean + Z·spread`.
///
/// ```
/// use linebloom::fpr::{PER_FILTER_Z, per_filter_quantile};
/// let q = per_filter_quantile(1e-3, 1e-6);
/// assert!((q - (1e-3 + PER_FILTER_Z * 1e-6)).abs() < 1e-8);
/// assert!(per_filter_quantile(1e-3, 3e-4) > 1e-3 + PER_FILTER_Z * 3e-4); // skewed
/// ```
#[must_use]
pub fn per_filter_quantile(mean: f64, spread: f64) -> f64 {
    if mean <= 0.0 || spread <= 0.0 {
        return mean;
    }
    let c = spread / mean;
    let log_var = log1p(c * c);
    mean * exp(PER_FILTER_Z * sqrt(log_var) - 0.5 * log_var)
}

/// The standard deviation, over key sets, of the false-positive rate of one blocked
/// filter (`blocks` × 512 bits, `k` bits per key, `n` keys) around [`super::blocked`]:
/// an estimate checked against measurement (see the module docs for the derivation and
/// its accuracy).
///
/// It shrinks as `1/√blocks`: sizing adds headroom for it only where blocks are few.
///
/// ```
/// use linebloom::fpr;
/// let small = fpr::blocked_spread(20, 8, 1_000);
/// let large = fpr::blocked_spread(20_000, 8, 1_000_000);
/// assert!(small / fpr::blocked(20, 8, 1_000) > 0.05); // 20 blocks: ±7%
/// assert!(large / fpr::blocked(20_000, 8, 1_000_000) < 0.01);
/// ```
#[must_use]
pub fn blocked_spread(blocks: u64, k: u32, n: u64) -> f64 {
    spread_with_slots(blocks, k, n, BIT_SLOTS)
}

/// [`blocked_spread`] for the counting filter (16 counter positions per word), around
/// [`super::counting`].
///
/// ```
/// assert!(linebloom::fpr::counting_spread(100, 8, 1_000) > 0.0);
/// ```
#[must_use]
pub fn counting_spread(blocks: u64, k: u32, n: u64) -> f64 {
    spread_with_slots(blocks, k, n, COUNTER_SLOTS)
}

/// The standard deviation, over key sets, of the rate `F^k` of one classic filter of
/// `m_bits` bits with `k` positions per key after `n` keys, by the delta method from the
/// exact variance of the fraction `F` of set bits.
///
/// ```
/// let s = linebloom::fpr::classic_spread(9_586, 7, 1_000);
/// assert!(s > 0.0 && s < 0.01 * 0.2);
/// ```
#[must_use]
pub fn classic_spread(m_bits: u64, k: u32, n: u64) -> f64 {
    if m_bits == 0 || n == 0 {
        return 0.0;
    }
    let m = m_bits as f64;
    let t = k as f64 * n as f64;
    // Clear bits Z: E[Z] = m·q^t, E[Z(Z−1)] = m(m−1)·q2^t, with q = 1 − 1/m, q2 = 1 − 2/m.
    let q_t = exp(t * log1p(-1.0 / m));
    let q2_t = if m_bits >= 2 {
        exp(t * log1p(-2.0 / m))
    } else {
        0.0
    };
    // q2^t − q^{2t} = q^{2t}·expm1(t·ln(1 − 1/(m−1)²)), without cancellation.
    let gap = if m_bits >= 2 {
        q_t * q_t * expm1(t * log1p(-1.0 / ((m - 1.0) * (m - 1.0))))
    } else {
        -q_t * q_t
    };
    let var_clear = (m * m * gap + m * (q_t - q2_t)).max(0.0);
    let sd_fill = sqrt(var_clear) / m;
    let fill = 1.0 - q_t;
    k as f64 * pow(fill, k as f64 - 1.0) * sd_fill
}

/// The largest classic filter (bits) and throws (`k·n`) for which
/// [`classic_per_filter`] walks the exact distribution of set bits (at most 10⁵ steps).
const EXACT_CLASSIC_BITS: u64 = 512;
const EXACT_CLASSIC_STEPS: f64 = 1e5;

/// The rate that at most about 1% of classic filters (`m_bits`, `k`, `n` keys) exceed.
///
/// A classic filter's rate is `(ones/m)^k`, rising with the number of set bits, so for a
/// small filter (`m ≤ 512` bits, `k·n·m ≤ 10⁵`) this is exact: the 99th percentile of
/// the number of distinct bits hit by `k·n` uniform throws (its distribution walked
/// throw by throw), as a rate. There the delta method of [`classic_spread`] fails: at
/// one key and 1e-4, 3% of filters broke the target with it. Larger filters use
/// [`per_filter_quantile`] of the average and [`classic_spread`].
///
/// ```
/// use linebloom::fpr::{classic_exact, classic_per_filter};
/// assert!(classic_per_filter(25, 13, 1) > classic_exact(25, 13, 1));
/// ```
#[must_use]
pub fn classic_per_filter(m_bits: u64, k: u32, n: u64) -> f64 {
    let throws = k as f64 * n as f64;
    if m_bits == 0 {
        return 1.0;
    }
    if m_bits > EXACT_CLASSIC_BITS || throws * m_bits as f64 > EXACT_CLASSIC_STEPS {
        let mean = super::classic_exact(m_bits, k, n);
        return per_filter_quantile(mean, classic_spread(m_bits, k, n));
    }
    let m = m_bits as usize;
    let mut dist = [0.0f64; EXACT_CLASSIC_BITS as usize + 1];
    dist[0] = 1.0;
    for _ in 0..throws as u64 {
        // A throw lands on a set bit with probability j/m.
        for j in (1..=m).rev() {
            dist[j] = dist[j] * j as f64 / m as f64 + dist[j - 1] * (m - j + 1) as f64 / m as f64;
        }
        dist[0] = 0.0;
    }
    let mut below = 0.0;
    for (ones, &p) in dist.iter().enumerate().take(m + 1) {
        below += p;
        if below >= 0.99 {
            return pow(ones as f64 / m as f64, k as f64);
        }
    }
    1.0
}

/// `√x` for `x ≥ 0`, as `e^{ln(x)/2}`. `libm::sqrt` is one `sqrtsd` in inline assembly
/// on x86 (and `libm::pow(x, 0.5)` calls it), which Miri cannot run, and sizing runs
/// under Miri in CI; `exp` and `log` are plain Rust, within a few ulps, and nothing
/// here needs more.
fn sqrt(x: f64) -> f64 {
    if x > 0.0 {
        exp(0.5 * libm::log(x))
    } else {
        0.0
    }
}

/// [`blocked_spread`] with `slots` positions per word.
fn spread_with_slots(blocks: u64, k: u32, n: u64, slots: f64) -> f64 {
    if blocks == 0 || k == 0 || k > crate::pattern::MAX_K || n == 0 {
        return 0.0;
    }
    if n as f64 / blocks as f64 >= SATURATED_LOAD {
        return 0.0; // every block is full: the rate is 1.0 for every filter
    }
    let [mean, square, cross] = if k >= 8 {
        unrotated_moments(blocks, k, n, slots)
    } else {
        rotated_moments(blocks, k, n, slots)
    };
    let var_block = square - mean * mean;
    // Remove the part of Var(g) that is linear in the load: the loads sum to n, so it
    // cancels in the average over blocks (module docs).
    let (nf, p) = (n as f64, 1.0 / blocks as f64);
    let var_load = nf * p * (1.0 - p);
    let linear = if var_load > 0.0 {
        let cov = cross - mean * nf * p;
        cov * cov / var_load
    } else {
        0.0
    };
    sqrt((var_block - linear).max(0.0) / blocks as f64)
}

/// `E[(X)_j]/s^j` for `j = 1..=4`, where `X` is the number of distinct slots of `s` hit
/// by `t` uniform throws.
fn falling_moments(s: f64, t: f64) -> [f64; 4] {
    let q: [f64; 5] = core::array::from_fn(|i| {
        if i as f64 >= s {
            0.0
        } else {
            exp(t * log1p(-(i as f64) / s))
        }
    });
    let binom = [
        [1.0, 0.0, 0.0, 0.0, 0.0],
        [1.0, 1.0, 0.0, 0.0, 0.0],
        [1.0, 2.0, 1.0, 0.0, 0.0],
        [1.0, 3.0, 3.0, 1.0, 0.0],
        [1.0, 4.0, 6.0, 4.0, 1.0],
    ];
    core::array::from_fn(|j0| {
        let j = j0 + 1;
        // P(j given slots are all hit), by inclusion–exclusion.
        let all_hit: f64 = (0..=j)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 } * binom[j][i] * q[i])
            .sum();
        let falling: f64 = (0..j).map(|i| (s - i as f64) / s).product();
        falling * all_hit.max(0.0)
    })
}

/// `[E g, E g², E g·L]` for `k ≥ 8` (`L` the block's load): per load, the words are
/// independent.
fn unrotated_moments(blocks: u64, k: u32, n: u64, slots: f64) -> [f64; 3] {
    let doubled = k - 8;
    let per_load = |x: f64| {
        let [m1, m2, _, _] = falling_moments(slots, x);
        let single = [m1, m2 + m1 / slots]; // E[Y], E[Y²]
        let [d1, d2, d3, d4] = falling_moments(slots, 2.0 * x);
        let s = slots;
        let double = [
            d2 + d1 / s,                                               // E[Y²]
            d4 + 6.0 * d3 / s + 7.0 * d2 / (s * s) + d1 / (s * s * s), // E[Y⁴]
        ];
        let [mean, square]: [f64; 2] = core::array::from_fn(|i| {
            pow(double[i], doubled as f64) * pow(single[i], (8 - doubled) as f64)
        });
        [mean, square, x * mean]
    };
    binomial_mixture(blocks, n, per_load)
}

/// `Σ_x P(X = x)·f(x)` for `X ~ Binomial(n, 1/blocks)`, walked out from the mode until
/// the weights fall below `1e-30` of the mode's.
fn binomial_mixture(blocks: u64, n: u64, f: impl Fn(f64) -> [f64; 3]) -> [f64; 3] {
    let nf = n as f64;
    if blocks == 1 {
        return f(nf);
    }
    let p = 1.0 / blocks as f64;
    let odds = p / (1.0 - p);
    let mode = libm::floor((nf + 1.0) * p).min(nf);
    let mut acc = f(mode);
    let mut weight_sum = 1.0;
    let mut add = |w: f64, x: f64| {
        for (a, v) in acc.iter_mut().zip(f(x)) {
            *a += w * v;
        }
        weight_sum += w;
    };
    let (mut w, mut x) = (1.0, mode);
    while x < nf && w >= 1e-30 {
        w *= (nf - x) / (x + 1.0) * odds;
        x += 1.0;
        add(w, x);
    }
    let (mut w, mut x) = (1.0, mode);
    while x > 0.0 && w >= 1e-30 {
        w *= x / (nf - x + 1.0) / odds;
        x -= 1.0;
        add(w, x);
    }
    acc.map(|a| a / weight_sum)
}

/// `[E g, E g², E g·L]` for `k < 8` (rotated windows; `L` the block's load): see the
/// module docs. A key avoids a set of positions with probability `A`, so over
/// `L ~ Binomial(n, 1/B)` keys: `E[A^L] = (1 − (1 − A)/B)^n` and
/// `E[L·A^L] = (n/B)·A·(1 − (1 − A)/B)^{n−1}`.
fn rotated_moments(blocks: u64, k: u32, n: u64, slots: f64) -> [f64; 3] {
    let windows: [u32; 8] = core::array::from_fn(|r| {
        (0..k)
            .map(|j| 1u32 << ((r as u32 + j) & 7))
            .fold(0, |a, b| a | b)
    });
    let (nf, p) = (n as f64, 1.0 / blocks as f64);
    let none_of = |avoid: f64| exp(nf * log1p(-(1.0 - avoid) * p));
    let load_times_none_of =
        |avoid: f64| nf * p * avoid * exp((nf - 1.0) * log1p(-(1.0 - avoid) * p));
    let one_query = positions_of(windows[0], 0);
    let mean = inclusion_exclusion(&windows, one_query, slots, none_of);
    let cross = inclusion_exclusion(&windows, one_query, slots, load_times_none_of);
    // E[P_0 P_d] = E[P_0 P_{8−d}] (shift both windows by −d), so d = 1..=3 count twice.
    let square = (0..=4)
        .map(|d| {
            let weight = if d == 0 || d == 4 { 1.0 } else { 2.0 };
            let positions = positions_of(windows[0], windows[d]);
            weight * inclusion_exclusion(&windows, positions, slots, none_of)
        })
        .sum::<f64>()
        / 8.0;
    [mean, square.max(0.0), cross]
}

/// The query positions in each word for two windows (a word in both holds two).
fn positions_of(first: u32, second: u32) -> [usize; 8] {
    core::array::from_fn(|w| ((first >> w) & 1) as usize + ((second >> w) & 1) as usize)
}

/// `Σ_c Π_w coef(a_w, c_w) · term(A(c))` over every count vector `c ≤ a` (`a` =
/// `positions`): the chance that all of the query positions are set, where
/// `term(A)` is the chance that the block's keys avoid a set of positions that one key
/// avoids with probability `A`.
fn inclusion_exclusion(
    windows: &[u32; 8],
    positions: [usize; 8],
    slots: f64,
    term: impl Fn(f64) -> f64,
) -> f64 {
    let coef_two = [1.0, -(2.0 * slots - 1.0) / slots, (slots - 1.0) / slots];
    let coef = |a: usize, c: usize| match (a, c) {
        (0, _) | (1, 0) => 1.0,
        (1, _) => -1.0,
        (_, c) => coef_two[c],
    };
    let k = windows[0].count_ones() as usize;
    let mut total = 0.0;
    let mut counts = [0usize; 8];
    // Per word: the chance that one key's bit there avoids the counted positions, and
    // the word's coefficient; both follow the counts as they step.
    let mut keep = [1.0f64; 8];
    let mut coefs: [f64; 8] = core::array::from_fn(|w| coef(positions[w], 0));
    loop {
        let sign: f64 = coefs.iter().product();
        let avoid = (0..8)
            .map(|r| (0..k).map(|j| keep[(r + j) & 7]).product::<f64>())
            .sum::<f64>()
            / 8.0;
        total += sign * term(avoid);
        // The next count vector (mixed radix, digit w in 0..=a_w).
        let mut w = 0;
        while w < 8 && counts[w] == positions[w] {
            counts[w] = 0;
            keep[w] = 1.0;
            coefs[w] = coef(positions[w], 0);
            w += 1;
        }
        if w == 8 {
            return total;
        }
        counts[w] += 1;
        keep[w] = 1.0 - counts[w] as f64 / slots;
        coefs[w] = coef(positions[w], counts[w]);
    }
}
