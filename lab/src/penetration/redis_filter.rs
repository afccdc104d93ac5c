//! A linebloom blocked filter held in Redis.
//!
//! The payload (blocks as little-endian `[u64; 8]`, exactly the binary format's
//! payload) is split over string keys `<prefix>:<shard>` of at most `shard_blocks` blocks
//! each, so no key approaches Redis's 512 MB string limit and shards can live on
//! different cluster nodes. `<prefix>:meta` holds `linebloom-v1 <blocks> <k> <seed>
//! <shard_blocks>`, so a reader checks it is talking to the filter it expects.
//!
//! * **Insert** is one atomic `BITFIELD <shard> SET u1 <off> 1 …` with the key's bits,
//!   where bit `j` of block `b` has Redis offset `512·b' + (j ^ 7)` (`b'` the block's index
//!   within its shard; [`linebloom::hash::redis_bit_offset`]).
//! * **Query** is one `GETRANGE` of the block's 64 bytes, tested with the core's own
//!   [`Block::contains_mask`].
//!
//! Both are one round trip and atomic per key; batches are pipelined. Hashing and the bit
//! pattern come from the core ([`linebloom::hash::location`]): nothing is re-implemented.
//!
//! A query that cannot check its block (server down, missing or truncated key, wrong
//! type) is an error, never "absent".

use super::guard::Capacity;
use linebloom::hash::{location, redis_bit_offset};
use linebloom::{Block, Blocks, BloomFilter, IntFold, Params};

/// Why the Redis-held filter could not answer.
#[derive(Debug)]
pub enum RedisFilterError {
    /// The filter's keys are not there (`<prefix>:meta` missing, or a shard missing).
    Missing(String),
    /// A key holds another Redis type (`WRONGTYPE`).
    WrongType(String),
    /// A shard is shorter than the filter needs: the payload was truncated.
    Truncated {
        /// The shard key.
        key: String,
        /// Bytes it has.
        len: usize,
        /// Bytes it needs.
        needed: usize,
    },
    /// The stored metadata does not describe a filter this code can use.
    BadMeta(String),
    /// Connection or protocol failure.
    Redis(redis::RedisError),
}

impl std::fmt::Display for RedisFilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RedisFilterError::Missing(k) => {
                write!(f, "filter key {k} does not exist (load the filter first)")
            }
            RedisFilterError::WrongType(k) => {
                write!(f, "key {k} holds a value of the wrong Redis type")
            }
            RedisFilterError::Truncated { key, len, needed } => {
                write!(
                    f,
                    "filter shard {key} is truncated: {len} bytes, needs {needed}"
                )
            }
            RedisFilterError::BadMeta(m) => write!(f, "bad filter metadata: {m}"),
            RedisFilterError::Redis(e) => write!(f, "redis: {e}"),
        }
    }
}

impl std::error::Error for RedisFilterError {}

fn classify(e: redis::RedisError, key: &str) -> RedisFilterError {
    if e.code() == Some("WRONGTYPE") {
        RedisFilterError::WrongType(key.to_string())
    } else {
        RedisFilterError::Redis(e)
    }
}

/// The batch query script: `KEYS` are the shard keys, `ARGV` pairs of (1-based shard
/// index, byte offset of the block). Returns every block's 64 bytes, concatenated; a
/// missing or short shard is an error reply, never a short answer.
pub const FETCH_BLOCKS: &str = r#"
local out = {}
for i = 1, #ARGV, 2 do
    local key = KEYS[tonumber(ARGV[i])]
    local at = tonumber(ARGV[i + 1])
    local line = redis.call('GETRANGE', key, at, at + 63)
    if #line ~= 64 then
        return redis.error_reply('truncated or missing filter shard ' .. key)
    end
    out[#out + 1] = line
end
return table.concat(out)
"#;

/// Appends `SET u1 <offset> 1` to a `BITFIELD` command for every bit of `mask` in block
/// `b` of its shard.
fn set_bits(cmd: &mut redis::Cmd, b: u64, mask: &Block) {
    for (w, word) in mask.0.iter().enumerate() {
        let mut bits = *word;
        while bits != 0 {
            let j = (w * 64) as u32 + bits.trailing_zeros();
            cmd.arg("SET").arg("u1").arg(redis_bit_offset(b, j)).arg(1);
            bits &= bits - 1;
        }
    }
}

/// Default shard size: 2^20 blocks = 64 MiB per key.
pub const DEFAULT_SHARD_BLOCKS: u64 = 1 << 20;

/// A handle on a filter stored in Redis.
pub struct RedisFilter {
    prefix: String,
    params: Params,
    hasher: IntFold,
    shard_blocks: u64,
}

impl RedisFilter {
    /// Writes `filter` into Redis under `prefix` (replacing what was there): metadata,
    /// then every shard with `SET`, in one `MULTI`/`EXEC` transaction.
    pub fn store(
        con: &mut redis::Connection,
        prefix: &str,
        filter: &BloomFilter,
        shard_blocks: u64,
    ) -> Result<Self, RedisFilterError> {
        let params = filter.params();
        let seed = linebloom::StableHasher::seed(filter.hasher());
        let mut pipe = redis::pipe();
        pipe.atomic();
        let meta = format!(
            "linebloom-v1 {} {} {} {}",
            params.blocks(),
            params.k(),
            seed,
            shard_blocks
        );
        pipe.cmd("SET")
            .arg(format!("{prefix}:meta"))
            .arg(meta)
            .ignore();
        for (i, shard) in filter.as_blocks().chunks(shard_blocks as usize).enumerate() {
            pipe.cmd("SET")
                .arg(format!("{prefix}:{i}"))
                .arg(linebloom::block::blocks_as_bytes(shard).to_vec())
                .ignore();
        }
        pipe.query::<()>(con).map_err(|e| classify(e, prefix))?;
        Ok(RedisFilter {
            prefix: prefix.into(),
            params,
            hasher: *filter.hasher(),
            shard_blocks,
        })
    }

    /// Creates an empty filter of `params` in Redis (zeroed shards).
    pub fn create(
        con: &mut redis::Connection,
        prefix: &str,
        params: Params,
        shard_blocks: u64,
    ) -> Result<Self, RedisFilterError> {
        RedisFilter::store(con, prefix, &BloomFilter::new(params), shard_blocks)
    }

    /// Opens the filter stored under `prefix`, checking its metadata and the length of
    /// every shard.
    pub fn open(con: &mut redis::Connection, prefix: &str) -> Result<Self, RedisFilterError> {
        let meta_key = format!("{prefix}:meta");
        let meta: Option<String> = redis::cmd("GET")
            .arg(&meta_key)
            .query(con)
            .map_err(|e| classify(e, &meta_key))?;
        let meta = meta.ok_or_else(|| RedisFilterError::Missing(meta_key.clone()))?;
        let f: Vec<&str> = meta.split(' ').collect();
        if f.len() != 5 || f[0] != "linebloom-v1" {
            return Err(RedisFilterError::BadMeta(meta.clone()));
        }
        let num = |s: &str| {
            s.parse::<u64>()
                .map_err(|_| RedisFilterError::BadMeta(meta.clone()))
        };
        let (blocks, k, seed, shard_blocks) = (num(f[1])?, num(f[2])?, num(f[3])?, num(f[4])?);
        if shard_blocks == 0 {
            return Err(RedisFilterError::BadMeta(meta.clone()));
        }
        let params = Params::new(blocks, k as u32)
            .map_err(|e| RedisFilterError::BadMeta(format!("{meta}: {e}")))?;
        let this = RedisFilter {
            prefix: prefix.into(),
            params,
            hasher: IntFold::with_seed(seed),
            shard_blocks,
        };
        for shard in 0..blocks.div_ceil(shard_blocks) {
            let key = this.shard_key(shard);
            let len: usize = redis::cmd("STRLEN")
                .arg(&key)
                .query(con)
                .map_err(|e| classify(e, &key))?;
            let needed = (this.shard_len(shard) * 64) as usize;
            if len == 0 {
                return Err(RedisFilterError::Missing(key));
            }
            if len < needed {
                return Err(RedisFilterError::Truncated { key, len, needed });
            }
        }
        Ok(this)
    }

    fn shard_key(&self, shard: u64) -> String {
        format!("{}:{shard}", self.prefix)
    }

    fn shard_len(&self, shard: u64) -> u64 {
        (self.params.blocks() as u64 - shard * self.shard_blocks).min(self.shard_blocks)
    }

    /// The filter's shape.
    pub fn params(&self) -> Params {
        self.params
    }

    /// Bytes of filter payload in Redis.
    pub fn bytes(&self) -> usize {
        self.params.bytes()
    }

    /// The key's hash (the same as the in-process filter's).
    pub fn hash(&self, key: u64) -> u64 {
        linebloom::Key::hash_key(&key, &self.hasher)
    }

    /// (shard key, block within shard, mask) for a hash.
    fn place(&self, hash: u64) -> (String, u64, Block) {
        let loc = location(hash, self.params.blocks(), self.params.k());
        let b = loc.block as u64;
        (
            self.shard_key(b / self.shard_blocks),
            b % self.shard_blocks,
            loc.mask,
        )
    }

    fn add_insert(&self, pipe: &mut redis::Pipeline, key: u64) {
        let (shard, b, mask) = self.place(self.hash(key));
        let mut cmd = redis::cmd("BITFIELD");
        cmd.arg(shard);
        set_bits(&mut cmd, b, &mask);
        pipe.add_command(cmd);
    }

    fn add_query(&self, pipe: &mut redis::Pipeline, key: u64) -> Block {
        let (shard, b, mask) = self.place(self.hash(key));
        pipe.cmd("GETRANGE").arg(shard).arg(b * 64).arg(b * 64 + 63);
        mask
    }

    /// Inserts keys, one atomic `BITFIELD` each, pipelined.
    pub fn insert_many(
        &self,
        con: &mut redis::Connection,
        keys: &[u64],
    ) -> Result<(), RedisFilterError> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for &k in keys {
            self.add_insert(&mut pipe, k);
            pipe.ignore();
        }
        pipe.query::<()>(con).map_err(|e| classify(e, &self.prefix))
    }

    /// Tests keys, one `GETRANGE` each, pipelined. An error if any block could not be
    /// read whole: never "absent" for a key that was not checked.
    pub fn contains_many(
        &self,
        con: &mut redis::Connection,
        keys: &[u64],
    ) -> Result<Vec<bool>, RedisFilterError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        let masks: Vec<Block> = keys.iter().map(|&k| self.add_query(&mut pipe, k)).collect();
        let lines: Vec<Vec<u8>> = pipe.query(con).map_err(|e| classify(e, &self.prefix))?;
        masks
            .iter()
            .zip(lines)
            .zip(keys)
            .map(|((mask, line), &key)| {
                let (shard, _, _) = self.place(self.hash(key));
                if line.is_empty() {
                    return Err(RedisFilterError::Missing(shard));
                }
                let bytes: &[u8; 64] =
                    line.as_slice()
                        .try_into()
                        .map_err(|_| RedisFilterError::Truncated {
                            key: shard,
                            len: line.len(),
                            needed: 64,
                        })?;
                Ok(Block::from_le_bytes(bytes).contains_mask(mask))
            })
            .collect()
    }

    /// Inserts keys with one `BITFIELD` per shard for the whole batch (every key's bits
    /// as `SET u1` operations of one command) instead of one `BITFIELD` per key. Atomic
    /// per shard and batch.
    ///
    /// Measured no faster than [`insert_many`](Self::insert_many) (0.93–0.94× on the
    /// reference machine, `benches` binary `redis_batch`), so the lab uses the pipelined
    /// form; this one stays for that comparison.
    pub fn insert_many_merged(
        &self,
        con: &mut redis::Connection,
        keys: &[u64],
    ) -> Result<(), RedisFilterError> {
        if keys.is_empty() {
            return Ok(());
        }
        let mut per_shard: Vec<(String, redis::Cmd)> = Vec::new();
        for &key in keys {
            let (shard, b, mask) = self.place(self.hash(key));
            let at = match per_shard.iter().position(|(s, _)| *s == shard) {
                Some(i) => i,
                None => {
                    let mut cmd = redis::cmd("BITFIELD");
                    cmd.arg(&shard);
                    per_shard.push((shard, cmd));
                    per_shard.len() - 1
                }
            };
            set_bits(&mut per_shard[at].1, b, &mask);
        }
        let mut pipe = redis::pipe();
        for (_, cmd) in per_shard {
            pipe.add_command(cmd).ignore();
        }
        pipe.query::<()>(con).map_err(|e| classify(e, &self.prefix))
    }

    /// Tests keys with one server-side script call ([`FETCH_BLOCKS`]) instead of one
    /// pipelined `GETRANGE` each: the script reads every key's 64-byte block and returns
    /// them as one string, which is tested here with the core's block test, as
    /// [`contains_many`](Self::contains_many) does. An error if any block could not be
    /// read whole.
    ///
    /// Measured 0.47–0.59× the speed of the pipelined `GETRANGE`s (Lua's per-key
    /// `redis.call` costs more than the parsing it saves; `benches` binary
    /// `redis_batch`), so the lab uses [`contains_many`](Self::contains_many); this one
    /// stays for that comparison.
    pub fn contains_many_scripted(
        &self,
        con: &mut redis::Connection,
        keys: &[u64],
    ) -> Result<Vec<bool>, RedisFilterError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let mut shards: Vec<String> = Vec::new();
        let mut invocation_args: Vec<u64> = Vec::with_capacity(2 * keys.len());
        let masks: Vec<Block> = keys
            .iter()
            .map(|&k| {
                let (shard, b, mask) = self.place(self.hash(k));
                let index = match shards.iter().position(|s| *s == shard) {
                    Some(i) => i,
                    None => {
                        shards.push(shard);
                        shards.len() - 1
                    }
                };
                invocation_args.push(index as u64 + 1);
                invocation_args.push(b * 64);
                mask
            })
            .collect();
        let script = redis::Script::new(FETCH_BLOCKS);
        let mut invocation = script.prepare_invoke();
        for shard in &shards {
            invocation.key(shard);
        }
        invocation.arg(invocation_args);
        let lines: Vec<u8> = invocation.invoke(con).map_err(|e| {
            if e.code().is_none() && e.to_string().contains("truncated") {
                RedisFilterError::Truncated {
                    key: self.prefix.clone(),
                    len: 0,
                    needed: 64,
                }
            } else {
                classify(e, &self.prefix)
            }
        })?;
        if lines.len() != 64 * keys.len() {
            return Err(RedisFilterError::Truncated {
                key: self.prefix.clone(),
                len: lines.len(),
                needed: 64 * keys.len(),
            });
        }
        Ok(masks
            .iter()
            .zip(lines.chunks_exact(64))
            .map(|(mask, line)| {
                let bytes: &[u8; 64] = line.try_into().expect("64-byte chunk");
                Block::from_le_bytes(bytes).contains_mask(mask)
            })
            .collect())
    }

    /// The filter's load, from one pipelined `BITCOUNT` per shard: the fill, the
    /// estimated count ([`Params::estimated_len`]), the capacity at `target`, and the
    /// rate the shape predicts at the estimated count. Cost: the server reads every
    /// byte of the filter (about 1 ms per 10 MB).
    pub fn capacity(
        &self,
        con: &mut redis::Connection,
        target: f64,
    ) -> Result<Capacity, RedisFilterError> {
        let shards = (self.params.blocks() as u64).div_ceil(self.shard_blocks);
        let mut pipe = redis::pipe();
        for shard in 0..shards {
            pipe.cmd("BITCOUNT").arg(self.shard_key(shard));
        }
        let counts: Vec<u64> = pipe.query(con).map_err(|e| classify(e, &self.prefix))?;
        let ones: u64 = counts.iter().sum();
        let estimated_len = self.params.estimated_len(ones);
        let estimated_fpr = if estimated_len.is_finite() {
            self.params.expected_fpr(estimated_len.round() as u64)
        } else {
            1.0
        };
        Ok(Capacity {
            fill_ratio: Some(ones as f64 / self.params.bits() as f64),
            estimated_len,
            capacity: self.params.capacity_at(target),
            estimated_fpr: Some(estimated_fpr),
            target_fpr: target,
        })
    }

    /// Inserts one key (one round trip).
    pub fn insert(&self, con: &mut redis::Connection, key: u64) -> Result<(), RedisFilterError> {
        self.insert_many(con, &[key])
    }

    /// Tests one key (one round trip).
    pub fn contains(
        &self,
        con: &mut redis::Connection,
        key: u64,
    ) -> Result<bool, RedisFilterError> {
        Ok(self.contains_many(con, &[key])?[0])
    }

    /// Reads the whole filter back into process memory.
    pub fn load(&self, con: &mut redis::Connection) -> Result<BloomFilter, RedisFilterError> {
        let mut bytes = Vec::with_capacity(self.params.bytes());
        for shard in 0..(self.params.blocks() as u64).div_ceil(self.shard_blocks) {
            let key = self.shard_key(shard);
            let part: Vec<u8> = redis::cmd("GET")
                .arg(&key)
                .query(con)
                .map_err(|e| classify(e, &key))?;
            let needed = (self.shard_len(shard) * 64) as usize;
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
        BloomFilter::from_storage_with_hasher(Blocks::from(blocks), self.params.k(), self.hasher)
            .map_err(|e| RedisFilterError::BadMeta(e.to_string()))
    }
}
