//! `lab live`: the penetration scenario running, watched and steered from a browser.
//!
//! It loads every defence of [`crate::experiments::penetration`] (with `--redis` or `--redis-cluster`
//! the Redis defences too, under the run's key prefix), runs them all at once on the
//! same traffic ([`engine`]), and serves one page on 127.0.0.1 ([`server`]) with the
//! pipeline, live curves over a 5-minute window, the defence comparison, the capacity
//! monitor with its heat map, and the controls. It runs until Ctrl-C or `--duration`,
//! then stops the threads and removes its Redis keys.

pub mod engine;
pub mod server;

use crate::Ctx;
use crate::experiments::penetration::db::Db;
use crate::experiments::penetration::{self, RedisTarget};
use crate::support::redis::namespace::Namespace;
use engine::{Controls, Live};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// How a live run starts.
#[derive(Clone, Debug)]
pub struct Options {
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// Stop after this long; `None`: at Ctrl-C.
    pub duration: Option<Duration>,
    /// Products in each database.
    pub products: u64,
    /// The controls at the start.
    pub controls: Controls,
}

/// A running live view: its address, shared state and threads.
pub struct Running {
    /// Where the page is served.
    pub addr: SocketAddr,
    /// The shared state (controls, history).
    pub live: Arc<Live>,
    threads: Vec<std::thread::JoinHandle<()>>,
    runtime: tokio::runtime::Runtime,
    namespace: Option<Namespace>,
    work: std::path::PathBuf,
}

impl Running {
    /// The page's URL.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Waits for Ctrl-C or `duration`, whichever comes first.
    pub fn wait(&self, duration: Option<Duration>) {
        self.runtime.block_on(async {
            let forever = async {
                match duration {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => eprintln!("\n   Ctrl-C: stopping"),
                _ = forever => {}
            }
        });
    }

    /// Stops the pipeline threads and the server, and removes the run's Redis keys and
    /// databases; returns how many Redis keys were removed.
    pub fn stop(mut self) -> anyhow::Result<usize> {
        self.live.stop();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let removed = match self.namespace.take() {
            Some(mut ns) => ns.clear()?,
            None => 0,
        };
        let _ = std::fs::remove_dir_all(&self.work);
        Ok(removed)
    }
}

impl Drop for Running {
    /// A `Running` dropped without [`stop`](Running::stop) (an error or a panic) still
    /// stops its threads; its namespace's own `Drop` removes the Redis keys.
    fn drop(&mut self) {
        self.live.stop();
    }
}

/// Loads the defences, starts their threads and the server. A port in use is a clear
/// error, before anything is loaded.
pub fn start(ctx: &Ctx, options: &Options) -> anyhow::Result<Running> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", options.port)).map_err(|e| {
        anyhow::anyhow!(
            "cannot listen on 127.0.0.1:{}: {e} (is the port in use? --port 0 picks a free one)",
            options.port
        )
    })?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let target = RedisTarget::of(ctx);
    let namespace = match &target {
        Some(t) => {
            let prefix = ctx
                .redis_prefix
                .clone()
                .unwrap_or_else(Namespace::default_prefix);
            Some(Namespace::claim(t, &prefix)?)
        }
        None => None,
    };
    // One folder per run, also for several runs in one process (the tests).
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let work = std::env::temp_dir().join(format!("linebloom-live-{}-{run}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let template = work.join("template.sqlite");
    eprintln!("   loading {} products into SQLite", options.products);
    drop(Db::create(&template, options.products)?);
    let fresh_db = |name: &str| -> anyhow::Result<Db> {
        let p = work.join(format!("{name}.sqlite"));
        std::fs::copy(&template, &p)?;
        Db::open(&p)
    };
    let redis = target.as_ref().zip(namespace.as_ref());
    let scenarios = penetration::defences(ctx, redis, options.products, &fresh_db)?;
    let names: Vec<String> = scenarios.iter().map(|s| s.defence().to_string()).collect();
    let live = Live::new(&names, options.controls);
    let threads = engine::spawn(&live, scenarios);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let app = server::router(Arc::clone(&live));
    runtime.spawn(async move {
        match tokio::net::TcpListener::from_std(listener) {
            Ok(l) => {
                if let Err(e) = axum::serve(l, app).await {
                    eprintln!("warning: the live view's server stopped: {e}");
                }
            }
            Err(e) => eprintln!("warning: cannot serve the live view: {e}"),
        }
    });
    Ok(Running {
        addr,
        live,
        threads,
        runtime,
        namespace,
        work,
    })
}
