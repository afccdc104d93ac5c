//! Rebuild and rotation without a gap (`PROTOCOL.md`, "Rebuild and rotation"): a new
//! generation made under fresh key names, owned by one rebuild under a lease, filled
//! from the source of truth, and switched to with a compare-and-set that can be
//! verified after a lost reply. A rebuild that dies is cancelled once its lease runs
//! out; a generation is removed only once the meta names it as retired.

use super::exchange::{Commands, Exchange, Flow, Input, Reply, all_replies};
use super::keys::{Keys, random_u64, unlinks};
use super::reply::{bytes, integer, time_ms};
use super::state::{Shared, State};
use crate::error::is_stale;
use crate::meta::{Meta, Rebuilding};
use crate::scripts::{BEGIN_REBUILD, FILL_SHARD, SWAP_AFTER_LEASE, SWAP_META};
use crate::{Generation, MAX_RETRIES, RedisFilterError};
use linebloom::{BloomFilter, IntFold, Params};
use smallvec::smallvec;
use std::time::{Duration, Instant};

/// How a rebuild runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RebuildOptions {
    pub(crate) grace: Duration,
    pub(crate) lease: Duration,
}

impl Default for RebuildOptions {
    /// No grace, a lease of 10 minutes.
    fn default() -> Self {
        RebuildOptions {
            grace: Duration::ZERO,
            lease: Duration::from_secs(600),
        }
    }
}

impl RebuildOptions {
    /// How long to wait, once every insert goes to both generations, before the source
    /// is read: the longest a writer may take between its filter insert and its
    /// database insert. A key is missed only if a writer took longer across the start.
    #[must_use]
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// How long the rebuild owns the filter: after it, another client may cancel the
    /// rebuild (as if its process had died) and start its own. Make it longer than a
    /// rebuild takes: one that outlives its lease may be cancelled, and then fails
    /// without harm.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }
}

/// What a rebuild did.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Rebuilt {
    /// The generation now live.
    pub generation: Generation,
    /// Keys read from the source.
    pub keys: u64,
    /// Time from the start of the rebuild to the switch.
    pub took: Duration,
}

/// A compare-and-set of the meta from `expected` to `new`.
fn swap(shared: &Shared, expected: &str, new: &str) -> redis::Cmd {
    let mut cmd = SWAP_META.call(&[&shared.meta_key]);
    cmd.arg(expected).arg(new);
    cmd
}

/// A cancel of the rebuild `state`'s meta shows: its generation moves to the retired.
fn cancel(shared: &Shared, text: &str, meta: &Meta, force: bool) -> Option<redis::Cmd> {
    let r = meta.rebuilding?;
    let mut cancelled = meta.clone();
    cancelled.rebuilding = None;
    cancelled.retired.push(r.next);
    let mut cmd = SWAP_AFTER_LEASE.call(&[&shared.meta_key]);
    cmd.arg(text)
        .arg(cancelled.encode())
        .arg(r.until_ms)
        .arg(if force { "1" } else { "0" });
    Some(cmd)
}

/// The commands that OR the bits of `built` for shard `shard` into the generation
/// `keys` names, through the shard's scratch key ([`FILL_SHARD`]: inserts made there
/// meanwhile stay); shard 0's count grows by `keys_read`.
pub(crate) fn load_shard(
    keys: &Keys,
    built: &BloomFilter,
    shard: usize,
    keys_read: u64,
) -> Commands {
    let g = keys.generation;
    let from = shard * g.shard_blocks as usize;
    let to = from + g.shard_len(shard as u64) as usize;
    let scratch = super::keys::scratch_key(&keys.shards[shard]);
    let mut set = redis::cmd("SET");
    set.arg(&scratch).arg(linebloom::block::blocks_as_bytes(
        &built.as_blocks()[from..to],
    ));
    let mut fill = FILL_SHARD.call(&[&keys.shards[shard], &scratch, &keys.counts[shard]]);
    fill.arg(&keys.bytes_arg[shard])
        .arg(if shard == 0 { keys_read } else { 0 });
    smallvec![set, fill]
}

/// Removes the generations the meta names as retired, then drops them from the meta.
pub(crate) struct Cleanup<'a> {
    shared: &'a Shared,
    /// The state whose retired generations are being removed, once their keys are
    /// unlinked.
    unlinked: Option<std::sync::Arc<State>>,
}

impl<'a> Cleanup<'a> {
    pub(crate) fn new(shared: &'a Shared) -> Self {
        Cleanup {
            shared,
            unlinked: None,
        }
    }
}

impl Exchange for Cleanup<'_> {
    type Output = ();

    fn resume(&mut self, input: Input) -> Result<Flow<()>, RedisFilterError> {
        match (input, self.unlinked.take()) {
            (Input::Start, _) => {
                let state = self.shared.state();
                if state.meta.retired.is_empty() {
                    return Ok(Flow::Done(()));
                }
                let keys: Vec<String> = state
                    .meta
                    .retired
                    .iter()
                    .flat_map(|g| Keys::new(&self.shared.prefix, *g).all())
                    .collect();
                self.unlinked = Some(state);
                Ok(Flow::Send(unlinks(keys)))
            }
            (input, Some(state)) => {
                for reply in all_replies(input)? {
                    reply?;
                }
                let mut meta = state.meta.clone();
                meta.retired.clear();
                Ok(Flow::Send(smallvec![swap(
                    self.shared,
                    &state.text,
                    &meta.encode(),
                )]))
            }
            (input, None) => {
                // The swap's reply: done, or another client changed the meta first and
                // its own clean-up (or the next rebuild's) removes what is left.
                match all_replies(input)?.pop() {
                    Some(Err(e)) if is_stale(&e) => {}
                    Some(reply) => {
                        reply?;
                        let state = self.shared.state();
                        let mut meta = state.meta.clone();
                        meta.retired.clear();
                        self.shared.adopt(Some(meta.encode().into_bytes()))?;
                    }
                    None => {}
                }
                Ok(Flow::Done(()))
            }
        }
    }
}

enum Phase<'a> {
    /// `GET`, `PTTL` of the meta and the server's `TIME`.
    Read,
    /// Removing retired generations before the rebuild begins.
    Cleaning(Cleanup<'a>),
    /// Cancelling a rebuild whose lease ran out.
    Cancelling,
    /// Removing keys this rebuild made that no meta names; then failing with the
    /// error, or looking at the meta again.
    Discarding(Option<RedisFilterError>),
    /// The next generation's keys are being made.
    Making,
    /// The meta is being set to name the next generation, under this rebuild's lease.
    Beginning,
    Sleeping,
    Filling,
    /// The built bits of shard `shard` are being ORed in.
    Loading {
        built: BloomFilter,
        shard: usize,
    },
    Switching,
    /// The switch's reply was lost: reading the meta to see whether it happened.
    Verifying(redis::RedisError),
    /// Switched: removing the retired generation.
    Retiring(Cleanup<'a>),
    /// A failure after the rebuild began: cancelling it, then removing its keys.
    Abandoning(RedisFilterError),
    AbandonCleaning(Cleanup<'a>, Option<RedisFilterError>),
}

/// Rebuilds the filter into a new generation of shape `params`.
pub(crate) struct Rebuild<'a> {
    shared: &'a Shared,
    params: Params,
    options: RebuildOptions,
    phase: Phase<'a>,
    tries: usize,
    started: Instant,
    /// The live meta's TTL, copied to the next generation's keys.
    ttl_ms: Option<u64>,
    next: Option<Keys>,
    /// The meta this rebuild set when it began, as stored and parsed.
    begun: String,
    begun_meta: Option<Meta>,
    keys_read: u64,
}

impl<'a> Rebuild<'a> {
    pub(crate) fn new(shared: &'a Shared, params: Params, options: RebuildOptions) -> Self {
        Rebuild {
            shared,
            params,
            options,
            phase: Phase::Read,
            tries: 0,
            started: Instant::now(),
            ttl_ms: None,
            next: None,
            begun: String::new(),
            begun_meta: None,
            keys_read: 0,
        }
    }

    fn read(&mut self) -> Result<Flow<Rebuilt>, RedisFilterError> {
        self.tries += 1;
        if self.tries > MAX_RETRIES {
            return Err(RedisFilterError::Stale {
                prefix: self.shared.prefix.clone(),
            });
        }
        let (mut get, mut pttl) = (redis::cmd("GET"), redis::cmd("PTTL"));
        get.arg(&self.shared.meta_key);
        pttl.arg(&self.shared.meta_key);
        self.phase = Phase::Read;
        Ok(Flow::Send(smallvec![get, pttl, redis::cmd("TIME")]))
    }

    /// The meta as read: clean up, cancel an expired rebuild, or make the next
    /// generation's keys.
    fn begin(&mut self, replies: Vec<Reply>) -> Result<Flow<Rebuilt>, RedisFilterError> {
        let [meta, pttl, time]: [Reply; 3] = replies
            .try_into()
            .map_err(|_| RedisFilterError::Reply("three replies expected".into()))?;
        self.shared.adopt(bytes(meta)?)?;
        self.ttl_ms = u64::try_from(integer(pttl)?).ok();
        let now = time_ms(time)?;
        let state = self.shared.state();
        if !state.meta.retired.is_empty() {
            let mut cleanup = Cleanup::new(self.shared);
            let flow = cleanup.resume(Input::Start)?;
            self.phase = Phase::Cleaning(cleanup);
            return Ok(map_flow(flow));
        }
        if state.meta.building.is_some() {
            return Err(RedisFilterError::Building {
                prefix: self.shared.prefix.clone(),
            });
        }
        if let Some(r) = state.meta.rebuilding {
            if now < r.until_ms {
                return Err(RedisFilterError::RebuildInProgress {
                    generation: r.next.number,
                    lease_left: Duration::from_millis(r.until_ms - now),
                });
            }
            self.phase = Phase::Cancelling;
            return Ok(Flow::Send(smallvec![
                cancel(self.shared, &state.text, &state.meta, false).expect("a rebuild"),
            ]));
        }
        let live = state.meta.live;
        let next = Keys::new(
            &self.shared.prefix,
            Generation {
                number: live.number + 1,
                tag: random_u64(),
                params: self.params,
                seed: live.seed,
                shard_blocks: live.shard_blocks,
            },
        );
        let mut cmds = Commands::new();
        for (shard, key) in next.shards.iter().enumerate() {
            let mut zeros = redis::cmd("SETRANGE");
            zeros
                .arg(key)
                .arg(next.generation.shard_len(shard as u64) * 64 - 1)
                .arg(&[0u8][..]);
            let mut count = redis::cmd("SET");
            count
                .arg(&next.counts[shard])
                .arg(&super::keys::count_bytes(0)[..]);
            cmds.extend([zeros, count]);
            if let Some(ms) = self.ttl_ms {
                for k in [key, &next.counts[shard]] {
                    let mut pexpire = redis::cmd("PEXPIRE");
                    pexpire.arg(k).arg(ms);
                    cmds.push(pexpire);
                }
            }
        }
        self.next = Some(next);
        self.phase = Phase::Making;
        Ok(Flow::Send(cmds))
    }

    fn next_keys(&self) -> &Keys {
        self.next.as_ref().expect("made before it is used")
    }

    /// The meta that starts the rebuild, split around its lease's end.
    fn begin_cmd(&mut self, state: &State) -> redis::Cmd {
        let meta = Meta {
            live: state.meta.live,
            building: None,
            rebuilding: Some(Rebuilding {
                next: self.next_keys().generation,
                owner: random_u64(),
                until_ms: 0,
            }),
            retired: Vec::new(),
            filter: state.meta.filter,
        };
        let (head, tail) = meta.encode_split();
        let mut cmd = BEGIN_REBUILD.call(&[&self.shared.meta_key]);
        cmd.arg(&state.text)
            .arg(head)
            .arg(tail)
            .arg(self.options.lease.as_millis() as u64);
        cmd
    }

    /// ORs the built bits of `shard` into the next generation.
    fn load(&mut self, built: BloomFilter, shard: usize) -> Flow<Rebuilt> {
        let cmds = load_shard(self.next_keys(), &built, shard, self.keys_read);
        self.phase = Phase::Loading { built, shard };
        Flow::Send(cmds)
    }

    /// The switch: the next generation live, the old one retired.
    fn switch(&mut self) -> Flow<Rebuilt> {
        self.phase = Phase::Switching;
        Flow::Send(smallvec![swap(
            self.shared,
            &self.begun,
            &self.switched().encode(),
        )])
    }

    fn switched(&self) -> Meta {
        let begun = self.begun_meta.as_ref().expect("switched after it began");
        Meta {
            live: self.next_keys().generation,
            building: None,
            rebuilding: None,
            retired: vec![begun.live],
            filter: begun.filter,
        }
    }

    /// Switched: take the new meta, then remove the old generation (a failure there
    /// leaves it retired, for the next rebuild or cancel to remove).
    fn after_switch(&mut self) -> Result<Flow<Rebuilt>, RedisFilterError> {
        self.shared
            .adopt(Some(self.switched().encode().into_bytes()))?;
        let mut cleanup = Cleanup::new(self.shared);
        match cleanup.resume(Input::Start) {
            Ok(Flow::Done(())) | Err(_) => Ok(self.done()),
            Ok(flow) => {
                self.phase = Phase::Retiring(cleanup);
                Ok(map_flow(flow))
            }
        }
    }

    fn done(&self) -> Flow<Rebuilt> {
        Flow::Done(Rebuilt {
            generation: self.next_keys().generation,
            keys: self.keys_read,
            took: self.started.elapsed(),
        })
    }

    /// After a failure once the rebuild began: cancel it (it is this rebuild's own)
    /// and remove its keys, then fail with `error`.
    fn abandon(&mut self, error: RedisFilterError) -> Result<Flow<Rebuilt>, RedisFilterError> {
        let begun = self.begun_meta.as_ref().expect("abandoned after it began");
        match cancel(self.shared, &self.begun, begun, true) {
            Some(cmd) => {
                self.phase = Phase::Abandoning(error);
                Ok(Flow::Send(smallvec![cmd]))
            }
            None => Err(error),
        }
    }
}

impl Exchange for Rebuild<'_> {
    type Output = Rebuilt;

    fn resume(&mut self, input: Input) -> Result<Flow<Rebuilt>, RedisFilterError> {
        if let Input::Start = input {
            return self.read();
        }
        match std::mem::replace(&mut self.phase, Phase::Read) {
            Phase::Read => self.begin(all_replies(input)?),
            Phase::Cleaning(mut cleanup) => match cleanup.resume(input)? {
                Flow::Done(()) => self.read(),
                flow => {
                    self.phase = Phase::Cleaning(cleanup);
                    Ok(map_flow(flow))
                }
            },
            Phase::Cancelling => {
                match all_replies(input)?.pop() {
                    Some(Err(e)) if e.code() == Some("LBLEASED") || is_stale(&e) => {}
                    Some(reply) => {
                        reply?;
                    }
                    None => {}
                }
                self.read()
            }
            Phase::Discarding(error) => {
                let _ = all_replies(input);
                match error {
                    Some(e) => Err(e),
                    None => self.read(),
                }
            }
            Phase::Making => {
                let failed = match all_replies(input) {
                    Ok(replies) => replies.into_iter().find_map(Result::err).map(Into::into),
                    Err(e) => Some(e),
                };
                if let Some(e) = failed {
                    self.phase = Phase::Discarding(Some(e));
                    return Ok(Flow::Send(unlinks(self.next_keys().all())));
                }
                let state = self.shared.state();
                let cmd = self.begin_cmd(&state);
                self.phase = Phase::Beginning;
                Ok(Flow::Send(smallvec![cmd]))
            }
            Phase::Beginning => match all_replies(input)?.pop() {
                Some(Ok(text)) => {
                    let text = bytes(Ok::<_, RedisFilterError>(text))?.unwrap_or_default();
                    self.begun_meta = Some(Meta::decode(&self.shared.meta_key, &text)?);
                    self.begun = String::from_utf8(text).expect("decode checked UTF-8");
                    self.shared.adopt(Some(self.begun.clone().into_bytes()))?;
                    self.phase = Phase::Sleeping;
                    Ok(Flow::Sleep(self.options.grace))
                }
                Some(Err(e)) if is_stale(&e) => {
                    // Another client changed the meta first: remove the keys made for
                    // nothing (no meta names them) and look again.
                    self.phase = Phase::Discarding(None);
                    Ok(Flow::Send(unlinks(self.next_keys().all())))
                }
                Some(Err(e)) => Err(e.into()),
                None => Err(RedisFilterError::Reply(
                    "no reply to the rebuild's start".into(),
                )),
            },
            Phase::Sleeping => {
                self.phase = Phase::Filling;
                let g = self.next_keys().generation;
                Ok(Flow::Fill(BloomFilter::with_hasher(
                    g.params,
                    IntFold::with_seed(g.seed),
                )))
            }
            Phase::Filling => match input {
                Input::Filled(Ok((built, keys))) => {
                    self.keys_read = keys;
                    Ok(self.load(built, 0))
                }
                Input::Filled(Err(e)) => self.abandon(RedisFilterError::Source(e)),
                _ => Err(RedisFilterError::Reply(
                    "a rebuild resumed out of order".into(),
                )),
            },
            Phase::Loading { built, shard } => {
                let failed = match all_replies(input) {
                    Ok(replies) => replies.into_iter().find_map(Result::err).map(Into::into),
                    Err(e) => Some(e),
                };
                if let Some(e) = failed {
                    return self.abandon(e);
                }
                if shard + 1 < self.next_keys().shards.len() {
                    Ok(self.load(built, shard + 1))
                } else {
                    Ok(self.switch())
                }
            }
            Phase::Switching => match input {
                Input::Replies(Ok(mut replies)) => match replies.pop() {
                    Some(Ok(_)) => self.after_switch(),
                    Some(Err(e)) if is_stale(&e) => Err(RedisFilterError::RebuildCancelled {
                        generation: self.next_keys().generation.number,
                    }),
                    Some(Err(e)) => Err(e.into()),
                    None => Err(RedisFilterError::Reply("no reply to the switch".into())),
                },
                Input::Replies(Err(lost)) => {
                    self.phase = Phase::Verifying(lost);
                    let mut get = redis::cmd("GET");
                    get.arg(&self.shared.meta_key);
                    Ok(Flow::Send(smallvec![get]))
                }
                _ => Err(RedisFilterError::Reply(
                    "a rebuild resumed out of order".into(),
                )),
            },
            Phase::Verifying(lost) => {
                let text = match all_replies(input).and_then(|mut r| {
                    r.pop()
                        .ok_or_else(|| RedisFilterError::Reply("no reply".into()))
                        .and_then(bytes)
                }) {
                    Ok(text) => text,
                    Err(_) => {
                        return Err(RedisFilterError::SwitchUnconfirmed {
                            generation: self.next_keys().generation.number,
                            source: lost,
                        });
                    }
                };
                if text.as_deref() == Some(self.begun.as_bytes()) {
                    // Not switched yet: the switch is idempotent, send it again.
                    self.tries += 1;
                    if self.tries > MAX_RETRIES {
                        return Err(lost.into());
                    }
                    return Ok(self.switch());
                }
                let text = text.ok_or_else(|| RedisFilterError::NotFound {
                    prefix: self.shared.prefix.clone(),
                })?;
                if Meta::decode(&self.shared.meta_key, &text)?.live == self.next_keys().generation {
                    self.after_switch()
                } else {
                    Err(RedisFilterError::RebuildCancelled {
                        generation: self.next_keys().generation.number,
                    })
                }
            }
            Phase::Retiring(mut cleanup) => match cleanup.resume(input) {
                Ok(Flow::Done(())) | Err(_) => Ok(self.done()),
                Ok(flow) => {
                    self.phase = Phase::Retiring(cleanup);
                    Ok(map_flow(flow))
                }
            },
            Phase::Abandoning(error) => {
                let cancelled = matches!(all_replies(input).map(|mut r| r.pop()), Ok(Some(Ok(_))));
                if !cancelled {
                    return Err(error);
                }
                let mut meta = self.begun_meta.clone().expect("abandoned after it began");
                meta.rebuilding = None;
                meta.retired.push(self.next_keys().generation);
                self.shared.adopt(Some(meta.encode().into_bytes()))?;
                let mut cleanup = Cleanup::new(self.shared);
                match cleanup.resume(Input::Start) {
                    Ok(Flow::Done(())) | Err(_) => Err(error),
                    Ok(flow) => {
                        self.phase = Phase::AbandonCleaning(cleanup, Some(error));
                        Ok(map_flow(flow))
                    }
                }
            }
            Phase::AbandonCleaning(mut cleanup, error) => {
                let error = error.expect("kept until the end");
                match cleanup.resume(input) {
                    Ok(Flow::Done(())) | Err(_) => Err(error),
                    Ok(flow) => {
                        self.phase = Phase::AbandonCleaning(cleanup, Some(error));
                        Ok(map_flow(flow))
                    }
                }
            }
        }
    }
}

/// A sub-exchange's flow, which only ever sends or finishes, as the rebuild's.
fn map_flow<T, U>(flow: Flow<T>) -> Flow<U> {
    match flow {
        Flow::Send(cmds) => Flow::Send(cmds),
        Flow::Sleep(d) => Flow::Sleep(d),
        Flow::Fill(f) => Flow::Fill(f),
        Flow::Done(_) => unreachable!("a finished sub-exchange is handled by its caller"),
    }
}

/// Cancels a rebuild in progress: one whose lease ran out, or any with `force`.
/// Returns the generation it was building, if there was one.
pub(crate) struct CancelRebuild<'a> {
    shared: &'a Shared,
    force: bool,
    /// The meta as read before the cancel.
    read_meta: Option<Meta>,
    phase: CancelPhase<'a>,
    tries: usize,
}

enum CancelPhase<'a> {
    Read,
    Cancelling(Generation),
    Cleaning(Cleanup<'a>, Generation),
}

impl<'a> CancelRebuild<'a> {
    pub(crate) fn new(shared: &'a Shared, force: bool) -> Self {
        CancelRebuild {
            shared,
            force,
            read_meta: None,
            phase: CancelPhase::Read,
            tries: 0,
        }
    }

    fn read(&mut self) -> Result<Flow<Option<Generation>>, RedisFilterError> {
        self.tries += 1;
        if self.tries > MAX_RETRIES {
            return Err(RedisFilterError::Stale {
                prefix: self.shared.prefix.clone(),
            });
        }
        self.phase = CancelPhase::Read;
        let mut get = redis::cmd("GET");
        get.arg(&self.shared.meta_key);
        Ok(Flow::Send(smallvec![get, redis::cmd("TIME")]))
    }
}

impl Exchange for CancelRebuild<'_> {
    type Output = Option<Generation>;

    fn resume(&mut self, input: Input) -> Result<Flow<Option<Generation>>, RedisFilterError> {
        if let Input::Start = input {
            return self.read();
        }
        match std::mem::replace(&mut self.phase, CancelPhase::Read) {
            CancelPhase::Read => {
                let [meta, time]: [Reply; 2] = all_replies(input)?
                    .try_into()
                    .map_err(|_| RedisFilterError::Reply("two replies expected".into()))?;
                self.shared.adopt(bytes(meta)?)?;
                let now = time_ms(time)?;
                let state = self.shared.state();
                let Some(r) = state.meta.rebuilding else {
                    return Ok(Flow::Done(None));
                };
                if !self.force && now < r.until_ms {
                    return Err(RedisFilterError::RebuildInProgress {
                        generation: r.next.number,
                        lease_left: Duration::from_millis(r.until_ms - now),
                    });
                }
                self.phase = CancelPhase::Cancelling(r.next);
                self.read_meta = Some(state.meta.clone());
                Ok(Flow::Send(smallvec![
                    cancel(self.shared, &state.text, &state.meta, self.force).expect("a rebuild"),
                ]))
            }
            CancelPhase::Cancelling(next) => match all_replies(input)?.pop() {
                Some(Ok(_)) => {
                    let mut meta = self.read_meta.take().expect("read before the cancel");
                    meta.rebuilding = None;
                    meta.retired.push(next);
                    self.shared.adopt(Some(meta.encode().into_bytes()))?;
                    let mut cleanup = Cleanup::new(self.shared);
                    match cleanup.resume(Input::Start)? {
                        Flow::Done(()) => Ok(Flow::Done(Some(next))),
                        flow => {
                            self.phase = CancelPhase::Cleaning(cleanup, next);
                            Ok(map_flow(flow))
                        }
                    }
                }
                Some(Err(e)) if is_stale(&e) || e.code() == Some("LBLEASED") => self.read(),
                Some(Err(e)) => Err(e.into()),
                None => Err(RedisFilterError::Reply("no reply to the cancel".into())),
            },
            CancelPhase::Cleaning(mut cleanup, next) => match cleanup.resume(input)? {
                Flow::Done(()) => Ok(Flow::Done(Some(next))),
                flow => {
                    self.phase = CancelPhase::Cleaning(cleanup, next);
                    Ok(map_flow(flow))
                }
            },
        }
    }
}
