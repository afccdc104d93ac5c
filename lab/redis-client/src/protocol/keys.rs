//! The names of a filter's keys (its meta, each generation's shards, count keys and a
//! rebuild's scratch keys), the commands that remove them, and the random tags that
//! make a generation's names its own.

use super::exchange::Commands;
use crate::Generation;
use linebloom::IntFold;

/// A generation's key names and argument strings, made once per meta so that a call
/// formats nothing it can reuse.
#[derive(Debug)]
pub(crate) struct Keys {
    pub(crate) generation: Generation,
    pub(crate) hasher: IntFold,
    /// Shard key names.
    pub(crate) shards: Vec<String>,
    /// Each shard's count key (`<shard>:n`).
    pub(crate) counts: Vec<String>,
    /// Each shard's batch head for the module's commands ([`linebloom_redis_wire::Head`]).
    pub(crate) heads: Vec<String>,
    /// Each shard's length in bytes, as a command argument.
    pub(crate) bytes_arg: Vec<String>,
    /// `k`, as a command argument.
    pub(crate) k_arg: String,
}

impl Keys {
    pub(crate) fn new(prefix: &str, g: Generation) -> Keys {
        let shards: Vec<String> = (0..g.shards()).map(|s| g.shard_key(prefix, s)).collect();
        Keys {
            generation: g,
            hasher: IntFold::with_seed(g.seed),
            counts: shards.iter().map(|s| count_key(s)).collect(),
            heads: (0..g.shards())
                .map(|s| {
                    let (k, blocks) = (g.params.k(), g.shard_len(s));
                    linebloom_redis_wire::Head { k, blocks }.to_string()
                })
                .collect(),
            bytes_arg: (0..g.shards())
                .map(|s| (g.shard_len(s) * 64).to_string())
                .collect(),
            k_arg: g.params.k().to_string(),
            shards,
        }
    }

    /// The shard of a key's hash, and its block within that shard.
    pub(crate) fn place(&self, hash: u64) -> (usize, u64) {
        let block = linebloom::pattern::block_index(hash, self.generation.params.blocks()) as u64;
        (
            (block / self.generation.shard_blocks) as usize,
            block % self.generation.shard_blocks,
        )
    }

    /// Every key name of this generation (shards, counts, a rebuild's scratch keys),
    /// for `delete` and the removal of a retired generation.
    pub(crate) fn all(&self) -> Vec<String> {
        let scratch = self.shards.iter().map(|s| scratch_key(s));
        self.shards
            .iter()
            .chain(&self.counts)
            .cloned()
            .chain(scratch)
            .collect()
    }
}

/// The scratch key of a shard, which holds a rebuild's built bits until they are ORed
/// in.
pub(crate) fn scratch_key(shard: &str) -> String {
    format!("{shard}:load")
}

/// The count key of a shard.
pub(crate) fn count_key(shard: &str) -> String {
    format!("{shard}:n")
}

/// A count key's value ([`linebloom_redis_wire::count_bytes`]).
pub(crate) use linebloom_redis_wire::count_bytes;

/// `UNLINK` of each key.
pub(crate) fn unlinks<S: AsRef<str>>(keys: impl IntoIterator<Item = S>) -> Commands {
    keys.into_iter()
        .map(|key| {
            let mut unlink = redis::cmd("UNLINK");
            unlink.arg(key.as_ref());
            unlink
        })
        .collect()
}

/// A fresh random 64-bit value (generation tags, rebuild owners): the standard
/// library's per-process random keys, mixed with a counter and the clock, so two
/// processes or two calls never draw alike in practice.
pub(crate) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish()
}

/// The meta key of a prefix.
pub(crate) fn meta_key(prefix: &str) -> String {
    format!("{prefix}:meta")
}
