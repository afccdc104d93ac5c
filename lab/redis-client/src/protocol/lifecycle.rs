//! The end of a filter and its lifetime: [`Delete`] removes every key of it, the meta
//! first (compared and deleted, so a filter created since is left alone); [`Ttl`] sets
//! or removes one time to live over the meta and every shard and count key.

use super::batch::Attempt;
use super::exchange::{Commands, Exchange, Flow, Input, Reply, all_replies};
use super::keys::{Keys, unlinks};
use super::state::{Shared, State};
use crate::error::is_stale;
use crate::meta::Meta;
use crate::scripts::DELETE_META;
use crate::{MAX_RETRIES, RedisFilterError};
use smallvec::smallvec;
use std::time::Duration;

enum DeletePhase {
    Read,
    Deleting(Meta),
    Unlinking,
}

/// Deletes the filter: its meta (if it still holds what was read), then every key of
/// every generation it named. Returns whether there was a filter.
pub(crate) struct Delete<'a> {
    shared: &'a Shared,
    phase: DeletePhase,
    tries: usize,
}

impl<'a> Delete<'a> {
    pub(crate) fn new(shared: &'a Shared) -> Self {
        Delete {
            shared,
            phase: DeletePhase::Read,
            tries: 0,
        }
    }

    fn read(&mut self) -> Result<Flow<bool>, RedisFilterError> {
        self.tries += 1;
        if self.tries > MAX_RETRIES {
            return Err(RedisFilterError::Stale {
                prefix: self.shared.prefix.clone(),
            });
        }
        self.phase = DeletePhase::Read;
        Ok(Flow::Send(smallvec![super::state::get_meta(self.shared)]))
    }
}

impl Exchange for Delete<'_> {
    type Output = bool;

    fn resume(&mut self, input: Input) -> Result<Flow<bool>, RedisFilterError> {
        if let Input::Start = input {
            return self.read();
        }
        match std::mem::replace(&mut self.phase, DeletePhase::Read) {
            DeletePhase::Read => {
                let Some(text) = super::state::meta_bytes(self.shared, one(input)?)? else {
                    return Ok(Flow::Done(false));
                };
                let meta = Meta::decode(&self.shared.meta_key, &text)?;
                let mut cmd = DELETE_META.call(&[&self.shared.meta_key]);
                cmd.arg(text);
                self.phase = DeletePhase::Deleting(meta);
                Ok(Flow::Send(smallvec![cmd]))
            }
            DeletePhase::Deleting(meta) => match one(input)? {
                Ok(_) => {
                    let keys: Vec<String> = meta
                        .all()
                        .flat_map(|g| Keys::new(&self.shared.prefix, *g).all())
                        .collect();
                    self.phase = DeletePhase::Unlinking;
                    Ok(Flow::Send(unlinks(keys)))
                }
                Err(e) if is_stale(&e) => self.read(),
                Err(e) => Err(e.into()),
            },
            DeletePhase::Unlinking => {
                for reply in all_replies(input)? {
                    reply?;
                }
                Ok(Flow::Done(true))
            }
        }
    }
}

/// The one reply of a step that sent one command.
fn one(input: Input) -> Result<Reply, RedisFilterError> {
    all_replies(input)?
        .pop()
        .ok_or_else(|| RedisFilterError::Reply("no reply".into()))
}

/// Sets (`Some`) or removes (`None`) the filter's time to live, on the meta and every
/// key of every generation it names, checked against the meta as a batch is (a
/// generation a rebuild makes meanwhile gets it too).
pub(crate) struct Ttl(pub(crate) Option<Duration>);

impl Attempt for Ttl {
    type Output = ();
    fn guarded(&self, _: &State) -> bool {
        false
    }
    fn commands(&mut self, shared: &Shared, state: &State, _: bool, cmds: &mut Commands) {
        let keys = std::iter::once(shared.meta_key.clone()).chain(
            state
                .meta
                .all()
                .flat_map(|g| Keys::new(&shared.prefix, *g).all()),
        );
        for key in keys {
            let cmd = match self.0 {
                Some(ttl) => {
                    let mut pexpire = redis::cmd("PEXPIRE");
                    pexpire.arg(key).arg(ttl.as_millis() as u64);
                    pexpire
                }
                None => {
                    let mut persist = redis::cmd("PERSIST");
                    persist.arg(key);
                    persist
                }
            };
            cmds.push(cmd);
        }
    }
    fn finish(&mut self, _: &State, replies: Vec<Reply>) -> Result<(), RedisFilterError> {
        for reply in replies {
            reply?;
        }
        Ok(())
    }
}
