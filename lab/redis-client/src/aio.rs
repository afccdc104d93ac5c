//! The async front (feature `tokio`): [`AsyncFilterConnection`], implemented for
//! redis's [`MultiplexedConnection`](redis::aio::MultiplexedConnection),
//! [`ConnectionManager`](redis::aio::ConnectionManager) and async
//! [`ClusterConnection`](redis::cluster_async::ClusterConnection), and
//! [`AsyncRedisFilter`], whose operations run the same protocol core as the sync
//! [`RedisFilter`](crate::RedisFilter), with `.await`s.

use crate::front::{filter_accessors, filter_methods};
use crate::protocol::exchange::Reply;
use crate::protocol::state::Shared;
use crate::{BuildOptions, FilterOptions, RebuildOptions, Rebuilt, RedisFilter, RedisFilterError};
use linebloom::{Key, Params};
use std::future::Future;
use std::sync::Arc;

/// Where an [`AsyncRedisFilter`] lives: one server or a Redis Cluster, through an
/// async connection.
pub trait AsyncFilterConnection: Send {
    /// Runs `cmds` as one pipeline: one reply per command, in order, an error reply
    /// as that command's `Err`. The outer `Err` is a failure that lost every reply.
    ///
    /// # Errors
    ///
    /// The connection's.
    fn run(
        &mut self,
        cmds: &[redis::Cmd],
    ) -> impl Future<Output = redis::RedisResult<Vec<Reply>>> + Send;

    /// Does a pipeline run in order on one server? (See
    /// [`FilterConnection::ordered`](crate::FilterConnection::ordered).)
    fn ordered(&self) -> bool;
}

/// One server's pipeline, each error reply as its command's `Err`.
async fn pipeline(
    con: &mut (impl redis::aio::ConnectionLike + Send),
    cmds: &[redis::Cmd],
) -> redis::RedisResult<Vec<Reply>> {
    match cmds {
        [] => return Ok(Vec::new()),
        // One command goes alone, without a pipeline's copy of it.
        [cmd] => return Ok(vec![con.req_packed_command(cmd).await?.extract_error()]),
        _ => {}
    }
    let mut pipe = redis::pipe();
    pipe.ignore_errors();
    for cmd in cmds {
        pipe.add_command(cmd.clone());
    }
    let values: Vec<redis::Value> = pipe.query_async(con).await?;
    Ok(values
        .into_iter()
        .map(redis::Value::extract_error)
        .collect())
}

impl AsyncFilterConnection for redis::aio::MultiplexedConnection {
    async fn run(&mut self, cmds: &[redis::Cmd]) -> redis::RedisResult<Vec<Reply>> {
        pipeline(self, cmds).await
    }
    fn ordered(&self) -> bool {
        true
    }
}

impl AsyncFilterConnection for redis::aio::ConnectionManager {
    async fn run(&mut self, cmds: &[redis::Cmd]) -> redis::RedisResult<Vec<Reply>> {
        pipeline(self, cmds).await
    }
    fn ordered(&self) -> bool {
        true
    }
}

/// A command's first key: argument 1, or for a script the first of its keys. `None`
/// for a command without keys (`INFO`, `COMMAND`, `TIME`).
fn first_key(cmd: &redis::Cmd) -> Option<&[u8]> {
    let mut args = crate::command::words(cmd);
    let name = args.next()?.to_ascii_uppercase();
    match name.as_slice() {
        name if crate::command::keyless(name) => None,
        b"EVALSHA" | b"EVAL" => {
            let _body = args.next()?;
            let keys: usize = std::str::from_utf8(args.next()?).ok()?.parse().ok()?;
            if keys == 0 { None } else { args.next() }
        }
        _ => args.next(),
    }
}

/// The part of a key that picks its cluster slot: the first `{…}` with something
/// inside, else the whole key.
fn hash_tag(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{')
        && let Some(len) = key[open + 1..].iter().position(|&b| b == b'}')
        && len > 0
    {
        return &key[open + 1..open + 1 + len];
    }
    key
}

impl AsyncFilterConnection for redis::cluster_async::ClusterConnection {
    /// Commands grouped by hash tag (so by slot), each group one pipeline to its node,
    /// all groups at once; commands without a key alone, routed by the connection. A
    /// group whose node failed gives each of its commands that error.
    async fn run(&mut self, cmds: &[redis::Cmd]) -> redis::RedisResult<Vec<Reply>> {
        let mut groups: Vec<(Option<&[u8]>, Vec<usize>)> = Vec::new();
        for (i, cmd) in cmds.iter().enumerate() {
            let tag = first_key(cmd).map(hash_tag);
            match groups.iter_mut().find(|(t, _)| tag.is_some() && *t == tag) {
                Some((_, members)) => members.push(i),
                None => groups.push((tag, vec![i])),
            }
        }
        let runs = groups.iter().map(|(_, members)| {
            let mut con = self.clone();
            async move {
                let group: Vec<redis::Cmd> = members.iter().map(|&i| cmds[i].clone()).collect();
                let replies = if group.len() == 1 {
                    vec![
                        group[0]
                            .query_async::<redis::Value>(&mut con)
                            .await
                            .and_then(redis::Value::extract_error),
                    ]
                } else {
                    match pipeline(&mut con, &group).await {
                        Ok(replies) => replies,
                        Err(e) => group.iter().map(|_| Err(e.clone())).collect(),
                    }
                };
                (members, replies)
            }
        });
        let mut out: Vec<Option<Reply>> = (0..cmds.len()).map(|_| None).collect();
        for (members, replies) in futures_util::future::join_all(runs).await {
            for (&i, reply) in members.iter().zip(replies) {
                out[i] = Some(reply);
            }
        }
        Ok(out
            .into_iter()
            .map(|r| r.expect("every command belongs to one group"))
            .collect())
    }
    fn ordered(&self) -> bool {
        false
    }
}

impl<C: AsyncFilterConnection + ?Sized> AsyncFilterConnection for &mut C {
    fn run(
        &mut self,
        cmds: &[redis::Cmd],
    ) -> impl Future<Output = redis::RedisResult<Vec<Reply>>> + Send {
        (**self).run(cmds)
    }
    fn ordered(&self) -> bool {
        (**self).ordered()
    }
}

/// Runs an exchange on an async connection, with no source to fill a filter from.
async fn run_async<X, C>(con: &mut C, exchange: X) -> Result<X::Output, RedisFilterError>
where
    X: crate::protocol::exchange::Exchange + Send,
    C: AsyncFilterConnection + ?Sized,
{
    type NoSource = fn() -> std::future::Ready<Result<[u64; 0], std::convert::Infallible>>;
    run_with_source(con, exchange, None::<NoSource>).await
}

/// A handle on a filter held in Redis, for async code (feature `tokio`): cheap to
/// clone, `Send` and `Sync`, its calls taking `&self`, so one handle serves many tasks,
/// for example over clones of one multiplexed connection. It is the sync
/// [`RedisFilter`]'s twin: the same operations, over the same protocol core, and either
/// converts into the other, sharing what the handle knows.
///
/// ```no_run
/// use linebloom::Params;
/// use linebloom_redis_client::{AsyncRedisFilter, FilterOptions};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let client = redis::Client::open("redis://127.0.0.1/")?;
/// let mut con = client.get_multiplexed_async_connection().await?;
/// let params = Params::for_fpr(1_000_000, 0.01)?;
/// let guard =
///     AsyncRedisFilter::open_or_create(&mut con, "products:guard", params, FilterOptions::default()).await?;
/// guard.insert(&mut con, "sku-17").await?;
/// assert!(guard.contains(&mut con, "sku-17").await?);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct AsyncRedisFilter {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for AsyncRedisFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::front::debug(&self.shared, "AsyncRedisFilter", f)
    }
}

impl From<RedisFilter> for AsyncRedisFilter {
    fn from(f: RedisFilter) -> Self {
        AsyncRedisFilter { shared: f.shared }
    }
}

impl From<AsyncRedisFilter> for RedisFilter {
    fn from(f: AsyncRedisFilter) -> Self {
        RedisFilter { shared: f.shared }
    }
}

impl AsyncRedisFilter {
    filter_accessors!();
    filter_methods!(async await; AsyncFilterConnection; run_async);

    /// [`RedisFilter::open_or_build`] for async code: `source` is awaited only by the
    /// call that builds the filter.
    ///
    /// # Errors
    ///
    /// As [`RedisFilter::open_or_build`].
    pub async fn open_or_build<C, F, I, E>(
        con: &mut C,
        prefix: &str,
        params: Params,
        options: FilterOptions,
        build: BuildOptions,
        source: impl FnOnce() -> F + Send,
    ) -> Result<Self, RedisFilterError>
    where
        C: AsyncFilterConnection + ?Sized,
        F: Future<Output = Result<I, E>> + Send,
        I: IntoIterator + Send,
        I::Item: Key,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (state, created) = run_with_source(
            con,
            crate::protocol::build::OpenOrBuild::new(prefix, params, options, build)?,
            Some(source),
        )
        .await?;
        Ok(Self::from_state(prefix, state, created))
    }

    /// [`RedisFilter::rebuild`] for async code: `source` is awaited once every insert
    /// goes to both generations and the grace has passed.
    ///
    /// # Errors
    ///
    /// As [`RedisFilter::rebuild`].
    pub async fn rebuild<C, F, I, E>(
        &self,
        con: &mut C,
        params: Params,
        options: RebuildOptions,
        source: impl FnOnce() -> F + Send,
    ) -> Result<Rebuilt, RedisFilterError>
    where
        C: AsyncFilterConnection + ?Sized,
        F: Future<Output = Result<I, E>> + Send,
        I: IntoIterator + Send,
        I::Item: Key,
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        run_with_source(
            con,
            crate::protocol::rebuild::Rebuild::new(&self.shared, params, options),
            Some(source),
        )
        .await
    }
}

/// Runs an exchange on an async connection; a step that fills a filter awaits
/// `source` (once), and fails without one.
async fn run_with_source<X, C, S, F, I, E>(
    con: &mut C,
    exchange: X,
    mut source: Option<S>,
) -> Result<X::Output, RedisFilterError>
where
    X: crate::protocol::exchange::Exchange + Send,
    C: AsyncFilterConnection + ?Sized,
    S: FnOnce() -> F + Send,
    F: Future<Output = Result<I, E>> + Send,
    I: IntoIterator + Send,
    I::Item: Key,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    crate::protocol::exchange::drive!(
        exchange,
        |cmds| con.run(cmds).await,
        |d| tokio::time::sleep(d).await,
        |f| match source.take() {
            Some(source) => source()
                .await
                .map(|keys| crate::front::fill(f, keys))
                .map_err(Into::into),
            None => Err(crate::front::no_source()),
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_group_by_the_slot_of_their_first_key() {
        let mut get = redis::cmd("GET");
        get.arg("p:{1.ab:0}");
        assert_eq!(first_key(&get).map(hash_tag), Some(&b"1.ab:0"[..]));
        let mut script = redis::cmd("EVALSHA");
        script
            .arg("sha")
            .arg(2)
            .arg("p:{1.ab:3}")
            .arg("p:{1.ab:3}:n")
            .arg("x");
        assert_eq!(first_key(&script).map(hash_tag), Some(&b"1.ab:3"[..]));
        let mut none = redis::cmd("EVALSHA");
        none.arg("sha").arg(0).arg("x");
        assert_eq!(first_key(&none), None);
        assert_eq!(first_key(&redis::cmd("TIME")), None);
        assert_eq!(hash_tag(b"p:meta"), b"p:meta");
        assert_eq!(hash_tag(b"a{}b"), b"a{}b");
    }
}
