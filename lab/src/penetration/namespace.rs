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

use super::connect;

/// A claimed key prefix on one Redis server.
pub struct Namespace {
    url: String,
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
    pub fn claim(url: &str, prefix: &str) -> anyhow::Result<Namespace> {
        anyhow::ensure!(
            !prefix.is_empty(),
            "the Redis key prefix must not be empty: the lab removes every key under its \
             prefix when it ends"
        );
        let mut ns = Namespace {
            url: url.into(),
            prefix: prefix.into(),
            // Nothing of ours is there yet: a refusal below must not clear.
            cleared: true,
        };
        let existing = ns.keys()?;
        if let Some(first) = existing.first() {
            anyhow::bail!(
                "Redis at {url} already has {} key(s) under the prefix {prefix:?} (for example \
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

    /// Every key under the prefix, by `SCAN` (never `KEYS`, which blocks the server).
    pub fn keys(&self) -> anyhow::Result<Vec<String>> {
        let mut con = connect(&self.url)?;
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
        let keys = self.keys()?;
        let mut con = connect(&self.url)?;
        for chunk in keys.chunks(STEP) {
            // Only keys SCAN matched with our escaped prefix; checked again here so a
            // pattern bug can never reach a foreign key.
            debug_assert!(chunk.iter().all(|k| k.starts_with(&self.prefix)));
            let ours: Vec<&String> = chunk
                .iter()
                .filter(|k| k.starts_with(&self.prefix))
                .collect();
            if !ours.is_empty() {
                redis::cmd("UNLINK").arg(ours).query::<()>(&mut con)?;
            }
        }
        self.cleared = true;
        Ok(keys.len())
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        if !self.cleared
            && let Err(e) = self.clear()
        {
            eprintln!(
                "warning: could not remove the lab's Redis keys under {:?} at {}: {e:#}",
                self.prefix, self.url
            );
        }
    }
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
