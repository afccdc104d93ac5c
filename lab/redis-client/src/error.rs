//! [`RedisFilterError`]: why the Redis-held filter could not answer, and how a Redis
//! error reply becomes one (the module's and the scripts' refusals name the key and its
//! size).

use crate::MAX_RETRIES;
use linebloom_redis_wire::errors;
use std::time::Duration;

/// Why the Redis-held filter could not answer. Every call that could not check a key's
/// block returns one of these: never "absent".
#[derive(Debug)]
#[non_exhaustive]
pub enum RedisFilterError {
    /// No filter under this prefix: its meta key does not exist (never created,
    /// deleted, expired or evicted).
    NotFound {
        /// The prefix.
        prefix: String,
    },
    /// `create` or `store` found a filter under this prefix already. A live filter is
    /// replaced only by a rebuild.
    AlreadyExists {
        /// The prefix.
        prefix: String,
    },
    /// The prefix now holds another filter than the one this handle opened: created
    /// again after its meta vanished, or stored by another client. The handle never
    /// answers from it (its keys may be missing there); open the prefix again, or
    /// rebuild it from the source.
    Replaced {
        /// The prefix.
        prefix: String,
    },
    /// The filter is still being filled from its source (`open_or_build`): a lookup
    /// cannot answer "absent" yet, and a rebuild waits for the build. Handles can
    /// choose to answer "maybe present" meanwhile
    /// ([`WhileBuilding`](crate::WhileBuilding)).
    Building {
        /// The prefix.
        prefix: String,
    },
    /// A shard the meta names does not exist: evicted, expired or deleted while its
    /// meta stayed. Its keys cannot be checked until a rebuild.
    Missing {
        /// The shard key.
        key: String,
    },
    /// A key of the filter holds another Redis type (`WRONGTYPE`).
    WrongType {
        /// The key.
        key: String,
    },
    /// A shard does not hold exactly the bytes its shape needs: truncated, extended, or
    /// replaced by a foreign write.
    ShardLength {
        /// The shard key.
        key: String,
        /// Bytes it holds.
        held: u64,
        /// Bytes it must hold.
        needed: u64,
    },
    /// The meta key holds something that is not a filter of this protocol.
    BadMeta {
        /// The meta key.
        key: String,
        /// What it holds.
        meta: String,
    },
    /// The filter changed generation more than [`MAX_RETRIES`](crate::MAX_RETRIES)
    /// times during one call.
    Stale {
        /// The prefix.
        prefix: String,
    },
    /// Another client's rebuild holds the filter and its lease has not run out: wait,
    /// or cancel it with `cancel_rebuild(.., force = true)`.
    RebuildInProgress {
        /// The generation it builds.
        generation: u64,
        /// How long its lease still runs.
        lease_left: Duration,
    },
    /// The rebuild was cancelled by another client (its lease ran out, or a forced
    /// cancel) before it could switch; nothing it made is live.
    RebuildCancelled {
        /// The generation it was building.
        generation: u64,
    },
    /// The reply to a rebuild's switch was lost, and so was the re-read that would
    /// have told whether it happened. Nothing was removed: either the new generation
    /// is live, or the rebuild is still pending and its lease will run out. Call
    /// `refresh` on a working connection and compare `generation().number`.
    SwitchUnconfirmed {
        /// The generation the switch made live, if it happened.
        generation: u64,
        /// The error that lost the reply.
        source: redis::RedisError,
    },
    /// A durable insert ([`Durability`](crate::Durability)) was applied on the master,
    /// but fewer replicas than asked acknowledged it within the timeout: a failover now
    /// could lose it. Insert it again, or treat it as not acknowledged.
    NotDurable {
        /// Replicas that acknowledged it.
        acked: u64,
        /// Replicas asked for.
        wanted: u64,
    },
    /// An argument that cannot describe a filter (for example 0 blocks per shard).
    InvalidArgument(String),
    /// A rebuild's source of keys failed; the caller's error is kept as the
    /// [`source`](std::error::Error::source).
    Source(Box<dyn std::error::Error + Send + Sync>),
    /// The server answered in another shape than the command promises (a module of
    /// another version, or a proxy in between).
    Reply(String),
    /// Connection or protocol failure, or an error reply the filter does not expect.
    Redis(redis::RedisError),
}

impl std::fmt::Display for RedisFilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RedisFilterError::NotFound { prefix } => {
                write!(
                    f,
                    "no filter under {prefix} (its key {prefix}:meta does not exist)"
                )
            }
            RedisFilterError::AlreadyExists { prefix } => write!(
                f,
                "a filter already exists under {prefix}: open it, or replace it with a rebuild"
            ),
            RedisFilterError::Replaced { prefix } => write!(
                f,
                "the filter under {prefix} is not the one this handle opened (it was \
                 created again or replaced): open it again, or rebuild it from the source"
            ),
            RedisFilterError::Building { prefix } => write!(
                f,
                "the filter under {prefix} is still being filled from its source: no \
                 lookup answers until it is whole"
            ),
            RedisFilterError::Missing { key } => write!(
                f,
                "filter shard {key} does not exist (evicted, expired or deleted): its keys \
                 cannot be checked until a rebuild"
            ),
            RedisFilterError::WrongType { key } => {
                write!(f, "key {key} holds a value of the wrong Redis type")
            }
            RedisFilterError::ShardLength { key, held, needed } => write!(
                f,
                "filter shard {key} holds {held} bytes where its shape needs {needed}"
            ),
            RedisFilterError::BadMeta { key, meta } => {
                write!(f, "{key} does not hold a linebloom filter's meta: {meta:?}")
            }
            RedisFilterError::Stale { prefix } => write!(
                f,
                "filter {prefix} changed generation {MAX_RETRIES} times during one call"
            ),
            RedisFilterError::RebuildInProgress {
                generation,
                lease_left,
            } => write!(
                f,
                "another rebuild is building generation {generation}; its lease runs \
                 {lease_left:?} more"
            ),
            RedisFilterError::RebuildCancelled { generation } => write!(
                f,
                "the rebuild of generation {generation} was cancelled by another client \
                 before its switch"
            ),
            RedisFilterError::SwitchUnconfirmed { generation, source } => write!(
                f,
                "the switch to generation {generation} lost its reply ({source}); refresh on \
                 a working connection to see whether it is live"
            ),
            RedisFilterError::NotDurable { acked, wanted } => write!(
                f,
                "the insert reached {acked} of the {wanted} replicas asked for in time: a \
                 failover could lose it"
            ),
            RedisFilterError::InvalidArgument(what) => write!(f, "invalid argument: {what}"),
            RedisFilterError::Source(e) => write!(f, "rebuild source failed: {e}"),
            RedisFilterError::Reply(e) => write!(f, "unexpected reply: {e}"),
            RedisFilterError::Redis(e) => write!(f, "redis: {e}"),
        }
    }
}

impl std::error::Error for RedisFilterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RedisFilterError::Source(e) => Some(e.as_ref()),
            RedisFilterError::Redis(e) | RedisFilterError::SwitchUnconfirmed { source: e, .. } => {
                Some(e)
            }
            _ => None,
        }
    }
}

impl From<redis::RedisError> for RedisFilterError {
    /// A connection or protocol failure, or an error reply; the module's and the
    /// scripts' refusals become the variants that name them.
    fn from(e: redis::RedisError) -> Self {
        classify(e)
    }
}

/// The error a reply carries: the module's and the scripts' refusals name the key and
/// the sizes (`LBMISSING <key>`, `LBLENGTH <key> <held> <needed>`).
pub(crate) fn classify(e: redis::RedisError) -> RedisFilterError {
    let words: Vec<&str> = e.detail().unwrap_or("").split(' ').collect();
    match (e.code(), words.as_slice()) {
        (Some(errors::MISSING), [key, ..]) => RedisFilterError::Missing {
            key: key.to_string(),
        },
        (Some("LBWRONGTYPE"), [key, ..]) => RedisFilterError::WrongType {
            key: key.to_string(),
        },
        (Some(errors::LENGTH), [key, held, needed, ..]) => match (held.parse(), needed.parse()) {
            (Ok(held), Ok(needed)) => RedisFilterError::ShardLength {
                key: key.to_string(),
                held,
                needed,
            },
            _ => RedisFilterError::Redis(e),
        },
        _ => RedisFilterError::Redis(e),
    }
}

/// A `WRONGTYPE` reply on `key` becomes [`RedisFilterError::WrongType`] naming it;
/// other errors as [`classify`].
pub(crate) fn on_key(e: redis::RedisError, key: &str) -> RedisFilterError {
    if e.code() == Some("WRONGTYPE") {
        return RedisFilterError::WrongType {
            key: key.to_string(),
        };
    }
    classify(e)
}

/// Is this error reply a guard's or a compare-and-set's "the meta changed"?
pub(crate) fn is_stale(e: &redis::RedisError) -> bool {
    e.code() == Some(errors::STALE)
}
