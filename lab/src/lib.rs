//! # linebloom-lab
//!
//! The laboratory behind `lab`: experiments that measure linebloom and its rivals on
//! the same keys, write `results/<experiment>/data.csv` and `provenance.json`, draw
//! `plot.svg`/`plot.png` from the CSV alone, and assemble `results/REPORT.md`.
//!
//! The crate is grouped by role:
//! - [`support`]: the infrastructure (the experiment machinery, key streams, timing,
//!   statistics, CSV, run facts, plots, tables, progress bars);
//! - [`contenders`]: every filter the lab measures, behind one trait, and the contender
//!   table with each one's facts and recipe;
//! - [`experiments`]: one module per experiment (the penetration scenario among them);
//! - [`drivers`]: what runs them: [`drivers::registry::REGISTRY`] behind `lab run`,
//!   `lab plot` and `lab report`, the report, and the live page.
//!
//! Every number comes from a run of this code: nothing is typed in.
//!
//! The feature `experiments` (default) adds the experiments, the drivers, the plots and
//! the `lab` binary; without it the crate is its contenders and the support that times
//! them, which is what the benchmarks build (`redis` adds `support::redis`).

pub mod contenders;
#[cfg(feature = "experiments")]
pub mod drivers;
#[cfg(feature = "experiments")]
pub mod experiments;
pub mod support;

use std::path::{Path, PathBuf};

/// How big a run is, named by what it is for.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Seconds per experiment: for the lab's own tests.
    Test,
    /// The default, a first look: every experiment at sizes that keep the whole report
    /// to about a minute on a 2-core machine (fewer sizes, rounds and probes than
    /// `reference`).
    Preview,
    /// The reference run, about eight minutes (`results/REPORT.md` lists how long each
    /// experiment took).
    Reference,
    /// Larger sizes, more seeds and probes.
    Full,
}

impl Scale {
    /// Picks the value for this scale.
    pub fn pick<T>(self, test: T, preview: T, reference: T, full: T) -> T {
        match self {
            Scale::Test => test,
            Scale::Preview => preview,
            Scale::Reference => reference,
            Scale::Full => full,
        }
    }
}

impl std::fmt::Display for Scale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Scale::Test => "test",
            Scale::Preview => "preview",
            Scale::Reference => "reference",
            Scale::Full => "full",
        })
    }
}

/// What every experiment gets: where to write, how big, which seed and kernel.
#[derive(Clone, Debug)]
pub struct Ctx {
    /// The results folder (`results/` by default).
    pub out: PathBuf,
    /// Run size.
    pub scale: Scale,
    /// Seed for every RNG of the run.
    pub seed: u64,
    /// The linebloom kernel used where one kernel is measured.
    pub kernel: &'static linebloom::arch::Kernel,
    /// Show progress bars.
    pub progress: bool,
    /// Redis URL for the experiments that can use one (`--redis`).
    pub redis: Option<String>,
    /// Node URLs of a Redis Cluster to run the Redis defences on instead
    /// (`--redis-cluster`; empty: none).
    pub redis_cluster: Vec<String>,
    /// Prefix of every key the lab creates in that Redis (`--redis-prefix`); `None`
    /// picks `linebloom:<run id>:` (see `support::redis::namespace`).
    pub redis_prefix: Option<String>,
}

impl Ctx {
    /// A context for tests: test scale, seed 7, the detected kernel, no progress bars and
    /// no server, writing under `out`.
    pub fn tiny(out: PathBuf) -> Ctx {
        Ctx {
            out,
            scale: Scale::Test,
            seed: 7,
            kernel: linebloom::arch::detect(),
            progress: false,
            redis: None,
            redis_cluster: Vec::new(),
            redis_prefix: None,
        }
    }

    /// `results/<name>/`, created if needed.
    pub fn dir(&self, name: &str) -> anyhow::Result<PathBuf> {
        let d = self.out.join(name);
        std::fs::create_dir_all(&d).map_err(|e| {
            anyhow::anyhow!(
                "cannot create {}: {e} (is the folder writable?)",
                d.display()
            )
        })?;
        Ok(d)
    }
}

/// `path` relative to `base` where possible, for links in the report.
pub fn relative(path: &Path, base: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .display()
        .to_string()
}
