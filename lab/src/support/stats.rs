//! Small statistics: Wilson score intervals for measured rates, medians.

/// z for a two-sided 99% interval.
pub const Z99: f64 = 2.575_829_303_548_9;

/// The Wilson score interval for `successes` out of `trials` at normal quantile `z`:
/// valid near 0 (where the normal interval goes negative), which is where filter rates
/// live.
pub fn wilson(successes: u64, trials: u64, z: f64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// Median, minimum and maximum of samples (the median of an even count is the upper
/// middle). Empty input gives NaNs.
pub fn summary(samples: &[f64]) -> (f64, f64, f64) {
    if samples.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// The `q` quantile (0..=1) of samples, nearest rank.
pub fn quantile(samples: &[f64], q: f64) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
    v[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_brackets_the_rate_and_stays_in_range() {
        let (lo, hi) = wilson(10, 1000, Z99);
        assert!(lo < 0.01 && 0.01 < hi);
        assert!(lo > 0.003 && hi < 0.025, "{lo} {hi}");
        let (lo, hi) = wilson(0, 100, Z99);
        assert_eq!(lo, 0.0);
        assert!(hi > 0.0 && hi < 0.08);
    }

    #[test]
    fn summaries() {
        assert_eq!(summary(&[3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.0);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0], 0.99), 4.0);
    }
}
