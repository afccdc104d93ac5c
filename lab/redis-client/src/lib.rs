//! A [`linebloom`] blocked Bloom filter held in Redis or a
//! Redis Cluster: the guard a service puts in front of its cache and database, so that
//! a flood of requests for keys that do not exist ("cache penetration") is answered
//! without reaching either.
//!
//! ```no_run
//! use linebloom_redis_client::linebloom::Params;
//! use linebloom_redis_client::{BuildOptions, FilterOptions, RedisFilter, redis};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut con = redis::Client::open("redis://127.0.0.1/")?.get_connection()?;
//! // The filter for a million ids at 1% under `products:guard`: opened if it is there,
//! // else built from every id in the database (once, by the first service to start)
//! // before it answers.
//! let params = Params::for_fpr(1_000_000, 0.01)?;
//! let all_skus = || Ok::<_, std::io::Error>(["sku-17", "sku-42"]); // from the database
//! let guard = RedisFilter::open_or_build(
//!     &mut con,
//!     "products:guard",
//!     params,
//!     FilterOptions::default(),
//!     BuildOptions::default(),
//!     all_skus,
//! )?;
//! assert_eq!(guard.insert_many(&mut con, &["sku-99"])?, 1);
//! assert!(guard.contains(&mut con, "sku-42")?);
//! assert_eq!(guard.contains_many(&mut con, &[42u64, 7])?, [false, false]);
//! # Ok(())
//! # }
//! ```
//!
//! **The rule it keeps: a key it acknowledged answers "present" or an error, never
//! "absent"** — when two services start at once, when a reply is lost, when Redis
//! evicts a key, on a replica, and when a rebuild dies. Each case is specified in
//! `PROTOCOL.md` beside this crate and tested against real servers:
//!
//! * **Start-up fills from the source** ([`open_or_build`](RedisFilter::open_or_build)):
//!   a missing filter is created in a building state, answers no lookup until every
//!   key of the source is in, and is built once however many services start together;
//!   a builder that dies leaves a lease the next one takes over.
//! * **Create is create-if-absent** ([`RedisFilter::create`],
//!   [`open_or_create`](RedisFilter::open_or_create)): shards are written under key
//!   names no other filter uses, then the meta with `SET … NX`; a live filter is
//!   replaced only by a rebuild.
//! * **A handle follows only its own filter**: a filter made again under its prefix
//!   (after the meta was lost) is an error for it
//!   ([`Replaced`](RedisFilterError::Replaced)), never its "absent".
//! * **Writes never re-create a shard**, and a missing, short, long or wrongly typed
//!   shard or meta is an error for its keys. On one server every command carries a
//!   guard that refuses it whole if the meta moved on.
//! * **Rebuild and rotation with no gap** ([`RedisFilter::rebuild`]): a new generation
//!   built from the source of truth and switched to with a compare-and-set that can be
//!   verified after a lost reply. A rebuild owns the filter under a lease; one that dies
//!   is cancelled when the lease runs out ([`cancel_rebuild`](RedisFilter::cancel_rebuild)).
//! * **Replicas and failover**: the module replicates what it changes as plain
//!   commands, so a replica without it holds the same bits, and a handle whose server
//!   no longer has the module goes on with plain commands. Redis replicates
//!   asynchronously: an insert the master acknowledged just before it failed may not
//!   have reached the replica that takes over, unless the handle waits for replicas
//!   ([`Durability`], `set_durability`).
//! * **Eviction** cannot be silent: [`EvictionRisk`] says when the server's
//!   `maxmemory-policy` may remove the filter's keys.
//!
//! What a service needs of it:
//!
//! * **Sync and async**: [`RedisFilter`] over [`FilterConnection`] (a connection, a
//!   cluster connection), and with the `tokio` feature `AsyncRedisFilter` over
//!   `AsyncFilterConnection` (a multiplexed connection, a `ConnectionManager`, an
//!   async cluster connection, or one from a bb8 or deadpool pool). Both run one
//!   sans-IO protocol core. A handle is `Clone`, `Send` and `Sync`, and its calls take
//!   `&self`.
//! * **Any key** the core hashes ([`linebloom::Key`]: strings, bytes, integers), by
//!   value, so every client and language that follows the protocol agrees.
//! * **Answers**: [`insert`](RedisFilter::insert) says whether the key was new and
//!   [`insert_many`](RedisFilter::insert_many) how many were; an O(1) approximate
//!   [`count`](RedisFilter::count); [`info`](RedisFilter::info); a TTL
//!   ([`FilterOptions::ttl`], [`expire`](RedisFilter::expire)); and
//!   [`delete`](RedisFilter::delete).
//! * **Batches in one round trip**: with the `linebloom-redis` module one command per
//!   shard (a single key is one command); without it one script call per shard for
//!   inserts and a pipelined `GETRANGE` per run of nearby blocks for lookups
//!   ([`BatchPath`]).
//! * **A Redis Cluster**: shards spread over the slots; a lost node is an error for its
//!   keys, never "absent".
//!
//! The crate re-exports the `redis` crate it is built on ([`redis`]) and the core
//! ([`linebloom`]), so a service names one version of each.
//!
//! Features: `tokio` adds the async front (`AsyncRedisFilter`).

#[cfg(feature = "tokio")]
mod aio;
mod blocking;
mod command;
mod error;
mod front;
mod info;
mod meta;
mod path;
mod protocol;
mod scripts;

#[cfg(feature = "tokio")]
pub use aio::{AsyncFilterConnection, AsyncRedisFilter};
pub use blocking::{FilterConnection, RedisFilter};
pub use error::RedisFilterError;
pub use info::{Capacity, EvictionRisk, Info, RebuildState};
pub use linebloom;
pub use meta::Generation;
pub use path::BatchPath;
pub use protocol::build::BuildOptions;
pub use protocol::open::{FilterOptions, MAX_SHARD_BLOCKS};
pub use protocol::rebuild::{RebuildOptions, Rebuilt};
pub use protocol::{Durability, WhileBuilding};
pub use redis;

/// How many times one call re-reads a changed meta before it gives up.
pub const MAX_RETRIES: usize = 16;

/// Default shard size: 2^20 blocks = 64 MiB per key.
pub const DEFAULT_SHARD_BLOCKS: u64 = 1 << 20;

/// The README's examples, compiled as doc tests (the second is async).
#[cfg(all(doctest, feature = "tokio"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
