//! What a handle knows of its filter, shared by its clones and both fronts: [`Shared`]
//! holds the prefix and the meta as last read ([`State`]), replaced whole when a reply
//! shows that the meta moved on, and what inserts and lookups were set to wait for and
//! answer.

use super::durability::{Durability, WhileBuilding};
use super::exchange::{Exchange, Flow, Input, Reply, replies};
use super::keys::{Keys, meta_key};
use super::reply::bytes;
use crate::info::EvictionRisk;
use crate::meta::Meta;
use crate::{BatchPath, Generation, RedisFilterError};
use smallvec::smallvec;
use std::sync::{Arc, RwLock};

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

/// The meta's bytes from a `GET` of it ([`get_meta`]); `None` where it is gone, and
/// [`RedisFilterError::WrongType`] naming it where another type holds its key.
pub(crate) fn meta_bytes(
    shared: &Shared,
    reply: Reply,
) -> Result<Option<Vec<u8>>, RedisFilterError> {
    bytes(reply.map_err(|e| crate::error::on_key(e, &shared.meta_key)))
}

/// Re-reads the meta into the handle.
pub(crate) struct Refresh<'a>(pub(crate) &'a Shared);

impl Exchange for Refresh<'_> {
    type Output = ();
    fn resume(&mut self, input: Input) -> Result<Flow<()>, RedisFilterError> {
        if let Input::Start = input {
            return Ok(Flow::Send(smallvec![get_meta(self.0)]));
        }
        let reply = replies(input, 1)?.pop().expect("one reply");
        self.0.adopt(meta_bytes(self.0, reply)?)?;
        Ok(Flow::Done(()))
    }
}
