//! The experiment machinery: the [`Experiment`] trait each experiment implements, the
//! [`Run`] its plot and summary read, and [`Registered`], the type-erased entry that
//! owns the CSV, `provenance.json` and how a run ended ([`Outcome`]). It names no experiment:
//! `crate::drivers::registry` lists them.
//!
//! Each experiment implements [`Experiment`] for one unit type: `measure` returns typed
//! rows, and `plot` (draw `plot.svg`/`plot.png`) and `summary` (the report's table and
//! findings) take the rows read back from `data.csv`.

use crate::Ctx;
use crate::support::csvio;
use crate::support::provenance::Provenance;
use serde::{Serialize, de::DeserializeOwned};
use std::path::{Path, PathBuf};

/// Why an experiment cannot run on this machine: what is missing, and the command that
/// adds it. An experiment's `measure` returns it (inside its `anyhow::Error`) before it
/// measures anything; `lab report` then writes a section that says so instead of
/// failing, and `lab run` names what to install.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    /// What this machine lacks, for example "the Rust target thumbv7em-none-eabihf".
    pub missing: String,
    /// The command that adds it.
    pub install: String,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "needs {} (`{}`)", self.missing, self.install)
    }
}

impl std::error::Error for Unavailable {}

/// How one experiment of a run ended, as `lab report` records it in the experiment's
/// folder (`skipped.txt`, `failed.txt`) and states in REPORT.md.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// It ran and wrote its results, in this many seconds.
    Ran(f64),
    /// It could not run on this machine.
    Skipped(Unavailable),
    /// It failed, for this reason.
    Failed(String),
}

/// The file in an experiment's folder that says it was skipped.
const SKIPPED: &str = "skipped.txt";
/// The file in an experiment's folder that says it failed.
const FAILED: &str = "failed.txt";

/// What an experiment contributes to `REPORT.md`.
pub struct Summary {
    /// A Markdown table of the headline numbers.
    pub table: String,
    /// What the plot shows, in two sentences.
    pub caption: String,
    /// Where linebloom does not lead (or "—"), stated plainly.
    pub not_leading: String,
}

/// One experiment: it measures rows, and draws its plot and writes its part of the
/// report from those rows alone. The registry ([`Registered`]) owns everything around
/// that: writing the rows to `data.csv`, the provenance to `provenance.json`, and reading
/// both back for [`plot`](Experiment::plot) and [`summary`](Experiment::summary), so a
/// plot or a table can only show what the CSV holds.
pub trait Experiment {
    /// Name for `lab run <name>`, and the results folder.
    const NAME: &'static str;
    /// One line for `lab list` and the report's section.
    const ABOUT: &'static str;
    /// One row of `data.csv`.
    type Row: Serialize + DeserializeOwned;
    /// Measures, with progress output on long runs.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Self::Row>>;
    /// Draws the plots into `run.dir` from the rows of `data.csv`.
    fn plot(rows: &[Self::Row], run: &Run) -> anyhow::Result<()>;
    /// Report material from the rows of `data.csv`.
    fn summary(rows: &[Self::Row], run: &Run) -> anyhow::Result<Summary>;
}

/// What a plot or a summary knows besides the rows: the experiment's folder (where the
/// plots go) and the provenance of the run that wrote the rows.
pub struct Run {
    /// `<out>/<experiment>/`.
    pub dir: PathBuf,
    /// Its `provenance.json`.
    pub provenance: Provenance,
}

impl Run {
    /// The run of experiment `name` whose results are under `out`, or a clear error when
    /// there is none.
    pub fn open(out: &Path, name: &str) -> anyhow::Result<Run> {
        let dir = out.join(name);
        let first = || format!("run `lab run {name} --out {}` first", out.display());
        let provenance = Provenance::read(&dir).map_err(|e| anyhow::anyhow!("{e}: {}", first()))?;
        if !dir.join("data.csv").exists() {
            anyhow::bail!(
                "{} does not exist: {}",
                dir.join("data.csv").display(),
                first()
            );
        }
        Ok(Run { dir, provenance })
    }

    /// The rows of this run's `data.csv`.
    pub fn rows<T: DeserializeOwned>(&self) -> anyhow::Result<Vec<T>> {
        csvio::read(&self.dir.join("data.csv"))
    }
}

/// One experiment in the registry, its row type erased: what `lab` drives.
pub struct Registered {
    /// [`Experiment::NAME`].
    pub name: &'static str,
    /// [`Experiment::ABOUT`].
    pub about: &'static str,
    measure: fn(&Ctx) -> anyhow::Result<()>,
    plot: fn(&Run) -> anyhow::Result<()>,
    summary: fn(&Run) -> anyhow::Result<Summary>,
    reserialise: fn(&Run) -> anyhow::Result<String>,
}

/// The registry entry of `E`.
pub const fn entry<E: Experiment>() -> Registered {
    Registered {
        name: E::NAME,
        about: E::ABOUT,
        measure: |ctx| {
            let rows = E::measure(ctx)?;
            csvio::write(&ctx.dir(E::NAME)?.join("data.csv"), &rows)
        },
        plot: |run| E::plot(&run.rows::<E::Row>()?, run),
        summary: |run| E::summary(&run.rows::<E::Row>()?, run),
        reserialise: |run| csvio::to_string(&run.rows::<E::Row>()?),
    }
}

impl Registered {
    /// Runs the experiment end to end: empties its folder (so no file of an earlier
    /// run is left beside this one's), measures, writes `data.csv` and `provenance.json`, and
    /// draws the plots from what was written. Returns the seconds it took; an
    /// experiment that cannot run here returns an error holding [`Unavailable`].
    pub fn run(&self, ctx: &Ctx) -> anyhow::Result<f64> {
        let t = std::time::Instant::now();
        crate::support::progress::note(format!("== {}: {}", self.name, self.about));
        let dir = ctx.out.join(self.name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)
                .map_err(|e| anyhow::anyhow!("cannot empty {}: {e}", dir.display()))?;
        }
        (self.measure)(ctx).map_err(|err| match err.downcast::<Unavailable>() {
            Ok(missing) => anyhow::Error::new(missing),
            Err(err) => anyhow::anyhow!("experiment {} failed: {err:#}", self.name),
        })?;
        let secs = t.elapsed().as_secs_f64();
        Provenance::new(ctx, self.name, secs).write(&ctx.dir(self.name)?)?;
        self.plot(&ctx.out)
            .map_err(|err| anyhow::anyhow!("plotting {} failed: {err:#}", self.name))?;
        crate::support::progress::note(format!(
            "   {} done in {secs:.1} s -> {}",
            self.name,
            dir.display()
        ));
        Ok(secs)
    }

    /// Runs the experiment as [`run`](Self::run) does and records how it ended in its
    /// folder: `skipped.txt` (what is missing) or `failed.txt` (why), which
    /// [`outcome`](Self::outcome) reads back.
    pub fn run_recorded(&self, ctx: &Ctx) -> anyhow::Result<Outcome> {
        let outcome = match self.run(ctx) {
            Ok(secs) => return Ok(Outcome::Ran(secs)),
            Err(err) => match err.downcast::<Unavailable>() {
                Ok(missing) => Outcome::Skipped(missing),
                Err(err) => Outcome::Failed(format!("{err:#}")),
            },
        };
        let dir = ctx.dir(self.name)?;
        let (file, text) = match &outcome {
            Outcome::Skipped(u) => (SKIPPED, format!("{}\n{}\n", u.missing, u.install)),
            Outcome::Failed(why) => (FAILED, format!("{why}\n")),
            Outcome::Ran(_) => unreachable!("returned above"),
        };
        std::fs::write(dir.join(file), text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", dir.join(file).display()))?;
        match &outcome {
            Outcome::Skipped(u) => {
                crate::support::progress::note(format!("   {}: SKIPPED, {u}", self.name))
            }
            Outcome::Failed(why) => {
                crate::support::progress::note(format!("   {}: FAILED: {why}", self.name))
            }
            Outcome::Ran(_) => {}
        }
        Ok(outcome)
    }

    /// How the last run of this experiment under `out` ended, from its folder: skipped
    /// or failed where it recorded so, else ran (the seconds in its `provenance.json`), else
    /// failed with "no results" when it has none.
    pub fn outcome(&self, out: &Path) -> Outcome {
        self.recorded(out)
            .unwrap_or_else(|| match Run::open(out, self.name) {
                Ok(run) => Outcome::Ran(run.provenance.seconds),
                Err(e) => Outcome::Failed(format!("no results: {e:#}")),
            })
    }

    /// [`outcome`](Self::outcome), and where the experiment ran, its plots redrawn from
    /// the results (one open of the run for both; a plot that fails makes it failed).
    pub fn replot(&self, out: &Path) -> Outcome {
        self.recorded(out)
            .unwrap_or_else(|| match Run::open(out, self.name) {
                Ok(run) => match (self.plot)(&run) {
                    Ok(()) => Outcome::Ran(run.provenance.seconds),
                    Err(err) => Outcome::Failed(format!("plotting {} failed: {err:#}", self.name)),
                },
                Err(e) => Outcome::Failed(format!("no results: {e:#}")),
            })
    }

    /// The outcome recorded in the experiment's folder under `out`: skipped or failed,
    /// or `None` where it recorded neither.
    fn recorded(&self, out: &Path) -> Option<Outcome> {
        let dir = out.join(self.name);
        if let Ok(text) = std::fs::read_to_string(dir.join(SKIPPED)) {
            let mut lines = text.lines();
            return Some(Outcome::Skipped(Unavailable {
                missing: lines.next().unwrap_or_default().to_string(),
                install: lines.next().unwrap_or_default().to_string(),
            }));
        }
        let text = std::fs::read_to_string(dir.join(FAILED)).ok()?;
        Some(Outcome::Failed(text.trim_end().to_string()))
    }

    /// Draws the plots from the results under `out`; returns the run's provenance
    /// (read once, for the caller's use too).
    pub fn plot(&self, out: &Path) -> anyhow::Result<Provenance> {
        let run = Run::open(out, self.name)?;
        (self.plot)(&run)?;
        Ok(run.provenance)
    }

    /// The report material from the results under `out`.
    pub fn summary(&self, out: &Path) -> anyhow::Result<Summary> {
        (self.summary)(&Run::open(out, self.name)?)
    }

    /// The results' `data.csv` read into the experiment's row type and written again:
    /// the same text when the row type round-trips what it wrote.
    pub fn reserialise(&self, out: &Path) -> anyhow::Result<String> {
        (self.reserialise)(&Run::open(out, self.name)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test experiment whose measuring is `measure` and whose plot draws nothing.
    fn registered(measure: fn(&Ctx) -> anyhow::Result<()>) -> Registered {
        Registered {
            name: "probe",
            about: "a test experiment",
            measure,
            plot: |_| Ok(()),
            summary: |_| unreachable!("not summarised"),
            reserialise: |_| unreachable!("not reserialised"),
        }
    }

    #[test]
    fn a_missing_prerequisite_is_recorded_as_skipped_and_read_back() {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = Ctx::tiny(tmp.path().to_path_buf());
        // Files of an earlier run are removed first, so none is left to mislead.
        std::fs::create_dir_all(tmp.path().join("probe")).unwrap();
        std::fs::write(tmp.path().join("probe/data.csv"), "stale\n").unwrap();
        let e = registered(|_| {
            Err(Unavailable {
                missing: "the Rust target x".into(),
                install: "rustup target add x".into(),
            }
            .into())
        });
        let expected = Outcome::Skipped(Unavailable {
            missing: "the Rust target x".into(),
            install: "rustup target add x".into(),
        });
        assert_eq!(e.run_recorded(&ctx).unwrap(), expected);
        assert_eq!(e.outcome(tmp.path()), expected);
        assert!(!tmp.path().join("probe/data.csv").exists());
    }

    #[test]
    fn a_failure_is_recorded_with_its_reason() {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = Ctx::tiny(tmp.path().to_path_buf());
        let e = registered(|_| anyhow::bail!("the disk is full"));
        let Outcome::Failed(why) = e.run_recorded(&ctx).unwrap() else {
            panic!("not a failure")
        };
        assert!(
            why.contains("experiment probe failed: the disk is full"),
            "{why}"
        );
        assert_eq!(e.outcome(tmp.path()), Outcome::Failed(why));
        // Without any record or results, the outcome is a failure that says so.
        let none = tempfile::tempdir().unwrap();
        assert!(
            matches!(e.outcome(none.path()), Outcome::Failed(w) if w.starts_with("no results"))
        );
    }
}
