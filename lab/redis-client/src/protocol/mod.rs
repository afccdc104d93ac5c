//! The protocol core, free of I/O (sans-IO): every operation of the Redis-held filter
//! is an [`Exchange`](exchange::Exchange), a small state machine that says which
//! commands to send, reads their replies, and decides what comes next. The sync front
//! (`blocking.rs`) and the async front (`aio.rs`) only carry commands to the server and
//! replies back (`exchange::drive!`), so every rule of `PROTOCOL.md` is written once,
//! here. This file only names the parts:
//!
//! | file | holds |
//! |---|---|
//! | `exchange.rs` | the [`Exchange`](exchange::Exchange) state machine and `drive!` |
//! | `state.rs` | what a handle knows of its filter ([`Shared`](state::Shared)), `Refresh` |
//! | `keys.rs` | the names of a filter's keys, their removal, and the random tags in them |
//! | `reply.rs` | reading replies, and the refusals that send a call back to the meta |
//! | `durability.rs` | [`Durability`] and [`WhileBuilding`]: what a call waits for and answers |
//! | `open.rs` | `open`, `create`, `store`, `open_or_create` |
//! | `build.rs` | `open_or_build`: the first build from the source of truth |
//! | `batch.rs` | inserts and lookups, retried when the meta moves on |
//! | `read.rs` | counts, `info`, measured rates and loading a filter back |
//! | `rebuild.rs` | a rebuild into a new generation, and its cancellation |
//! | `lifecycle.rs` | `delete` and TTLs |

pub(crate) mod batch;
pub(crate) mod build;
pub(crate) mod durability;
pub(crate) mod exchange;
pub(crate) mod keys;
pub(crate) mod lifecycle;
pub(crate) mod open;
pub(crate) mod read;
pub(crate) mod rebuild;
pub(crate) mod reply;
pub(crate) mod state;

pub use durability::{Durability, WhileBuilding};
