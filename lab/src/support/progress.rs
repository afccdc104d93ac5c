//! Progress bars (indicatif) for anything longer than a few seconds; hidden when the lab
//! runs with `--no-progress` or output is not a terminal.
//!
//! While `lab report` runs, it names its step and the whole report's ETA
//! ([`set_report_step`]), and every experiment's bar carries that in its prefix, so the
//! time left for the whole report is on screen under every bar.

use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Mutex;
use std::time::Duration;

/// The running report's step and ETA, shown before each bar's own title; empty outside
/// a report.
static REPORT_STEP: Mutex<String> = Mutex::new(String::new());

/// A bar of `len` steps titled `what`.
pub fn bar(ctx: &crate::Ctx, len: u64, what: &str) -> ProgressBar {
    if !ctx.progress {
        return ProgressBar::hidden();
    }
    let step = REPORT_STEP.lock().map(|s| s.clone()).unwrap_or_default();
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{prefix:>14} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_prefix(if step.is_empty() {
        what.to_string()
    } else {
        format!("{step} | {what}")
    });
    pb
}

/// Sets the report's step shown before every bar: experiment `index` (from 0) of
/// `count`, and the time left, estimated from the `done` share of the expected work
/// that took `elapsed` (no estimate before the first step has finished). Returns the
/// line it set, also for the log.
pub fn set_report_step(index: usize, count: usize, done: f64, elapsed: Duration) -> String {
    let left = if done > 0.0 {
        let secs = elapsed.as_secs_f64() * (1.0 - done) / done;
        format!("about {} left", clock(secs))
    } else {
        "estimating the time left".to_string()
    };
    let line = format!(
        "report {}/{count}, {} elapsed, {left}",
        index + 1,
        clock(elapsed.as_secs_f64())
    );
    if let Ok(mut step) = REPORT_STEP.lock() {
        step.clone_from(&line);
    }
    line
}

/// Clears the report's step once the report is done.
pub fn clear_report_step() {
    if let Ok(mut step) = REPORT_STEP.lock() {
        step.clear();
    }
}

/// `m:ss` for a number of seconds.
fn clock(secs: f64) -> String {
    let secs = secs.max(0.0).round() as u64;
    format!("{}:{:02}", secs / 60, secs % 60)
}

/// Prints `line` to standard error (a log line between bars).
pub fn note(line: impl AsRef<str>) {
    eprintln!("{}", line.as_ref());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_step_estimates_the_time_left_from_the_work_done() {
        let step = set_report_step(1, 4, 0.25, Duration::from_secs(30));
        assert_eq!(step, "report 2/4, 0:30 elapsed, about 1:30 left");
        let first = set_report_step(0, 4, 0.0, Duration::ZERO);
        assert_eq!(first, "report 1/4, 0:00 elapsed, estimating the time left");
        clear_report_step();
        assert!(REPORT_STEP.lock().unwrap().is_empty());
    }
}
