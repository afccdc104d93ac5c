//! A service's start-up that fills the filter from the source of truth (`PROTOCOL.md`,
//! "First build"): [`OpenOrBuild`] opens the filter under a prefix, or creates it in the
//! *building* state and fills it with every key of the source before it answers any
//! lookup. Services that start together build it once: the others wait for the build,
//! and take it over when its builder's lease runs out (its process died).

use super::exchange::{Exchange, Flow, Input, all_replies, replies};
use super::keys::{meta_key, random_u64};
use super::open::{Content, Create, Open, OpenOrCreate};
use super::rebuild::load_shard;
use super::reply::time_ms;
use super::state::{State, state_for};
use crate::error::is_stale;
use crate::meta::Building;
use crate::scripts::{SWAP_AFTER_LEASE, SWAP_META};
use crate::{FilterOptions, MAX_RETRIES, RedisFilterError};
use linebloom::{BloomFilter, IntFold, Params};
use smallvec::smallvec;
use std::time::Duration;

/// How a first build runs.
///
/// ```
/// use linebloom_redis_client::BuildOptions;
/// use std::time::Duration;
/// let options = BuildOptions::default().lease(Duration::from_secs(60));
/// assert_eq!(options.lease_time(), Duration::from_secs(60));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildOptions {
    lease: Duration,
}

impl Default for BuildOptions {
    /// A lease of 10 minutes.
    fn default() -> Self {
        BuildOptions {
            lease: Duration::from_secs(600),
        }
    }
}

impl BuildOptions {
    /// How long the builder owns the build: services that start meanwhile wait for it,
    /// and after it one of them takes the build over (as if the builder had died) and
    /// fills the filter from its own source. Make it longer than reading the source
    /// takes: a build that outlives its lease is built a second time, without harm.
    #[must_use]
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(1));
        self
    }

    /// The lease.
    #[must_use]
    pub fn lease_time(&self) -> Duration {
        self.lease
    }
}

/// The longest wait between two looks at a build in progress.
const MAX_POLL: Duration = Duration::from_secs(1);

enum Phase {
    /// Opening, or creating in the building state.
    Opening(Box<OpenOrCreate<'static>>),
    /// Opening again after this call filled the filter (its source is read): a filter
    /// that vanished meanwhile is not created again.
    Reopening(Open),
    /// The server's clock, to judge another builder's lease.
    Clock(State),
    /// Waiting for another builder.
    Waiting,
    /// Taking over a build whose lease ran out.
    TakingOver(State),
    Filling(State),
    /// The built bits of shard `shard` are being ORed in.
    Loading {
        state: State,
        built: BloomFilter,
        shard: usize,
    },
    /// The meta is being set live (the building state dropped).
    Finishing(State),
    /// The build failed: its lease is being released, so that the next caller takes
    /// it over at once.
    Releasing(RedisFilterError),
}

/// Opens the filter under a prefix, or creates it and fills it from the source: the
/// state, and whether this call created the filter.
pub(crate) struct OpenOrBuild {
    prefix: String,
    params: Params,
    options: FilterOptions,
    lease: Duration,
    /// This call's token in the meta while it builds.
    owner: u64,
    phase: Phase,
    tries: usize,
    poll: Duration,
    created: bool,
    /// The source was read and loaded: what is left is setting the meta live.
    loaded: bool,
}

impl OpenOrBuild {
    pub(crate) fn new(
        prefix: &str,
        params: Params,
        options: FilterOptions,
        build: BuildOptions,
    ) -> Result<Self, RedisFilterError> {
        options.check()?;
        Ok(OpenOrBuild {
            prefix: prefix.to_string(),
            params,
            options,
            lease: build.lease,
            owner: random_u64(),
            phase: Phase::Waiting,
            tries: 0,
            poll: Duration::from_millis(20),
            created: false,
            loaded: false,
        })
    }

    /// Looks at the filter (again): `retry` counts it against [`MAX_RETRIES`] (a
    /// compare-and-set lost to another client), a wait for a build does not.
    fn open(&mut self, retry: bool) -> Result<Flow<(State, bool)>, RedisFilterError> {
        if retry {
            self.tries += 1;
            if self.tries > MAX_RETRIES {
                return Err(RedisFilterError::Stale {
                    prefix: self.prefix.clone(),
                });
            }
        }
        if self.loaded {
            let mut open = Open::new(&self.prefix);
            let flow = open.resume(Input::Start)?;
            self.phase = Phase::Reopening(open);
            return self.step(flow.map(|state| (state, false)));
        }
        let create = Create::new(&self.prefix, Content::Empty(self.params), self.options)?
            .building(self.owner, self.lease);
        let mut open = Box::new(OpenOrCreate::with(&self.prefix, create));
        let flow = open.resume(Input::Start)?;
        self.phase = Phase::Opening(open);
        self.step(flow)
    }

    /// A step of the open: passed on until it is done, then judged.
    fn step(&mut self, flow: Flow<(State, bool)>) -> Result<Flow<(State, bool)>, RedisFilterError> {
        match flow {
            Flow::Done((state, created)) => self.opened(state, created),
            flow => Ok(flow),
        }
    }

    /// The filter as opened or created: live, this call's to fill, or another's build.
    fn opened(
        &mut self,
        state: State,
        created: bool,
    ) -> Result<Flow<(State, bool)>, RedisFilterError> {
        self.created |= created;
        match state.meta.building {
            None => Ok(Flow::Done((state, self.created))),
            Some(b) if b.owner == self.owner => self.fill(state),
            Some(_) => {
                self.phase = Phase::Clock(state);
                Ok(Flow::Send(smallvec![redis::cmd("TIME")]))
            }
        }
    }

    /// Fills the filter this call owns (or, once loaded, sets it live).
    fn fill(&mut self, state: State) -> Result<Flow<(State, bool)>, RedisFilterError> {
        if self.loaded {
            return Ok(self.finish(state));
        }
        let g = state.live.generation;
        self.phase = Phase::Filling(state);
        Ok(Flow::Fill(BloomFilter::with_hasher(
            g.params,
            IntFold::with_seed(g.seed),
        )))
    }

    /// The meta set live: the building state dropped, if it is still this call's.
    fn finish(&mut self, state: State) -> Flow<(State, bool)> {
        self.loaded = true;
        let mut live = state.meta.clone();
        live.building = None;
        let mut swap = SWAP_META.call(&[meta_key(&self.prefix)]);
        swap.arg(&state.text).arg(live.encode());
        self.phase = Phase::Finishing(state);
        Flow::Send(smallvec![swap])
    }

    /// After a failure while this call owns the build: its lease ends now (the meta
    /// stays, so the next caller takes the build over at once), then `error`.
    fn release(&mut self, state: &State, error: RedisFilterError) -> Flow<(State, bool)> {
        let mut released = state.meta.clone();
        released.building = Some(Building {
            owner: self.owner,
            until_ms: 0,
        });
        let mut swap = SWAP_META.call(&[meta_key(&self.prefix)]);
        swap.arg(&state.text).arg(released.encode());
        self.phase = Phase::Releasing(error);
        Flow::Send(smallvec![swap])
    }
}

impl Exchange for OpenOrBuild {
    type Output = (State, bool);

    fn resume(&mut self, input: Input) -> Result<Flow<(State, bool)>, RedisFilterError> {
        if let Input::Start = input {
            return self.open(true);
        }
        match std::mem::replace(&mut self.phase, Phase::Waiting) {
            Phase::Opening(mut open) => {
                let flow = open.resume(input)?;
                self.phase = Phase::Opening(open);
                self.step(flow)
            }
            Phase::Reopening(mut open) => {
                let flow = open.resume(input)?;
                self.phase = Phase::Reopening(open);
                self.step(flow.map(|state| (state, false)))
            }
            Phase::Clock(state) => {
                let now = time_ms(replies(input, 1)?.pop().expect("one reply"))?;
                let held = state.meta.building.expect("judged while building");
                if now < held.until_ms {
                    let wait = self.poll.min(Duration::from_millis(held.until_ms - now));
                    self.poll = (self.poll * 2).min(MAX_POLL);
                    self.phase = Phase::Waiting;
                    return Ok(Flow::Sleep(wait));
                }
                let mut mine = state.meta.clone();
                mine.building = Some(Building {
                    owner: self.owner,
                    until_ms: now.saturating_add(self.lease.as_millis() as u64),
                });
                let text = mine.encode();
                let mut take = SWAP_AFTER_LEASE.call(&[meta_key(&self.prefix)]);
                take.arg(&state.text).arg(&text).arg(held.until_ms).arg("0");
                let state = state_for(
                    &self.prefix,
                    text,
                    mine,
                    state.path,
                    state.eviction.clone(),
                    Some(&state),
                );
                self.phase = Phase::TakingOver(state);
                Ok(Flow::Send(smallvec![take]))
            }
            Phase::Waiting => self.open(false),
            Phase::TakingOver(state) => match replies(input, 1)?.pop().expect("one reply") {
                Ok(_) => self.fill(state),
                Err(e) if e.code() == Some("LBLEASED") || is_stale(&e) => self.open(true),
                Err(e) => Err(e.into()),
            },
            Phase::Filling(state) => match input {
                Input::Filled(Ok((built, keys))) => {
                    let cmds = load_shard(&state.live, &built, 0, keys);
                    self.phase = Phase::Loading {
                        state,
                        built,
                        shard: 0,
                    };
                    Ok(Flow::Send(cmds))
                }
                Input::Filled(Err(e)) => Ok(self.release(&state, RedisFilterError::Source(e))),
                _ => Err(RedisFilterError::Reply(
                    "a build resumed out of order".into(),
                )),
            },
            Phase::Loading {
                state,
                built,
                shard,
            } => {
                let failed = match all_replies(input) {
                    Ok(replies) => replies.into_iter().find_map(Result::err).map(Into::into),
                    Err(e) => Some(e),
                };
                if let Some(e) = failed {
                    return Ok(self.release(&state, e));
                }
                if shard + 1 < state.live.shards.len() {
                    let cmds = load_shard(&state.live, &built, shard + 1, 0);
                    self.phase = Phase::Loading {
                        state,
                        built,
                        shard: shard + 1,
                    };
                    Ok(Flow::Send(cmds))
                } else {
                    Ok(self.finish(state))
                }
            }
            Phase::Finishing(state) => match input {
                Input::Replies(Ok(mut replies)) => match replies.pop() {
                    Some(Ok(_)) => {
                        let mut meta = state.meta.clone();
                        meta.building = None;
                        let text = meta.encode();
                        let live = state_for(
                            &self.prefix,
                            text,
                            meta,
                            state.path,
                            state.eviction.clone(),
                            Some(&state),
                        );
                        Ok(Flow::Done((live, self.created)))
                    }
                    // Another caller took the build over (this one outlived its
                    // lease), or the filter is gone: look again.
                    Some(Err(e)) if is_stale(&e) => self.open(true),
                    Some(Err(e)) => Err(e.into()),
                    None => Err(RedisFilterError::Reply("no reply to the switch".into())),
                },
                // The reply was lost: the meta tells whether the switch happened.
                Input::Replies(Err(_)) => self.open(true),
                _ => Err(RedisFilterError::Reply(
                    "a build resumed out of order".into(),
                )),
            },
            Phase::Releasing(error) => {
                let _ = all_replies(input);
                Err(error)
            }
        }
    }
}
