//! A linebloom blocked filter held in Redis, with rebuild and rotation without a gap.
//!
//! # Keys
//!
//! * `<prefix>:meta` names the live *generation* and its shape:
//!   `linebloom-v2 <generation> <blocks> <k> <seed> <shard_blocks>`, followed during a rebuild by
//!   ` next <generation> <blocks> <k> <seed> <shard_blocks>`: the generation being built.
//! * `<prefix>:{<generation>:<shard>}` holds the payload of one generation (blocks as
//!   little-endian `[u64; 8]`, exactly the binary format's payload), split in shards of
//!   at most `shard_blocks` blocks, so no key approaches Redis's 512 MB string limit and
//!   shards spread over a cluster's slots and nodes (the braces are the hash tag).
//!
//! The handle works over one server or a Redis Cluster ([`FilterConnection`]). On a
//! cluster each pipeline is split per node and the nodes run their parts independently,
//! so the meta check below takes a round trip of its own after the batch's replies.
//!
//! # Operations
//!
//! A batch goes to the server one of two ways ([`BatchPath`]), chosen when the handle is
//! stored or opened: the module's where the server has it, else plain commands.
//!
//! * **With the `linebloom-redis` module** (`lab/redis-module`, loaded with
//!   `--loadmodule`): one `LINEBLOOM.MTEST` (query) or `LINEBLOOM.MADD` (insert) per
//!   shard the batch touches, carrying 16 bytes per key (its block within the shard and
//!   its hash). On one server each command also carries the meta this handle computed
//!   against (`META <meta key> <meta text>`), and the module checks it in the same step
//!   as its read or write, so a single key costs one command. The module declares the
//!   meta key to Redis, so the caller's ACL must allow it, and a cluster refuses a
//!   guard in another slot than the shard (`CROSSSLOT`): on a cluster, where the meta
//!   sits in another slot on purpose, the client sends no guard, and a `GET` of the
//!   meta follows instead. The module tests
//!   or sets the blocks with the core's own pattern code. `benches` `redis_batch`
//!   measured it at 8.6× the pipelined `GETRANGE`s for queries and 30× the pipelined
//!   `BITFIELD`s for inserts (batches of 1000, `results/bench/redis_batch-*.md`); the
//!   penetration side-by-side puts it against RedisBloom's `BF.MEXISTS`/`BF.MADD`.
//! * **Plain commands**, for any Redis:
//!   * *query*: one pipeline of a `GETRANGE` of each key's 64-byte block, then a `GET`
//!     of the meta; each block is tested with the core's own [`Block::contains_mask`];
//!   * *insert*: one pipeline of an atomic `BITFIELD … SET u1 <offset> 1 …` per key,
//!     then a `GET` of the meta. Bit `j` of block `b` has Redis offset
//!     `512·b' + (j ^ 7)` (`b'` the block's index within its shard;
//!     [`linebloom::hash::redis_bit_offset`]).
//!
//! Both paths keep the same keys, so a handle of either kind reads what the other wrote.
//!
//! If the meta names another live generation than the one a query read (a rebuild
//! switched meanwhile), the answers are thrown away and the batch is asked again, so a
//! query never answers from a generation that is being built or has been retired. (With
//! the module's guard the server refuses such a batch, `LBSTALE`, before it reads or
//! writes anything; the handle re-reads the meta and asks again.)
//! During a rebuild inserts go to both generations, so nothing added while the new
//! generation is built is missing from it; if the meta changed, the handle takes the
//! new one and writes again (setting bits is idempotent). The module refuses a missing
//! shard where `GETRANGE` reads it as empty: the handle then re-reads the meta, and
//! retries if a rebuild moved on, or reports the missing shard if not.
//!
//! Why no Lua, where the seed texts used a script: a module command, like `BITFIELD`,
//! runs whole on Redis's one thread, so each is atomic on its own, and the trailing
//! meta read is what makes a batch safe against a rebuild; neither path needs a script.
//! Scripts were measured and lost (`redis_batch`): testing the blocks server-side in
//! Lua ran at about 0.5× the pipelined `GETRANGE`s, since Lua's per-key `redis.call`
//! costs more than the parsing it saves; one `BITFIELD_RO` per shard reading every
//! key's bits ran at 0.3×; a script that checks the meta and then sets the bits
//! ([`INSERT_SCRIPT`]) ran at 0.56–0.70× the pipelined `BITFIELD`s. The meta check
//! itself costs no more than the control's noise.
//!
//! # Rebuild and rotation ([`RedisFilter::rebuild`])
//!
//! A plain filter cannot delete, and fills up as keys are added. The answer is a new
//! generation built from the source of truth (the database), of the same or a larger
//! shape, then switched to atomically:
//!
//! 1. create the next generation's zeroed shards, and publish `… next <generation+1> …` in the
//!    meta: from then on every insert goes to both generations;
//! 2. wait `grace` (the longest a writer may take between its filter insert and its
//!    database insert), then read every key from the source;
//! 3. build that generation in process, and `BITOP OR` it into the next shards (which
//!    already hold the inserts made since step 1);
//! 4. switch the meta to the new generation alone (compare-and-set);
//! 5. remove the old generation's shards.
//!
//! Queries are answered from the complete old generation until step 4, and from the new
//! one after it; `lab/tests/redis.rs` hammers queries and inserts from other clients
//! through rebuilds and rotations and counts zero false "absent". A key is only missed
//! if a writer took longer than `grace` between its filter insert and its database
//! insert across step 1 (its insert then reached only the old generation, and its
//! database row was not yet there when the source was read).
//!
//! A query or insert that cannot check its block (server down, missing or truncated
//! key, wrong type) is an error, never "absent".

use super::guard::Capacity;
use linebloom::hash::{location, redis_bit_offset};
use linebloom::{Block, Blocks, BloomFilter, IntFold, Params};
use std::time::Duration;

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
    /// The filter kept changing generation under this handle (more than
    /// [`MAX_RETRIES`] times in one call).
    Stale(String),
    /// A rebuild's source of keys failed.
    Source(String),
    /// The server answered in another shape than the command promises (a module of
    /// another version, or a proxy in between).
    Reply(String),
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
            RedisFilterError::Stale(p) => write!(
                f,
                "filter {p} changed generation {MAX_RETRIES} times during one call"
            ),
            RedisFilterError::Source(e) => write!(f, "rebuild source failed: {e}"),
            RedisFilterError::Reply(e) => write!(f, "unexpected reply: {e}"),
            RedisFilterError::Redis(e) => write!(f, "redis: {e}"),
        }
    }
}

impl std::error::Error for RedisFilterError {}

fn classify(e: redis::RedisError, key: &str) -> RedisFilterError {
    match e.code() {
        Some("WRONGTYPE") => RedisFilterError::WrongType(key.to_string()),
        // The module's refusals name the shard or its size.
        Some("LBMISSING") => RedisFilterError::Missing(
            e.detail()
                .and_then(|d| d.split(' ').next())
                .unwrap_or(key)
                .to_string(),
        ),
        Some("LBTRUNCATED") => {
            let words: Vec<&str> = e.detail().unwrap_or("").split(' ').collect();
            match words[..] {
                [shard, len, needed, ..] => match (len.parse(), needed.parse()) {
                    (Ok(len), Ok(needed)) => RedisFilterError::Truncated {
                        key: shard.to_string(),
                        len,
                        needed,
                    },
                    _ => RedisFilterError::Redis(e),
                },
                _ => RedisFilterError::Redis(e),
            }
        }
        _ => RedisFilterError::Redis(e),
    }
}

/// Is this the scripts' "the meta changed" refusal?
fn is_stale(e: &redis::RedisError) -> bool {
    e.code() == Some("STALE") || e.to_string().contains("STALE")
}

/// How many times one call re-reads a changed meta before it gives up.
pub const MAX_RETRIES: usize = 16;

/// Default shard size: 2^20 blocks = 64 MiB per key.
pub const DEFAULT_SHARD_BLOCKS: u64 = 1 << 20;

/// The scheme word the module commands carry (the meta's first word): a module of
/// another scheme refuses rather than answering with other bits.
const MODULE_SCHEME: &str = linebloom::hash::SCHEME;

/// Where the `linebloom-redis` module's shared library is, for starting a server with
/// it: `$LINEBLOOM_MODULE_SO` if set, else `liblinebloom_redis.so` beside the running
/// executable or one folder up (`target/release/` for the lab and the benches,
/// `target/tests/deps/..` for tests), as `cargo build --release --manifest-path
/// lab/redis-module/Cargo.toml --target-dir target` (or `--profile tests`) leaves it. `None` if there is no such file.
pub fn module_library() -> Option<std::path::PathBuf> {
    if let Some(so) = std::env::var_os("LINEBLOOM_MODULE_SO") {
        return Some(std::path::PathBuf::from(so)).filter(|p| p.is_file());
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join("liblinebloom_redis.so"))
        .find(|p| p.is_file())
}

/// How a [`RedisFilter`] sends a batch of keys to the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchPath {
    /// Plain Redis: one `GETRANGE` (query) or `BITFIELD` (insert) per key, pipelined.
    Commands,
    /// The `linebloom-redis` module (`lab/redis-module`): one `LINEBLOOM.MTEST` or
    /// `LINEBLOOM.MADD` per shard, carrying every key of the batch in that shard.
    Module,
}

impl BatchPath {
    /// [`Module`](Self::Module) where the server has the module's commands (`COMMAND
    /// INFO`; on a cluster, of the node it reaches: every node must load the same
    /// modules), else [`Commands`](Self::Commands).
    pub fn detect<C: FilterConnection + ?Sized>(con: &mut C) -> Result<Self, RedisFilterError> {
        let info: Vec<redis::Value> = redis::cmd("COMMAND")
            .arg("INFO")
            .arg("linebloom.mtest")
            .arg("linebloom.madd")
            .query(con.single())
            .map_err(RedisFilterError::Redis)?;
        let known = info.iter().all(|v| !matches!(v, redis::Value::Nil)) && info.len() == 2;
        Ok(if known {
            BatchPath::Module
        } else {
            BatchPath::Commands
        })
    }

    /// The name the lab's tables use.
    pub fn name(self) -> &'static str {
        match self {
            BatchPath::Commands => "pipelined commands",
            BatchPath::Module => "linebloom module",
        }
    }
}

/// The insert script, kept for the comparison in `benches` `redis_batch` (the filter
/// inserts with a pipeline; see the module docs). `KEYS[1]` is the meta, `KEYS[2..]` shard keys; `ARGV[1]` the meta
/// the client computed against, then groups of (index into `KEYS`, count, that many
/// bit offsets). Refuses with `STALE` if the meta changed; else sets every bit with one
/// `BITFIELD` per group (1000 offsets per call, under Lua's `unpack` limit).
pub const INSERT_SCRIPT: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return redis.error_reply('STALE the filter changed generation; re-read its meta')
end
local i = 2
while i <= #ARGV do
    local key = KEYS[tonumber(ARGV[i])]
    local left = tonumber(ARGV[i + 1])
    local at = i + 2
    while left > 0 do
        local step = math.min(left, 1000)
        local args = {}
        for j = 0, step - 1 do
            local o = #args
            args[o + 1] = 'SET'
            args[o + 2] = 'u1'
            args[o + 3] = ARGV[at + j]
            args[o + 4] = 1
        end
        redis.call('BITFIELD', key, unpack(args))
        at = at + step
        left = left - step
    end
    i = at
end
return 1
"#;

/// Compare-and-set of the meta: `KEYS[1]` the meta, `ARGV[1]` the expected value,
/// `ARGV[2]` the new one. Refuses with `STALE` if the meta is not the expected one.
pub const SWAP_META: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return redis.error_reply('STALE the filter meta changed during the rebuild')
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"#;

/// The batch query script used only for the comparison in `benches` `redis_batch`:
/// `KEYS` are the shard keys, `ARGV` pairs of (1-based shard index, byte offset of the
/// block). Returns every block's 64 bytes, concatenated; a missing or short shard is an
/// error reply, never a short answer.
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

/// Where a [`RedisFilter`] lives: one server ([`redis::Connection`]) or a Redis Cluster
/// ([`redis::cluster::ClusterConnection`], which splits each pipeline per node).
pub trait FilterConnection {
    /// Runs `cmds` as one pipeline and returns one reply per command, in order. An error
    /// reply fails the call.
    fn run(&mut self, cmds: Vec<redis::Cmd>) -> redis::RedisResult<Vec<redis::Value>>;
    /// Does a command appended to a pipeline run after every earlier one? True on one
    /// server; false on a cluster, where each node runs its part on its own, so the
    /// meta check then takes a round trip of its own.
    fn ordered(&self) -> bool;
    /// The connection for single commands and scripts (a cluster routes each by key).
    fn single(&mut self) -> &mut dyn redis::ConnectionLike;
}

impl FilterConnection for redis::Connection {
    fn run(&mut self, cmds: Vec<redis::Cmd>) -> redis::RedisResult<Vec<redis::Value>> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for cmd in cmds {
            pipe.add_command(cmd);
        }
        pipe.query(self)
    }
    fn ordered(&self) -> bool {
        true
    }
    fn single(&mut self) -> &mut dyn redis::ConnectionLike {
        self
    }
}

impl FilterConnection for redis::cluster::ClusterConnection {
    fn run(&mut self, cmds: Vec<redis::Cmd>) -> redis::RedisResult<Vec<redis::Value>> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::cluster::cluster_pipe();
        for cmd in cmds {
            pipe.add_command(cmd);
        }
        pipe.query(self)
    }
    fn ordered(&self) -> bool {
        false
    }
    fn single(&mut self) -> &mut dyn redis::ConnectionLike {
        self
    }
}

/// One generation: its number and shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generation {
    /// Generation number (1 for a filter just stored; +1 per rebuild).
    pub number: u64,
    /// Its shape.
    pub params: Params,
    /// Its hasher's seed (`IntFold`).
    pub seed: u64,
    /// Blocks per shard key.
    pub shard_blocks: u64,
}

impl Generation {
    fn shards(&self) -> u64 {
        (self.params.blocks() as u64).div_ceil(self.shard_blocks)
    }

    fn shard_len(&self, shard: u64) -> u64 {
        (self.params.blocks() as u64 - shard * self.shard_blocks).min(self.shard_blocks)
    }

    fn fields(&self) -> String {
        format!(
            "{} {} {} {} {}",
            self.number,
            self.params.blocks(),
            self.params.k(),
            self.seed,
            self.shard_blocks
        )
    }

    fn parse(f: &[&str], meta: &str) -> Result<Generation, RedisFilterError> {
        let bad = || RedisFilterError::BadMeta(meta.to_string());
        let num = |s: &str| s.parse::<u64>().map_err(|_| bad());
        let (number, blocks, k, seed, shard_blocks) =
            (num(f[0])?, num(f[1])?, num(f[2])?, num(f[3])?, num(f[4])?);
        if shard_blocks == 0 || k > u32::MAX as u64 {
            return Err(bad());
        }
        let params = Params::new(blocks, k as u32)
            .map_err(|e| RedisFilterError::BadMeta(format!("{meta}: {e}")))?;
        Ok(Generation {
            number,
            params,
            seed,
            shard_blocks,
        })
    }
}

/// What the meta says: the live generation, and the one being built, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Meta {
    live: Generation,
    next: Option<Generation>,
}

impl Meta {
    fn encode(&self) -> String {
        match &self.next {
            None => format!("{MODULE_SCHEME} {}", self.live.fields()),
            Some(n) => format!("{MODULE_SCHEME} {} next {}", self.live.fields(), n.fields()),
        }
    }

    fn decode(meta: &str) -> Result<Meta, RedisFilterError> {
        let f: Vec<&str> = meta.split(' ').collect();
        match f.as_slice() {
            [MODULE_SCHEME, live @ ..] if live.len() == 5 => Ok(Meta {
                live: Generation::parse(live, meta)?,
                next: None,
            }),
            [MODULE_SCHEME, rest @ ..] if rest.len() == 11 && rest[5] == "next" => {
                let (live, next) = (Generation::parse(&rest[..5], meta)?, &rest[6..]);
                let next = Generation::parse(next, meta)?;
                if next.number <= live.number {
                    return Err(RedisFilterError::BadMeta(meta.to_string()));
                }
                Ok(Meta {
                    live,
                    next: Some(next),
                })
            }
            _ => Err(RedisFilterError::BadMeta(meta.to_string())),
        }
    }
}

/// What a rebuild did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rebuilt {
    /// The generation now live.
    pub generation: Generation,
    /// Keys read from the source.
    pub keys: u64,
    /// Time from the start of the rebuild to the switch.
    pub took: Duration,
}

/// A handle on a filter stored in Redis.
pub struct RedisFilter {
    prefix: String,
    /// How batches go to the server.
    path: BatchPath,
    /// The meta this handle last read, as stored and decoded.
    meta_text: String,
    meta: Meta,
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
    fn refresh<C: FilterConnection + ?Sized>(
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
    fn adopt(&mut self, text: Option<String>) -> Result<(), RedisFilterError> {
        let text = text.ok_or_else(|| RedisFilterError::Missing(self.meta_key()))?;
        self.meta = Meta::decode(&text)?;
        self.meta_text = text;
        Ok(())
    }

    fn meta_key(&self) -> String {
        format!("{}:meta", self.prefix)
    }

    /// `<prefix>:{<generation>:<shard>}`: the hash tag spreads a filter's shards over
    /// a cluster's slots, and keeps a shard's scratch key (`…:load`) in its slot.
    fn shard_key(&self, g: &Generation, shard: u64) -> String {
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
    fn hash(g: &Generation, key: u64) -> u64 {
        linebloom::Key::hash_key(&key, &IntFold::with_seed(g.seed))
    }

    /// (shard, block within shard, mask) of `key` in generation `g`.
    fn place(g: &Generation, key: u64) -> (u64, u64, Block) {
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
    fn consistent_read<C: FilterConnection + ?Sized>(
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
    fn moved_on<C: FilterConnection + ?Sized>(
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
    fn then_meta<C: FilterConnection + ?Sized>(
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

    /// [`insert_many`](Self::insert_many) with one call of [`INSERT_SCRIPT`] per batch,
    /// which checks the meta and then sets the bits, atomically: kept for the
    /// comparison in `benches` `redis_batch`, where it is slower.
    pub fn insert_many_scripted(
        &mut self,
        con: &mut redis::Connection,
        keys: &[u64],
    ) -> Result<(), RedisFilterError> {
        if keys.is_empty() {
            return Ok(());
        }
        let script = redis::Script::new(INSERT_SCRIPT);
        for _ in 0..MAX_RETRIES {
            let mut invocation = script.prepare_invoke();
            invocation.key(self.meta_key());
            invocation.arg(&self.meta_text);
            let mut key_index = 1; // KEYS[1] is the meta
            for g in std::iter::once(self.meta.live).chain(self.meta.next) {
                // Offsets grouped by shard, in shard order.
                let mut per_shard: Vec<(u64, Vec<u64>)> = Vec::new();
                for &key in keys {
                    let (shard, b, mask) = Self::place(&g, key);
                    let at = match per_shard.iter().position(|(s, _)| *s == shard) {
                        Some(i) => i,
                        None => {
                            per_shard.push((shard, Vec::new()));
                            per_shard.len() - 1
                        }
                    };
                    for_each_bit(&mask, |j| per_shard[at].1.push(redis_bit_offset(b, j)));
                }
                for (shard, offsets) in per_shard {
                    invocation.key(self.shard_key(&g, shard));
                    key_index += 1;
                    invocation.arg(key_index).arg(offsets.len()).arg(offsets);
                }
            }
            match invocation.invoke::<()>(con) {
                Ok(()) => return Ok(()),
                Err(e) if is_stale(&e) => self.refresh(con)?,
                Err(e) => return Err(classify(e, &self.prefix)),
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
                .arg(MODULE_SCHEME)
                .arg(g.params.k())
                .arg(probes);
            (cmd, (shard, members))
        })
    }

    /// Tests keys with one `BITFIELD_RO … GET u1 <offset> …` per shard for the whole
    /// batch (every key's `k` bits), then the meta, checked as in
    /// [`contains_many`](Self::contains_many). Kept for the comparison in `benches`
    /// `redis_batch`, where it ran at about a third of the speed of the `GETRANGE`s:
    /// parsing `k` offsets per key costs the server more than a 64-byte reply.
    pub fn contains_many_bitfield(
        &mut self,
        con: &mut redis::Connection,
        keys: &[u64],
    ) -> Result<Vec<bool>, RedisFilterError> {
        for _ in 0..MAX_RETRIES {
            let g = self.meta.live;
            // Bit offsets per shard, and per key (its shard's slot, its bit count).
            let mut shards: Vec<(u64, Vec<u64>)> = Vec::new();
            let mut per_key: Vec<(usize, usize)> = Vec::with_capacity(keys.len());
            for &key in keys {
                let (shard, b, mask) = Self::place(&g, key);
                let at = match shards.iter().position(|(s, _)| *s == shard) {
                    Some(i) => i,
                    None => {
                        shards.push((shard, Vec::new()));
                        shards.len() - 1
                    }
                };
                for_each_bit(&mask, |j| shards[at].1.push(redis_bit_offset(b, j)));
                per_key.push((at, mask.count_ones() as usize));
            }
            let replies = self.consistent_read(con, |this, cmds| {
                for (shard, offsets) in &shards {
                    let mut cmd = redis::cmd("BITFIELD_RO");
                    cmd.arg(this.shard_key(&g, *shard));
                    for offset in offsets {
                        cmd.arg("GET").arg("u1").arg(offset);
                    }
                    cmds.push(cmd);
                }
            })?;
            if self.meta.live.number != g.number {
                continue; // read a newer generation than the offsets were computed for
            }
            let bits: Vec<Vec<u8>> = replies
                .iter()
                .map(|r| redis::from_redis_value(r).map_err(RedisFilterError::Redis))
                .collect::<Result<_, _>>()?;
            let mut next = vec![0usize; bits.len()];
            return per_key
                .iter()
                .map(|&(at, n)| {
                    let from = next[at];
                    next[at] += n;
                    let got = bits[at].get(from..from + n).ok_or_else(|| {
                        RedisFilterError::Truncated {
                            key: self.shard_key(&g, shards[at].0),
                            len: bits[at].len(),
                            needed: from + n,
                        }
                    })?;
                    Ok(got.iter().all(|&b| b == 1))
                })
                .collect();
        }
        Err(RedisFilterError::Stale(self.prefix.clone()))
    }

    /// Tests keys with one `GETRANGE` each, pipelined, without the generation check
    /// (`benches` `redis_batch` measures what the check costs). Not safe while a rebuild
    /// switches generations.
    pub fn contains_many_unchecked(
        &self,
        con: &mut redis::Connection,
        keys: &[u64],
    ) -> Result<Vec<bool>, RedisFilterError> {
        let g = self.meta.live;
        let mut pipe = redis::pipe();
        for &key in keys {
            let (shard, b, _) = Self::place(&g, key);
            pipe.cmd("GETRANGE")
                .arg(self.shard_key(&g, shard))
                .arg(b * 64)
                .arg(b * 64 + 63);
        }
        let lines: Vec<Vec<u8>> = pipe.query(con).map_err(|e| classify(e, &self.prefix))?;
        keys.iter()
            .zip(lines)
            .map(|(&key, line)| {
                let (shard, _, mask) = Self::place(&g, key);
                test_line(&line, &mask, || self.shard_key(&g, shard))
            })
            .collect()
    }

    /// Inserts keys with one `BITFIELD` each, pipelined, into the live generation only,
    /// without the generation check (`benches` `redis_batch` compares it with the
    /// script). Not safe while a rebuild runs.
    pub fn insert_many_unchecked(
        &self,
        con: &mut redis::Connection,
        keys: &[u64],
    ) -> Result<(), RedisFilterError> {
        let g = self.meta.live;
        let mut pipe = redis::pipe();
        for &key in keys {
            let (shard, b, mask) = Self::place(&g, key);
            let mut cmd = redis::cmd("BITFIELD");
            cmd.arg(self.shard_key(&g, shard));
            for_each_bit(&mask, |j| {
                cmd.arg("SET").arg("u1").arg(redis_bit_offset(b, j)).arg(1);
            });
            pipe.add_command(cmd).ignore();
        }
        pipe.query::<()>(con).map_err(|e| classify(e, &self.prefix))
    }

    /// Tests keys with one server-side script call ([`FETCH_BLOCKS`]) that returns every
    /// key's block, without the generation check: kept for the comparison in `benches`
    /// `redis_batch` (it measured 0.47–0.59× the pipelined `GETRANGE`s).
    pub fn contains_many_scripted(
        &self,
        con: &mut redis::Connection,
        keys: &[u64],
    ) -> Result<Vec<bool>, RedisFilterError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let g = self.meta.live;
        let mut shards: Vec<u64> = Vec::new();
        let mut invocation_args: Vec<u64> = Vec::with_capacity(2 * keys.len());
        let masks: Vec<Block> = keys
            .iter()
            .map(|&k| {
                let (shard, b, mask) = Self::place(&g, k);
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
        for &shard in &shards {
            invocation.key(self.shard_key(&g, shard));
        }
        invocation.arg(invocation_args);
        let lines: Vec<u8> = invocation
            .invoke(con)
            .map_err(|e| classify(e, &self.prefix))?;
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

    /// Swaps the meta from this handle's to `new`, if nobody changed it meanwhile.
    fn swap_meta<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
        new: Meta,
    ) -> Result<(), RedisFilterError> {
        let text = new.encode();
        redis::Script::new(SWAP_META)
            .key(self.meta_key())
            .arg(&self.meta_text)
            .arg(&text)
            .invoke::<()>(con.single())
            .map_err(|e| {
                if is_stale(&e) {
                    RedisFilterError::Stale(self.prefix.clone())
                } else {
                    classify(e, &self.prefix)
                }
            })?;
        self.meta = new;
        self.meta_text = text;
        Ok(())
    }

    /// Rebuilds the filter from `source` into a new generation of shape `params` (the
    /// same shape to clear deleted keys, a larger one to rotate a filter that filled up),
    /// and switches every reader to it with no gap; see the module docs for the steps
    /// and what `grace` means. `source` is called after inserts start going to both
    /// generations; it returns every key that must be in the filter (read it from the
    /// database). On error the rebuild is abandoned and the live generation stays.
    pub fn rebuild<C: FilterConnection + ?Sized, I, E>(
        &mut self,
        con: &mut C,
        params: Params,
        grace: Duration,
        source: impl FnOnce() -> Result<I, E>,
    ) -> Result<Rebuilt, RedisFilterError>
    where
        I: IntoIterator<Item = u64>,
        E: std::fmt::Display,
    {
        let start = std::time::Instant::now();
        self.refresh(con)?;
        if let Some(next) = self.meta.next {
            return Err(RedisFilterError::BadMeta(format!(
                "{}: generation {} is already being built by another rebuild",
                self.meta_text, next.number
            )));
        }
        let live = self.meta.live;
        let next = Generation {
            number: live.number + 1,
            params,
            seed: live.seed,
            shard_blocks: live.shard_blocks,
        };
        // 1. Zeroed shards (SETRANGE of the last byte allocates the string as zeros),
        //    then the meta that sends every insert to both generations.
        let mut cmds = Vec::new();
        for shard in 0..next.shards() {
            let key = self.shard_key(&next, shard);
            let (mut unlink, mut zeros) = (redis::cmd("UNLINK"), redis::cmd("SETRANGE"));
            unlink.arg(&key);
            zeros
                .arg(&key)
                .arg(next.shard_len(shard) * 64 - 1)
                .arg(&[0u8][..]);
            cmds.extend([unlink, zeros]);
        }
        con.run(cmds).map_err(|e| classify(e, &self.prefix))?;
        self.swap_meta(
            con,
            Meta {
                live,
                next: Some(next),
            },
        )?;
        let result = self.fill_and_switch(con, next, grace, source);
        if result.is_err() {
            // Abandon: back to the live generation alone, and free the next one.
            let _ = self.swap_meta(con, Meta { live, next: None });
            let _ = self.unlink_generation(con, &next);
        }
        let keys = result?;
        // 5. The old generation is no longer read by anyone who checks the meta.
        self.unlink_generation(con, &live)?;
        Ok(Rebuilt {
            generation: next,
            keys,
            took: start.elapsed(),
        })
    }

    /// Steps 2–4 of [`rebuild`](Self::rebuild); returns the number of source keys.
    fn fill_and_switch<C: FilterConnection + ?Sized, I, E>(
        &mut self,
        con: &mut C,
        next: Generation,
        grace: Duration,
        source: impl FnOnce() -> Result<I, E>,
    ) -> Result<u64, RedisFilterError>
    where
        I: IntoIterator<Item = u64>,
        E: std::fmt::Display,
    {
        std::thread::sleep(grace);
        let mut built = BloomFilter::with_hasher(next.params, IntFold::with_seed(next.seed));
        let mut keys = 0u64;
        for key in source().map_err(|e| RedisFilterError::Source(e.to_string()))? {
            built.insert(&key);
            keys += 1;
        }
        // 3. OR the built bits into the next shards, which hold the inserts made since
        //    step 1, through a scratch key in the shard's slot (BITOP needs both keys
        //    on one node).
        for (shard, blocks) in built
            .as_blocks()
            .chunks(next.shard_blocks as usize)
            .enumerate()
        {
            let key = self.shard_key(&next, shard as u64);
            let scratch = format!("{key}:load");
            let fail = |e| classify(e, &key);
            let mut set = redis::cmd("SET");
            set.arg(&scratch)
                .arg(linebloom::block::blocks_as_bytes(blocks));
            con.run(vec![set]).map_err(fail)?;
            // A single command: a cluster pipeline refuses BITOP (it routes it alone).
            redis::cmd("BITOP")
                .arg("OR")
                .arg(&key)
                .arg(&key)
                .arg(&scratch)
                .query::<()>(con.single())
                .map_err(fail)?;
            let mut unlink = redis::cmd("UNLINK");
            unlink.arg(&scratch);
            con.run(vec![unlink]).map_err(fail)?;
        }
        // 4. The switch.
        self.swap_meta(
            con,
            Meta {
                live: next,
                next: None,
            },
        )?;
        Ok(keys)
    }

    /// Removes generation `g`'s shards (one `UNLINK` each: a cluster refuses one
    /// command over keys of several slots).
    fn unlink_generation<C: FilterConnection + ?Sized>(
        &self,
        con: &mut C,
        g: &Generation,
    ) -> Result<(), RedisFilterError> {
        let unlinks = (0..g.shards()).map(|shard| {
            let mut unlink = redis::cmd("UNLINK");
            unlink.arg(self.shard_key(g, shard));
            unlink
        });
        con.run(unlinks.collect())
            .map(|_| ())
            .map_err(|e| classify(e, &self.prefix))
    }
}

/// Calls `f` with the index (0..512) of every set bit of `mask`.
fn for_each_bit(mask: &Block, mut f: impl FnMut(u32)) {
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
fn test_line(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_round_trips_and_refuses_garbage() {
        let g = |number, blocks| Generation {
            number,
            params: Params::new(blocks, 8).unwrap(),
            seed: 3,
            shard_blocks: 100,
        };
        for m in [
            Meta {
                live: g(1, 10),
                next: None,
            },
            Meta {
                live: g(4, 10),
                next: Some(g(5, 40)),
            },
        ] {
            assert_eq!(Meta::decode(&m.encode()).unwrap(), m);
        }
        for bad in [
            "",
            "linebloom-v1 10 8 3 100",
            "linebloom-v2 1 10 8 3",
            "linebloom-v2 1 10 8 3 0",
            "linebloom-v2 1 0 8 3 100",
            "linebloom-v2 1 10 8 3 100 next 1 10 8 3 100",
            "linebloom-v2 2 10 8 3 100 later 3 10 8 3 100",
            "linebloom-v2 x 10 8 3 100",
        ] {
            assert!(Meta::decode(bad).is_err(), "{bad:?}");
        }
    }
}
