//! The shape every operation of the protocol has: an [`Exchange`] says which commands
//! to send ([`Flow::Send`]), reads their replies ([`Input::Replies`]), and decides what
//! comes next, until it is [`Flow::Done`]; [`drive!`] runs one to its end, with the
//! I/O of the front that expands it.

use crate::RedisFilterError;
use linebloom::BloomFilter;
use std::time::Duration;

/// One command's reply: its value, or the error it replied (or, on a cluster, the error
/// that kept it from its node).
pub(crate) type Reply = redis::RedisResult<redis::Value>;

/// The commands of one step: one command, the most common step, needs no allocation.
pub(crate) type Commands = smallvec::SmallVec<[redis::Cmd; 1]>;

/// What an exchange wants next.
pub(crate) enum Flow<T> {
    /// Send these commands as one pipeline (on a cluster, split per node) and resume
    /// with their replies, in order.
    Send(Commands),
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
        use crate::protocol::exchange::Exchange as _;
        use crate::protocol::exchange::{Flow, Input};
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
