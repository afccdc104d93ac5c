//! `lab`: the linebloom laboratory's command line.
//!
//! ```text
//! lab list
//! lab run <experiment>... [--scale quick|full|tiny] [--out target/lab/] [--seed N] [--kernel K]
//! lab plot <experiment>... [--out target/lab/]
//! lab report [--scale quick|full|tiny] [--out results/] [--seed N] [--kernel K] [--no-run]
//! lab size --n N --p P
//! ```
//!
//! Only `lab report` writes `results/` (the committed reference run) by default; `run`
//! and `plot` write to the scratch folder `target/lab/` unless `--out` says otherwise,
//! so a smoke test cannot change the committed results. A `run` pointed at a report's
//! folder says which report it makes stale.

use clap::{Parser, Subcommand};
use linebloom_lab::experiments::{REGISTRY, find};
use linebloom_lab::{Ctx, Scale, report};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lab",
    about = "The linebloom laboratory: measurements, plots and a report"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
struct RunArgs {
    /// Run size.
    #[arg(long, value_enum, default_value_t = Scale::Quick)]
    scale: Scale,
    /// Results folder [default: target/lab for `run`, results for `report`].
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
    /// Redis server for the penetration experiment's Redis schemes (redis://127.0.0.1:PORT).
    #[arg(long, conflicts_with = "redis_cluster")]
    redis: Option<String>,
    /// A Redis Cluster for those schemes instead: one or more node URLs, comma-separated
    /// (the filter is sharded over the nodes).
    #[arg(long, value_delimiter = ',')]
    redis_cluster: Vec<String>,
    /// Prefix of every key the lab creates in that Redis; they are all removed at the
    /// end, and a prefix that already has keys is refused [default: linebloom:<run id>:].
    #[arg(long)]
    redis_prefix: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// List the experiments.
    List,
    /// Run experiments: write data.csv, meta.json and the plots.
    Run {
        /// Experiment names (see `lab list`).
        #[arg(required = true)]
        names: Vec<String>,
        #[command(flatten)]
        args: RunArgs,
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
    /// The seeds' n/m/k table for one capacity and rate: each scheme's bits, k, bits per
    /// key and predicted rate (the `sizing_table` experiment measures them).
    Size {
        /// Keys the filter must hold.
        #[arg(long)]
        n: u64,
        /// Target false-positive rate, in (0, 1).
        #[arg(long)]
        p: f64,
    },
    /// Run every experiment that needs no server and write results/REPORT.md.
    Report {
        #[command(flatten)]
        args: RunArgs,
        /// Only rebuild plots and REPORT.md from the CSVs already there.
        #[arg(long)]
        no_run: bool,
    },
}

/// Where `lab run` and `lab plot` write unless told otherwise.
const SCRATCH: &str = "target/lab";
/// Where `lab report` writes unless told otherwise: the committed reference run.
const REFERENCE: &str = "results";

fn ctx(args: &RunArgs, default_out: &str) -> anyhow::Result<Ctx> {
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
        redis: args.redis.clone(),
        redis_cluster: args.redis_cluster.clone(),
        redis_prefix: args.redis_prefix.clone(),
    })
}

fn main_inner() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::List => {
            for e in REGISTRY {
                println!(
                    "{:<14} {}{}",
                    e.name,
                    e.about,
                    if e.needs_server {
                        " (needs --redis)"
                    } else {
                        ""
                    }
                );
            }
        }
        Command::Run { names, args } => {
            let experiments = names
                .iter()
                .map(|n| find(n))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let ctx = ctx(&args, SCRATCH)?;
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
            for e in experiments {
                report::run_one(&ctx, e)?;
            }
        }
        Command::Plot { names, out } => {
            let experiments = names
                .iter()
                .map(|n| find(n))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let ctx = Ctx {
                out,
                scale: Scale::Quick,
                seed: 0,
                kernel: linebloom::arch::detect(),
                progress: false,
                redis: None,
                redis_cluster: Vec::new(),
                redis_prefix: None,
            };
            for e in experiments {
                (e.plot)(&ctx)?;
                println!("drew {}", ctx.out.join(e.name).join("plot.svg").display());
            }
        }
        Command::Size { n, p } => {
            let rows = linebloom_lab::experiments::sizing_table::rows_for(n, p)?;
            print!("{}", linebloom_lab::experiments::sizing_table::table(&rows));
        }
        Command::Report { args, no_run } => report::report(&ctx(&args, REFERENCE)?, !no_run)?,
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
