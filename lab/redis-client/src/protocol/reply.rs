//! Reading the server's replies: strings, integers and `TIME`, and the refusals that
//! send a call back to the meta.

use super::exchange::Reply;
use crate::RedisFilterError;

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
