//! How the timing experiments turn a filter size into a key count.

use linebloom::Params;

/// The most keys linebloom's own sizing (`Params::for_fpr(n, p)`) fits in at most
/// `bytes`: how the timing experiments turn a filter size into a key count, so that
/// every contender is built for the same keys at the same rate by its own recipe.
pub fn keys_for_bytes(bytes: u64, p: f64) -> anyhow::Result<u64> {
    let fits =
        |n: u64| -> anyhow::Result<bool> { Ok(Params::for_fpr(n, p)?.bytes() as u64 <= bytes) };
    anyhow::ensure!(p < 0.5, "rate {p} is not below 1/2");
    anyhow::ensure!(fits(1)?, "{bytes} bytes hold no key at rate {p}");
    // Invariant: `lo` fits, `hi` does not (no filter at rate p < 1/2 spends under one
    // bit per key).
    let (mut lo, mut hi) = (1u64, bytes.saturating_mul(8).max(2));
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `keys_for_bytes` is exact: its count fits in the size and one more key does not.
    #[test]
    fn keys_for_bytes_is_the_largest_count_that_fits() {
        for bytes in [64u64, 16 << 10, 1 << 20, 64 << 20, 1 << 30] {
            for p in [0.1, 0.01, 1e-4] {
                let n = keys_for_bytes(bytes, p).unwrap();
                let size = |n| Params::for_fpr(n, p).unwrap().bytes() as u64;
                assert!(
                    size(n) <= bytes && size(n + 1) > bytes,
                    "{bytes} B at {p}: {n}"
                );
            }
        }
        assert!(keys_for_bytes(32, 0.01).is_err(), "less than one block");
    }
}
