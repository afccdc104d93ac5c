//! Opening and creating a filter (`PROTOCOL.md`, "Create and open"): [`Open`] reads
//! the meta and checks that every live shard is there with exactly its shape's bytes;
//! [`Create`] writes a new generation's shards under fresh key names and then the meta
//! with `SET … NX`, so a prefix that holds a filter is refused whole and two services
//! that create at once never write each other's shards; [`OpenOrCreate`] is the
//! start-up of a service, safe when several start together.

use super::batch::check_length;
use super::exchange::{Commands, Exchange, Flow, Input, all_replies, replies};
use super::keys::{Keys, count_bytes, meta_key, random_u64, unlinks};
use super::read::{eviction_from, info_memory, ttl_of};
use super::reply::{bytes, integer, time_ms};
use super::state::{State, state_for};
use crate::meta::{Building, Meta};
use crate::{BatchPath, Generation, MAX_RETRIES, RedisFilterError};
use linebloom::{BloomFilter, Params, StableHasher};
use smallvec::smallvec;
use std::time::Duration;

/// The most blocks a shard may hold: Redis strings end at 512 MiB.
pub const MAX_SHARD_BLOCKS: u64 = (512 << 20) / 64;

/// How a new filter is laid out in Redis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilterOptions {
    pub(crate) shard_blocks: u64,
    pub(crate) seed: u64,
    pub(crate) ttl: Option<Duration>,
}

impl Default for FilterOptions {
    /// Shards of [`DEFAULT_SHARD_BLOCKS`](crate::DEFAULT_SHARD_BLOCKS) blocks (64 MiB),
    /// seed 0, no TTL.
    fn default() -> Self {
        FilterOptions {
            shard_blocks: crate::DEFAULT_SHARD_BLOCKS,
            seed: 0,
            ttl: None,
        }
    }
}

impl FilterOptions {
    /// Blocks per shard key (at least 1, at most [`MAX_SHARD_BLOCKS`]): a filter larger
    /// than one shard is split, and on a Redis Cluster its shards spread over the
    /// slots.
    #[must_use]
    pub fn shard_blocks(mut self, blocks: u64) -> Self {
        self.shard_blocks = blocks;
        self
    }

    /// The seed of the filter's hasher (`IntFold`); a filter stored from an in-process
    /// filter keeps that filter's.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// A time to live over the whole filter (meta and shards): after it the filter is
    /// gone, and `open_or_create` makes a new, empty one.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// Refuses options that cannot describe a filter.
    pub(crate) fn check(&self) -> Result<(), RedisFilterError> {
        if !(1..=MAX_SHARD_BLOCKS).contains(&self.shard_blocks) {
            return Err(RedisFilterError::InvalidArgument(format!(
                "{} blocks per shard: a shard holds 1 to {MAX_SHARD_BLOCKS} blocks \
                 (Redis strings end at 512 MiB)",
                self.shard_blocks
            )));
        }
        if self.ttl.is_some_and(|t| t.as_millis() == 0) {
            return Err(RedisFilterError::InvalidArgument(
                "a TTL of less than a millisecond".into(),
            ));
        }
        Ok(())
    }
}

/// `COMMAND INFO` of the module's commands: does the server have them?
pub(crate) fn command_info() -> redis::Cmd {
    let mut info = redis::cmd("COMMAND");
    info.arg("INFO")
        .arg("linebloom.mtest")
        .arg("linebloom.madd");
    info
}

/// The batch path a `COMMAND INFO` reply shows.
pub(crate) fn path_of(reply: super::exchange::Reply) -> BatchPath {
    match reply {
        Ok(redis::Value::Array(entries))
            if entries.len() == 2 && entries.iter().all(|e| *e != redis::Value::Nil) =>
        {
            BatchPath::Module
        }
        _ => BatchPath::Commands,
    }
}

enum OpenPhase {
    Meta,
    Shards(Box<State>),
}

/// Opens the filter under a prefix.
pub(crate) struct Open {
    prefix: String,
    meta_key: String,
    phase: OpenPhase,
    tries: usize,
    /// The meta as read when a shard was found missing: read again unchanged, the shard
    /// is missing for good (not retired by a rebuild that moved the meta on).
    missing_under: Option<String>,
}

impl Open {
    pub(crate) fn new(prefix: &str) -> Open {
        Open {
            prefix: prefix.to_string(),
            meta_key: meta_key(prefix),
            phase: OpenPhase::Meta,
            tries: 0,
            missing_under: None,
        }
    }

    fn read_meta(&mut self) -> Result<Flow<State>, RedisFilterError> {
        self.tries += 1;
        if self.tries > MAX_RETRIES {
            return Err(RedisFilterError::Stale {
                prefix: self.prefix.clone(),
            });
        }
        self.phase = OpenPhase::Meta;
        let (mut get, mut pttl) = (redis::cmd("GET"), redis::cmd("PTTL"));
        get.arg(&self.meta_key);
        pttl.arg(&self.meta_key);
        Ok(Flow::Send(smallvec![
            get,
            pttl,
            command_info(),
            info_memory()
        ]))
    }
}

impl Exchange for Open {
    type Output = State;

    fn resume(&mut self, input: Input) -> Result<Flow<State>, RedisFilterError> {
        if let Input::Start = input {
            return self.read_meta();
        }
        match std::mem::replace(&mut self.phase, OpenPhase::Meta) {
            OpenPhase::Meta => {
                let [meta, pttl, commands, info]: [super::exchange::Reply; 4] =
                    replies(input, 4)?.try_into().expect("four replies");
                let text = bytes(meta.map_err(|e| crate::error::on_key(e, &self.meta_key)))?
                    .ok_or_else(|| RedisFilterError::NotFound {
                        prefix: self.prefix.clone(),
                    })?;
                let meta = Meta::decode(&self.meta_key, &text)?;
                let ttl = ttl_of(pttl)?;
                let state = state_for(
                    &self.prefix,
                    String::from_utf8(text).expect("decode checked UTF-8"),
                    meta,
                    path_of(commands),
                    eviction_from(info, ttl.is_some()),
                    None,
                );
                let strlens = state
                    .live
                    .shards
                    .iter()
                    .map(|key| {
                        let mut strlen = redis::cmd("STRLEN");
                        strlen.arg(key);
                        strlen
                    })
                    .collect();
                self.phase = OpenPhase::Shards(Box::new(state));
                Ok(Flow::Send(strlens))
            }
            OpenPhase::Shards(state) => {
                let live = &state.live;
                for (shard, reply) in replies(input, live.shards.len())?.into_iter().enumerate() {
                    let key = &live.shards[shard];
                    let held = integer(reply.map_err(|e| crate::error::on_key(e, key)))?;
                    match check_length(key, held, live.generation.shard_len(shard as u64)) {
                        // A rebuild may have retired this generation since the meta
                        // was read: read it again, unless it was read unchanged once
                        // already.
                        Err(e @ RedisFilterError::Missing { .. }) => {
                            if self.missing_under.as_ref() == Some(&state.text) {
                                return Err(e);
                            }
                            self.missing_under = Some(state.text.clone());
                            return self.read_meta();
                        }
                        other => other?,
                    }
                }
                Ok(Flow::Done(*state))
            }
        }
    }
}

/// What a new filter starts from.
pub(crate) enum Content<'a> {
    /// Zeros, of this shape.
    Empty(Params),
    /// An in-process filter's bits (and its hasher's seed).
    Filter(&'a BloomFilter),
}

enum CreatePhase {
    Start,
    /// The shards and counts are being written.
    Shards,
    /// The meta is being set, if there is none.
    Meta,
    /// Another filter held the prefix: this call's keys are being removed.
    Undo,
}

/// Creates a filter under a prefix that holds none.
pub(crate) struct Create<'a> {
    prefix: String,
    content: Content<'a>,
    options: FilterOptions,
    /// For a first build: the builder's token and its lease, set from the server's
    /// clock in the meta, which then says the filter is being built.
    building: Option<(u64, Duration)>,
    phase: CreatePhase,
    state: Option<State>,
}

impl<'a> Create<'a> {
    pub(crate) fn new(
        prefix: &str,
        content: Content<'a>,
        options: FilterOptions,
    ) -> Result<Self, RedisFilterError> {
        options.check()?;
        Ok(Create {
            prefix: prefix.to_string(),
            content,
            options,
            building: None,
            phase: CreatePhase::Start,
            state: None,
        })
    }

    /// The filter is created in the building state, owned by `owner` for `lease`.
    pub(crate) fn building(mut self, owner: u64, lease: Duration) -> Self {
        self.building = Some((owner, lease));
        self
    }

    fn ttl_ms(&self) -> Option<u64> {
        self.options.ttl.map(|t| t.as_millis() as u64)
    }
}

impl Exchange for Create<'_> {
    type Output = State;

    fn resume(&mut self, input: Input) -> Result<Flow<State>, RedisFilterError> {
        match self.phase {
            CreatePhase::Start => {
                let (params, seed) = match self.content {
                    Content::Empty(params) => (params, self.options.seed),
                    Content::Filter(f) => (f.params(), f.hasher().seed()),
                };
                let live = Generation {
                    number: 1,
                    tag: random_u64(),
                    params,
                    seed,
                    shard_blocks: self.options.shard_blocks,
                };
                let keys = Keys::new(&self.prefix, live);
                let mut cmds = Commands::new();
                for (shard, key) in keys.shards.iter().enumerate() {
                    let bytes = live.shard_len(shard as u64) * 64;
                    let first = shard as u64 * live.shard_blocks * 64;
                    let mut write = match self.content {
                        Content::Empty(_) => {
                            // SETRANGE of the last byte makes a string of zeros.
                            let mut zeros = redis::cmd("SETRANGE");
                            zeros.arg(key).arg(bytes - 1).arg(&[0u8][..]);
                            zeros
                        }
                        Content::Filter(f) => {
                            let payload = linebloom::block::blocks_as_bytes(f.as_blocks());
                            let mut set = redis::cmd("SET");
                            set.arg(key)
                                .arg(&payload[first as usize..(first + bytes) as usize]);
                            set
                        }
                    };
                    if let (Some(ms), Content::Filter(_)) = (self.ttl_ms(), &self.content) {
                        write.arg("PX").arg(ms);
                    }
                    cmds.push(write);
                    if let (Some(ms), Content::Empty(_)) = (self.ttl_ms(), &self.content) {
                        let mut pexpire = redis::cmd("PEXPIRE");
                        pexpire.arg(key).arg(ms);
                        cmds.push(pexpire);
                    }
                }
                // The counts: the in-process filter's estimate sits in shard 0's.
                let estimate = match self.content {
                    Content::Empty(_) => 0,
                    Content::Filter(f) => {
                        let n = linebloom::Filter::estimated_len(f);
                        if n.is_finite() { n.round() as u64 } else { 0 }
                    }
                };
                for (shard, key) in keys.counts.iter().enumerate() {
                    let mut set = redis::cmd("SET");
                    set.arg(key)
                        .arg(&count_bytes(if shard == 0 { estimate } else { 0 })[..]);
                    if let Some(ms) = self.ttl_ms() {
                        set.arg("PX").arg(ms);
                    }
                    cmds.push(set);
                }
                cmds.extend([command_info(), info_memory()]);
                if self.building.is_some() {
                    cmds.push(redis::cmd("TIME"));
                }
                let meta = Meta::live(live, random_u64());
                let text = meta.encode();
                self.state = Some(state_for(
                    &self.prefix,
                    text,
                    meta,
                    BatchPath::Commands,
                    None,
                    None,
                ));
                self.phase = CreatePhase::Shards;
                Ok(Flow::Send(cmds))
            }
            CreatePhase::Shards => {
                let mut all = all_replies(input)?;
                let time = self
                    .building
                    .map(|_| all.pop().unwrap_or(Ok(redis::Value::Nil)));
                let (info, commands) = (all.pop(), all.pop());
                for reply in all {
                    reply?;
                }
                let state = self.state.as_mut().expect("set in the first step");
                if let (Some((owner, lease)), Some(time)) = (self.building, time) {
                    let until_ms = time_ms(time)?.saturating_add(lease.as_millis() as u64);
                    state.meta.building = Some(Building { owner, until_ms });
                    state.text = state.meta.encode();
                }
                state.path = path_of(commands.unwrap_or(Ok(redis::Value::Nil)));
                state.eviction = info.and_then(|i| eviction_from(i, self.options.ttl.is_some()));
                let mut set = redis::cmd("SET");
                set.arg(meta_key(&self.prefix)).arg(&state.text).arg("NX");
                if let Some(ms) = self.ttl_ms() {
                    set.arg("PX").arg(ms);
                }
                self.phase = CreatePhase::Meta;
                Ok(Flow::Send(smallvec![set]))
            }
            CreatePhase::Meta => {
                let reply = replies(input, 1)?.pop().expect("one reply");
                if bytes(reply)?.is_some() {
                    return Ok(Flow::Done(
                        self.state.take().expect("set in the first step"),
                    ));
                }
                // Another filter is there: remove the shards this call wrote (nobody
                // else knows their names), then refuse.
                let keys = &self.state.as_ref().expect("set in the first step").live;
                self.phase = CreatePhase::Undo;
                Ok(Flow::Send(unlinks(keys.all())))
            }
            CreatePhase::Undo => Err(RedisFilterError::AlreadyExists {
                prefix: self.prefix.clone(),
            }),
        }
    }
}

/// Opens the filter under a prefix, or creates it if there is none: a service's
/// start-up. When several start together, each either creates the filter or finds the
/// one another created; none overwrites another's.
pub(crate) enum OpenOrCreate<'a> {
    Opening(Open, Option<Box<Create<'a>>>),
    Creating(Box<Create<'a>>),
    Reopening(Open),
}

impl<'a> OpenOrCreate<'a> {
    pub(crate) fn new(
        prefix: &str,
        params: Params,
        options: FilterOptions,
    ) -> Result<Self, RedisFilterError> {
        let create = Create::new(prefix, Content::Empty(params), options)?;
        Ok(Self::with(prefix, create))
    }

    /// Opens the filter under `prefix`, or makes it with `create`.
    pub(crate) fn with(prefix: &str, create: Create<'a>) -> Self {
        OpenOrCreate::Opening(Open::new(prefix), Some(Box::new(create)))
    }
}

/// The state, and whether this call created the filter (`false`: it opened one).
impl Exchange for OpenOrCreate<'_> {
    type Output = (State, bool);

    fn resume(&mut self, input: Input) -> Result<Flow<(State, bool)>, RedisFilterError> {
        let step = match self {
            OpenOrCreate::Opening(open, _) => open.resume(input),
            OpenOrCreate::Creating(create) => create.resume(input),
            OpenOrCreate::Reopening(open) => open.resume(input),
        };
        match (step, &mut *self) {
            (Err(RedisFilterError::NotFound { .. }), OpenOrCreate::Opening(_, create)) => {
                let create = create.take().expect("created once");
                *self = OpenOrCreate::Creating(create);
                self.resume(Input::Start)
            }
            (Err(RedisFilterError::AlreadyExists { prefix }), OpenOrCreate::Creating(_)) => {
                *self = OpenOrCreate::Reopening(Open::new(&prefix));
                self.resume(Input::Start)
            }
            (step, _) => {
                let created = matches!(self, OpenOrCreate::Creating(_));
                step.map(|flow| flow.map(|state| (state, created)))
            }
        }
    }
}
