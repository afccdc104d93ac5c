//! [`RedisFilterError`]: why the Redis-held filter could not answer, and how a Redis
//! error reply becomes one (the module's refusals name the shard and its size).

use crate::MAX_RETRIES;

/// Why the Redis-held filter could not answer.
#[derive(Debug)]
pub enum RedisFilterError {
    /// The filter's keys are not there (`<prefix>:meta` missing, or a shard missing).
    Missing(String),
    /// A key holds another Redis type (`WRONGTYPE`).
    WrongType(String),
    /// A shard is shorter than the filter needs: the payload was truncated.
    Truncated {
        /// The shard key.
        key: String,
        /// Bytes it has.
        len: usize,
        /// Bytes it needs.
        needed: usize,
    },
    /// The stored metadata does not describe a filter this code can use.
    BadMeta(String),
    /// The filter kept changing generation under this handle (more than
    /// [`MAX_RETRIES`](crate::MAX_RETRIES) times in one call).
    Stale(String),
    /// A rebuild's source of keys failed.
    Source(String),
    /// The server answered in another shape than the command promises (a module of
    /// another version, or a proxy in between).
    Reply(String),
    /// Connection or protocol failure.
    Redis(redis::RedisError),
}

impl std::fmt::Display for RedisFilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RedisFilterError::Missing(k) => {
                write!(f, "filter key {k} does not exist (load the filter first)")
            }
            RedisFilterError::WrongType(k) => {
                write!(f, "key {k} holds a value of the wrong Redis type")
            }
            RedisFilterError::Truncated { key, len, needed } => {
                write!(
                    f,
                    "filter shard {key} is truncated: {len} bytes, needs {needed}"
                )
            }
            RedisFilterError::BadMeta(m) => write!(f, "bad filter metadata: {m}"),
            RedisFilterError::Stale(p) => write!(
                f,
                "filter {p} changed generation {MAX_RETRIES} times during one call"
            ),
            RedisFilterError::Source(e) => write!(f, "rebuild source failed: {e}"),
            RedisFilterError::Reply(e) => write!(f, "unexpected reply: {e}"),
            RedisFilterError::Redis(e) => write!(f, "redis: {e}"),
        }
    }
}

impl std::error::Error for RedisFilterError {}

pub(crate) fn classify(e: redis::RedisError, key: &str) -> RedisFilterError {
    match e.code() {
        Some("WRONGTYPE") => RedisFilterError::WrongType(key.to_string()),
        // The module's refusals name the shard or its size.
        Some("LBMISSING") => RedisFilterError::Missing(
            e.detail()
                .and_then(|d| d.split(' ').next())
                .unwrap_or(key)
                .to_string(),
        ),
        Some("LBTRUNCATED") => {
            let words: Vec<&str> = e.detail().unwrap_or("").split(' ').collect();
            match words[..] {
                [shard, len, needed, ..] => match (len.parse(), needed.parse()) {
                    (Ok(len), Ok(needed)) => RedisFilterError::Truncated {
                        key: shard.to_string(),
                        len,
                        needed,
                    },
                    _ => RedisFilterError::Redis(e),
                },
                _ => RedisFilterError::Redis(e),
            }
        }
        _ => RedisFilterError::Redis(e),
    }
}

/// Is this the scripts' "the meta changed" refusal?
pub(crate) fn is_stale(e: &redis::RedisError) -> bool {
    e.code() == Some("STALE") || e.to_string().contains("STALE")
}
