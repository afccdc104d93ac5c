//! [`BatchPath`]: how a batch reaches the server, the module's commands where the server
//! has them, else plain Redis commands and scripts.

/// How a handle sends batches to the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchPath {
    /// Plain Redis, as managed services allow: lookups as one `GETRANGE` per run of
    /// keys whose blocks lie close together (and a `STRLEN` per shard), inserts as one script call per shard that checks the shard
    /// and sets the bits, pipelined.
    Commands,
    /// The `linebloom-redis` module (`lab/redis-module`): one `LINEBLOOM.MTEST` or
    /// `LINEBLOOM.MADD` per shard, carrying every key of the batch in that shard.
    Module,
}

impl BatchPath {
    /// The name the lab's tables use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            BatchPath::Commands => "pipelined commands",
            BatchPath::Module => "linebloom module",
        }
    }
}
