//! Every kind's monitoring numbers (`estimated_len`, `estimated_fpr`, `fill_ratio`)
//! against measurement: after `n` distinct keys, the count and rate each filter reports
//! agree with what a seeded measurement finds.

mod common;

use common::{RELEASE, members, non_members};
use linebloom::*;

// ---- monitoring ------------------------------------------------------------------

/// One filter's monitoring numbers after `n` distinct keys, against measurement.
struct Monitored {
    name: &'static str,
    estimated_len: f64,
    estimated_fpr: f64,
    /// False positives among `probes` non-members.
    false_positives: u64,
}

impl Monitored {
    /// `estimated_len` within 3% of `n` (its standard error is under 0.5% at these
    /// sizes); the measured rate within 5 binomial standard deviations of
    /// `estimated_fpr` (which is exact given the bits, so the count of false positives
    /// is Binomial(probes, estimated_fpr) up to the hash's deviation from ideal, for
    /// which 3% of the rate is allowed on top).
    fn check(&self, n: usize, probes: u64) {
        let Monitored {
            name,
            estimated_len,
            estimated_fpr: p,
            ..
        } = *self;
        assert!(
            (estimated_len / n as f64 - 1.0).abs() < 0.03,
            "{name}: estimated_len {estimated_len} for {n} keys"
        );
        let measured = self.false_positives as f64 / probes as f64;
        let allowed = 5.0 * (p * (1.0 - p) / probes as f64).sqrt() + 0.03 * p;
        assert!(
            (measured - p).abs() <= allowed,
            "{name}: measured {measured}, estimated_fpr {p} (allowed ±{allowed})"
        );
    }
}

#[test]
fn every_filter_reports_count_and_rate_that_measurement_confirms() {
    // Every type's fill_ratio, estimated_len and estimated_fpr, checked against
    // measurement (the counting filter's rate needs its own formula: the plain one
    // predicts 0.001% where 0.95% is measured).
    let n = if RELEASE { 100_000 } else { 20_000 };
    let probes = if RELEASE { 1_000_000 } else { 200_000 };
    let keys = members(77, n);
    let fp = |contains: &dyn Fn(&u64) -> bool| {
        non_members(77).take(probes).filter(|k| contains(k)).count() as u64
    };
    let probes = probes as u64;

    let mut bloom = BloomFilter::for_fpr(n as u64, 0.01).unwrap();
    bloom.extend(keys.iter().copied());
    let atomic = AtomicBloomFilter::new(bloom.params());
    keys.iter().for_each(|k| {
        atomic.insert(k);
    });
    let mut classic = ClassicBloomFilter::new(ClassicParams::for_fpr(n as u64, 0.01).unwrap());
    keys.iter().for_each(|k| {
        classic.insert(k);
    });
    let mut counting = CountingBloomFilter::for_fpr(n as u64, 0.01).unwrap();
    counting.extend(keys.iter().copied());
    let mut scalable = ScalableBloomFilter::for_fpr(n as u64 / 8, 0.01).unwrap();
    keys.iter().for_each(|k| {
        scalable.insert(k).unwrap();
    });

    let monitored = [
        Monitored {
            name: "bloom",
            estimated_len: bloom.estimated_len(),
            estimated_fpr: bloom.estimated_fpr(),
            false_positives: fp(&|k| bloom.contains(k)),
        },
        Monitored {
            name: "atomic",
            estimated_len: atomic.estimated_len(),
            estimated_fpr: atomic.estimated_fpr(),
            false_positives: fp(&|k| atomic.contains(k)),
        },
        Monitored {
            name: "classic",
            estimated_len: classic.estimated_len(),
            estimated_fpr: classic.estimated_fpr(),
            false_positives: fp(&|k| classic.contains(k)),
        },
        Monitored {
            name: "counting",
            estimated_len: counting.estimated_len(),
            estimated_fpr: counting.estimated_fpr(),
            false_positives: fp(&|k| counting.contains(k)),
        },
        Monitored {
            name: "scalable",
            estimated_len: scalable.estimated_len(),
            estimated_fpr: scalable.estimated_fpr(),
            false_positives: fp(&|k| scalable.contains(k)),
        },
    ];
    for m in &monitored {
        m.check(n, probes);
    }

    // Each type reports the capacity it was sized for (with the sizing margin's headroom).
    let sized = n as u64;
    for (name, capacity) in [
        ("bloom", bloom.params().capacity_at(0.01)),
        ("counting", counting.capacity_at(0.01)),
        ("classic", classic.params().capacity_at(0.01)),
    ] {
        assert!(
            capacity >= sized && capacity < sized + sized / 10,
            "{name}: capacity {capacity} for {sized} keys sized at 1%"
        );
    }

    // The counting filter's prediction uses its own formula and agrees with its state.
    let predicted = counting.expected_fpr(n as u64);
    assert!(predicted <= 0.01 && predicted > 0.005, "{predicted}");
    assert!((counting.estimated_fpr() / predicted - 1.0).abs() < 0.1);
    // Its plain copy answers alike and reports the same rate, but not the same count.
    let plain = counting.to_bloom();
    assert!((plain.estimated_fpr() / counting.estimated_fpr() - 1.0).abs() < 1e-12);
    assert!(plain.estimated_len() > 3.0 * n as f64);
    // The scalable filter's len() counts added keys: n minus false positives met.
    assert!(scalable.len() <= n as u64 && scalable.len() as f64 >= 0.98 * n as f64);
    assert!(scalable.estimated_fpr() <= scalable.fpr_bound());
}
