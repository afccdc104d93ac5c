//! The guards compared in the scenario: what sits in front of cache and database.
//!
//! A guard answers "certainly absent" or "maybe". When it cannot check (Redis down, a
//! key missing), it says so with an error, and the pipeline then treats the key as
//! "maybe" and counts the request as *degraded*: it never answers "absent" for a key it
//! could not check.

use crate::contenders::looks;
use crate::support::redis::connection::{Con, run_all};
use linebloom::{Block, ClassicParams, CountingBloomFilter, KeyHasher, Params, Xxh3};
pub use linebloom_redis_client::Capacity;
use linebloom_redis_client::{RebuildOptions, RedisFilter};

/// What a rebuild did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rebuild {
    /// Keys read from the database.
    pub keys: u64,
    /// Did it move to a larger filter (rotation) rather than the same shape?
    pub grew: bool,
    /// Time it took.
    pub took: std::time::Duration,
}

/// `density(block)` (a share in 0..=1) averaged over each of `cells` equal runs of
/// `blocks` (fewer cells when there are fewer blocks).
pub fn cell_density(blocks: &[Block], cells: usize, density: impl Fn(&Block) -> f64) -> Vec<f64> {
    let per_cell = blocks.len().div_ceil(cells.max(1)).max(1);
    blocks
        .chunks(per_cell)
        .map(|run| run.iter().map(&density).sum::<f64>() / run.len() as f64)
        .collect()
}

/// Share of the 128 four-bit counters of a counting filter's block that are not zero.
fn nonzero_counters(block: &Block) -> f64 {
    let nonzero: u32 = block
        .0
        .iter()
        .map(|&w| ((w | w >> 1 | w >> 2 | w >> 3) & 0x1111_1111_1111_1111).count_ones())
        .sum();
    nonzero as f64 / 128.0
}

/// A filter in front of the cache.
pub trait Guard {
    /// Defence name.
    fn name(&self) -> &'static str;
    /// `Ok(false)` = certainly absent; `Ok(true)` = maybe; `Err` = could not check.
    fn might_contain(&mut self, key: u64) -> anyhow::Result<bool>;
    /// Adds a new valid key. Called *before* the database insert, so no client ever
    /// sees a false "absent" for it.
    fn add(&mut self, key: u64) -> anyhow::Result<()>;
    /// Removes a deleted key where the guard supports it; `false` if it does not (the
    /// key then stays a "maybe" until the filter is rebuilt).
    fn remove(&mut self, key: u64) -> anyhow::Result<bool>;
    /// Bytes of filter memory.
    fn bytes(&self) -> usize;
    /// Does a "certainly absent" answer come from a filter (else: the defence has none)?
    fn filters(&self) -> bool {
        true
    }
    /// Rebuilds the filter from the database `db` where the defence can (clearing deleted
    /// keys, and rotating to a larger filter when it is over its target rate); `None`
    /// where it cannot.
    fn rebuild(&mut self, db: &super::db::Db, target: f64) -> Option<anyhow::Result<Rebuild>> {
        let _ = (db, target);
        None
    }
    /// The share of set bits (counting filter: non-zero counters) in each of `cells`
    /// equal runs of blocks over the filter's address space: the seeds' hot-zone view.
    /// `None` where the defence has no filter or does not show its bits.
    fn heatmap(&mut self, cells: usize) -> Option<anyhow::Result<Vec<f64>>> {
        let _ = cells;
        None
    }
    /// The filter's load against the target rate `target`; `None` for defences without a
    /// filter.
    fn capacity(&mut self, target: f64) -> Option<anyhow::Result<Capacity>> {
        let _ = target;
        None
    }
}

/// No protection (and the null-caching defence, whose protection lives in the cache).
pub struct NoGuard;

impl Guard for NoGuard {
    fn name(&self) -> &'static str {
        "none"
    }
    fn might_contain(&mut self, _: u64) -> anyhow::Result<bool> {
        Ok(true)
    }
    fn add(&mut self, _: u64) -> anyhow::Result<()> {
        Ok(())
    }
    fn remove(&mut self, _: u64) -> anyhow::Result<bool> {
        Ok(true)
    }
    fn bytes(&self) -> usize {
        0
    }
    fn filters(&self) -> bool {
        false
    }
}

/// linebloom in process: a counting filter, so deleted products are removed for real.
pub struct InProcess(pub CountingBloomFilter);

impl InProcess {
    /// Sized for `n` products at `p`, loaded with `0..n`.
    pub fn load(n: u64, p: f64) -> anyhow::Result<Self> {
        let mut f = CountingBloomFilter::new(linebloom::CountingParams::for_fpr(n, p)?);
        f.extend(0..n);
        Ok(InProcess(f))
    }
}

impl Guard for InProcess {
    fn name(&self) -> &'static str {
        looks::IN_PROCESS
    }
    fn might_contain(&mut self, key: u64) -> anyhow::Result<bool> {
        Ok(self.0.contains(&key))
    }
    fn add(&mut self, key: u64) -> anyhow::Result<()> {
        self.0.insert(&key);
        Ok(())
    }
    fn remove(&mut self, key: u64) -> anyhow::Result<bool> {
        Ok(self.0.remove(&key).is_ok())
    }
    fn bytes(&self) -> usize {
        self.0.params().bytes()
    }
    /// A new counting filter from the database: twice the database's size when over
    /// the target rate, else the same shape. It replaces the old one at once (one
    /// process, so nothing is in flight).
    fn rebuild(&mut self, db: &super::db::Db, target: f64) -> Option<anyhow::Result<Rebuild>> {
        let mut run = || -> anyhow::Result<Rebuild> {
            let start = std::time::Instant::now();
            let ids = db.ids()?;
            let over = self.0.estimated_fpr() > target;
            let params = if over {
                linebloom::CountingParams::for_fpr(2 * ids.len() as u64, target)?
            } else {
                self.0.params()
            };
            let mut fresh = CountingBloomFilter::new(params);
            fresh.extend(ids.iter().copied());
            self.0 = fresh;
            Ok(Rebuild {
                keys: ids.len() as u64,
                grew: over,
                took: start.elapsed(),
            })
        };
        Some(run())
    }
    fn heatmap(&mut self, cells: usize) -> Option<anyhow::Result<Vec<f64>>> {
        Some(Ok(cell_density(
            self.0.as_blocks(),
            cells,
            nonzero_counters,
        )))
    }
    fn capacity(&mut self, target: f64) -> Option<anyhow::Result<Capacity>> {
        Some(Ok(Capacity {
            fill_ratio: Some(self.0.fill_ratio()),
            estimated_len: self.0.estimated_len(),
            capacity: self.0.params().capacity_at(target),
            estimated_fpr: Some(self.0.estimated_fpr()),
            target_fpr: target,
        }))
    }
}

/// linebloom's blocked filter held in Redis ([`RedisFilter`]). Deletes are not applied:
/// a periodic rebuild (re-`store` from the database) would clear them.
pub struct InRedis {
    /// The filter handle.
    pub filter: RedisFilter,
    /// Its connection (one server or a cluster).
    pub con: Con,
}

impl Guard for InRedis {
    fn name(&self) -> &'static str {
        looks::IN_REDIS
    }
    fn might_contain(&mut self, key: u64) -> anyhow::Result<bool> {
        Ok(self.filter.contains(&mut *self.con, &key)?)
    }
    fn add(&mut self, key: u64) -> anyhow::Result<()> {
        self.filter.insert(&mut *self.con, &key)?;
        Ok(())
    }
    fn remove(&mut self, _: u64) -> anyhow::Result<bool> {
        Ok(false)
    }
    fn bytes(&self) -> usize {
        self.filter.bytes()
    }
    fn capacity(&mut self, target: f64) -> Option<anyhow::Result<Capacity>> {
        Some(
            self.filter
                .measure(&mut *self.con, target)
                .map_err(Into::into),
        )
    }
    /// From a copy of the live generation's bits (`GET` of every shard).
    fn heatmap(&mut self, cells: usize) -> Option<anyhow::Result<Vec<f64>>> {
        Some(
            self.filter
                .load(&mut *self.con)
                .map(|f| {
                    cell_density(f.as_blocks(), cells, |b| {
                        b.count_ones() as f64 / Block::BITS as f64
                    })
                })
                .map_err(Into::into),
        )
    }
    /// A new generation from the database, switched to without a gap
    /// ([`RedisFilter::rebuild`]); twice the database's size when the capacity monitor
    /// is over the target, else the same shape.
    fn rebuild(&mut self, db: &super::db::Db, target: f64) -> Option<anyhow::Result<Rebuild>> {
        let mut run = || -> anyhow::Result<Rebuild> {
            let ids = db.ids()?;
            let over = self.filter.measure(&mut *self.con, target)?.over_target();
            let params = if over {
                Params::for_fpr(2 * ids.len() as u64, target)?
            } else {
                self.filter.params()
            };
            // One process: its inserts go through this handle, so no grace is needed.
            let done =
                self.filter
                    .rebuild(&mut *self.con, params, RebuildOptions::default(), || {
                        Ok::<_, String>(ids)
                    })?;
            Ok(Rebuild {
                keys: done.keys,
                grew: over,
                took: done.took,
            })
        };
        Some(run())
    }
}

/// Which of RedisBloom's two command sets a [`CommandFilter`] speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandSet {
    /// `BF.*`: a Bloom filter, no deletes.
    Bf,
    /// `CF.*`: a cuckoo filter (RedisBloom) or a vector quotient filter (the linebloom
    /// module), which deletes with `CF.DEL`.
    Cf,
}

/// A filter behind RedisBloom's commands, answered by RedisBloom or by the linebloom
/// module (its commands under `prefix`): `BF.EXISTS`/`BF.ADD` with no deletes, or
/// `CF.EXISTS`/`CF.ADD`/`CF.DEL`, so products taken off sale leave the filter.
pub struct CommandFilter {
    name: &'static str,
    set: CommandSet,
    /// Command prefix: `""`, or `"linebloom."` beside RedisBloom.
    prefix: String,
    /// The filter's key.
    pub key: String,
    /// Its connection (one server or a cluster).
    pub con: Con,
    /// The capacity it was reserved for.
    reserved: u64,
    /// Bytes after loading (`MEMORY USAGE`).
    pub bytes: usize,
}

impl CommandFilter {
    /// Reserves the filter (`BF.RESERVE key p n`, which scales as it must; or
    /// `CF.RESERVE key n`, each module's own sizing), then adds `0..n` in chunks.
    pub fn load(
        name: &'static str,
        set: CommandSet,
        prefix: &str,
        mut con: Con,
        key: &str,
        n: u64,
        p: f64,
    ) -> anyhow::Result<Self> {
        redis::cmd("DEL").arg(key).query::<()>(con.commands())?;
        let mut this = CommandFilter {
            name,
            set,
            prefix: prefix.into(),
            key: key.into(),
            con,
            reserved: n,
            bytes: 0,
        };
        let mut reserve = this.cmd("RESERVE");
        match set {
            CommandSet::Bf => reserve.arg(p).arg(n),
            CommandSet::Cf => reserve.arg(n),
        };
        reserve.query::<()>(this.con.commands())?;
        let ids: Vec<u64> = (0..n).collect();
        for chunk in ids.chunks(10_000) {
            let mut add = match set {
                CommandSet::Bf => this.cmd("MADD"),
                CommandSet::Cf => {
                    let mut c = this.cmd("INSERT");
                    c.arg("ITEMS");
                    c
                }
            };
            add.arg(chunk).query::<()>(this.con.commands())?;
        }
        this.bytes = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(&this.key)
            .query::<u64>(this.con.commands())? as usize;
        Ok(this)
    }

    /// `<prefix><BF|CF>.<what> <key>`.
    fn cmd(&self, what: &str) -> redis::Cmd {
        let name = match self.set {
            CommandSet::Bf => "BF",
            CommandSet::Cf => "CF",
        };
        let mut c = redis::cmd(&format!("{}{name}.{what}", self.prefix));
        c.arg(&self.key);
        c
    }

    /// One numeric field of `BF.INFO` (`CAPACITY`, `ITEMS`, …), or of `CF.INFO` by its
    /// name there.
    fn info(&mut self, field: &str) -> anyhow::Result<u64> {
        match self.set {
            CommandSet::Bf => {
                let v: Vec<u64> = self.cmd("INFO").arg(field).query(self.con.commands())?;
                v.first()
                    .copied()
                    .ok_or_else(|| anyhow::anyhow!("BF.INFO {field} returned nothing"))
            }
            CommandSet::Cf => {
                let v: Vec<redis::Value> = self.cmd("INFO").query(self.con.commands())?;
                v.chunks(2)
                    .find(|p| {
                        redis::from_redis_value_ref::<String>(&p[0]).is_ok_and(|n| n == field)
                    })
                    .and_then(|p| redis::from_redis_value_ref::<u64>(&p[1]).ok())
                    .ok_or_else(|| anyhow::anyhow!("CF.INFO has no {field:?}"))
            }
        }
    }
}

impl Guard for CommandFilter {
    fn name(&self) -> &'static str {
        self.name
    }
    fn might_contain(&mut self, key: u64) -> anyhow::Result<bool> {
        Ok(self.cmd("EXISTS").arg(key).query(self.con.commands())?)
    }
    fn add(&mut self, key: u64) -> anyhow::Result<()> {
        self.cmd("ADD").arg(key).query::<()>(self.con.commands())?;
        Ok(())
    }
    fn remove(&mut self, key: u64) -> anyhow::Result<bool> {
        match self.set {
            CommandSet::Bf => Ok(false),
            CommandSet::Cf => Ok(self.cmd("DEL").arg(key).query::<i64>(self.con.commands())? == 1),
        }
    }
    fn bytes(&self) -> usize {
        self.bytes
    }
    /// Items inserted against the capacity: `BF.INFO`'s, or for `CF.*` the reserved
    /// capacity times the filters. Neither module exposes its bits, so there is no fill
    /// ratio or estimated rate.
    fn capacity(&mut self, target: f64) -> Option<anyhow::Result<Capacity>> {
        let mut info = || -> anyhow::Result<Capacity> {
            let (items, capacity) = match self.set {
                CommandSet::Bf => (self.info("ITEMS")?, self.info("CAPACITY")?),
                CommandSet::Cf => (
                    self.info("Number of items inserted")?,
                    self.reserved * self.info("Number of filters")?,
                ),
            };
            Ok(Capacity {
                fill_ratio: None,
                estimated_len: items as f64,
                capacity,
                estimated_fpr: None,
                target_fpr: target,
            })
        };
        Some(info())
    }
}

/// The seed texts' classic filter in Redis: one bit string, `SETBIT`/`GETBIT` at the
/// classic filter's `k` positions (linebloom's `ClassicParams` hashing), pipelined, so
/// one round trip per key but `k` commands. Must stay under 2^32 bits (512 MB).
pub struct RedisClassic {
    /// The bit-string key.
    pub key: String,
    /// Shape.
    pub params: ClassicParams,
    /// Its connection (one server or a cluster).
    pub con: Con,
}

impl RedisClassic {
    /// Sized by the classic formula for `n` at `p`, loaded with `0..n`.
    pub fn load(mut con: Con, key: &str, n: u64, p: f64) -> anyhow::Result<Self> {
        let params = ClassicParams::for_fpr(n, p)?;
        anyhow::ensure!(
            params.bits() < 1 << 32,
            "classic Redis filter would exceed 512 MB"
        );
        redis::cmd("DEL").arg(key).query::<()>(con.commands())?;
        let mut this = RedisClassic {
            key: key.into(),
            params,
            con,
        };
        let ids: Vec<u64> = (0..n).collect();
        for chunk in ids.chunks(5_000) {
            this.set_bits(chunk)?;
        }
        Ok(this)
    }

    /// `SETBIT` of every position of `keys`, in one pipeline (each `SETBIT` is atomic;
    /// a key is added before the database row, so nobody reads it half-set).
    fn set_bits(&mut self, keys: &[u64]) -> anyhow::Result<()> {
        let mut cmds = Vec::new();
        for &id in keys {
            self.params.for_each_position(hash(id), |b| {
                let mut setbit = redis::cmd("SETBIT");
                setbit.arg(&self.key).arg(b).arg(1);
                cmds.push(setbit);
            });
        }
        run_all(&mut *self.con, &cmds)?;
        Ok(())
    }
}

fn hash(key: u64) -> u64 {
    Xxh3::default().hash_bytes(&key.to_le_bytes())
}

impl Guard for RedisClassic {
    fn name(&self) -> &'static str {
        looks::CLASSIC_SETBIT
    }
    fn might_contain(&mut self, key: u64) -> anyhow::Result<bool> {
        let mut cmds = Vec::new();
        self.params.for_each_position(hash(key), |b| {
            let mut getbit = redis::cmd("GETBIT");
            getbit.arg(&self.key).arg(b);
            cmds.push(getbit);
        });
        let bits = run_all(&mut *self.con, &cmds)?;
        for bit in bits {
            if redis::from_redis_value::<u8>(bit)? != 1 {
                return Ok(false);
            }
        }
        Ok(true)
    }
    fn add(&mut self, key: u64) -> anyhow::Result<()> {
        self.set_bits(&[key])
    }
    fn remove(&mut self, _: u64) -> anyhow::Result<bool> {
        Ok(false)
    }
    fn bytes(&self) -> usize {
        self.params.bits().div_ceil(8) as usize
    }
    /// From `BITCOUNT` of the bit string: the fill, the estimated count, and the rate
    /// `fill^k` (exact for the classic defence given its bits).
    fn capacity(&mut self, target: f64) -> Option<anyhow::Result<Capacity>> {
        let mut count = || -> anyhow::Result<Capacity> {
            let ones: u64 = redis::cmd("BITCOUNT")
                .arg(&self.key)
                .query(self.con.commands())?;
            let fill = ones as f64 / self.params.bits() as f64;
            Ok(Capacity {
                fill_ratio: Some(fill),
                estimated_len: self.params.estimated_len(ones),
                capacity: self.params.capacity_at(target),
                estimated_fpr: Some(fill.powi(self.params.k() as i32)),
                target_fpr: target,
            })
        };
        Some(count())
    }
}
