//! The cache in front of the database: an in-process LRU with a TTL (the embedded
//! default) or Redis with `SET … PX ttl`. Both store either a value or the "known empty"
//! marker that the null-caching defence writes.

use crate::support::redis::connection::Con;
use std::time::{Duration, Instant};

/// What a cache lookup found.
#[derive(Clone, Debug, PartialEq)]
pub enum Cached {
    /// A product.
    Value(String),
    /// The null-caching marker: the database had nothing for this key.
    Empty,
}

/// The marker stored for [`Cached::Empty`].
const EMPTY: &str = "\u{0}empty";

/// A cache.
pub trait Cache {
    /// The entry for `key`, if any and not expired.
    fn get(&mut self, key: u64) -> anyhow::Result<Option<Cached>>;
    /// Stores an entry with the cache's TTL.
    fn set(&mut self, key: u64, value: &Cached) -> anyhow::Result<()>;
    /// Drops an entry (after a delete in the database).
    fn invalidate(&mut self, key: u64) -> anyhow::Result<()>;
    /// Name for the CSV.
    fn name(&self) -> &'static str;
}

/// In-process LRU with a TTL.
pub struct LocalCache {
    lru: lru::LruCache<u64, (Cached, Instant)>,
    ttl: Duration,
}

impl LocalCache {
    /// Holds up to `capacity` entries for `ttl` each.
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        LocalCache {
            lru: lru::LruCache::new(std::num::NonZeroUsize::new(capacity.max(1)).expect("≥ 1")),
            ttl,
        }
    }
}

impl Cache for LocalCache {
    fn get(&mut self, key: u64) -> anyhow::Result<Option<Cached>> {
        match self.lru.get(&key) {
            Some((v, at)) if at.elapsed() < self.ttl => Ok(Some(v.clone())),
            Some(_) => {
                self.lru.pop(&key);
                Ok(None)
            }
            None => Ok(None),
        }
    }
    fn set(&mut self, key: u64, value: &Cached) -> anyhow::Result<()> {
        self.lru.put(key, (value.clone(), Instant::now()));
        Ok(())
    }
    fn invalidate(&mut self, key: u64) -> anyhow::Result<()> {
        self.lru.pop(&key);
        Ok(())
    }
    fn name(&self) -> &'static str {
        "lru"
    }
}

/// Redis as the cache: `GET`, `SET key value PX ttl`, `DEL`, under a key prefix, on one
/// server or a cluster.
pub struct RedisCache {
    con: Con,
    prefix: String,
    ttl_ms: u64,
    name: &'static str,
}

impl RedisCache {
    /// A cache on `con` with keys `prefix:<id>` and this TTL, named `name` in the CSV
    /// (`redis` or `redis-cluster`).
    pub fn new(con: Con, prefix: &str, ttl: Duration, name: &'static str) -> Self {
        RedisCache {
            con,
            prefix: prefix.to_string(),
            ttl_ms: ttl.as_millis() as u64,
            name,
        }
    }
}

impl Cache for RedisCache {
    fn get(&mut self, key: u64) -> anyhow::Result<Option<Cached>> {
        let v: Option<String> = redis::cmd("GET")
            .arg(format!("{}:{key}", self.prefix))
            .query(self.con.commands())?;
        Ok(v.map(|s| {
            if s == EMPTY {
                Cached::Empty
            } else {
                Cached::Value(s)
            }
        }))
    }
    fn set(&mut self, key: u64, value: &Cached) -> anyhow::Result<()> {
        let v = match value {
            Cached::Value(s) => s.as_str(),
            Cached::Empty => EMPTY,
        };
        redis::cmd("SET")
            .arg(format!("{}:{key}", self.prefix))
            .arg(v)
            .arg("PX")
            .arg(self.ttl_ms)
            .query::<()>(self.con.commands())?;
        Ok(())
    }
    fn invalidate(&mut self, key: u64) -> anyhow::Result<()> {
        redis::cmd("DEL")
            .arg(format!("{}:{key}", self.prefix))
            .query::<()>(self.con.commands())?;
        Ok(())
    }
    fn name(&self) -> &'static str {
        self.name
    }
}
