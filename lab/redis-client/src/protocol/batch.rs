//! Batches of lookups and inserts, and the rule that keeps every answer inside one
//! generation ([`Retrying`], `PROTOCOL.md`, "Batches and generations"): on one server
//! each command carries the meta guard and is refused whole if the meta moved on; on a
//! cluster, where a guard cannot cross slots, the batch is followed by a read of the
//! meta in a round trip of its own. A refused or outdated attempt re-reads the meta and
//! runs again against the new one.

use super::durability::WhileBuilding;
use super::exchange::{Commands, Exchange, Flow, Input, Reply, replies};
use super::keys::Keys;
use super::reply::{Refusal, bytes, first_refusal, integer};
use super::state::{Shared, State, get_meta, meta_bytes};
use crate::scripts::INSERT;
use crate::{BatchPath, MAX_RETRIES, RedisFilterError};
use linebloom::pattern::{for_each_position, pattern};
use linebloom::{Block, Key};
use linebloom_redis_wire as wire;
use smallvec::smallvec;
use std::sync::Arc;

/// One attempt of an operation against one state of the meta.
pub(crate) trait Attempt {
    type Output;
    /// The attempt's commands against `state`. `guard`: on one server, each command
    /// that can carries the meta guard (and the attempt is then accepted as soon as no
    /// command refused it).
    fn commands(&mut self, shared: &Shared, state: &State, guard: bool, cmds: &mut Commands);
    /// Can the commands carry the guard, on one server?
    fn guarded(&self, state: &State) -> bool;
    /// The replies of an accepted attempt.
    fn finish(
        &mut self,
        state: &State,
        replies: Vec<Reply>,
    ) -> Result<Self::Output, RedisFilterError>;
    /// The replies of an attempt that was refused or outdated (some of its commands may
    /// have run).
    fn refused(&mut self, _state: &State, _replies: &[Reply]) {}
}

enum Phase {
    Batch,
    /// A cluster's batch ran unguarded; its replies wait for the meta's.
    Confirm(Vec<Reply>),
    /// Re-reading the meta after a refusal; with the shard that was missing, if any.
    Refresh(Option<String>),
}

/// Runs an [`Attempt`] until one is accepted, at most [`MAX_RETRIES`] times.
pub(crate) struct Retrying<'a, A> {
    shared: &'a Shared,
    attempt: A,
    /// One server (a pipeline runs in order), or a cluster.
    ordered: bool,
    state: Arc<State>,
    guard: bool,
    phase: Phase,
    /// Commands sent in the last step.
    sent: usize,
    tries: usize,
}

impl<'a, A: Attempt> Retrying<'a, A> {
    pub(crate) fn new(shared: &'a Shared, ordered: bool, attempt: A) -> Self {
        Retrying {
            state: shared.state(),
            shared,
            attempt,
            ordered,
            guard: false,
            phase: Phase::Batch,
            sent: 0,
            tries: 0,
        }
    }

    fn batch(&mut self) -> Result<Flow<A::Output>, RedisFilterError> {
        self.tries += 1;
        if self.tries > MAX_RETRIES {
            return Err(RedisFilterError::Stale {
                prefix: self.shared.prefix.clone(),
            });
        }
        if self.tries > 1 {
            // A retry: the meta moved on since the first attempt read it.
            self.state = self.shared.state();
        }
        self.guard = self.ordered && self.attempt.guarded(&self.state);
        let mut cmds = Commands::new();
        self.attempt
            .commands(self.shared, &self.state, self.guard, &mut cmds);
        if self.ordered && !self.guard {
            cmds.push(get_meta(self.shared));
        }
        self.phase = Phase::Batch;
        self.sent = cmds.len();
        Ok(Flow::Send(cmds))
    }

    fn refresh(&mut self, missing: Option<String>) -> Flow<A::Output> {
        self.phase = Phase::Refresh(missing);
        self.sent = 1;
        Flow::Send(smallvec![get_meta(self.shared)])
    }

    /// The batch's replies and, where it was checked, the meta's: accept, retry or
    /// re-read the meta.
    fn judge(
        &mut self,
        batch: Vec<Reply>,
        meta: Option<Reply>,
    ) -> Result<Flow<A::Output>, RedisFilterError> {
        let meta = match meta {
            Some(reply) => Some(meta_bytes(self.shared, reply)?),
            None => None,
        };
        let refusal = first_refusal(&batch);
        if let Some(Refusal::NoModule) = refusal {
            self.attempt.refused(&self.state, &batch);
            self.shared.update(|s| s.with_path(BatchPath::Commands));
            return self.batch();
        }
        if refusal.is_some()
            || meta
                .as_ref()
                .is_some_and(|m| m.as_deref() != Some(self.state.text.as_bytes()))
        {
            self.attempt.refused(&self.state, &batch);
            return match (refusal, meta) {
                // A read of the meta came with the batch: take it and try again; a
                // shard that was missing must be missing from a generation that is gone.
                (refusal, Some(meta)) => {
                    let changed = self.shared.adopt(meta)?;
                    if let (Some(Refusal::Missing(key)), false) = (refusal, changed) {
                        return Err(RedisFilterError::Missing { key });
                    }
                    self.batch()
                }
                (Some(Refusal::Missing(key)), None) => Ok(self.refresh(Some(key))),
                (_, None) => Ok(self.refresh(None)),
            };
        }
        Ok(Flow::Done(self.attempt.finish(&self.state, batch)?))
    }
}

impl<A: Attempt> Exchange for Retrying<'_, A> {
    type Output = A::Output;

    fn resume(&mut self, input: Input) -> Result<Flow<A::Output>, RedisFilterError> {
        if let Input::Start = input {
            return self.batch();
        }
        match std::mem::replace(&mut self.phase, Phase::Batch) {
            Phase::Batch => {
                let mut batch = replies(input, self.sent)?;
                if self.guard {
                    self.judge(batch, None)
                } else if self.ordered {
                    let meta = batch.pop();
                    self.judge(batch, meta)
                } else if first_refusal(&batch).is_some() {
                    // A cluster's batch refused: that settles it before the meta.
                    self.judge(batch, None)
                } else {
                    self.phase = Phase::Confirm(batch);
                    self.sent = 1;
                    Ok(Flow::Send(smallvec![get_meta(self.shared)]))
                }
            }
            Phase::Confirm(batch) => {
                let meta = replies(input, 1)?.pop().expect("one reply");
                self.judge(batch, Some(meta))
            }
            Phase::Refresh(missing) => {
                let meta = meta_bytes(self.shared, replies(input, 1)?.pop().expect("one reply"))?;
                let changed = self.shared.adopt(meta)?;
                match missing {
                    Some(key) if !changed => Err(RedisFilterError::Missing { key }),
                    _ => self.batch(),
                }
            }
        }
    }
}

/// One key of a batch placed in a generation: its shard, its index in the batch, its
/// hash.
type Placed = (usize, usize, u64);

/// The placed keys of a batch: a single key's without an allocation.
type PlacedKeys = smallvec::SmallVec<[Placed; 1]>;

/// The keys of a batch placed in one generation, sorted by shard: each run of one
/// shard is one command ([`shard_runs`]).
fn placed<K: Key>(keys: &Keys, batch: &[K]) -> PlacedKeys {
    let mut placed: PlacedKeys = batch
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let hash = key.hash_key(&keys.hasher);
            (keys.place(hash).0, i, hash)
        })
        .collect();
    placed.sort_unstable_by_key(|&(shard, i, _)| (shard, i));
    placed
}

/// The runs of one shard in [`placed`] keys.
fn shard_runs(placed: &[Placed]) -> impl Iterator<Item = &[Placed]> {
    placed.chunk_by(|a, b| a.0 == b.0)
}

/// A module command ([`wire::MTEST`] or [`wire::MADD`]) on one shard's keys: `<shard>
/// <batch>`, the batch its head and one [`wire::probe`] per key, then `options`. Sized
/// once: its arguments' bytes are known before the first is written.
fn module_cmd(name: &str, keys: &Keys, run: &[Placed], options: &[&[u8]]) -> redis::Cmd {
    use redis::RedisWrite as _;
    use std::io::Write as _;
    let (shard, head) = (&keys.shards[run[0].0], &keys.heads[run[0].0]);
    let bytes = [
        name.len(),
        shard.len(),
        head.len(),
        run.len() * wire::PROBE_BYTES,
    ]
    .into_iter()
    .chain(options.iter().map(|a| a.len()))
    .sum();
    let mut cmd = redis::Cmd::with_capacity(3 + options.len(), bytes);
    cmd.arg(name).arg(shard);
    {
        let mut batch = cmd.writer_for_next_arg();
        let mut write = |bytes: &[u8]| batch.write_all(bytes).expect("a command's buffer");
        write(head.as_bytes());
        for &(_, _, hash) in run {
            write(&wire::probe(keys.place(hash).1, hash));
        }
    }
    for arg in options {
        cmd.arg(*arg);
    }
    cmd
}

/// The meta guard's arguments.
fn guard<'s>(shared: &'s Shared, state: &'s State) -> [&'s [u8]; 3] {
    [
        wire::META.as_bytes(),
        shared.meta_key.as_bytes(),
        state.text.as_bytes(),
    ]
}

/// A batch's answers, one per key: a single key's without an allocation.
pub(crate) type Answers = smallvec::SmallVec<[bool; 1]>;

/// Without the module, keys whose blocks lie at most this many blocks apart in a shard
/// are read by one `GETRANGE` (the blocks between them included): a command costs the
/// client and the server more than 2 KiB of reply does (`benches/README.md`, "Redis",
/// says how it was chosen).
const GAP_BLOCKS: u64 = 32;

/// One key of a batch by its block in its shard: the block, its index in the batch, its
/// hash.
type ByBlock = (u64, usize, u64);

/// Without the module, the runs of one shard's keys sorted by block that one `GETRANGE`
/// reads: keys at most [`GAP_BLOCKS`] apart.
fn block_runs(by_block: &[ByBlock]) -> impl Iterator<Item = &[ByBlock]> {
    by_block.chunk_by(|a, b| b.0 - a.0 <= GAP_BLOCKS)
}

/// Lookups in the live generation.
pub(crate) struct Contains<'k, K> {
    keys: &'k [K],
    /// The keys of the last attempt by shard: which of its replies is whose.
    placed: PlacedKeys,
    /// Without the module: the last attempt's keys by shard, then by block; each run of
    /// [`block_runs`] in a shard is one `GETRANGE`.
    by_block: Vec<ByBlock>,
    /// Where the last attempt's state was still being built: what to answer, and the
    /// prefix to name.
    building: Option<(WhileBuilding, String)>,
}

impl<'k, K: Key> Contains<'k, K> {
    pub(crate) fn new(keys: &'k [K]) -> Self {
        Contains {
            keys,
            placed: PlacedKeys::new(),
            by_block: Vec::new(),
            building: None,
        }
    }
}

impl<K: Key> Attempt for Contains<'_, K> {
    type Output = Answers;

    fn guarded(&self, state: &State) -> bool {
        state.path == BatchPath::Module && state.meta.building.is_none()
    }

    fn commands(&mut self, shared: &Shared, state: &State, guarded: bool, cmds: &mut Commands) {
        // A filter still being built answers no lookup: the attempt only confirms,
        // by the meta read after it, that it is still being built.
        self.placed.clear();
        self.by_block.clear();
        self.building = state
            .meta
            .building
            .map(|_| (shared.while_building(), shared.prefix.clone()));
        if self.building.is_some() {
            return;
        }
        let live = &state.live;
        self.placed = placed(live, self.keys);
        for run in shard_runs(&self.placed) {
            match state.path {
                BatchPath::Module => {
                    let meta = guard(shared, state);
                    let options: &[&[u8]] = if guarded { &meta } else { &[] };
                    cmds.push(module_cmd(wire::MTEST, live, run, options));
                }
                BatchPath::Commands => {
                    // The shard's exact length, then its keys' blocks, those at most
                    // GAP_BLOCKS apart in one range.
                    let shard = &live.shards[run[0].0];
                    let mut strlen = redis::cmd("STRLEN");
                    strlen.arg(shard);
                    cmds.push(strlen);
                    let start = self.by_block.len();
                    self.by_block.extend(
                        run.iter()
                            .map(|&(_, i, hash)| (live.place(hash).1, i, hash)),
                    );
                    self.by_block[start..].sort_unstable_by_key(|&(block, i, _)| (block, i));
                    for keys in block_runs(&self.by_block[start..]) {
                        let (first, last) = (keys[0].0, keys[keys.len() - 1].0);
                        // Sized once: the name, the shard and two offsets of up to 20
                        // digits each.
                        let mut getrange = redis::Cmd::with_capacity(4, 48 + shard.len());
                        getrange
                            .arg("GETRANGE")
                            .arg(shard)
                            .arg(first * 64)
                            .arg(last * 64 + 63);
                        cmds.push(getrange);
                    }
                }
            }
        }
    }

    fn finish(&mut self, state: &State, replies: Vec<Reply>) -> Result<Answers, RedisFilterError> {
        match self.building.take() {
            Some((WhileBuilding::MaybePresent, _)) => {
                return Ok(smallvec![true; self.keys.len()]);
            }
            Some((WhileBuilding::Error, prefix)) => {
                return Err(RedisFilterError::Building { prefix });
            }
            None => {}
        }
        let live = &state.live;
        let mut answers: Answers = smallvec![false; self.keys.len()];
        let mut replies = replies.into_iter();
        let mut next = || {
            replies
                .next()
                .ok_or_else(|| RedisFilterError::Reply("fewer replies than commands".into()))
        };
        // Without the module: the shards' keys by block, in the order of their runs.
        let mut by_block = &self.by_block[..];
        for run in shard_runs(&self.placed) {
            let (shard, key) = (run[0].0, &live.shards[run[0].0]);
            let on_key = |e| crate::error::on_key(e, key);
            match state.path {
                BatchPath::Module => {
                    let got = bytes(next()?.map_err(on_key))?.unwrap_or_default();
                    if got.len() != run.len() || got.iter().any(|&b| b > 1) {
                        return Err(RedisFilterError::Reply(format!(
                            "LINEBLOOM.MTEST on {key} answered {got:?} for {} keys",
                            run.len()
                        )));
                    }
                    for (&(_, i, _), answer) in run.iter().zip(got) {
                        answers[i] = answer == 1;
                    }
                }
                BatchPath::Commands => {
                    let held = integer(next()?.map_err(on_key))?;
                    check_length(key, held, live.generation.shard_len(shard as u64))?;
                    let (shard_keys, rest) = by_block.split_at(run.len());
                    by_block = rest;
                    for keys in block_runs(shard_keys) {
                        let first = keys[0].0;
                        let lines = bytes(next()?.map_err(on_key))?.unwrap_or_default();
                        let needed = (keys[keys.len() - 1].0 - first + 1) * 64;
                        if lines.len() as u64 != needed {
                            return Err(RedisFilterError::ShardLength {
                                key: key.clone(),
                                held: lines.len() as u64,
                                needed,
                            });
                        }
                        for &(block, i, hash) in keys {
                            let at = ((block - first) * 64) as usize;
                            let line: &[u8; 64] =
                                lines[at..at + 64].try_into().expect("64 bytes a block");
                            answers[i] = Block::from_le_bytes(line)
                                .contains_mask(&pattern(hash, live.generation.params.k()));
                        }
                    }
                }
            }
        }
        Ok(answers)
    }
}

/// A shard's `STRLEN` against its shape: 0 is a missing shard, anything else than the
/// shape's bytes a wrong length.
pub(crate) fn check_length(key: &str, held: i64, blocks: u64) -> Result<(), RedisFilterError> {
    let needed = blocks * 64;
    match held {
        0 => Err(RedisFilterError::Missing {
            key: key.to_string(),
        }),
        held if held as u64 == needed => Ok(()),
        held => Err(RedisFilterError::ShardLength {
            key: key.to_string(),
            held: held as u64,
            needed,
        }),
    }
}

/// Inserts into the live generation and, during a rebuild, the next one.
pub(crate) struct Insert<'k, K> {
    keys: &'k [K],
    /// The shard each command of the last attempt wrote (its generation's keys and the
    /// shard's index), to name it in an error.
    targets: smallvec::SmallVec<[(Arc<Keys>, usize); 1]>,
    /// How many of the last attempt's commands wrote the live generation.
    live_cmds: usize,
    /// New keys counted by the live generation's writes in refused attempts.
    counted: u64,
}

impl<'k, K: Key> Insert<'k, K> {
    pub(crate) fn new(keys: &'k [K]) -> Self {
        Insert {
            keys,
            targets: smallvec::SmallVec::new(),
            live_cmds: 0,
            counted: 0,
        }
    }

    fn new_keys(&self, replies: &[Reply]) -> u64 {
        replies[..self.live_cmds.min(replies.len())]
            .iter()
            .filter_map(|r| match r {
                Ok(redis::Value::Int(n)) => Some(*n as u64),
                _ => None,
            })
            .sum()
    }
}

impl<K: Key> Attempt for Insert<'_, K> {
    /// How many keys had a bit clear in the live generation.
    type Output = u64;

    fn guarded(&self, _state: &State) -> bool {
        true
    }

    fn commands(&mut self, shared: &Shared, state: &State, guarded: bool, cmds: &mut Commands) {
        self.targets.clear();
        for (g, keys) in state.written().enumerate() {
            let placed = placed(keys, self.keys);
            for run in shard_runs(&placed) {
                let shard = run[0].0;
                self.targets.push((Arc::clone(keys), shard));
                let cmd = match state.path {
                    BatchPath::Module => {
                        let [meta, meta_key, value] = guard(shared, state);
                        let options = [
                            wire::COUNT.as_bytes(),
                            keys.counts[shard].as_bytes(),
                            meta,
                            meta_key,
                            value,
                        ];
                        let options = if guarded { &options[..] } else { &options[..2] };
                        module_cmd(wire::MADD, keys, run, options)
                    }
                    BatchPath::Commands => {
                        let script_keys: &[&str] = if guarded {
                            &[&keys.shards[shard], &keys.counts[shard], &shared.meta_key]
                        } else {
                            &[&keys.shards[shard], &keys.counts[shard]]
                        };
                        let mut cmd = INSERT.call(script_keys);
                        cmd.arg(&keys.bytes_arg[shard]).arg(&keys.k_arg);
                        if guarded {
                            cmd.arg(&state.text);
                        }
                        let k = keys.generation.params.k();
                        for &(_, _, hash) in run {
                            let block = keys.place(hash).1;
                            for_each_position(hash, k, |word, field| {
                                cmd.arg(wire::redis_bit_offset(block, word as u32 * 64 + field));
                            });
                        }
                        cmd
                    }
                };
                cmds.push(cmd);
            }
            if g == 0 {
                self.live_cmds = cmds.len();
            }
        }
    }

    fn refused(&mut self, _state: &State, replies: &[Reply]) {
        self.counted += self.new_keys(replies);
    }

    fn finish(&mut self, _state: &State, replies: Vec<Reply>) -> Result<u64, RedisFilterError> {
        for (reply, (keys, shard)) in replies.iter().zip(&self.targets) {
            if let Err(e) = reply {
                return Err(crate::error::on_key(e.clone(), &keys.shards[*shard]));
            }
        }
        let new = self.counted + self.new_keys(&replies);
        Ok(new.min(self.keys.len() as u64))
    }
}
