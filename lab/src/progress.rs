//! Progress bars (indicatif) for anything longer than a few seconds; hidden when the lab
//! runs with `--no-progress` or output is not a terminal.
//!
//! While `lab report` runs, its whole-report bar ([`report_bar`]) and each experiment's
//! own bars share one [`MultiProgress`], so the report's ETA stays on screen under the
//! bar of the step in progress; [`note`] prints a line above them without tearing them.

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::sync::OnceLock;

/// The bars of a running report, once [`report_bar`] made them.
static GROUP: OnceLock<MultiProgress> = OnceLock::new();

/// A bar of `len` steps titled `what`.
pub fn bar(ctx: &crate::Ctx, len: u64, what: &str) -> ProgressBar {
    if !ctx.progress {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{prefix:>14} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    match GROUP.get() {
        Some(group) => group.add(pb),
        None => pb,
    }
}

/// The whole report's bar: `len` units of expected work (each experiment's estimated
/// seconds), with the elapsed time and indicatif's ETA, which rescales the estimates
/// by how fast the finished ones actually went.
pub fn report_bar(ctx: &crate::Ctx, len: u64) -> ProgressBar {
    if !ctx.progress {
        return ProgressBar::hidden();
    }
    let group = GROUP.get_or_init(MultiProgress::new);
    let pb = group.add(ProgressBar::new(len));
    pb.set_style(
        ProgressStyle::with_template(
            "{prefix:>14} [{bar:30}] {percent:>3}% {msg} ({elapsed}, about {eta} left)",
        )
        .expect("valid template")
        .progress_chars("##-"),
    );
    pb.set_prefix("report");
    pb
}

/// Prints `line` to standard error, above any bars on screen.
pub fn note(line: impl AsRef<str>) {
    match GROUP.get() {
        Some(group) => group.suspend(|| eprintln!("{}", line.as_ref())),
        None => eprintln!("{}", line.as_ref()),
    }
}
