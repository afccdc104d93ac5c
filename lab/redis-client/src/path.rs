//! [`BatchPath`]: how a batch reaches the server, the module's commands where the server
//! has them, else plain pipelined commands.

use crate::{FilterConnection, RedisFilterError};

/// How a [`RedisFilter`] sends a batch of keys to the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchPath {
    /// Plain Redis: one `GETRANGE` (query) or `BITFIELD` (insert) per key, pipelined.
    Commands,
    /// The `linebloom-redis` module (`lab/redis-module`): one `LINEBLOOM.MTEST` or
    /// `LINEBLOOM.MADD` per shard, carrying every key of the batch in that shard.
    Module,
}

impl BatchPath {
    /// [`Module`](Self::Module) where the server has the module's commands (`COMMAND
    /// INFO`; on a cluster, of the node it reaches: every node must load the same
    /// modules), else [`Commands`](Self::Commands).
    pub fn detect<C: FilterConnection + ?Sized>(con: &mut C) -> Result<Self, RedisFilterError> {
        let info: Vec<redis::Value> = redis::cmd("COMMAND")
            .arg("INFO")
            .arg("linebloom.mtest")
            .arg("linebloom.madd")
            .query(con.single())
            .map_err(RedisFilterError::Redis)?;
        let known = info.iter().all(|v| !matches!(v, redis::Value::Nil)) && info.len() == 2;
        Ok(if known {
            BatchPath::Module
        } else {
            BatchPath::Commands
        })
    }

    /// The name the lab's tables use.
    pub fn name(self) -> &'static str {
        match self {
            BatchPath::Commands => "pipelined commands",
            BatchPath::Module => "linebloom module",
        }
    }
}
