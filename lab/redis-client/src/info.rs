//! What a service reads about its filter: [`Info`] (shape, generation, count, the rate
//! at this count, the batch path, the eviction warning), [`Capacity`] (the load read
//! from the bits), and [`EvictionRisk`], read from the server's `maxmemory` settings.

use crate::{BatchPath, Generation};
use linebloom::Params;
use std::time::Duration;

/// A server setting under which Redis may remove the filter's keys on its own, so that
/// its keys cannot be checked until a rebuild. The filter never answers "absent" for
/// them (a missing key is an error), but the guard is down until then: keep its keys
/// out of eviction (`maxmemory-policy noeviction`, or a `volatile-*` policy and no TTL
/// on the filter).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EvictionRisk {
    /// `maxmemory` is set and `maxmemory-policy` evicts any key (`allkeys-*`).
    AllKeys {
        /// The policy.
        policy: String,
    },
    /// `maxmemory` is set, the policy evicts keys with a TTL (`volatile-*`), and the
    /// filter has one.
    VolatileWithTtl {
        /// The policy.
        policy: String,
    },
    /// The server did not tell (`INFO memory` refused, for example by an ACL).
    Unknown(String),
}

impl std::fmt::Display for EvictionRisk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvictionRisk::AllKeys { policy } => write!(
                f,
                "maxmemory-policy {policy} may evict the filter's keys; use noeviction, or a \
                 volatile-* policy without a TTL on the filter"
            ),
            EvictionRisk::VolatileWithTtl { policy } => write!(
                f,
                "maxmemory-policy {policy} may evict the filter's keys, which have a TTL"
            ),
            EvictionRisk::Unknown(why) => {
                write!(f, "could not read the server's eviction policy: {why}")
            }
        }
    }
}

/// The eviction risk `INFO memory`'s text shows for a filter with or without a TTL.
/// Redis evicts only when `maxmemory` is set.
pub(crate) fn eviction_risk(info: &str, has_ttl: bool) -> Option<EvictionRisk> {
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    let (Some(max), Some(policy)) = (field("maxmemory"), field("maxmemory_policy")) else {
        return Some(EvictionRisk::Unknown(
            "INFO memory has no maxmemory or maxmemory_policy field".into(),
        ));
    };
    if max == "0" {
        return None;
    }
    let policy = policy.to_string();
    if policy.starts_with("allkeys-") {
        Some(EvictionRisk::AllKeys { policy })
    } else if policy.starts_with("volatile-") && has_ttl {
        Some(EvictionRisk::VolatileWithTtl { policy })
    } else {
        None
    }
}

/// A rebuild in progress, as the meta shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RebuildState {
    /// The generation it builds.
    pub next: Generation,
    /// When its owner's lease ends, in the server's Unix milliseconds.
    pub lease_until_ms: u64,
}

/// What [`info`](crate::RedisFilter::info) reports: cheap to read (no scan of the
/// bits; [`measure`](crate::RedisFilter::measure) reads them).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Info {
    /// The live generation (number, shape, seed, shards).
    pub generation: Generation,
    /// A first build in progress (`open_or_build`), if any: when its builder's lease
    /// ends, in the server's Unix milliseconds. Lookups answer
    /// [`Building`](crate::RedisFilterError::Building) until it is done.
    pub building_until_ms: Option<u64>,
    /// A rebuild in progress, if any.
    pub rebuilding: Option<RebuildState>,
    /// The approximate count of distinct keys inserted (as `BF.CARD`): each insert
    /// adds the keys that had a bit clear. Keys whose bits all happened to be set
    /// already (false positives) are not counted, and a key inserted during a rebuild
    /// can be counted twice.
    pub count: u64,
    /// The fraction of bits a filter of this shape holding `count` keys is expected to
    /// have set.
    pub fill: f64,
    /// The false-positive rate the shape predicts at `count`.
    pub expected_fpr: f64,
    /// The filter's time to live, if it has one.
    pub ttl: Option<Duration>,
    /// Payload bytes of the live generation.
    pub bytes: u64,
    /// How batches go to the server.
    pub batch_path: BatchPath,
    /// Whether the server may evict the filter's keys.
    pub eviction: Option<EvictionRisk>,
}

impl Info {
    pub(crate) fn expected_fill(params: Params, count: u64) -> f64 {
        // Each key sets k of its block's 512 bits, each bit with chance k/512 per key
        // (distinct words for k ≤ 8); over Poisson block loads the expected fill is
        // 1 - exp(-count·k / bits).
        1.0 - (-(count as f64) * params.k() as f64 / params.bits() as f64).exp()
    }
}

/// A filter's load, read from its bits: what a service watches to decide when to
/// rebuild larger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capacity {
    /// Fraction of bits (counting filter: counters) that are set; `None` where the
    /// filter does not expose its bits (RedisBloom).
    pub fill_ratio: Option<f64>,
    /// Estimated distinct keys inserted.
    pub estimated_len: f64,
    /// The most keys the filter holds at the target rate.
    pub capacity: u64,
    /// The false-positive rate the filter gives now, estimated from its bits; `None`
    /// where they are not visible.
    pub estimated_fpr: Option<f64>,
    /// The rate the filter was sized for.
    pub target_fpr: f64,
}

impl Capacity {
    /// The alarm: the estimated rate is above the target, or, where the rate is not
    /// visible, the estimated count is above the capacity.
    #[must_use]
    pub fn over_target(&self) -> bool {
        match self.estimated_fpr {
            Some(p) => p > self.target_fpr,
            None => self.estimated_len > self.capacity as f64,
        }
    }

    /// The load of a shape with `ones` bits set, against `target`.
    #[must_use]
    pub fn of_bits(params: Params, ones: u64, target: f64) -> Capacity {
        let estimated_len = params.estimated_len(ones);
        let estimated_fpr = if estimated_len.is_finite() {
            params.expected_fpr(estimated_len.round() as u64)
        } else {
            1.0
        };
        Capacity {
            fill_ratio: Some(ones as f64 / params.bits() as f64),
            estimated_len,
            capacity: params.capacity_at(target),
            estimated_fpr: Some(estimated_fpr),
            target_fpr: target,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eviction_risk_follows_maxmemory_and_the_policy() {
        let info = |max: &str, policy: &str| {
            format!(
                "# Memory\r\nused_memory:1000\r\nmaxmemory:{max}\r\nmaxmemory_policy:{policy}\r\n"
            )
        };
        assert_eq!(eviction_risk(&info("0", "allkeys-lru"), true), None);
        assert_eq!(
            eviction_risk(&info("1000000", "allkeys-lru"), false),
            Some(EvictionRisk::AllKeys {
                policy: "allkeys-lru".into()
            })
        );
        assert_eq!(eviction_risk(&info("1000000", "volatile-lru"), false), None);
        assert_eq!(
            eviction_risk(&info("1000000", "volatile-ttl"), true),
            Some(EvictionRisk::VolatileWithTtl {
                policy: "volatile-ttl".into()
            })
        );
        assert_eq!(eviction_risk(&info("1000000", "noeviction"), true), None);
        assert!(matches!(
            eviction_risk("# Memory\r\n", false),
            Some(EvictionRisk::Unknown(_))
        ));
    }

    #[test]
    fn the_expected_fill_matches_a_filled_filter() {
        let params = Params::for_fpr(100_000, 0.01).unwrap();
        let mut f = linebloom::BloomFilter::new(params);
        f.extend(0..100_000u64);
        let expected = Info::expected_fill(params, 100_000);
        assert!(
            (f.fill_ratio() - expected).abs() < 0.002,
            "{} against {expected}",
            f.fill_ratio()
        );
    }
}
