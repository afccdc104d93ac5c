//! The scenario's CSV row ([`Row`]: one defence, one second), its name and its target
//! rate, which every part of the scenario shares.

use linebloom_redis_client::Capacity;
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "penetration";
/// Target false-positive rate of every filter in the scenario.
pub const FPR: f64 = 0.01;

/// One CSV row: one defence, one second.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Defence.
    #[serde(alias = "scheme")]
    pub contender: String,
    /// Cache used (lru or redis).
    pub cache: String,
    /// Second since the defence's start.
    pub second: u32,
    /// Share of requests for ids that do not exist, during this second.
    pub attack_share: f64,
    /// Requests answered.
    pub requests: u64,
    /// Database queries.
    pub db_queries: u64,
    /// Database queries that found nothing.
    pub db_empty: u64,
    /// Cache hits.
    pub cache_hits: u64,
    /// Requests the filter answered "absent".
    pub rejections: u64,
    /// Requests for absent ids that the filter let through (its false positives).
    pub false_positives: u64,
    /// Requests for absent ids that reached the filter.
    pub absent_checked: u64,
    /// Requests whose guard or cache could not be checked (treated as "maybe").
    pub degraded: u64,
    /// Valid ids the filter called absent: must be 0.
    pub false_negatives: u64,
    /// Median latency, µs.
    pub p50_us: f64,
    /// 99th-percentile latency, µs.
    pub p99_us: f64,
    /// Filter memory in bytes.
    pub filter_bytes: u64,
    /// The filter's fill ratio at the end of this second (empty: no filter, or its bits
    /// are not visible, as in RedisBloom).
    #[serde(default)]
    pub fill_ratio: Option<f64>,
    /// Its estimated count of keys at the end of this second.
    #[serde(default)]
    pub estimated_len: Option<f64>,
    /// The most keys it holds at the target rate ([`FPR`]).
    #[serde(default)]
    pub capacity: Option<u64>,
    /// The rate it gives now, estimated from its bits.
    #[serde(default)]
    pub estimated_fpr: Option<f64>,
    /// Rebuilds from the database during this second (the Redis-held linebloom filter
    /// is rebuilt at each attack phase change; see [`Guard::rebuild`](super::guard::Guard::rebuild)).
    #[serde(default)]
    pub rebuilds: u64,
}

impl Row {
    /// The capacity monitor's sample in this row, where the defence has one.
    pub fn capacity(&self) -> Option<Capacity> {
        Some(Capacity {
            fill_ratio: self.fill_ratio,
            estimated_len: self.estimated_len?,
            capacity: self.capacity?,
            estimated_fpr: self.estimated_fpr,
            target_fpr: FPR,
        })
    }

    /// A row with no requests yet, for `defence` over `cache`, second `second`.
    pub fn empty(defence: &str, cache: &str, filter_bytes: u64, second: u32) -> Row {
        Row {
            contender: defence.into(),
            cache: cache.into(),
            second,
            attack_share: 0.0,
            requests: 0,
            db_queries: 0,
            db_empty: 0,
            cache_hits: 0,
            rejections: 0,
            false_positives: 0,
            absent_checked: 0,
            degraded: 0,
            false_negatives: 0,
            p50_us: 0.0,
            p99_us: 0.0,
            filter_bytes,
            fill_ratio: None,
            estimated_len: None,
            capacity: None,
            estimated_fpr: None,
            rebuilds: 0,
        }
    }
}
