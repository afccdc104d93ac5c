//! Sizing: typed errors for bad input, sane results for degenerate input, and the
//! theoretical functions' sanity against each other.

use linebloom::params::SIZING_MARGIN;
use linebloom::{
    ClassicParams, CountingParams, MAX_BYTES, Params, ParamsError, ScalableBloomFilter, fpr,
};

#[test]
fn bad_rates_are_refused() {
    for p in [0.0, -0.5, 1.0, 1.5, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(Params::for_fpr(100, p), Err(ParamsError::InvalidFpr)),
            "p = {p}"
        );
    }
}

#[test]
fn zero_capacity_is_refused() {
    assert_eq!(Params::for_fpr(0, 0.01), Err(ParamsError::ZeroCapacity));
    assert_eq!(
        Params::for_bits_per_key(0, 10.0),
        Err(ParamsError::ZeroCapacity)
    );
}

#[test]
fn bad_bits_per_key_are_refused() {
    for b in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(
                Params::for_bits_per_key(10, b),
                Err(ParamsError::InvalidBitsPerKey)
            ),
            "b = {b}"
        );
    }
}

#[test]
fn k_out_of_range_is_refused() {
    assert_eq!(Params::new(10, 0), Err(ParamsError::InvalidK(0)));
    assert_eq!(Params::new(10, 17), Err(ParamsError::InvalidK(17)));
    assert_eq!(Params::new(0, 8), Err(ParamsError::ZeroBlocks));
}

#[test]
fn oversize_is_refused_not_clamped() {
    assert!(matches!(
        Params::new(u64::MAX, 8),
        Err(ParamsError::TooLarge { .. })
    ));
    assert!(matches!(
        Params::new(MAX_BYTES / 64 + 1, 8),
        Err(ParamsError::TooLarge { .. })
    ));
    assert!(Params::new(MAX_BYTES / 64, 8).is_ok());
    // A capacity no filter could hold at the rate names the capacity.
    assert_eq!(
        Params::for_fpr(1 << 50, 1e-3),
        Err(ParamsError::CapacityTooLarge { capacity: 1 << 50 })
    );
    assert!(matches!(
        Params::for_bits_per_key(u64::MAX, 64.0),
        Err(ParamsError::TooLarge { .. })
    ));
}

#[test]
fn one_key_gets_one_block() {
    // One block meets any of these rates with k = 1 already; the fast shape k = 8 fits
    // in the same block, so sizing takes it.
    for p in [0.01, 1e-6] {
        let params = Params::for_fpr(1, p).unwrap();
        assert_eq!((params.blocks(), params.k()), (1, 8), "p = {p}");
    }
}

#[test]
fn huge_capacity_keeps_its_rate() {
    for n in [1_000_000_000u64, 20_000_000_000] {
        // 10 bits per key: 1.25 GB and 25 GB. A 32-bit target's largest filter is 2 GiB
        // (MAX_BYTES), so there the second is refused: by its capacity where even
        // `log2(1/p)` bits per key exceed that, else by the size the blocked layout needs.
        if n * 10 / 8 > MAX_BYTES {
            let err = Params::for_fpr(n, 0.01).unwrap_err();
            let floor_bytes = n as f64 * (1.0f64 / 0.01).log2() / 8.0;
            if floor_bytes > MAX_BYTES as f64 {
                assert_eq!(err, ParamsError::CapacityTooLarge { capacity: n });
            } else {
                assert!(matches!(err, ParamsError::TooLarge { .. }), "{n}: {err:?}");
            }
            continue;
        }
        let p = Params::for_fpr(n, 0.01).unwrap();
        assert!(p.expected_fpr(n) <= 0.01, "{n}: {}", p.expected_fpr(n));
        let bpk = p.bits_per_key(n);
        assert!((9.5..11.0).contains(&bpk), "{n}: {bpk} bits per key");
    }
    // Near the 64-bit hash's floor the formula accounts for full-hash collisions.
    let n = 1u64 << 36;
    assert!(fpr::blocked(1 << 34, 16, n) >= n as f64 / 2f64.powi(64));
}

#[test]
fn sizing_is_minimal() {
    for (n, p) in [
        (1_000u64, 0.1),
        (50_000, 0.01),
        (1_000_000, 0.001),
        (12_345, 1e-5),
    ] {
        let params = Params::for_fpr(n, p).unwrap();
        let goal = p * linebloom::params::SIZING_MARGIN;
        assert!(params.expected_fpr(n) <= goal);
        assert!(params.per_filter_fpr(n) <= p, "n = {n}, p = {p}");
        // The smallest filter that meets the goal with any k…
        let smallest = (1..=params.blocks() as u64)
            .rev()
            .take_while(|&b| (1..=16).any(|k| fpr::blocked(b, k, n) <= goal))
            .last()
            .unwrap();
        // …is what sizing returns; or a fast shape within the allowance that is itself
        // the smallest filter of its k; or a larger filter at the same k, when the
        // per-filter headroom needs it (one block less breaks the per-filter bound).
        let b = params.blocks() as u64;
        let k = params.k();
        if b != smallest {
            let shrunk = Params::new(b - 1, k).unwrap();
            if shrunk.per_filter_fpr(n) > p && fpr::blocked(b - 1, k, n) <= goal {
                continue; // headroom for the spread between filters
            }
            assert!(linebloom::params::FAST_K.contains(&k), "n = {n}, p = {p}");
            let allowance = smallest as f64 * linebloom::params::FAST_SHAPE_ALLOWANCE;
            assert!(b as f64 <= smallest as f64 + allowance, "n = {n}, p = {p}");
            assert!(fpr::blocked(b - 1, k, n) > goal, "n = {n}, p = {p}");
        }
    }
    // At 1% the fast shape is what sizing picks (1.5–1.8% more memory than k = 6).
    assert_eq!(Params::for_fpr(1_000_000, 0.01).unwrap().k(), 8);
}

#[test]
fn bits_per_key_picks_the_best_k() {
    let p = Params::for_bits_per_key(100_000, 12.0).unwrap();
    let best = (1..=16)
        .map(|k| fpr::blocked(p.blocks() as u64, k, 100_000))
        .fold(f64::INFINITY, f64::min);
    assert_eq!(p.expected_fpr(100_000), best);
}

#[test]
fn classic_formulas_agree_for_large_filters() {
    let (m, k, n) = (10_000_000u64, 7, 1_000_000u64);
    let exact = fpr::classic_exact(m, k, n);
    let approx = fpr::classic_approx(m as f64, k, n as f64);
    assert!((exact / approx - 1.0).abs() < 1e-3, "{exact} vs {approx}");
}

#[test]
fn classic_exact_matches_brute_force_on_a_tiny_filter() {
    // m = 4 bits, k = 2, n = 1: enumerate all 4^2 inserts × 4^2 queries.
    let mut fp = 0u32;
    for a in 0..4 {
        for b in 0..4 {
            for c in 0..4 {
                for d in 0..4 {
                    if [c, d].iter().all(|q| *q == a || *q == b) {
                        fp += 1;
                    }
                }
            }
        }
    }
    assert!((fpr::classic_exact(4, 2, 1) - fp as f64 / 256.0).abs() < 1e-12);
}

#[test]
fn blocked_is_worse_than_classic_at_equal_memory() {
    for bpk in [6.0, 10.0, 16.0] {
        let n = 100_000u64;
        let p = Params::for_bits_per_key(n, bpk).unwrap();
        let classic = (1..=16)
            .map(|k| fpr::classic_approx(p.bits() as f64, k, n as f64))
            .fold(1.0, f64::min);
        assert!(p.expected_fpr(n) > classic, "{bpk} bits/key");
    }
}

#[test]
fn absurd_sizes_answer_at_once() {
    // A formula that walks the binomial of block loads, whose spread grows with
    // √(keys per block), takes seconds or never returns on these
    // (`for_bits_per_key(2^63, 1e-9)` 7 s; `expected_fpr(2^63)` on 2 blocks over 300 s).
    // Above 10^4 keys per block the rate is exactly 1.0 in f64 (see `fpr`), and the
    // answers below are what the full sum gives. The time bound is only there so that a
    // regression fails instead of stalling CI: these now take microseconds, the bound
    // is 2 s for all of them together.
    let start = std::time::Instant::now();
    assert_eq!(Params::new(2, 8).unwrap().expected_fpr(1 << 63), 1.0);
    assert_eq!(fpr::counting(2, 9, 1 << 63), 1.0);
    assert_eq!(fpr::blocked(2, 7, 1 << 63), 1.0);
    assert_eq!(fpr::blocked(2, 16, u64::MAX), 1.0);
    assert!(Params::for_bits_per_key(1 << 63, 1e-9).is_ok());
    assert!(Params::for_bits_per_key(u64::MAX, 1e-16).is_ok());
    let too_many = |capacity| Some(ParamsError::CapacityTooLarge { capacity });
    assert_eq!(Params::for_fpr(1 << 62, 0.9).err(), too_many(1 << 62));
    assert_eq!(
        CountingParams::for_fpr(1 << 60, 0.5).err(),
        too_many(1 << 60)
    );
    assert_eq!(
        ClassicParams::for_fpr(1 << 60, 0.5).err(),
        too_many(1 << 60)
    );
    // (The first layer's rate is 0.9 · (1 − 0.8) = 0.18: above the hash's floor at
    // 2⁶⁰ keys, 1/16, so the capacity is what refuses it.)
    assert_eq!(
        ScalableBloomFilter::for_fpr(1 << 60, 0.9).err(),
        too_many(1 << 60)
    );
    // Just below the shortcut the sum still runs, and agrees that the block is full.
    assert!(fpr::blocked(1, 8, 9_999) > 1.0 - 1e-12);
    assert!(
        start.elapsed() < std::time::Duration::from_secs(2),
        "absurd sizes took {:?}",
        start.elapsed()
    );
}

#[test]
fn rates_below_the_hash_floor_are_refused_by_every_sizing_function() {
    // `ClassicParams::for_fpr(2^28, 1e-11)` cannot be met: full-hash collisions alone
    // give 2^28 / 2^64 = 1.5e-11. A rate at or below the floor (with the sizing margin)
    // is refused with its own error, whatever the memory, rather than searched up to
    // the largest filter. Each case fits in a 32-bit target's 2 GiB at `log2(1/p)` bits
    // per key, so the rate, not the capacity, is what every target blames.
    let floor_err = |capacity| ParamsError::FprBelowHashFloor { capacity };
    for (n, p) in [(1u64 << 24, 5e-13), (1 << 26, 1e-12), (1 << 28, 1e-11)] {
        assert!(n as f64 * f64::log2(1.0 / p) / 8.0 <= MAX_BYTES as f64);
        assert!(
            p * SIZING_MARGIN <= fpr::hash_floor(n),
            "{n} {p} is below the floor"
        );
        assert_eq!(Params::for_fpr(n, p), Err(floor_err(n)));
        assert_eq!(CountingParams::for_fpr(n, p), Err(floor_err(n)));
        assert_eq!(ClassicParams::for_fpr(n, p), Err(floor_err(n)));
        assert_eq!(ScalableBloomFilter::for_fpr(n, p).err(), Some(floor_err(n)));
    }
    // Where the capacity alone is past what any filter of the largest size holds, the
    // capacity is named, not the rate: `u64::MAX` keys at 1% need 9.6e18 bytes at least.
    for (n, p) in [(1u64 << 63, 0.01), (u64::MAX, 1e-9), (1 << 40, 5e-8)] {
        let too_many = ParamsError::CapacityTooLarge { capacity: n };
        assert_eq!(Params::for_fpr(n, p), Err(too_many));
        assert_eq!(CountingParams::for_fpr(n, p), Err(too_many));
        assert_eq!(ClassicParams::for_fpr(n, p), Err(too_many));
        assert_eq!(ScalableBloomFilter::for_fpr(n, p).err(), Some(too_many));
    }
    // Just above the floor the blocked sizing still answers, and keeps its promise.
    let n = 1u64 << 20;
    let p = 4.0 * fpr::hash_floor(n);
    let params = Params::for_fpr(n, p).unwrap();
    assert!(params.expected_fpr(n) <= p);
}

#[test]
fn classic_sizing_keeps_small_rates() {
    // `fpr::classic_exact` must not cancel to 0.0 for large m and k (then
    // `ClassicParams::for_fpr(1000, 1e-7)` would accept its first candidate, measured at
    // 3.6e-6, 36x the target). Its prediction must agree with the textbook formula
    // (which has no cancellation and is within a few percent at this size), and stay
    // at or below the target.
    for p in [1e-5, 1e-7, 1e-9] {
        let params = ClassicParams::for_fpr(1000, p).unwrap();
        let predicted = params.expected_fpr(1000);
        let textbook = fpr::classic_approx(params.bits() as f64, params.k(), 1000.0);
        assert!(
            predicted > 0.0 && predicted <= p,
            "{p}: {params:?} predicts {predicted}"
        );
        assert!(
            (predicted / textbook - 1.0).abs() < 0.05,
            "{p}: exact {predicted} vs textbook {textbook}"
        );
    }
}
