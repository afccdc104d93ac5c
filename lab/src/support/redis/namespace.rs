//! The lab's keys in a user's Redis: one prefix per run, removed at the end.
//!
//! Every key the penetration scenario creates (the Redis-held filter and its shards,
//! the cache entries, RedisBloom's and the classic filter's keys, the side-by-side
//! filters) starts with one prefix, by default `linebloom:<run id>:` with the run id
//! `<unix seconds>-<pid>`, or the `--redis-prefix` the user gives.
//!
//! * **Before**: a prefix that already has keys is refused, so that the clean-up can
//!   only ever remove keys this run made.
//! * **After, and on error**: [`Namespace::clear`] removes exactly the keys under the
//!   prefix (`SCAN MATCH <prefix>*` with glob characters escaped, then `UNLINK`). The
//!   value's `Drop` clears too, so an early return or a panic leaves nothing behind
//!   where the server still answers.
//! * **Never**: `FLUSHDB`, `FLUSHALL`, or a `DEL` of a key outside the prefix.
//!
//! On a Redis Cluster the scan and the removal run on every master (found with
//! `CLUSTER SLOTS`), one key per `UNLINK`, since a cluster refuses one command over
//! keys of several slots.

use super::connection::{RedisTarget, connect};

/// A claimed key prefix on one Redis server or cluster.
pub struct Namespace {
    /// The servers to scan: the one server, or every cluster master.
    nodes: Vec<String>,
    cluster: bool,
    prefix: String,
    cleared: bool,
}

/// Keys per `SCAN` step and per `UNLINK`.
const STEP: usize = 1000;

impl Namespace {
    /// The default prefix for this process: `linebloom:<unix seconds>-<pid>:`.
    pub fn default_prefix() -> String {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        format!("linebloom:{secs}-{}:", std::process::id())
    }

    /// Claims `prefix` on the server at `url`: refused if it is empty or if any key
    /// already starts with it.
    pub fn claim_on(url: &str, prefix: &str) -> anyhow::Result<Namespace> {
        Namespace::claim(&RedisTarget::Single(url.into()), prefix)
    }

    /// Claims `prefix` on `target` (every master of a cluster): refused if it is empty
    /// or if any key already starts with it.
    pub fn claim(target: &RedisTarget, prefix: &str) -> anyhow::Result<Namespace> {
        anyhow::ensure!(
            !prefix.is_empty(),
            "the Redis key prefix must not be empty: the lab removes every key under its \
             prefix when it ends"
        );
        let (nodes, cluster) = match target {
            RedisTarget::Single(url) => (vec![url.clone()], false),
            RedisTarget::Cluster(urls) => (masters(urls)?, true),
        };
        let mut ns = Namespace {
            nodes,
            cluster,
            prefix: prefix.into(),
            // Nothing of ours is there yet: a refusal below must not clear.
            cleared: true,
        };
        let existing = ns.keys()?;
        if let Some(first) = existing.first() {
            anyhow::bail!(
                "{target} already has {} key(s) under the prefix {prefix:?} (for example \
                 {first:?}); choose another --redis-prefix, or remove them first: the lab only \
                 ever removes keys it created",
                existing.len()
            );
        }
        ns.cleared = false;
        Ok(ns)
    }

    /// The prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `<prefix><name>`.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Every key under the prefix, by `SCAN` on every node (never `KEYS`, which blocks
    /// the server).
    pub fn keys(&self) -> anyhow::Result<Vec<String>> {
        let mut out = Vec::new();
        for url in &self.nodes {
            out.extend(self.keys_on(url)?);
        }
        Ok(out)
    }

    /// The keys under the prefix on the server at `url`.
    fn keys_on(&self, url: &str) -> anyhow::Result<Vec<String>> {
        let mut con = connect(url)?;
        let pattern = format!("{}*", glob_escape(&self.prefix));
        let mut cursor: u64 = 0;
        let mut out = Vec::new();
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(STEP)
                .query(&mut con)?;
            out.extend(batch);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        // SCAN may return a key twice while the keyspace is rehashed.
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Removes every key under the prefix (`UNLINK`, freed in the background) and
    /// returns how many there were.
    pub fn clear(&mut self) -> anyhow::Result<usize> {
        let mut removed = 0;
        for url in &self.nodes {
            let keys = self.keys_on(url)?;
            let mut con = connect(url)?;
            for chunk in keys.chunks(STEP) {
                // Only keys SCAN matched with our escaped prefix; checked again here so
                // a pattern bug can never reach a foreign key.
                debug_assert!(chunk.iter().all(|k| k.starts_with(&self.prefix)));
                let ours = chunk.iter().filter(|k| k.starts_with(&self.prefix));
                let mut pipe = redis::pipe();
                if self.cluster {
                    for key in ours {
                        pipe.cmd("UNLINK").arg(key).ignore();
                    }
                } else {
                    pipe.cmd("UNLINK").arg(ours.collect::<Vec<_>>()).ignore();
                }
                pipe.query::<()>(&mut con)?;
            }
            removed += keys.len();
        }
        self.cleared = true;
        Ok(removed)
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        if !self.cleared
            && let Err(e) = self.clear()
        {
            eprintln!(
                "warning: could not remove the lab's Redis keys under {:?} at {}: {e:#}",
                self.prefix,
                self.nodes.join(",")
            );
        }
    }
}

/// The URLs of every master of the cluster that `seeds` belong to (`CLUSTER SLOTS` on
/// the first seed that answers).
fn masters(seeds: &[String]) -> anyhow::Result<Vec<String>> {
    let mut last = None;
    for seed in seeds {
        let slots = connect(seed).and_then(|mut con| {
            Ok(redis::cmd("CLUSTER")
                .arg("SLOTS")
                .query::<Vec<Vec<redis::Value>>>(&mut con)?)
        });
        match slots {
            Ok(slots) => {
                let mut urls = Vec::new();
                // Each range: [start, end, [host, port, id, …], replicas…].
                for range in &slots {
                    let master: Vec<redis::Value> = range
                        .get(2)
                        .map(redis::from_redis_value_ref)
                        .transpose()?
                        .unwrap_or_default();
                    let (Some(host), Some(port)) = (master.first(), master.get(1)) else {
                        anyhow::bail!("unexpected CLUSTER SLOTS reply from {seed}");
                    };
                    let host: String = redis::from_redis_value_ref(host)?;
                    let port: u16 = redis::from_redis_value_ref(port)?;
                    urls.push(format!("redis://{host}:{port}/"));
                }
                urls.sort();
                urls.dedup();
                anyhow::ensure!(!urls.is_empty(), "the cluster at {seed} serves no slots");
                return Ok(urls);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| anyhow::anyhow!("--redis-cluster needs at least one URL")))
}

/// `s` with Redis glob's special characters (`*`, `?`, `[`, `]`, `\`) escaped, so it
/// matches only itself in a `MATCH` pattern.
pub fn glob_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::glob_escape;

    #[test]
    fn glob_characters_are_escaped() {
        assert_eq!(glob_escape("linebloom:1-2:"), "linebloom:1-2:");
        assert_eq!(glob_escape(r"a*b?c[d]e\f"), r"a\*b\?c\[d\]e\\f");
    }
}
