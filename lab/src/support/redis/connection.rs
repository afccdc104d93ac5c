//! Connections to the Redis deployment the Redis defences run against: one server or a
//! Redis Cluster ([`RedisTarget`]), each with a clear error, and whether the server has
//! the RedisBloom module.

use crate::Ctx;
use linebloom_redis_client::FilterConnection;
use std::time::Duration;

/// A connection the Redis defences use: the filter's pipelines
/// ([`FilterConnection`]), and single commands of the lab's own (the cache,
/// RedisBloom, the classic filter).
pub trait RedisConnection: FilterConnection + Send {
    /// The connection for single commands (a cluster routes each by key).
    fn commands(&mut self) -> &mut dyn redis::ConnectionLike;
}

impl RedisConnection for redis::Connection {
    fn commands(&mut self) -> &mut dyn redis::ConnectionLike {
        self
    }
}

impl RedisConnection for redis::cluster::ClusterConnection {
    fn commands(&mut self) -> &mut dyn redis::ConnectionLike {
        self
    }
}

/// A boxed [`RedisConnection`], one server or a cluster.
pub type Con = Box<dyn RedisConnection>;

/// Runs `cmds` as one pipeline; the first error reply fails it.
pub fn run_all(
    con: &mut dyn RedisConnection,
    cmds: &[redis::Cmd],
) -> anyhow::Result<Vec<redis::Value>> {
    con.run(cmds)?
        .into_iter()
        .map(|reply| reply.map_err(Into::into))
        .collect()
}

/// Connects to `url`, with a clear error.
pub fn connect(url: &str) -> anyhow::Result<redis::Connection> {
    let client =
        redis::Client::open(url).map_err(|e| anyhow::anyhow!("bad Redis URL {url}: {e}"))?;
    client
        .get_connection_with_timeout(Duration::from_secs(3))
        .map_err(|e| anyhow::anyhow!("cannot connect to Redis at {url}: {e}"))
}

/// The Redis deployment the Redis defences run against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedisTarget {
    /// One server (`--redis URL`).
    Single(String),
    /// A Redis Cluster, from one or more of its nodes' URLs (`--redis-cluster URL,…`).
    Cluster(Vec<String>),
}

impl RedisTarget {
    /// The target `ctx` names, if any (`--redis-cluster` wins over `--redis`).
    pub fn of(ctx: &Ctx) -> Option<RedisTarget> {
        if !ctx.redis_cluster.is_empty() {
            Some(RedisTarget::Cluster(ctx.redis_cluster.clone()))
        } else {
            ctx.redis.clone().map(RedisTarget::Single)
        }
    }

    /// A new connection, with a clear error.
    pub fn connect(&self) -> anyhow::Result<Con> {
        Ok(match self {
            RedisTarget::Single(url) => Box::new(connect(url)?),
            RedisTarget::Cluster(urls) => Box::new(connect_cluster(urls)?),
        })
    }

    /// The cache's name in the CSV.
    pub fn label(&self) -> &'static str {
        match self {
            RedisTarget::Single(_) => "redis",
            RedisTarget::Cluster(_) => "redis-cluster",
        }
    }
}

impl std::fmt::Display for RedisTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RedisTarget::Single(url) => write!(f, "the server at {url}"),
            RedisTarget::Cluster(urls) => write!(f, "the cluster at {}", urls.join(",")),
        }
    }
}

/// Connects to a Redis Cluster through any of its nodes, with a clear error. A node
/// that dies mid-run costs a short wait, not the default retries: its keys' requests
/// then count as degraded.
pub fn connect_cluster(urls: &[String]) -> anyhow::Result<redis::cluster::ClusterConnection> {
    redis::cluster::ClusterClient::builder(urls.to_vec())
        .retries(1)
        .min_retry_wait(10)
        .max_retry_wait(100)
        .connection_timeout(Duration::from_secs(3))
        .build()
        .map_err(|e| anyhow::anyhow!("bad Redis Cluster URLs {}: {e}", urls.join(",")))?
        .get_connection()
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot connect to the Redis Cluster at {}: {e}",
                urls.join(",")
            )
        })
}

/// Who answers RedisBloom's commands in a server: RedisBloom itself (`MODULE LIST`
/// names `bf`), and the linebloom module with the prefix of its `BF.*` and `CF.*`
/// commands: none when it is loaded alone, `linebloom.` beside RedisBloom (its
/// `NAMESPACE linebloom`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BloomModules {
    /// RedisBloom is loaded.
    pub redisbloom: bool,
    /// The linebloom module is loaded and answers its drop-in commands under this
    /// prefix (`""` or `"linebloom."`); `None` when it is not loaded, or loaded under
    /// another namespace.
    pub linebloom: Option<String>,
}

/// The modules of the server at `con` ([`BloomModules`]), from `MODULE LIST` and
/// `COMMAND INFO`; none where the server refuses to say.
pub fn bloom_modules(con: &mut dyn redis::ConnectionLike) -> BloomModules {
    let names: Vec<String> = redis::cmd("MODULE")
        .arg("LIST")
        .query::<Vec<std::collections::HashMap<String, redis::Value>>>(con)
        .map(|list| {
            list.into_iter()
                .filter_map(|m| redis::from_redis_value_ref::<String>(m.get("name")?).ok())
                .collect()
        })
        .unwrap_or_default();
    let redisbloom = names.iter().any(|n| n == "bf");
    let answers = |con: &mut dyn redis::ConnectionLike, command: &str| {
        redis::cmd("COMMAND")
            .arg("INFO")
            .arg(command)
            .query::<Vec<redis::Value>>(con)
            .is_ok_and(|v| v.first().is_some_and(|c| *c != redis::Value::Nil))
    };
    let linebloom = names.iter().any(|n| n == "linebloom").then(|| {
        if answers(con, "linebloom.BF.ADD") {
            Some("linebloom.".to_string())
        } else if !redisbloom && answers(con, "BF.ADD") {
            Some(String::new())
        } else {
            None
        }
    });
    BloomModules {
        redisbloom,
        linebloom: linebloom.flatten(),
    }
}
