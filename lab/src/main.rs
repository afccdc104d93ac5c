//! `lab`: the linebloom laboratory's command line.
//!
//! ```text
//! lab list
//! lab run (<experiment>... | --all) [--scale test|preview|reference|full] [--out target/lab/] [--seed N] [--kernel K]
//! lab plot <experiment>... [--out target/lab/]
//! lab report [--scale test|preview|reference|full] [--out target/lab/report/] [--seed N] [--kernel K] [--no-run]
//! lab size -n N -p P
//! lab live [--port 8080] [--duration 10m] [--seed N] [--redis URL | --redis-cluster URL,…]
//! ```
//!
//! Nothing writes into the repository's tracked files unless told to: `run` and `plot`
//! write to the scratch folder `target/lab/`, `report` to `target/lab/report/`, unless
//! `--out` says otherwise. The committed reference run is `lab report --scale reference
//! --out results`. A `run` pointed at a report's folder says which report it makes
//! stale.

use clap::{Parser, Subcommand};
use linebloom_lab::drivers::registry::{REGISTRY, find};
use linebloom_lab::drivers::report;
use linebloom_lab::support::experiment::Outcome;
use linebloom_lab::{Ctx, Scale};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lab",
    version,
    about = "The linebloom laboratory: measurements, plots and a report"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The options of every command that measures.
#[derive(clap::Args, Clone)]
struct MeasureArgs {
    /// Run size: test (seconds, for the lab's tests), preview (the default, about a
    /// minute for a report), reference (the reference run), full.
    #[arg(long, value_enum, default_value_t = Scale::Preview)]
    scale: Scale,
    /// Results folder [default: target/lab for `run`, target/lab/report for `report`].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seed for every RNG.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// linebloom kernel to measure where one is used (default: the detected one).
    #[arg(long)]
    kernel: Option<String>,
    /// Hide progress bars.
    #[arg(long)]
    no_progress: bool,
}

/// Where the Redis defences of the penetration scenario run.
#[derive(clap::Args, Clone, Default)]
struct RedisArgs {
    /// Redis server for the penetration experiment's Redis defences (redis://127.0.0.1:PORT).
    #[arg(long, conflicts_with = "redis_cluster")]
    redis: Option<String>,
    /// A Redis Cluster for those defences instead: one or more node URLs, comma-separated
    /// (the filter is sharded over the nodes).
    #[arg(long, value_delimiter = ',')]
    redis_cluster: Vec<String>,
    /// Prefix of every key the lab creates in that Redis; they are all removed at the
    /// end, and a prefix that already has keys is refused (default: "linebloom:", the
    /// run's id and ":").
    #[arg(long)]
    redis_prefix: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// List the experiments.
    List,
    /// Run experiments: write data.csv, provenance.json and the plots.
    Run {
        /// Experiment names (see `lab list`).
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        names: Vec<String>,
        /// Every experiment, in the report's order (without writing REPORT.md).
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        args: MeasureArgs,
        #[command(flatten)]
        redis: RedisArgs,
    },
    /// Redraw plots from existing CSVs, without rerunning.
    Plot {
        /// Experiment names.
        #[arg(required = true)]
        names: Vec<String>,
        /// Results folder.
        #[arg(long, default_value = SCRATCH)]
        out: PathBuf,
    },
    /// Each sizing recipe's bits m and hash count k for one capacity n and rate p, with
    /// bits per key and predicted rate (the `sizing_table` experiment measures them).
    Size {
        /// Keys the filter must hold.
        #[arg(short = 'n', long = "keys", alias = "n")]
        n: u64,
        /// Target false-positive rate, in (0, 1).
        #[arg(short = 'p', long = "fpr", alias = "p")]
        p: f64,
    },
    /// The penetration scenario running live, in a browser page on 127.0.0.1: every
    /// defence at once on the same traffic, with controls. Runs until Ctrl-C or
    /// --duration, then removes its Redis keys.
    Live {
        /// Port on 127.0.0.1 (0 picks a free one).
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// Stop after this long (for example 90s or 10m) instead of at Ctrl-C.
        #[arg(long)]
        duration: Option<humantime::Duration>,
        /// Products in each defence's database.
        #[arg(long, default_value_t = 100_000)]
        products: u64,
        /// Requests per second per defence at the start.
        #[arg(long, default_value_t = 2000)]
        rate: u32,
        /// Share of requests for ids that do not exist at the start, 0..=1.
        #[arg(long, default_value_t = 0.0)]
        attack_share: f64,
        /// Seed of the traffic.
        #[arg(long, default_value_t = 42)]
        seed: u64,
        #[command(flatten)]
        redis: RedisArgs,
    },
    /// Run every experiment and write REPORT.md (target/lab/report/ unless --out). An
    /// experiment this machine cannot run gets a section that says what is missing.
    Report {
        #[command(flatten)]
        args: MeasureArgs,
        #[command(flatten)]
        redis: RedisArgs,
        /// Only rebuild plots and REPORT.md from the CSVs already there.
        #[arg(long)]
        no_run: bool,
    },
}

/// Where `lab run` and `lab plot` write unless told otherwise.
const SCRATCH: &str = "target/lab";
/// Where `lab report` writes unless told otherwise (the committed reference run is
/// `--out results`).
const REPORT: &str = "target/lab/report";

fn ctx(args: &MeasureArgs, redis: &RedisArgs, default_out: &str) -> anyhow::Result<Ctx> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(default_out));
    let kernel = match &args.kernel {
        None => linebloom::arch::detect(),
        Some(name) => linebloom::arch::by_name(name).ok_or_else(|| {
            let names: Vec<&str> = linebloom::arch::available().map(|k| k.name).collect();
            anyhow::anyhow!(
                "kernel {name:?} is not available on this CPU; available: {}",
                names.join(", ")
            )
        })?,
    };
    std::fs::create_dir_all(&out)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", out.display()))?;
    Ok(Ctx {
        out,
        scale: args.scale,
        seed: args.seed,
        kernel,
        progress: !args.no_progress,
        redis: redis.redis.clone(),
        redis_cluster: redis.redis_cluster.clone(),
        redis_prefix: redis.redis_prefix.clone(),
    })
}

fn main_inner() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::List => {
            for e in REGISTRY {
                println!("{:<18} {}", e.name, e.about);
            }
        }
        Command::Run {
            names,
            all,
            args,
            redis,
        } => {
            let names: Vec<String> = if all {
                REGISTRY.iter().map(|e| e.name.to_string()).collect()
            } else {
                names
            };
            let experiments = names
                .iter()
                .map(|n| find(n))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let ctx = ctx(&args, &redis, SCRATCH)?;
            let report = ctx.out.join("REPORT.md");
            if report.exists() {
                eprintln!(
                    "note: {} belongs to a report; this run replaces its CSVs and plots for {}, \
                     and REPORT.md will not match them until `lab report --no-run --out {}`",
                    ctx.out.display(),
                    names.join(", "),
                    ctx.out.display()
                );
            }
            // As in a report: one that cannot run here is skipped with what it needs,
            // and the command fails only when one failed.
            let mut failed = Vec::new();
            for e in experiments {
                if let Outcome::Failed(why) = e.run_recorded(&ctx)? {
                    failed.push(format!("{}: {why}", e.name));
                }
            }
            anyhow::ensure!(failed.is_empty(), "{}", failed.join("\n"));
        }
        Command::Plot { names, out } => {
            let experiments = names
                .iter()
                .map(|n| find(n))
                .collect::<anyhow::Result<Vec<_>>>()?;
            for e in experiments {
                e.plot(&out)?;
                println!("drew the plots in {}", out.join(e.name).display());
            }
        }
        Command::Size { n, p } => {
            let rows = linebloom_lab::experiments::sizing_table::rows_for(n, p)?;
            print!("{}", linebloom_lab::experiments::sizing_table::table(&rows));
        }
        Command::Live {
            port,
            duration,
            products,
            rate,
            attack_share,
            seed,
            redis,
        } => {
            // The live view measures nothing into a folder: the default scale, the
            // detected kernel and the scratch folder are never read.
            let args = MeasureArgs {
                scale: Scale::Preview,
                out: None,
                seed,
                kernel: None,
                no_progress: true,
            };
            let ctx = ctx(&args, &redis, SCRATCH)?;
            let controls = linebloom_lab::drivers::live::engine::Controls {
                attack_share,
                rate,
                paused: false,
            };
            linebloom_lab::drivers::live::engine::ControlRequest {
                attack_share: Some(attack_share),
                rate: Some(rate),
                ..Default::default()
            }
            .validate()
            .map_err(|e| anyhow::anyhow!(e))?;
            anyhow::ensure!(products >= 2, "--products must be at least 2");
            let options = linebloom_lab::drivers::live::Options {
                port,
                duration: duration.map(Into::into),
                products,
                controls,
            };
            let running = linebloom_lab::drivers::live::start(&ctx, &options)?;
            println!("live view: {}", running.url());
            match options.duration {
                Some(d) => println!(
                    "   running for {}; Ctrl-C stops it sooner",
                    humantime::format_duration(d)
                ),
                None => println!("   Ctrl-C stops it"),
            }
            running.wait(options.duration);
            let removed = running.stop()?;
            if removed > 0 {
                println!("   removed this run's {removed} Redis keys");
            }
        }
        Command::Report {
            args,
            redis,
            no_run,
        } => report::report(&ctx(&args, &redis, REPORT)?, !no_run)?,
    }
    Ok(())
}

fn main() -> ExitCode {
    match main_inner() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
