//! The linebloom module's `BF.*` and `CF.*` against RedisBloom's, command by command,
//! with `redis-benchmark` (the load tool that ships with Redis) driving both alike, and
//! their memory per item and measured false-positive rates.
//!
//! ```text
//! cargo build --release --manifest-path lab/redis-module/Cargo.toml --target-dir target
//! LINEBLOOM_REDISBLOOM_SO=/path/to/redisbloom.so \
//!     cargo run --release -p linebloom-benches --bin redis_dropin -- --items 1000000,100000000
//! ```
//!
//! Method:
//!
//! * Three `redis-server`s on loopback, each loading one module under RedisBloom's
//!   command names: the linebloom module, RedisBloom, and RedisBloom again as the
//!   control (its ratio to the first RedisBloom is the noise floor). Every server is
//!   pinned to core 1 and `redis-benchmark` to core 0 (`taskset`); one server is under
//!   load at a time.
//! * Per size `n`: each server holds `bf` (`BF.RESERVE bf 0.01 n`) and `cf`
//!   (`CF.RESERVE cf n`), each filled with the `n` members `m:000000000000`, … (the
//!   12-digit form of `redis-benchmark`'s `__rand_int__`). The memory per item is
//!   `MEMORY USAGE` over `n`; the false-positive rate is measured on 10⁶ non-members.
//! * Lookups (`-r n`) draw members or non-members of the full filters. Inserts go into
//!   filters reserved fresh for each round at `max(n, 2·requests)` items, so that the
//!   size is `n`'s and no filter grows: `BF.ADD` and `CF.ADD` of `requests` random new
//!   items, then `CF.DEL` of as many from those just added (`-r requests`).
//! * `-P 32`, `requests` commands a run (batched commands carry 100 items each, for as
//!   many items), 5 or more rounds, the three servers in an order that rotates every
//!   round. The table gives the median requests per second over rounds, the median of
//!   the per-round ratios (linebloom over RedisBloom: above 1 is faster) and the
//!   control's range.

use anyhow::{Context, Result, bail, ensure};
use clap::Parser;
use linebloom_lab::support::stats::summary;
use linebloom_lab::support::timing::round_order;
use linebloom_redis_testing::{free_port, module_library, redisbloom_library};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Parser)]
struct Args {
    /// Filter sizes `n`, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000000")]
    items: Vec<u64>,
    /// Rounds per size.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Commands per `redis-benchmark` run (of single items; batched runs send a
    /// hundredth as many commands of 100 items).
    #[arg(long, default_value_t = 2_000_000)]
    requests: u64,
    /// Non-members probed for the false-positive rate.
    #[arg(long, default_value_t = 1_000_000)]
    probes: u64,
}

/// A `redis-server` with one module, pinned to core 1.
struct Contender {
    name: &'static str,
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Contender {
    fn start(name: &'static str, module: &Path) -> Result<Contender> {
        let dir = tempfile::tempdir()?;
        let port = free_port();
        let child = Command::new("taskset")
            .args([
                "-c",
                "1",
                "redis-server",
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(dir.path())
            .arg("--loadmodule")
            .arg(module)
            .stdout(Stdio::null())
            .spawn()
            .context("start redis-server under taskset")?;
        let c = Contender {
            name,
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while c.connect().is_err() {
            ensure!(Instant::now() < deadline, "{name}'s server did not answer");
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(c)
    }

    fn connect(&self) -> redis::RedisResult<redis::Connection> {
        redis::Client::open(format!("redis://127.0.0.1:{}/", self.port))?.get_connection()
    }
}

impl Drop for Contender {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The 12-digit member `i` of a prefix, as `redis-benchmark` writes `__rand_int__`.
fn item(prefix: &str, i: u64) -> String {
    format!("{prefix}:{i:012}")
}

/// Inserts members `0..n` into `bf` and `cf`, in pipelined batches of 1,000.
fn fill(con: &mut redis::Connection, n: u64) -> Result<()> {
    let mut start = 0;
    while start < n {
        let mut pipe = redis::pipe();
        for _ in 0..20 {
            if start >= n {
                break;
            }
            let batch: Vec<String> = (start..(start + 1000).min(n))
                .map(|i| item("m", i))
                .collect();
            pipe.cmd("BF.MADD").arg("bf").arg(&batch).ignore();
            pipe.cmd("CF.INSERT")
                .arg("cf")
                .arg("ITEMS")
                .arg(&batch)
                .ignore();
            start += 1000;
        }
        pipe.query::<()>(con)?;
    }
    Ok(())
}

/// Positives among `probes` non-members of `key` (`BF` or `CF`).
fn false_positives(con: &mut redis::Connection, kind: &str, key: &str, probes: u64) -> Result<u64> {
    let mut positives = 0;
    let mut start = 0;
    while start < probes {
        let batch: Vec<String> = (start..(start + 1000).min(probes))
            .map(|i| item("x", i))
            .collect();
        let r: Vec<i64> = redis::cmd(&format!("{kind}.MEXISTS"))
            .arg(key)
            .arg(&batch)
            .query(con)?;
        positives += r.iter().sum::<i64>() as u64;
        start += 1000;
    }
    Ok(positives)
}

/// One `redis-benchmark` workload.
struct Workload {
    name: &'static str,
    /// The command after `redis-benchmark`'s options.
    command: Vec<String>,
    /// `-r`.
    range: u64,
    /// Commands in a run.
    requests: u64,
    /// Commands that make the run's fresh keys, before it.
    setup: Vec<String>,
}

fn workloads(n: u64, requests: u64) -> Vec<Workload> {
    let fresh = n.max(2 * requests);
    let batch = |cmd: &str, key: &str, prefix: &str| {
        let mut c = vec![cmd.to_string(), key.to_string()];
        c.extend((0..100).map(|_| format!("{prefix}:__rand_int__")));
        c
    };
    let line = |s: &str| s.split(' ').map(str::to_string).collect::<Vec<_>>();
    vec![
        Workload {
            name: "BF.ADD (new items)",
            command: line("BF.ADD bfadd a:__rand_int__"),
            range: requests,
            requests,
            setup: vec![
                format!("DEL bfadd"),
                format!("BF.RESERVE bfadd 0.01 {fresh}"),
            ],
        },
        Workload {
            name: "BF.EXISTS (members)",
            command: line("BF.EXISTS bf m:__rand_int__"),
            range: n,
            requests,
            setup: vec![],
        },
        Workload {
            name: "BF.EXISTS (non-members)",
            command: line("BF.EXISTS bf x:__rand_int__"),
            range: n,
            requests,
            setup: vec![],
        },
        Workload {
            name: "BF.MADD of 100 (new items)",
            command: batch("BF.MADD", "bfmadd", "b"),
            range: requests,
            requests: requests / 100,
            setup: vec![
                format!("DEL bfmadd"),
                format!("BF.RESERVE bfmadd 0.01 {fresh}"),
            ],
        },
        Workload {
            name: "BF.MEXISTS of 100 (members)",
            command: batch("BF.MEXISTS", "bf", "m"),
            range: n,
            requests: requests / 100,
            setup: vec![],
        },
        Workload {
            name: "CF.ADD (new items)",
            command: line("CF.ADD cfadd a:__rand_int__"),
            range: requests,
            requests,
            setup: vec![format!("DEL cfadd"), format!("CF.RESERVE cfadd {fresh}")],
        },
        Workload {
            name: "CF.EXISTS (members)",
            command: line("CF.EXISTS cf m:__rand_int__"),
            range: n,
            requests,
            setup: vec![],
        },
        Workload {
            name: "CF.DEL (items just added)",
            command: line("CF.DEL cfadd a:__rand_int__"),
            range: requests,
            requests,
            setup: vec![],
        },
    ]
}

/// Requests per second of one `redis-benchmark` run, from its CSV line.
fn run_benchmark(port: u16, w: &Workload) -> Result<f64> {
    let out = Command::new("taskset")
        .args([
            "-c",
            "0",
            "redis-benchmark",
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ])
        .args([
            "-n",
            &w.requests.to_string(),
            "-P",
            "32",
            "-r",
            &w.range.to_string(),
            "--csv",
        ])
        .args(&w.command)
        .output()
        .context("run redis-benchmark under taskset")?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_default();
    let rps = line
        .split(',')
        .nth(1)
        .map(|f| f.trim_matches('"').parse::<f64>());
    match rps {
        Some(Ok(rps)) if out.status.success() => Ok(rps),
        _ => bail!(
            "redis-benchmark: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    for tool in ["redis-server", "redis-benchmark", "taskset"] {
        ensure!(
            Command::new(tool).arg("--version").output().is_ok(),
            "{tool} is missing (apt-get install redis-server redis-tools util-linux)"
        );
    }
    let linebloom: PathBuf = module_library().context(
        "the linebloom module is not built (cargo build --release --manifest-path \
         lab/redis-module/Cargo.toml --target-dir target)",
    )?;
    let redisbloom = redisbloom_library()
        .context("set LINEBLOOM_REDISBLOOM_SO to RedisBloom's redisbloom.so")?;
    println!(
        "cpu: {}; commit {}",
        linebloom_lab::support::provenance::cpu_model(),
        linebloom_lab::support::provenance::commit()
    );
    for &n in &args.items {
        eprintln!("n = {n}: starting servers, filling bf and cf with {n} members each");
        let contenders = [
            Contender::start("linebloom", &linebloom)?,
            Contender::start("RedisBloom", &redisbloom)?,
            Contender::start("RedisBloom (control)", &redisbloom)?,
        ];
        let mut memory = Vec::new();
        for c in &contenders {
            let mut con = c.connect()?;
            redis::cmd("BF.RESERVE")
                .arg("bf")
                .arg(0.01)
                .arg(n)
                .query::<()>(&mut con)?;
            redis::cmd("CF.RESERVE")
                .arg("cf")
                .arg(n)
                .query::<()>(&mut con)?;
            let started = Instant::now();
            fill(&mut con, n)?;
            eprintln!(
                "  {}: filled in {:.1} s",
                c.name,
                started.elapsed().as_secs_f64()
            );
            let mut row = Vec::new();
            for (kind, key) in [("BF", "bf"), ("CF", "cf")] {
                let bytes: u64 = redis::cmd("MEMORY").arg("USAGE").arg(key).query(&mut con)?;
                let fp = false_positives(&mut con, kind, key, args.probes)?;
                row.push((
                    bytes as f64 * 8.0 / n as f64,
                    fp as f64 / args.probes as f64,
                ));
            }
            memory.push(row);
        }
        let list = workloads(n, args.requests);
        let mut rps = vec![vec![Vec::new(); contenders.len()]; list.len()];
        for round in 0..args.rounds {
            eprintln!("  round {} of {}", round + 1, args.rounds);
            for (wi, w) in list.iter().enumerate() {
                for ci in round_order(round, contenders.len()) {
                    let c = &contenders[ci];
                    let mut con = c.connect()?;
                    for s in &w.setup {
                        let mut parts = s.split(' ');
                        let mut cmd = redis::cmd(parts.next().unwrap_or_default());
                        for p in parts {
                            cmd.arg(p);
                        }
                        cmd.query::<redis::Value>(&mut con)?;
                    }
                    rps[wi][ci].push(run_benchmark(c.port, w)?);
                }
            }
        }
        println!(
            "\n### {n} items, 1% error rate ({} rounds, -P 32)\n",
            args.rounds
        );
        println!("| command | linebloom (req/s) | RedisBloom (req/s) | ratio | control |");
        println!("|---|---:|---:|---:|---:|");
        for (w, samples) in list.iter().zip(&rps) {
            let ratio: Vec<f64> = samples[0]
                .iter()
                .zip(&samples[1])
                .map(|(a, b)| a / b)
                .collect();
            let control: Vec<f64> = samples[2]
                .iter()
                .zip(&samples[1])
                .map(|(a, b)| a / b)
                .collect();
            let (ours, theirs) = (summary(&samples[0]).0, summary(&samples[1]).0);
            let (_, c_lo, c_hi) = summary(&control);
            let items = if w.name.contains("of 100") {
                100.0
            } else {
                1.0
            };
            println!(
                "| {} | {:.0}{} | {:.0} | {:.2} | {:.2}–{:.2} |",
                w.name,
                ours,
                if items > 1.0 {
                    format!(" ({:.1} M items/s)", ours * items / 1e6)
                } else {
                    String::new()
                },
                theirs,
                summary(&ratio).0,
                c_lo,
                c_hi
            );
        }
        println!(
            "\n| filter | linebloom bits/item | measured rate | RedisBloom bits/item | measured rate |"
        );
        println!("|---|---:|---:|---:|---:|");
        for (k, name) in ["BF (bf.reserve 0.01 n)", "CF (cf.reserve n)"]
            .iter()
            .enumerate()
        {
            let (ob, of) = memory[0][k];
            let (rb, rf) = memory[1][k];
            println!(
                "| {name} | {ob:.2} | {:.3}% | {rb:.2} | {:.3}% |",
                of * 100.0,
                rf * 100.0
            );
        }
    }
    Ok(())
}
