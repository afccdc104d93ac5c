//! Reads of the live generation that are not lookups: its count, [`Info`], its bits
//! ([`Load`]) and their load ([`Measure`]); each an [`Attempt`] checked against the
//! meta as a batch is.

use super::batch::{Attempt, check_length};
use super::exchange::{Commands, Reply};
use super::reply::{bytes, integer};
use super::state::{Shared, State};
use crate::info::{Capacity, Info, RebuildState, eviction_risk};
use crate::{EvictionRisk, RedisFilterError};
use linebloom::{Block, Blocks, BloomFilter, IntFold};
use std::time::Duration;

/// Sums the count keys of the live generation (a missing count key counts 0).
fn count(
    state: &State,
    replies: &mut impl Iterator<Item = Reply>,
) -> Result<u64, RedisFilterError> {
    let mut total = 0u64;
    for _ in &state.live.counts {
        let reply = replies
            .next()
            .ok_or_else(|| RedisFilterError::Reply("fewer replies than commands".into()))?;
        if let Some(held) = bytes(reply)? {
            let held: [u8; 8] = held
                .as_slice()
                .try_into()
                .map_err(|_| RedisFilterError::Reply(format!("a count of {held:?}")))?;
            total = total.saturating_add(linebloom_redis_wire::read_count(held));
        }
    }
    Ok(total)
}

fn get_counts(state: &State, cmds: &mut Commands) {
    for key in &state.live.counts {
        let mut get = redis::cmd("GET");
        get.arg(key);
        cmds.push(get);
    }
}

/// The approximate count of keys inserted.
pub(crate) struct Count;

impl Attempt for Count {
    type Output = u64;
    fn guarded(&self, _: &State) -> bool {
        false
    }
    fn commands(&mut self, _: &Shared, state: &State, _: bool, cmds: &mut Commands) {
        get_counts(state, cmds);
    }
    fn finish(&mut self, state: &State, replies: Vec<Reply>) -> Result<u64, RedisFilterError> {
        count(state, &mut replies.into_iter())
    }
}

/// [`Info`]: the count, the meta's TTL and the server's eviction policy.
pub(crate) struct InfoRead;

/// The text of an `INFO` reply: one server's, or on a cluster every node's.
fn info_texts(value: redis::Value) -> Vec<String> {
    match value {
        redis::Value::BulkString(b) => vec![String::from_utf8_lossy(&b).into_owned()],
        redis::Value::VerbatimString { text, .. } | redis::Value::SimpleString(text) => vec![text],
        redis::Value::Map(nodes) => nodes.into_iter().flat_map(|(_, v)| info_texts(v)).collect(),
        redis::Value::Array(nodes) => nodes.into_iter().flat_map(info_texts).collect(),
        _ => Vec::new(),
    }
}

/// The eviction risk from an `INFO memory` reply, for a filter with or without a TTL.
pub(crate) fn eviction_from(reply: Reply, has_ttl: bool) -> Option<EvictionRisk> {
    match reply {
        Ok(value) => {
            let texts = info_texts(value);
            if texts.is_empty() {
                return Some(EvictionRisk::Unknown("INFO memory gave no text".into()));
            }
            texts.iter().find_map(|t| eviction_risk(t, has_ttl))
        }
        Err(e) => Some(EvictionRisk::Unknown(e.to_string())),
    }
}

/// `INFO memory`.
pub(crate) fn info_memory() -> redis::Cmd {
    let mut info = redis::cmd("INFO");
    info.arg("memory");
    info
}

/// A `PTTL` reply as a TTL: none for a key without one.
pub(crate) fn ttl_of(reply: Reply) -> Result<Option<Duration>, RedisFilterError> {
    let ms = integer(reply)?;
    Ok((ms >= 0).then(|| Duration::from_millis(ms as u64)))
}

impl Attempt for InfoRead {
    type Output = Info;
    fn guarded(&self, _: &State) -> bool {
        false
    }
    fn commands(&mut self, shared: &Shared, state: &State, _: bool, cmds: &mut Commands) {
        get_counts(state, cmds);
        let mut pttl = redis::cmd("PTTL");
        pttl.arg(&shared.meta_key);
        cmds.extend([pttl, info_memory()]);
    }
    fn finish(&mut self, state: &State, replies: Vec<Reply>) -> Result<Info, RedisFilterError> {
        let mut replies = replies.into_iter();
        let count = count(state, &mut replies)?;
        let mut next = || {
            replies
                .next()
                .ok_or_else(|| RedisFilterError::Reply("fewer replies than commands".into()))
        };
        let ttl = ttl_of(next()?)?;
        let eviction = eviction_from(next()?, ttl.is_some());
        let g = state.meta.live;
        Ok(Info {
            generation: g,
            building_until_ms: state.meta.building.map(|b| b.until_ms),
            rebuilding: state.meta.rebuilding.map(|r| RebuildState {
                next: r.next,
                lease_until_ms: r.until_ms,
            }),
            count,
            fill: Info::expected_fill(g.params, count),
            expected_fpr: g.params.expected_fpr(count),
            ttl,
            bytes: g.params.bytes() as u64,
            batch_path: state.path,
            eviction,
        })
    }
}

/// The live generation's bits, read back into process memory (refused while the
/// filter is being built: its bits are not whole yet).
#[derive(Default)]
pub(crate) struct Load {
    /// The prefix, where the last attempt's state was still being built.
    building: Option<String>,
}

impl Attempt for Load {
    type Output = BloomFilter;
    fn guarded(&self, _: &State) -> bool {
        false
    }
    fn commands(&mut self, shared: &Shared, state: &State, _: bool, cmds: &mut Commands) {
        self.building = state.meta.building.map(|_| shared.prefix.clone());
        if self.building.is_some() {
            return;
        }
        for key in &state.live.shards {
            let mut get = redis::cmd("GET");
            get.arg(key);
            cmds.push(get);
        }
    }
    fn finish(
        &mut self,
        state: &State,
        replies: Vec<Reply>,
    ) -> Result<BloomFilter, RedisFilterError> {
        if let Some(prefix) = self.building.take() {
            return Err(RedisFilterError::Building { prefix });
        }
        let live = &state.live;
        let g = live.generation;
        let mut payload = Vec::with_capacity(g.params.bytes());
        for (shard, reply) in replies.into_iter().enumerate() {
            let key = &live.shards[shard];
            let part = bytes(reply.map_err(|e| crate::error::on_key(e, key)))?.unwrap_or_default();
            check_length(key, part.len() as i64, g.shard_len(shard as u64))?;
            payload.extend_from_slice(&part);
        }
        let blocks: Box<[Block]> = payload
            .chunks_exact(64)
            .map(|c| Block::from_le_bytes(c.try_into().expect("64 bytes")))
            .collect();
        BloomFilter::from_storage_with_hasher(
            Blocks::from(blocks),
            g.params.k(),
            IntFold::with_seed(g.seed),
        )
        .map_err(|e| RedisFilterError::Reply(e.to_string()))
    }
}

/// The live generation's load, from one `BITCOUNT` per shard (after its `STRLEN`: a
/// missing shard counts no bits, and must be an error).
pub(crate) struct Measure {
    pub(crate) target: f64,
}

impl Attempt for Measure {
    type Output = Capacity;
    fn guarded(&self, _: &State) -> bool {
        false
    }
    fn commands(&mut self, _: &Shared, state: &State, _: bool, cmds: &mut Commands) {
        for key in &state.live.shards {
            let (mut strlen, mut bitcount) = (redis::cmd("STRLEN"), redis::cmd("BITCOUNT"));
            strlen.arg(key);
            bitcount.arg(key);
            cmds.extend([strlen, bitcount]);
        }
    }
    fn finish(&mut self, state: &State, replies: Vec<Reply>) -> Result<Capacity, RedisFilterError> {
        let live = &state.live;
        let mut ones = 0u64;
        let mut replies = replies.into_iter();
        for (shard, key) in live.shards.iter().enumerate() {
            let (Some(strlen), Some(bitcount)) = (replies.next(), replies.next()) else {
                return Err(RedisFilterError::Reply(
                    "fewer replies than commands".into(),
                ));
            };
            let held = integer(strlen.map_err(|e| crate::error::on_key(e, key)))?;
            check_length(key, held, live.generation.shard_len(shard as u64))?;
            ones += integer(bitcount)? as u64;
        }
        Ok(Capacity::of_bits(live.generation.params, ones, self.target))
    }
}
