//! [`RedisFilter`]: a handle on a filter held in Redis, its batches of inserts and
//! lookups on either [`BatchPath`], and the generation checks that keep a batch from
//! answering out of a generation a rebuild retired (`PROTOCOL.md`, "Batches and
//! generations").

use crate::error::classify;
use crate::meta::Meta;
use crate::{BatchPath, FilterConnection, Generation, MAX_RETRIES, RedisFilterError};
use linebloom::hash::{SCHEME, location, redis_bit_offset};
use linebloom::{Block, Blocks, BloomFilter, IntFold, Params};

/// A handle on a filter stored in Redis.
pub struct RedisFilter {
    pub(crate) prefix: String,
    /// How batches go to the server.
    pub(crate) path: BatchPath,
    /// The meta this handle last read, as stored and decoded.
    pub(crate) meta_text: String,
    pub(crate) meta: Meta,
}

impl RedisFilter {
    /// Writes `filter` into Redis under `prefix` as generation 1: every shard with
    /// `SET`, then, once they are all written, the meta. For a new prefix: a live filter
    /// is replaced with [`rebuild`](Self::rebuild), never with `store`.
    pub fn store<C: FilterConnection + ?Sized>(
        con: &mut C,
        prefix: &str,
        filter: &BloomFilter,
        shard_blocks: u64,
    ) -> Result<Self, RedisFilterError> {
        let live = Generation {
            number: 1,
            params: filter.params(),
            seed: linebloom::StableHasher::seed(filter.hasher()),
            shard_blocks,
        };
        let meta = Meta { live, next: None };
        let mut this = RedisFilter {
            prefix: prefix.into(),
            path: BatchPath::Commands,
            meta_text: meta.encode(),
            meta,
        };
        let shards = filter.as_blocks().chunks(shard_blocks as usize).enumerate();
        let sets = shards.map(|(i, shard)| {
            let mut set = redis::cmd("SET");
            set.arg(this.shard_key(&live, i as u64))
                .arg(linebloom::block::blocks_as_bytes(shard));
            set
        });
        con.run(sets.collect()).map_err(|e| classify(e, prefix))?;
        let mut set = redis::cmd("SET");
        set.arg(this.meta_key()).arg(&this.meta_text);
        con.run(vec![set]).map_err(|e| classify(e, prefix))?;
        this.path = BatchPath::detect(con)?;
        Ok(this)
    }

    /// Creates an empty filter of `params` in Redis (zeroed shards).
    pub fn create<C: FilterConnection + ?Sized>(
        con: &mut C,
        prefix: &str,
        params: Params,
        shard_blocks: u64,
    ) -> Result<Self, RedisFilterError> {
        RedisFilter::store(con, prefix, &BloomFilter::new(params), shard_blocks)
    }

    /// Opens the filter stored under `prefix`, checking its metadata and the length of
    /// every shard of the live generation.
    pub fn open<C: FilterConnection + ?Sized>(
        con: &mut C,
        prefix: &str,
    ) -> Result<Self, RedisFilterError> {
        let mut this = RedisFilter {
            prefix: prefix.into(),
            path: BatchPath::Commands,
            meta_text: String::new(),
            meta: Meta {
                live: Generation {
                    number: 0,
                    params: Params::new(1, 1).expect("a valid shape"),
                    seed: 0,
                    shard_blocks: 1,
                },
                next: None,
            },
        };
        this.refresh(con)?;
        this.path = BatchPath::detect(con)?;
        let live = this.meta.live;
        let strlens = (0..live.shards()).map(|shard| {
            let mut strlen = redis::cmd("STRLEN");
            strlen.arg(this.shard_key(&live, shard));
            strlen
        });
        let replies = con
            .run(strlens.collect())
            .map_err(|e| classify(e, prefix))?;
        for (shard, reply) in replies.iter().enumerate() {
            let len: usize = redis::from_redis_value(reply).map_err(RedisFilterError::Redis)?;
            let key = this.shard_key(&live, shard as u64);
            let needed = (live.shard_len(shard as u64) * 64) as usize;
            if len == 0 {
                return Err(RedisFilterError::Missing(key));
            }
            if len < needed {
                return Err(RedisFilterError::Truncated { key, len, needed });
            }
        }
        Ok(this)
    }

    /// Re-reads the meta.
    pub(crate) fn refresh<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
    ) -> Result<(), RedisFilterError> {
        let key = self.meta_key();
        let text: Option<String> = redis::cmd("GET")
            .arg(&key)
            .query(con.single())
            .map_err(|e| classify(e, &key))?;
        self.adopt(text)
    }

    /// Takes `text` (the meta as just read) as this handle's meta.
    pub(crate) fn adopt(&mut self, text: Option<String>) -> Result<(), RedisFilterError> {
        let text = text.ok_or_else(|| RedisFilterError::Missing(self.meta_key()))?;
        self.meta = Meta::decode(&text)?;
        self.meta_text = text;
        Ok(())
    }

    pub(crate) fn meta_key(&self) -> String {
        format!("{}:meta", self.prefix)
    }

    /// `<prefix>:{<generation>:<shard>}`: the hash tag spreads a filter's shards over
    /// a cluster's slots, and keeps a shard's scratch key (`…:load`) in its slot.
    pub(crate) fn shard_key(&self, g: &Generation, shard: u64) -> String {
        format!("{}:{{{}:{shard}}}", self.prefix, g.number)
    }

    /// How this handle sends batches: chosen when it was stored or opened.
    pub fn batch_path(&self) -> BatchPath {
        self.path
    }

    /// Sends batches by `path` from now on (the benches compare both on one server).
    /// [`BatchPath::Module`] on a server without the module fails every call with an
    /// unknown-command error.
    pub fn set_batch_path(&mut self, path: BatchPath) {
        self.path = path;
    }

    /// The live generation's shape.
    pub fn params(&self) -> Params {
        self.meta.live.params
    }

    /// The live generation, as this handle last read it.
    pub fn generation(&self) -> Generation {
        self.meta.live
    }

    /// Bytes of filter payload in Redis (live generation).
    pub fn bytes(&self) -> usize {
        self.meta.live.params.bytes()
    }

    /// The key's hash in generation `g`.
    pub(crate) fn hash(g: &Generation, key: u64) -> u64 {
        linebloom::Key::hash_key(&key, &IntFold::with_seed(g.seed))
    }

    /// (shard, block within shard, mask) of `key` in generation `g`.
    pub(crate) fn place(g: &Generation, key: u64) -> (u64, u64, Block) {
        let loc = location(Self::hash(g, key), g.params.blocks(), g.params.k());
        let b = loc.block as u64;
        (b / g.shard_blocks, b % g.shard_blocks, loc.mask)
    }

    /// Runs `read` (commands that read the live generation's shards) in one pipeline
    /// followed by a `GET` of the meta, until the live generation was the same at the
    /// end as the one the reads used; returns the replies before the meta's.
    ///
    /// That check suffices: generations only move forward, and a generation's shards
    /// are removed only after the meta has moved past it. So if the meta still names the
    /// same live generation after the reads, every read saw that generation whole.
    pub(crate) fn consistent_read<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
        mut read: impl FnMut(&Self, &mut Vec<redis::Cmd>),
    ) -> Result<Vec<redis::Value>, RedisFilterError> {
        for _ in 0..MAX_RETRIES {
            let used = self.meta.live.number;
            let mut cmds = Vec::new();
            read(self, &mut cmds);
            match self.then_meta(con, cmds) {
                Ok((replies, meta)) => {
                    self.adopt(meta)?;
                    if self.meta.live.number == used {
                        return Ok(replies);
                    }
                }
                Err(RedisFilterError::Missing(key)) => self.moved_on(con, key)?,
                Err(e) => return Err(e),
            }
        }
        Err(RedisFilterError::Stale(self.prefix.clone()))
    }

    /// After a batch met a missing shard (the module refuses one, where `GETRANGE`
    /// reads it as empty and `BITFIELD` re-creates it): re-reads the meta. If it moved
    /// on, a rebuild removed the generation the batch used, and the caller retries
    /// against the new meta; if not, the shard is really gone, and that is the error.
    pub(crate) fn moved_on<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
        missing: String,
    ) -> Result<(), RedisFilterError> {
        let before = self.meta_text.clone();
        self.refresh(con)?;
        if self.meta_text == before {
            return Err(RedisFilterError::Missing(missing));
        }
        Ok(())
    }

    /// On one server, with the module: runs the module commands `build` makes, each
    /// guarded by `META <meta key> <meta text>`, so each checks on the server, in the
    /// same step as its read or write, that the meta is still the one this handle
    /// computed against: one command per shard, and no `GET` of the meta. A refusal
    /// (`LBSTALE`: the meta moved on, and the command did nothing) re-reads the meta and
    /// runs the batch again; a missing shard is handled as in
    /// [`consistent_read`](Self::consistent_read).
    fn guarded<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
        mut build: impl FnMut(&Self, &mut Vec<redis::Cmd>),
    ) -> Result<Vec<redis::Value>, RedisFilterError> {
        debug_assert!(con.ordered() && self.path == BatchPath::Module);
        for _ in 0..MAX_RETRIES {
            let mut cmds = Vec::new();
            build(self, &mut cmds);
            let meta_key = self.meta_key();
            for cmd in &mut cmds {
                cmd.arg("META").arg(&meta_key).arg(&self.meta_text);
            }
            match con.run(cmds) {
                Ok(replies) => return Ok(replies),
                Err(e) if e.code() == Some("LBSTALE") => self.refresh(con)?,
                Err(e) => match classify(e, &self.prefix) {
                    RedisFilterError::Missing(key) => self.moved_on(con, key)?,
                    e => return Err(e),
                },
            }
        }
        Err(RedisFilterError::Stale(self.prefix.clone()))
    }

    /// Runs `cmds`, then a `GET` of the meta that runs after all of them: in the same
    /// pipeline on one server, in a round trip of its own on a cluster.
    pub(crate) fn then_meta<C: FilterConnection + ?Sized>(
        &self,
        con: &mut C,
        mut cmds: Vec<redis::Cmd>,
    ) -> Result<(Vec<redis::Value>, Option<String>), RedisFilterError> {
        let fail = |e| classify(e, &self.prefix);
        let mut get = redis::cmd("GET");
        get.arg(self.meta_key());
        let (replies, meta) = if con.ordered() {
            cmds.push(get);
            let mut replies = con.run(cmds).map_err(fail)?;
            let meta = replies.pop();
            (replies, meta)
        } else {
            let replies = con.run(cmds).map_err(fail)?;
            (replies, con.run(vec![get]).map_err(fail)?.pop())
        };
        let meta = match meta {
            Some(v) => redis::from_redis_value(&v).map_err(RedisFilterError::Redis)?,
            None => None,
        };
        Ok((replies, meta))
    }

    /// Inserts keys into the live generation and, during a rebuild, the next one too.
    /// With the module on one server: one guarded `LINEBLOOM.MADD` per shard and
    /// generation ([`guarded`](Self::guarded)). Otherwise: one pipeline of a `BITFIELD`
    /// (or an unguarded `LINEBLOOM.MADD`) per key and generation, then a `GET` of the meta. If
    /// the meta is still the one the writes were computed against, they reached every
    /// generation a reader may use; else the handle takes the new meta, removes what
    /// its writes may have re-created in a generation that is gone, and writes again
    /// (`BITFIELD SET` is idempotent).
    pub fn insert_many<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
        keys: &[u64],
    ) -> Result<(), RedisFilterError> {
        if keys.is_empty() {
            return Ok(());
        }
        if self.path == BatchPath::Module && con.ordered() {
            // Guarded writes: a command whose meta check fails writes nothing, and the
            // module never creates a shard, so no generation that is gone can come back.
            self.guarded(con, |this, cmds| {
                for g in std::iter::once(this.meta.live).chain(this.meta.next) {
                    cmds.extend(this.module_cmds("LINEBLOOM.MADD", &g, keys).map(|(c, _)| c));
                }
            })?;
            return Ok(());
        }
        for _ in 0..MAX_RETRIES {
            let written: Vec<Generation> = std::iter::once(self.meta.live)
                .chain(self.meta.next)
                .collect();
            let mut cmds = Vec::with_capacity(keys.len() * written.len());
            for g in &written {
                match self.path {
                    BatchPath::Commands => {
                        for &key in keys {
                            let (shard, b, mask) = Self::place(g, key);
                            let mut cmd = redis::cmd("BITFIELD");
                            cmd.arg(self.shard_key(g, shard));
                            for_each_bit(&mask, |j| {
                                cmd.arg("SET").arg("u1").arg(redis_bit_offset(b, j)).arg(1);
                            });
                            cmds.push(cmd);
                        }
                    }
                    BatchPath::Module => {
                        cmds.extend(self.module_cmds("LINEBLOOM.MADD", g, keys).map(|(c, _)| c))
                    }
                }
            }
            match self.then_meta(con, cmds) {
                Ok((_, meta)) => {
                    if meta.as_deref() == Some(self.meta_text.as_str()) {
                        return Ok(());
                    }
                    self.adopt(meta)?;
                }
                Err(RedisFilterError::Missing(key)) => self.moved_on(con, key)?,
                Err(e) => return Err(e),
            }
            for g in written {
                let current = g.number == self.meta.live.number
                    || self.meta.next.is_some_and(|n| n.number == g.number);
                if !current {
                    self.unlink_generation(con, &g)?;
                }
            }
        }
        Err(RedisFilterError::Stale(self.prefix.clone()))
    }

    /// Tests keys against the live generation: one atomic pipeline of the meta and a
    /// `GETRANGE` per key. An error if any block could not be read whole: never
    /// "absent" for a key that was not checked.
    pub fn contains_many<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
        keys: &[u64],
    ) -> Result<Vec<bool>, RedisFilterError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        if self.path == BatchPath::Module {
            return self.contains_many_module(con, keys);
        }
        let replies = self.consistent_read(con, |this, cmds| {
            let g = this.meta.live;
            for &key in keys {
                let (shard, b, _) = Self::place(&g, key);
                let mut getrange = redis::cmd("GETRANGE");
                getrange
                    .arg(this.shard_key(&g, shard))
                    .arg(b * 64)
                    .arg(b * 64 + 63);
                cmds.push(getrange);
            }
        })?;
        let g = self.meta.live;
        keys.iter()
            .zip(replies)
            .map(|(&key, reply)| {
                let (shard, _, mask) = Self::place(&g, key);
                let line: Vec<u8> = redis::from_redis_value(&reply)
                    .map_err(|e| classify(e, &self.shard_key(&g, shard)))?;
                test_line(&line, &mask, || self.shard_key(&g, shard))
            })
            .collect()
    }

    /// [`contains_many`](Self::contains_many) on [`BatchPath::Module`]: one
    /// `LINEBLOOM.MTEST` per shard the batch touches, then the meta.
    fn contains_many_module<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
        keys: &[u64],
    ) -> Result<Vec<bool>, RedisFilterError> {
        // The grouping of the last read, the one accepted (built from the live
        // generation, which the guard or the trailing meta read checked).
        let mut groups = Vec::new();
        let build = |this: &Self, cmds: &mut Vec<redis::Cmd>, groups: &mut Vec<_>| {
            let g = this.meta.live;
            groups.clear();
            for (cmd, group) in this.module_cmds("LINEBLOOM.MTEST", &g, keys) {
                cmds.push(cmd);
                groups.push(group);
            }
        };
        let replies = if con.ordered() {
            self.guarded(con, |this, cmds| build(this, cmds, &mut groups))?
        } else {
            self.consistent_read(con, |this, cmds| build(this, cmds, &mut groups))?
        };
        let g = self.meta.live;
        let mut answers = vec![false; keys.len()];
        for ((shard, members), reply) in groups.into_iter().zip(replies) {
            let bytes: Vec<u8> =
                redis::from_redis_value(&reply).map_err(RedisFilterError::Redis)?;
            if bytes.len() != members.len() {
                return Err(RedisFilterError::Reply(format!(
                    "LINEBLOOM.MTEST on {} answered {} of {} keys",
                    self.shard_key(&g, shard),
                    bytes.len(),
                    members.len()
                )));
            }
            for (i, answer) in members.into_iter().zip(bytes) {
                answers[i] = match answer {
                    0 => false,
                    1 => true,
                    other => {
                        return Err(RedisFilterError::Reply(format!(
                            "LINEBLOOM.MTEST answered byte {other}, not 0 or 1"
                        )));
                    }
                };
            }
        }
        Ok(answers)
    }

    /// One module command (`LINEBLOOM.MTEST` or `LINEBLOOM.MADD`) per shard of
    /// generation `g` that `keys` touch, in shard order, each with the indices (into
    /// `keys`) of the keys it carries. The probes are 16 bytes per key: block within
    /// the shard, then hash, little-endian (`lab/redis-module/src/batch.rs`).
    fn module_cmds<'a>(
        &'a self,
        name: &'a str,
        g: &'a Generation,
        keys: &[u64],
    ) -> impl Iterator<Item = (redis::Cmd, (u64, Vec<usize>))> + 'a {
        let mut shards: std::collections::BTreeMap<u64, (Vec<usize>, Vec<u8>)> = Default::default();
        for (i, &key) in keys.iter().enumerate() {
            let hash = Self::hash(g, key);
            let b = location(hash, g.params.blocks(), g.params.k()).block as u64;
            let (members, probes) = shards.entry(b / g.shard_blocks).or_default();
            members.push(i);
            probes.extend_from_slice(&(b % g.shard_blocks).to_le_bytes());
            probes.extend_from_slice(&hash.to_le_bytes());
        }
        shards.into_iter().map(move |(shard, (members, probes))| {
            let mut cmd = redis::cmd(name);
            cmd.arg(self.shard_key(g, shard))
                .arg(SCHEME)
                .arg(g.params.k())
                .arg(probes);
            (cmd, (shard, members))
        })
    }

    /// Inserts one key (one round trip).
    pub fn insert<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
        key: u64,
    ) -> Result<(), RedisFilterError> {
        self.insert_many(con, &[key])
    }

    /// Tests one key (one round trip).
    pub fn contains<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
        key: u64,
    ) -> Result<bool, RedisFilterError> {
        Ok(self.contains_many(con, &[key])?[0])
    }

    /// Reads the live generation back into process memory.
    pub fn load<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
    ) -> Result<BloomFilter, RedisFilterError> {
        let replies = self.consistent_read(con, |this, cmds| {
            let g = this.meta.live;
            for shard in 0..g.shards() {
                let mut get = redis::cmd("GET");
                get.arg(this.shard_key(&g, shard));
                cmds.push(get);
            }
        })?;
        let g = self.meta.live;
        let mut bytes = Vec::with_capacity(g.params.bytes());
        for (shard, reply) in replies.iter().enumerate() {
            let key = self.shard_key(&g, shard as u64);
            let part: Option<Vec<u8>> =
                redis::from_redis_value(reply).map_err(|e| classify(e, &key))?;
            let part = part.ok_or_else(|| RedisFilterError::Missing(key.clone()))?;
            let needed = (g.shard_len(shard as u64) * 64) as usize;
            if part.len() < needed {
                return Err(RedisFilterError::Truncated {
                    key,
                    len: part.len(),
                    needed,
                });
            }
            bytes.extend_from_slice(&part[..needed]);
        }
        let blocks: Box<[Block]> = bytes
            .chunks_exact(64)
            .map(|c| Block::from_le_bytes(c.try_into().expect("64 bytes")))
            .collect();
        BloomFilter::from_storage_with_hasher(
            Blocks::from(blocks),
            g.params.k(),
            IntFold::with_seed(g.seed),
        )
        .map_err(|e| RedisFilterError::BadMeta(e.to_string()))
    }
}

/// Calls `f` with the index (0..512) of every set bit of `mask`.
pub(crate) fn for_each_bit(mask: &Block, mut f: impl FnMut(u32)) {
    for (w, word) in mask.0.iter().enumerate() {
        let mut bits = *word;
        while bits != 0 {
            f((w * 64) as u32 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
}

/// Tests `mask` against a 64-byte line read from Redis; a short or empty line (missing
/// or truncated shard) is an error, never "absent".
pub(crate) fn test_line(
    line: &[u8],
    mask: &Block,
    key: impl Fn() -> String,
) -> Result<bool, RedisFilterError> {
    if line.is_empty() {
        return Err(RedisFilterError::Missing(key()));
    }
    let bytes: &[u8; 64] = line.try_into().map_err(|_| RedisFilterError::Truncated {
        key: key(),
        len: line.len(),
        needed: 64,
    })?;
    Ok(Block::from_le_bytes(bytes).contains_mask(mask))
}
