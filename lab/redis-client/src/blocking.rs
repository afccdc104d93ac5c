//! The sync front: [`FilterConnection`], what a [`RedisFilter`] sends its commands
//! through (one server, or a Redis Cluster), and the handle itself, whose operations
//! run the protocol core's exchanges with plain calls.

use crate::front::{filter_accessors, filter_methods};
use crate::protocol::exchange::Reply;
use crate::protocol::state::Shared;
use crate::{BuildOptions, FilterOptions, RebuildOptions, Rebuilt, RedisFilterError};
use linebloom::{Key, Params};
use std::sync::Arc;

/// Where a [`RedisFilter`] lives: one server ([`redis::Connection`]) or a Redis Cluster
/// ([`redis::cluster::ClusterConnection`], which splits each pipeline per node).
pub trait FilterConnection {
    /// Runs `cmds` as one pipeline: one reply per command, in order, an error reply
    /// as that command's `Err`. The outer `Err` is a failure that lost every reply (the
    /// connection).
    ///
    /// # Errors
    ///
    /// The connection's.
    fn run(&mut self, cmds: &[redis::Cmd]) -> redis::RedisResult<Vec<Reply>>;

    /// Does a pipeline run in order on one server? True on one server; false on a
    /// cluster, where each node runs its part on its own (so the meta guard, which
    /// cannot cross slots, is replaced by a read of the meta in a round trip of its
    /// own).
    fn ordered(&self) -> bool;
}

/// A pipeline's replies, each error reply as its command's `Err`.
fn each(values: Vec<redis::Value>) -> Vec<Reply> {
    values
        .into_iter()
        .map(redis::Value::extract_error)
        .collect()
}

impl FilterConnection for redis::Connection {
    /// The commands packed into one write, then one reply read per command.
    fn run(&mut self, cmds: &[redis::Cmd]) -> redis::RedisResult<Vec<Reply>> {
        let mut packed = Vec::new();
        for cmd in cmds {
            cmd.write_packed_command(&mut packed);
        }
        self.send_packed_command(&packed)?;
        let mut replies = Vec::with_capacity(cmds.len());
        while replies.len() < cmds.len() {
            match self.recv_response()? {
                // Out-of-band pushes (RESP3) are no command's reply.
                redis::Value::Push { .. } => {}
                value => replies.push(value.extract_error()),
            }
        }
        Ok(replies)
    }
    fn ordered(&self) -> bool {
        true
    }
}

/// Commands a cluster pipeline refuses (scripts, `BITOP`) or cannot route by key
/// (`INFO`, `COMMAND`, `TIME`): sent one at a time, routed by the connection.
fn alone(cmd: &redis::Cmd) -> bool {
    crate::command::words(cmd).next().is_some_and(|name| {
        crate::command::keyless(name)
            || [&b"EVALSHA"[..], b"EVAL", b"BITOP"]
                .iter()
                .any(|n| name.eq_ignore_ascii_case(n))
    })
}

/// A cluster pipeline's error over its `n` commands: a cluster pipeline keeps no
/// replies once one command failed, so each failed command gets its own error reply
/// and the others an error that says their reply is lost with the pipeline's. A
/// failure that is no error reply (a node down) is every command's.
fn spread(e: redis::RedisError, n: usize) -> redis::RedisResult<Vec<Reply>> {
    let lost = || -> redis::RedisError {
        (
            redis::ErrorKind::Client,
            "reply lost",
            "another command of its cluster pipeline failed".to_string(),
        )
            .into()
    };
    match e.clone().into_server_errors() {
        Some(items) => {
            let mut replies: Vec<Reply> = (0..n).map(|_| Err(lost())).collect();
            for (i, error) in items.iter() {
                if let Some(slot) = replies.get_mut(*i) {
                    *slot = Err(error.clone().into());
                }
            }
            Ok(replies)
        }
        None if e.is_io_error() || e.is_connection_dropped() => Err(e),
        None => Ok((0..n).map(|_| Err(e.clone())).collect()),
    }
}

impl FilterConnection for redis::cluster::ClusterConnection {
    /// In order: runs of keyed commands as one cluster pipeline (split per node),
    /// the others one at a time.
    fn run(&mut self, cmds: &[redis::Cmd]) -> redis::RedisResult<Vec<Reply>> {
        use redis::ConnectionLike;
        let mut replies = Vec::with_capacity(cmds.len());
        let mut at = 0;
        while at < cmds.len() {
            if alone(&cmds[at]) {
                replies.push(
                    self.req_command(&cmds[at])
                        .and_then(redis::Value::extract_error),
                );
                at += 1;
                continue;
            }
            let end = (at..cmds.len())
                .find(|&i| alone(&cmds[i]))
                .unwrap_or(cmds.len());
            let mut pipe = redis::cluster::cluster_pipe();
            for cmd in &cmds[at..end] {
                pipe.add_command(cmd.clone());
            }
            match pipe.query::<Vec<redis::Value>>(self) {
                Ok(values) => replies.extend(each(values)),
                Err(e) => replies.extend(spread(e, end - at)?),
            }
            at = end;
        }
        Ok(replies)
    }
    fn ordered(&self) -> bool {
        false
    }
}

impl<C: FilterConnection + ?Sized> FilterConnection for &mut C {
    fn run(&mut self, cmds: &[redis::Cmd]) -> redis::RedisResult<Vec<Reply>> {
        (**self).run(cmds)
    }
    fn ordered(&self) -> bool {
        (**self).ordered()
    }
}

impl<C: FilterConnection + ?Sized> FilterConnection for Box<C> {
    fn run(&mut self, cmds: &[redis::Cmd]) -> redis::RedisResult<Vec<Reply>> {
        (**self).run(cmds)
    }
    fn ordered(&self) -> bool {
        (**self).ordered()
    }
}

/// Runs an exchange on a sync connection, with no source to fill a filter from.
fn run<X, C>(con: &mut C, exchange: X) -> Result<X::Output, RedisFilterError>
where
    X: crate::protocol::exchange::Exchange,
    C: FilterConnection + ?Sized,
{
    type NoSource = fn() -> Result<[u64; 0], std::convert::Infallible>;
    run_with_source(con, exchange, None::<NoSource>)
}

/// A handle on a filter held in Redis, for sync code: cheap to clone, `Send` and
/// `Sync`, its calls taking `&self`, so one handle serves every thread (each with its
/// own connection). Clones share what the handle knows of the filter.
///
/// ```no_run
/// use linebloom::Params;
/// use linebloom_redis_client::{FilterOptions, RedisFilter};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut con = redis::Client::open("redis://127.0.0.1/")?.get_connection()?;
/// let params = Params::for_fpr(1_000_000, 0.01)?;
/// let guard = RedisFilter::open_or_create(&mut con, "products:guard", params, FilterOptions::default())?;
/// assert!(guard.insert(&mut con, "sku-17")?); // new
/// assert!(guard.contains(&mut con, "sku-17")?); // never a false "absent"
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisFilter {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for RedisFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::front::debug(&self.shared, "RedisFilter", f)
    }
}

impl RedisFilter {
    filter_accessors!();
    filter_methods!(; FilterConnection; run);

    /// A service's start-up that fills the filter from the source of truth: opens the
    /// filter under `prefix`, or, if there is none, creates one of shape `params` in the
    /// *building* state, inserts every key `source` returns (read them from the
    /// database), and then makes it live (`PROTOCOL.md`, "First build").
    ///
    /// While it builds, lookups through any handle answer
    /// [`Building`](RedisFilterError::Building) (or, by choice, "maybe present":
    /// [`set_while_building`](Self::set_while_building)) and inserts go in. Services that
    /// start together build it once: the others wait until it is live, and `source` is
    /// called only by the builder. A builder that dies leaves its lease
    /// ([`BuildOptions::lease`]); the next caller after it runs out takes the build over
    /// and fills the filter from its own source. An existing filter keeps its own shape;
    /// [`created`](Self::created) tells whether this call created it.
    ///
    /// ```no_run
    /// use linebloom::Params;
    /// use linebloom_redis_client::{BuildOptions, FilterOptions, RedisFilter};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # fn product_ids() -> Result<Vec<u64>, std::io::Error> { Ok(vec![1, 2, 3]) }
    /// let mut con = redis::Client::open("redis://127.0.0.1/")?.get_connection()?;
    /// let params = Params::for_fpr(1_000_000, 0.01)?;
    /// let guard = RedisFilter::open_or_build(
    ///     &mut con,
    ///     "products:guard",
    ///     params,
    ///     FilterOptions::default(),
    ///     BuildOptions::default(),
    ///     || product_ids(), // every legal id, from the database
    /// )?;
    /// assert!(guard.contains(&mut con, &2u64)?);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`open_or_create`](Self::open_or_create);
    /// [`Source`](RedisFilterError::Source) with the caller's error if `source` fails
    /// (the filter stays in the building state, and the next caller builds it).
    pub fn open_or_build<C, I, E>(
        con: &mut C,
        prefix: &str,
        params: Params,
        options: FilterOptions,
        build: BuildOptions,
        source: impl FnOnce() -> Result<I, E>,
    ) -> Result<Self, RedisFilterError>
    where
        C: FilterConnection + ?Sized,
        I: IntoIterator,
        I::Item: Key,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (state, created) = run_with_source(
            con,
            crate::protocol::build::OpenOrBuild::new(prefix, params, options, build)?,
            Some(source),
        )?;
        Ok(Self::from_state(prefix, state, created))
    }

    /// Rebuilds the filter from `source` into a new generation of shape `params` (the
    /// same shape to drop deleted keys, a larger one to rotate a filter that filled
    /// up), and switches every reader to it with no gap (`PROTOCOL.md`, "Rebuild and
    /// rotation"). `source` is called once every insert goes to both generations and
    /// [`RebuildOptions::grace`] has passed; it returns every key that must be in the
    /// filter (read them from the database).
    ///
    /// # Errors
    ///
    /// [`RebuildInProgress`](RedisFilterError::RebuildInProgress) if another rebuild
    /// holds the filter under a lease that still runs;
    /// [`Source`](RedisFilterError::Source) with the caller's error if `source` fails
    /// (the rebuild is then cancelled and the live generation stays);
    /// [`RebuildCancelled`](RedisFilterError::RebuildCancelled) if another client
    /// cancelled it; [`SwitchUnconfirmed`](RedisFilterError::SwitchUnconfirmed) if the
    /// switch's reply was lost; [`Redis`](RedisFilterError::Redis) for the connection.
    pub fn rebuild<C, I, E>(
        &self,
        con: &mut C,
        params: Params,
        options: RebuildOptions,
        source: impl FnOnce() -> Result<I, E>,
    ) -> Result<Rebuilt, RedisFilterError>
    where
        C: FilterConnection + ?Sized,
        I: IntoIterator,
        I::Item: Key,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        run_with_source(
            con,
            crate::protocol::rebuild::Rebuild::new(&self.shared, params, options),
            Some(source),
        )
    }
}

/// Runs an exchange on a sync connection; a step that fills a filter reads `source`
/// (once), and fails without one.
fn run_with_source<X, C, S, I, E>(
    con: &mut C,
    exchange: X,
    mut source: Option<S>,
) -> Result<X::Output, RedisFilterError>
where
    X: crate::protocol::exchange::Exchange,
    C: FilterConnection + ?Sized,
    S: FnOnce() -> Result<I, E>,
    I: IntoIterator,
    I::Item: Key,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    crate::protocol::exchange::drive!(
        exchange,
        |cmds| con.run(cmds),
        |d| std::thread::sleep(d),
        |f| match source.take() {
            Some(source) => source()
                .map(|keys| crate::front::fill(f, keys))
                .map_err(Into::into),
            None => Err(crate::front::no_source()),
        }
    )
}
