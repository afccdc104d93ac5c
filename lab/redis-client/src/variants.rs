//! The batch paths `benches` `redis_batch` measures beside the two a [`RedisFilter`]
//! uses (feature `variants`): Lua scripts that check the meta and set the bits, or fetch
//! every key's block; one `BITFIELD_RO` per shard; pipelines without the generation
//! check. Each lost to the default paths (`benches/README.md`), and none is needed by a
//! service: they are kept so the comparison can be run again.

use crate::error::{classify, is_stale};
use crate::filter::{for_each_bit, test_line};
use crate::{MAX_RETRIES, RedisFilter, RedisFilterError};
use linebloom::Block;
use linebloom::hash::redis_bit_offset;

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

impl RedisFilter {
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
}
