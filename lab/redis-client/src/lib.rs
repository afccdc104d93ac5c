//! A [linebloom](https://docs.rs/linebloom) blocked Bloom filter held in Redis or a
//! Redis Cluster: the guard a service puts in front of its cache and database, so that
//! a flood of requests for keys that do not exist ("cache penetration") is answered
//! without reaching either.
//!
//! ```no_run
//! use linebloom::Params;
//! use linebloom_redis_client::{DEFAULT_SHARD_BLOCKS, RedisFilter};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut con = redis::Client::open("redis://127.0.0.1/")?.get_connection()?;
//! // An empty filter for a million ids at 1%, under the prefix `products:guard`.
//! let params = Params::for_fpr(1_000_000, 0.01)?;
//! let mut guard = RedisFilter::create(&mut con, "products:guard", params, DEFAULT_SHARD_BLOCKS)?;
//! guard.insert_many(&mut con, &[17, 42, 99])?;
//! assert!(guard.contains(&mut con, 42)?);
//! // Another process opens the same filter by its prefix.
//! let mut other = RedisFilter::open(&mut con, "products:guard")?;
//! assert_eq!(other.contains_many(&mut con, &[42, 7])?[0], true); // never a false "absent"
//! # Ok(())
//! # }
//! ```
//!
//! What it does, each specified in `PROTOCOL.md` beside this crate:
//!
//! * **The filter is plain Redis strings**, shards of 64-byte blocks exactly as the
//!   binary format's payload, so any client can read them, they persist and replicate
//!   as strings, and the bits are the in-process `linebloom::BloomFilter`'s
//!   ([`RedisFilter::load`] reads them back).
//! * **Batches** ([`RedisFilter::insert_many`], [`contains_many`](RedisFilter::contains_many))
//!   go to the server in one round trip: with the `linebloom-redis` module one
//!   `LINEBLOOM.MADD` or `LINEBLOOM.MTEST` per shard (a single key is one command), and
//!   without it one pipelined `BITFIELD` or `GETRANGE` per key ([`BatchPath`], detected
//!   when a handle is stored or opened).
//! * **Rebuild and rotation with no gap** ([`RedisFilter::rebuild`]): a new generation
//!   built from the source of truth, of the same shape (to drop deleted keys) or a
//!   larger one, switched to atomically while other clients keep querying and
//!   inserting.
//! * **A Redis Cluster** ([`FilterConnection`] is implemented for a connection and for
//!   a cluster connection): shards are spread over the slots by their hash tags, a
//!   batch is split per node, and a lost node is an error for its keys, never
//!   "absent".
//! * **Capacity monitoring** ([`RedisFilter::capacity`]): the fill, the estimated key
//!   count and the rate the shape predicts at it, against the target.
//!
//! A call that cannot check a key's block (server down, missing or truncated shard,
//! wrong type) is an error ([`RedisFilterError`]), never "absent".
//!
//! Features: `variants` adds the slower batch paths the benchmarks compare against
//! (Lua scripts, `BITFIELD_RO`, pipelines without the generation check);
//! `test-server` adds [`testing`], which starts and stops loopback `redis-server`
//! processes and clusters for tests and examples.

mod capacity;
mod connection;
mod error;
mod filter;
mod meta;
mod path;
mod rebuild;
#[cfg(feature = "test-server")]
pub mod testing;
#[cfg(feature = "variants")]
mod variants;

pub use capacity::Capacity;
pub use connection::FilterConnection;
pub use error::RedisFilterError;
pub use filter::RedisFilter;
pub use linebloom::hash::SCHEME;
pub use meta::Generation;
pub use path::BatchPath;
pub use rebuild::{Rebuilt, SWAP_META};
#[cfg(feature = "variants")]
pub use variants::{FETCH_BLOCKS, INSERT_SCRIPT};

/// How many times one call re-reads a changed meta before it gives up.
pub const MAX_RETRIES: usize = 16;

/// Default shard size: 2^20 blocks = 64 MiB per key.
pub const DEFAULT_SHARD_BLOCKS: u64 = 1 << 20;

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
