//! One defence's side of the scenario: its traffic, its live changes and its accounting,
//! one request at a time. `lab run penetration` drives it for a fixed time per defence;
//! `lab live` drives every defence at once under the page's controls. Both read the
//! same per-second [`Row`]s, so the live view and the report cannot drift apart.
//!
//! Traffic: valid ids follow a Zipf(1) law over the first `n` products; a request is
//! for an id that never exists with probability `attack share` (far above every valid
//! and new id); one in 20 valid requests asks for a recently added product. Every 500
//! requests a new product is added (the guard first, then the database, so no client
//! ever sees a false "absent"); every 1000 one is deleted (database, then cache, then
//! the guard where it can remove). The random stream depends only on the seed and the
//! attack share, so defences given the same seed and shares see the same requests. An
//! attack can also replay a fixed list of ids ([`Scenario::replaying`]), the one case
//! where null caching helps.

use super::cache::Cache;
use super::db::Db;
use super::guard::{Guard, Rebuild};
use super::row::{FPR, Row};
use super::service::{Answer, serve};
use crate::support::stats::quantile;
use rand::{RngExt, SeedableRng, rngs::StdRng};
use std::collections::HashSet;
use std::time::Instant;

/// Zipf(1) over `0..n` by inverse CDF.
struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: u64) -> Self {
        let mut acc = 0.0;
        let mut cdf: Vec<f64> = (1..=n)
            .map(|i| {
                acc += 1.0 / i as f64;
                acc
            })
            .collect();
        let total = acc;
        cdf.iter_mut().for_each(|c| *c /= total);
        Zipf { cdf }
    }
    fn sample(&self, rng: &mut StdRng) -> u64 {
        let u: f64 = rng.random();
        self.cdf.partition_point(|&c| c < u) as u64
    }
}

/// One defence: guard, cache and database, the traffic generator and the current
/// second's counters.
pub struct Scenario {
    defence: String,
    guard: Box<dyn Guard + Send>,
    cache: Box<dyn Cache + Send>,
    db: Db,
    null_caching: bool,
    n: u64,
    zipf: Zipf,
    rng: StdRng,
    next_new: u64,
    deleted: HashSet<u64>,
    requests: u64,
    current: Row,
    latencies_us: Vec<f64>,
    /// Attack ids come from this many distinct ids (a replayed list); `None`: they
    /// never repeat.
    attack_pool: Option<u64>,
}

impl Scenario {
    /// A defence over a database of products `0..n`; `seed` fixes its traffic.
    pub fn new(
        defence: &str,
        guard: Box<dyn Guard + Send>,
        cache: Box<dyn Cache + Send>,
        db: Db,
        n: u64,
        seed: u64,
        null_caching: bool,
    ) -> Scenario {
        let current = Row::empty(defence, cache.name(), guard.bytes() as u64, 0);
        Scenario {
            defence: defence.into(),
            guard,
            cache,
            db,
            null_caching,
            n,
            zipf: Zipf::new(n),
            rng: StdRng::seed_from_u64(seed ^ 0x9e37),
            next_new: n,
            deleted: HashSet::new(),
            requests: 0,
            current,
            latencies_us: Vec::new(),
            attack_pool: None,
        }
    }

    /// The same defence, its attack drawing from `pool` distinct ids that do not exist
    /// (a list an attacker replays) instead of ids that never repeat.
    pub fn replaying(mut self, pool: u64) -> Scenario {
        self.attack_pool = Some(pool.max(1));
        self
    }

    /// The defence's name.
    pub fn defence(&self) -> &str {
        &self.defence
    }

    /// Serves one request with `attack_share` of requests for ids that do not exist,
    /// after the periodic add and delete.
    pub fn step(&mut self, attack_share: f64) -> anyhow::Result<()> {
        self.requests += 1;
        self.current.attack_share = attack_share;
        if self.requests.is_multiple_of(500) {
            self.add_ids(1)?;
        }
        if self.requests.is_multiple_of(1000) {
            let victim = self.rng.random_range(self.n / 2..self.n);
            if self.deleted.insert(victim) {
                self.db.delete(victim)?;
                if let Err(e) = self.cache.invalidate(victim) {
                    eprintln!("warning: cache invalidation failed: {e}");
                }
                self.guard.remove(victim)?;
            }
        }
        let key = if self.rng.random::<f64>() < attack_share {
            let pool = self.attack_pool.unwrap_or(u32::MAX as u64);
            (self.n << 4) + self.rng.random_range(0..pool)
        } else if self.rng.random_range(0..20) == 0 && self.next_new > self.n {
            self.rng.random_range(self.n..self.next_new)
        } else {
            self.zipf.sample(&mut self.rng)
        };
        let exists = key < self.next_new && !self.deleted.contains(&key);
        let t = Instant::now();
        let outcome = serve(
            &mut *self.guard,
            &mut *self.cache,
            &self.db,
            key,
            self.null_caching,
        )?;
        let row = &mut self.current;
        row.requests += 1;
        match outcome.answer {
            Answer::Rejected => {
                row.rejections += 1;
                row.false_negatives += exists as u64;
            }
            Answer::CacheHit => row.cache_hits += 1,
            Answer::Found => row.db_queries += 1,
            Answer::Empty => {
                row.db_queries += 1;
                row.db_empty += 1;
            }
        }
        row.degraded += outcome.degraded as u64;
        if self.guard.filters() && !exists && !outcome.degraded {
            row.absent_checked += 1;
            row.false_positives += (outcome.answer != Answer::Rejected) as u64;
        }
        self.latencies_us
            .push(t.elapsed().as_nanos() as f64 / 1000.0);
        Ok(())
    }

    /// Adds `count` new products: the guard first, then the database.
    pub fn add_ids(&mut self, count: u64) -> anyhow::Result<()> {
        for _ in 0..count {
            self.guard.add(self.next_new)?;
            self.db.insert(self.next_new)?;
            self.next_new += 1;
        }
        Ok(())
    }

    /// Rebuilds the guard from the database where the defence can ([`Guard::rebuild`]),
    /// counted in the current second.
    pub fn rebuild(&mut self) -> Option<anyhow::Result<Rebuild>> {
        let done = self.guard.rebuild(&self.db, FPR)?;
        if done.is_ok() {
            self.current.rebuilds += 1;
        }
        Some(done)
    }

    /// Bit density per cell of the filter's address space, `cells` cells, where the
    /// defence's filter shows its bits.
    pub fn heatmap(&mut self, cells: usize) -> Option<anyhow::Result<Vec<f64>>> {
        self.guard.heatmap(cells)
    }

    /// Ends second `second`: latency quantiles and the capacity monitor go into its
    /// row, which is returned; the next second starts empty.
    pub fn finish_second(&mut self, second: u32) -> Row {
        let row = &mut self.current;
        row.second = second;
        row.p50_us = quantile(&self.latencies_us, 0.5);
        row.p99_us = quantile(&self.latencies_us, 0.99);
        self.latencies_us.clear();
        match self.guard.capacity(FPR) {
            None => {}
            Some(Ok(c)) => {
                row.fill_ratio = c.fill_ratio;
                row.estimated_len = Some(c.estimated_len);
                row.capacity = Some(c.capacity);
                row.estimated_fpr = c.estimated_fpr;
            }
            Some(Err(e)) => eprintln!("warning: capacity monitor of {}: {e:#}", self.defence),
        }
        let fresh = Row::empty(
            &self.defence,
            self.cache.name(),
            self.guard.bytes() as u64,
            second + 1,
        );
        std::mem::replace(&mut self.current, fresh)
    }
}
