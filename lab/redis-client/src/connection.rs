//! [`FilterConnection`]: where a [`RedisFilter`](crate::RedisFilter) lives, one server
//! or a Redis Cluster, behind the three operations the filter needs.

/// Where a [`RedisFilter`] lives: one server ([`redis::Connection`]) or a Redis Cluster
/// ([`redis::cluster::ClusterConnection`], which splits each pipeline per node).
pub trait FilterConnection {
    /// Runs `cmds` as one pipeline and returns one reply per command, in order. An error
    /// reply fails the call.
    fn run(&mut self, cmds: Vec<redis::Cmd>) -> redis::RedisResult<Vec<redis::Value>>;
    /// Does a command appended to a pipeline run after every earlier one? True on one
    /// server; false on a cluster, where each node runs its part on its own, so the
    /// meta check then takes a round trip of its own.
    fn ordered(&self) -> bool;
    /// The connection for single commands and scripts (a cluster routes each by key).
    fn single(&mut self) -> &mut dyn redis::ConnectionLike;
}

impl FilterConnection for redis::Connection {
    fn run(&mut self, mut cmds: Vec<redis::Cmd>) -> redis::RedisResult<Vec<redis::Value>> {
        match cmds.len() {
            0 => return Ok(Vec::new()),
            // A single key's command goes alone, without a pipeline's packing and reply
            // vector: the same one round trip.
            1 => return Ok(vec![cmds.pop().expect("one command").query(self)?]),
            _ => {}
        }
        let mut pipe = redis::pipe();
        for cmd in cmds {
            pipe.add_command(cmd);
        }
        pipe.query(self)
    }
    fn ordered(&self) -> bool {
        true
    }
    fn single(&mut self) -> &mut dyn redis::ConnectionLike {
        self
    }
}

impl FilterConnection for redis::cluster::ClusterConnection {
    fn run(&mut self, cmds: Vec<redis::Cmd>) -> redis::RedisResult<Vec<redis::Value>> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::cluster::cluster_pipe();
        for cmd in cmds {
            pipe.add_command(cmd);
        }
        pipe.query(self)
    }
    fn ordered(&self) -> bool {
        false
    }
    fn single(&mut self) -> &mut dyn redis::ConnectionLike {
        self
    }
}
