//! Capacity monitoring: [`Capacity`], a filter's load read from its bits, and
//! [`RedisFilter::capacity`](crate::RedisFilter::capacity), which reads it from Redis.

use crate::{FilterConnection, RedisFilter, RedisFilterError};

/// A filter's load, read from its bits: what a service watches to decide when to
/// rebuild larger (the seeds' capacity monitoring).
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
    pub fn over_target(&self) -> bool {
        match self.estimated_fpr {
            Some(p) => p > self.target_fpr,
            None => self.estimated_len > self.capacity as f64,
        }
    }
}

impl RedisFilter {
    /// The live generation's load, from one `BITCOUNT` per shard (read atomically with
    /// the meta): the fill, the estimated count ([`Params::estimated_len`]), the
    /// capacity at `target`, and the rate the shape predicts at the estimated count. The
    /// server reads every byte of the filter (about 1 ms per 10 MB).
    pub fn capacity<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
        target: f64,
    ) -> Result<Capacity, RedisFilterError> {
        let replies = self.consistent_read(con, |this, cmds| {
            let g = this.meta.live;
            for shard in 0..g.shards() {
                let mut bitcount = redis::cmd("BITCOUNT");
                bitcount.arg(this.shard_key(&g, shard));
                cmds.push(bitcount);
            }
        })?;
        let mut ones = 0u64;
        for r in &replies {
            ones += redis::from_redis_value::<u64>(r).map_err(RedisFilterError::Redis)?;
        }
        let params = self.meta.live.params;
        let estimated_len = params.estimated_len(ones);
        let estimated_fpr = if estimated_len.is_finite() {
            params.expected_fpr(estimated_len.round() as u64)
        } else {
            1.0
        };
        Ok(Capacity {
            fill_ratio: Some(ones as f64 / params.bits() as f64),
            estimated_len,
            capacity: params.capacity_at(target),
            estimated_fpr: Some(estimated_fpr),
            target_fpr: target,
        })
    }
}
