//! The protocol core, free of I/O (sans-IO): every operation of the Redis-held filter
//! is an [`Exchange`], a small state machine that says which commands to send
//! ([`Flow::Send`]), reads their replies ([`Input::Replies`]), and decides what comes
//! next, until it is [`Flow::Done`]. The sync front (`blocking.rs`) and the async front
//! (`aio.rs`) only carry commands to the server and replies back
//! (`drive!`), so every rule of `PROTOCOL.md` is written once, here.
//!
//! The handle's state, shared by its clones and both fronts, is [`Shared`]: the prefix
//! and the meta as last read ([`State`]), replaced whole when a reply shows that the
//! meta moved on.

pub(crate) mod batch;
pub(crate) mod build;
pub(crate) mod lifecycle;
pub(crate) mod open;
pub(crate) mod read;
pub(crate) mod rebuild;

use crate::info::EvictionRisk;
use crate::meta::Meta;
use crate::{BatchPath, Generation, RedisFilterError};
use linebloom::{BloomFilter, IntFold};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// One command's reply: its value, or the error it replied (or, on a cluster, the error
/// that kept it from its node).
pub(crate) type Reply = redis::RedisResult<redis::Value>;

/// What an exchange wants next.
pub(crate) enum Flow<T> {
    /// Send these commands as one pipeline (on a cluster, split per node) and resume
    /// with their replies, in order.
    Send(Vec<redis::Cmd>),
    /// Wait this long (a rebuild's grace, a poll of a build in progress), then resume
    /// with [`Input::Woke`].
    Sleep(Duration),
    /// Insert every key of the source (a rebuild's, a build's) into this empty filter, then resume
    /// with [`Input::Filled`].
    Fill(BloomFilter),
    /// Finished.
    Done(T),
}

impl<T> Flow<T> {
    /// The same step, its result (once done) mapped by `f`.
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Flow<U> {
        match self {
            Flow::Send(cmds) => Flow::Send(cmds),
            Flow::Sleep(d) => Flow::Sleep(d),
            Flow::Fill(filter) => Flow::Fill(filter),
            Flow::Done(output) => Flow::Done(f(output)),
        }
    }
}

/// What an exchange resumes with.
pub(crate) enum Input {
    /// The first step.
    Start,
    /// The replies of the commands it sent, or the failure that lost them all.
    Replies(redis::RedisResult<Vec<Reply>>),
    /// The wait is over.
    Woke,
    /// The filled filter and how many keys the source gave, or the source's error.
    Filled(Result<(BloomFilter, u64), Box<dyn std::error::Error + Send + Sync>>),
}

/// An operation of the protocol, as a state machine.
pub(crate) trait Exchange {
    /// What it returns when done.
    type Output;
    /// The next step, given what the last one brought.
    fn resume(&mut self, input: Input) -> Result<Flow<Self::Output>, RedisFilterError>;
}

/// Runs an [`Exchange`] to its end: `$send` is an expression of type
/// `RedisResult<Vec<Reply>>` that carries the commands in `$cmds` (an `&[Cmd]`),
/// `$sleep` waits the duration `$d`, and `$fill` fills the filter `$f`, giving
/// [`Input::Filled`]'s content. Commands a server refuses with `NOSCRIPT` are sent
/// again as `EVAL`. The sync front expands it with plain calls, the async front with
/// `.await`s: the loop is the only code the two share by text.
macro_rules! drive {
    ($exchange:expr, |$cmds:ident| $send:expr, |$d:ident| $sleep:expr, |$f:ident| $fill:expr) => {{
        // Unused where the exchange's type is a generic bounded by the trait.
        #[allow(unused_imports)]
        use crate::protocol::Exchange as _;
        use crate::protocol::{Flow, Input};
        let mut exchange = $exchange;
        let mut input = Input::Start;
        loop {
            match exchange.resume(input)? {
                Flow::Send(commands) => {
                    let replies = {
                        let $cmds: &[redis::Cmd] = &commands;
                        $send
                    };
                    let replies = match replies {
                        Ok(mut replies) => {
                            if let Some((at, again)) =
                                crate::scripts::with_bodies(&commands, &replies)
                            {
                                let $cmds: &[redis::Cmd] = &again;
                                match $send {
                                    Ok(more) => {
                                        for (i, reply) in at.into_iter().zip(more) {
                                            replies[i] = reply;
                                        }
                                        Ok(replies)
                                    }
                                    Err(e) => Err(e),
                                }
                            } else {
                                Ok(replies)
                            }
                        }
                        Err(e) => Err(e),
                    };
                    input = Input::Replies(replies);
                }
                Flow::Sleep($d) => {
                    $sleep;
                    input = Input::Woke;
                }
                Flow::Fill($f) => input = Input::Filled($fill),
                Flow::Done(output) => break Ok::<_, crate::RedisFilterError>(output),
            }
        }
    }};
}

pub(crate) use drive;

/// The replies of a step that sent `expected` commands, checked before they are read.
pub(crate) fn replies(input: Input, expected: usize) -> Result<Vec<Reply>, RedisFilterError> {
    let replies = all_replies(input)?;
    if replies.len() != expected {
        return Err(RedisFilterError::Reply(format!(
            "{} replies to {expected} commands",
            replies.len()
        )));
    }
    Ok(replies)
}

/// Every reply of a step, however many.
pub(crate) fn all_replies(input: Input) -> Result<Vec<Reply>, RedisFilterError> {
    match input {
        Input::Replies(Ok(replies)) => Ok(replies),
        Input::Replies(Err(e)) => Err(RedisFilterError::from(e)),
        _ => Err(RedisFilterError::Reply(
            "an exchange resumed out of order".into(),
        )),
    }
}

/// `UNLINK` of each key.
pub(crate) fn unlinks<S: AsRef<str>>(keys: impl IntoIterator<Item = S>) -> Vec<redis::Cmd> {
    keys.into_iter()
        .map(|key| {
            let mut unlink = redis::cmd("UNLINK");
            unlink.arg(key.as_ref());
            unlink
        })
        .collect()
}

/// A generation's key names and argument strings, made once per meta so that a call
/// formats nothing it can reuse.
#[derive(Debug)]
pub(crate) struct Keys {
    pub(crate) generation: Generation,
    pub(crate) hasher: IntFold,
    /// Shard key names.
    pub(crate) shards: Vec<String>,
    /// Each shard's count key (`<shard>:n`).
    pub(crate) counts: Vec<String>,
    /// Each shard's length in blocks, as a command argument.
    pub(crate) blocks_arg: Vec<String>,
    /// Each shard's length in bytes, as a command argument.
    pub(crate) bytes_arg: Vec<String>,
    /// `k`, as a command argument.
    pub(crate) k_arg: String,
}

impl Keys {
    pub(crate) fn new(prefix: &str, g: Generation) -> Keys {
        let shards: Vec<String> = (0..g.shards()).map(|s| g.shard_key(prefix, s)).collect();
        Keys {
            generation: g,
            hasher: IntFold::with_seed(g.seed),
            counts: shards.iter().map(|s| count_key(s)).collect(),
            blocks_arg: (0..g.shards())
                .map(|s| g.shard_len(s).to_string())
                .collect(),
            bytes_arg: (0..g.shards())
                .map(|s| (g.shard_len(s) * 64).to_string())
                .collect(),
            k_arg: g.params.k().to_string(),
            shards,
        }
    }

    /// The shard of a key's hash, and its block within that shard.
    pub(crate) fn place(&self, hash: u64) -> (usize, u64) {
        let block = linebloom::pattern::block_index(hash, self.generation.params.blocks()) as u64;
        (
            (block / self.generation.shard_blocks) as usize,
            block % self.generation.shard_blocks,
        )
    }

    /// Every key name of this generation (shards, counts, a rebuild's scratch keys),
    /// for `delete` and the removal of a retired generation.
    pub(crate) fn all(&self) -> Vec<String> {
        let scratch = self.shards.iter().map(|s| scratch_key(s));
        self.shards
            .iter()
            .chain(&self.counts)
            .cloned()
            .chain(scratch)
            .collect()
    }
}

/// The scratch key of a shard, which holds a rebuild's built bits until they are ORed
/// in.
pub(crate) fn scratch_key(shard: &str) -> String {
    format!("{shard}:load")
}

/// The count key of a shard.
pub(crate) fn count_key(shard: &str) -> String {
    format!("{shard}:n")
}

/// A count key's value ([`linebloom_redis_wire::count_bytes`]).
pub(crate) use linebloom_redis_wire::count_bytes;

/// What a handle knows of its filter: the meta as last read, parsed, with the key names
/// of the generations a call uses, and how it sends batches.
#[derive(Clone, Debug)]
pub(crate) struct State {
    /// The meta as stored (what the guards compare).
    pub(crate) text: String,
    pub(crate) meta: Meta,
    pub(crate) live: Arc<Keys>,
    /// The generation a rebuild is building, if any.
    pub(crate) next: Option<Arc<Keys>>,
    pub(crate) path: BatchPath,
    /// What `open` or `create` found of the server's eviction policy.
    pub(crate) eviction: Option<EvictionRisk>,
}

impl State {
    /// The same state, sending batches by `path`.
    pub(crate) fn with_path(&self, path: BatchPath) -> State {
        State {
            path,
            ..self.clone()
        }
    }

    /// The generations a write must reach.
    pub(crate) fn written(&self) -> impl Iterator<Item = &Arc<Keys>> {
        std::iter::once(&self.live).chain(&self.next)
    }
}

/// A handle's state, shared by its clones.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) prefix: String,
    pub(crate) meta_key: String,
    state: RwLock<Arc<State>>,
    /// What an insert waits for before it returns ([`Durability`]).
    durability: RwLock<Durability>,
    /// What a lookup answers while the filter is being built.
    while_building: RwLock<WhileBuilding>,
    /// The call that made the handle created the filter (`create`, `store`, or
    /// `open_or_create` where it found none).
    pub(crate) created: bool,
}

impl Shared {
    pub(crate) fn new(prefix: &str, state: State, created: bool) -> Shared {
        Shared {
            prefix: prefix.to_string(),
            meta_key: meta_key(prefix),
            state: RwLock::new(Arc::new(state)),
            durability: RwLock::new(Durability::default()),
            while_building: RwLock::new(WhileBuilding::default()),
            created,
        }
    }

    /// What inserts wait for.
    pub(crate) fn durability(&self) -> Durability {
        *self.durability.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets what inserts wait for.
    pub(crate) fn set_durability(&self, durability: Durability) {
        *self.durability.write().unwrap_or_else(|e| e.into_inner()) = durability;
    }

    /// What a lookup answers while the filter is being built.
    pub(crate) fn while_building(&self) -> WhileBuilding {
        *self
            .while_building
            .read()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Sets what a lookup answers while the filter is being built.
    pub(crate) fn set_while_building(&self, answer: WhileBuilding) {
        *self
            .while_building
            .write()
            .unwrap_or_else(|e| e.into_inner()) = answer;
    }

    /// The state as it is now (a call uses one snapshot per attempt).
    pub(crate) fn state(&self) -> Arc<State> {
        Arc::clone(&self.state.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Replaces the state with `f` of the current one.
    pub(crate) fn update(&self, f: impl FnOnce(&State) -> State) -> Arc<State> {
        let mut guard = self.state.write().unwrap_or_else(|e| e.into_inner());
        let new = Arc::new(f(&guard));
        *guard = Arc::clone(&new);
        new
    }

    /// Takes `text` (the meta as just read; `None` if the key is gone) as the state's
    /// meta. Returns whether it changed.
    pub(crate) fn adopt(&self, text: Option<Vec<u8>>) -> Result<bool, RedisFilterError> {
        let text = text.ok_or_else(|| RedisFilterError::NotFound {
            prefix: self.prefix.clone(),
        })?;
        let current = self.state();
        if current.text.as_bytes() == text {
            return Ok(false);
        }
        let meta = Meta::decode(&self.meta_key, &text)?;
        if !current.meta.is_succeeded_by(&meta) {
            return Err(RedisFilterError::Replaced {
                prefix: self.prefix.clone(),
            });
        }
        let text = String::from_utf8(text).expect("decode checked UTF-8");
        self.update(|old| {
            state_for(
                &self.prefix,
                text,
                meta,
                old.path,
                old.eviction.clone(),
                Some(old),
            )
        });
        Ok(true)
    }
}

/// The meta key of a prefix.
pub(crate) fn meta_key(prefix: &str) -> String {
    format!("{prefix}:meta")
}

/// A state for `meta`, reusing `old`'s key names for generations it already had.
pub(crate) fn state_for(
    prefix: &str,
    text: String,
    meta: Meta,
    path: BatchPath,
    eviction: Option<EvictionRisk>,
    old: Option<&State>,
) -> State {
    let keys = |g: &Generation| {
        old.into_iter()
            .flat_map(|o| o.written())
            .find(|k| k.generation == *g)
            .cloned()
            .unwrap_or_else(|| Arc::new(Keys::new(prefix, *g)))
    };
    State {
        live: keys(&meta.live),
        next: meta.rebuilding.as_ref().map(|r| keys(&r.next)),
        text,
        meta,
        path,
        eviction,
    }
}

/// A `GET` of the meta key.
pub(crate) fn get_meta(shared: &Shared) -> redis::Cmd {
    let mut get = redis::cmd("GET");
    get.arg(&shared.meta_key);
    get
}

/// What an insert waits for before it returns: by default nothing beyond the master's
/// reply. Redis replicates asynchronously, so an insert the master acknowledged can be
/// lost by a failover that promotes a replica it had not reached yet; with
/// [`replicas`](Durability::replicas) an insert returns only once that many replicas
/// acknowledged it (`WAIT`), and answers [`NotDurable`](RedisFilterError::NotDurable)
/// when they did not within the timeout.
///
/// ```
/// use linebloom_redis_client::Durability;
/// use std::time::Duration;
/// let d = Durability::replicas(1, Duration::from_millis(500));
/// assert_eq!((d.wanted(), d.timeout()), (1, Duration::from_millis(500)));
/// assert_eq!(Durability::default().wanted(), 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Durability {
    replicas: u32,
    timeout: Duration,
}

impl Durability {
    /// Every insert waits until `replicas` replicas acknowledged it, at most `timeout`
    /// (`WAIT replicas timeout`; a zero timeout would wait forever, so it is taken as
    /// 1 ms).
    #[must_use]
    pub fn replicas(replicas: u32, timeout: Duration) -> Durability {
        Durability {
            replicas,
            timeout: timeout.max(Duration::from_millis(1)),
        }
    }

    /// Replicas an insert waits for (0: none).
    #[must_use]
    pub fn wanted(&self) -> u32 {
        self.replicas
    }

    /// The longest an insert waits for them.
    #[must_use]
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
}

/// What lookups answer while the filter is still being built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WhileBuilding {
    /// [`RedisFilterError::Building`]: the caller asks the database.
    #[default]
    Error,
    /// "Maybe present" for every key, as a full filter would: the database is asked
    /// for each key until the build is done.
    MaybePresent,
}

/// An exchange whose writes must reach `durability`'s replicas before it answers: after
/// the inner exchange is done, one `WAIT` on the same connection (it waits for every
/// write this connection sent so far).
pub(crate) struct Durable<E: Exchange> {
    inner: E,
    durability: Durability,
    ordered: bool,
    done: Option<E::Output>,
}

impl<E: Exchange> Durable<E> {
    pub(crate) fn new(inner: E, durability: Durability, ordered: bool) -> Self {
        Durable {
            inner,
            durability,
            ordered,
            done: None,
        }
    }
}

impl<E: Exchange> Exchange for Durable<E> {
    type Output = E::Output;

    fn resume(&mut self, input: Input) -> Result<Flow<E::Output>, RedisFilterError> {
        if let Some(output) = self.done.take() {
            let acked = integer(replies(input, 1)?.pop().expect("one reply"))? as u64;
            let wanted = u64::from(self.durability.replicas);
            if acked < wanted {
                return Err(RedisFilterError::NotDurable { acked, wanted });
            }
            return Ok(Flow::Done(output));
        }
        match self.inner.resume(input)? {
            Flow::Done(output) if self.durability.replicas > 0 => {
                if !self.ordered {
                    return Err(RedisFilterError::InvalidArgument(
                        "durable inserts need one server: on a cluster WAIT waits only on \
                         the node it reaches"
                            .into(),
                    ));
                }
                self.done = Some(output);
                let mut wait = redis::cmd("WAIT");
                wait.arg(self.durability.replicas)
                    .arg(self.durability.timeout.as_millis().min(u64::MAX as u128) as u64);
                Ok(Flow::Send(vec![wait]))
            }
            flow => Ok(flow),
        }
    }
}

/// The meta's bytes from a `GET` of it ([`get_meta`]); `None` where it is gone, and
/// [`RedisFilterError::WrongType`] naming it where another type holds its key.
pub(crate) fn meta_bytes(
    shared: &Shared,
    reply: Reply,
) -> Result<Option<Vec<u8>>, RedisFilterError> {
    bytes(reply.map_err(|e| crate::error::on_key(e, &shared.meta_key)))
}

/// The bytes of a string reply; `None` for a nil reply.
pub(crate) fn bytes<E: Into<RedisFilterError>>(
    reply: Result<redis::Value, E>,
) -> Result<Option<Vec<u8>>, RedisFilterError> {
    match reply.map_err(Into::into)? {
        redis::Value::Nil => Ok(None),
        redis::Value::BulkString(b) => Ok(Some(b)),
        redis::Value::SimpleString(s) => Ok(Some(s.into_bytes())),
        redis::Value::VerbatimString { text, .. } => Ok(Some(text.into_bytes())),
        redis::Value::Okay => Ok(Some(b"OK".to_vec())),
        other => Err(RedisFilterError::Reply(format!(
            "a string expected, got {other:?}"
        ))),
    }
}

/// An integer reply.
pub(crate) fn integer<E: Into<RedisFilterError>>(
    reply: Result<redis::Value, E>,
) -> Result<i64, RedisFilterError> {
    match reply.map_err(Into::into)? {
        redis::Value::Int(i) => Ok(i),
        other => Err(RedisFilterError::Reply(format!(
            "an integer expected, got {other:?}"
        ))),
    }
}

/// Where a step met a refusal that means "look at the meta again": the guard's
/// `LBSTALE`, or a missing shard (a rebuild may have removed the generation the call
/// used). Every other error is returned.
pub(crate) enum Refusal {
    Stale,
    Missing(String),
    /// The server does not know the module's commands (a failover to a server without
    /// it): the handle goes on with plain commands.
    NoModule,
}

/// The refusal among `replies` that sends a call back to the meta, if any: the guard's
/// `LBSTALE`, an unknown module command, or a missing shard.
pub(crate) fn first_refusal(replies: &[Reply]) -> Option<Refusal> {
    let errors = || replies.iter().filter_map(|r| r.as_ref().err());
    if errors().any(crate::error::is_stale) {
        return Some(Refusal::Stale);
    }
    if errors().any(is_unknown_module_command) {
        return Some(Refusal::NoModule);
    }
    // Other errors are left to the attempt, which knows which key each command is on.
    errors().find_map(|e| match crate::error::classify(e.clone()) {
        RedisFilterError::Missing { key } => Some(Refusal::Missing(key)),
        _ => None,
    })
}

/// Is this the reply of a server without the module to one of its commands?
fn is_unknown_module_command(e: &redis::RedisError) -> bool {
    let text = e.to_string().to_ascii_lowercase();
    text.contains("unknown command") && text.contains("linebloom.")
}

/// A `TIME` reply as Unix milliseconds.
pub(crate) fn time_ms(reply: Reply) -> Result<u64, RedisFilterError> {
    let parts: Vec<redis::Value> = match reply? {
        redis::Value::Array(parts) => parts,
        other => return Err(RedisFilterError::Reply(format!("TIME answered {other:?}"))),
    };
    let number = |v: &redis::Value| -> Result<u64, RedisFilterError> {
        match v {
            redis::Value::BulkString(b) => std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()),
            redis::Value::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
        .ok_or_else(|| RedisFilterError::Reply(format!("TIME answered {v:?}")))
    };
    match parts.as_slice() {
        [secs, micros] => Ok(number(secs)? * 1000 + number(micros)? / 1000),
        _ => Err(RedisFilterError::Reply(format!("TIME answered {parts:?}"))),
    }
}

/// Re-reads the meta into the handle.
pub(crate) struct Refresh<'a>(pub(crate) &'a Shared);

impl Exchange for Refresh<'_> {
    type Output = ();
    fn resume(&mut self, input: Input) -> Result<Flow<()>, RedisFilterError> {
        if let Input::Start = input {
            return Ok(Flow::Send(vec![get_meta(self.0)]));
        }
        let reply = replies(input, 1)?.pop().expect("one reply");
        self.0.adopt(meta_bytes(self.0, reply)?)?;
        Ok(Flow::Done(()))
    }
}

/// A fresh random 64-bit value (generation tags, rebuild owners): the standard
/// library's per-process random keys, mixed with a counter and the clock, so two
/// processes or two calls never draw alike in practice.
pub(crate) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish()
}
