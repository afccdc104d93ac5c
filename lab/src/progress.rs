//! Progress bars (indicatif) for anything longer than a few seconds; hidden when the lab
//! runs with `--no-progress` or output is not a terminal.

use indicatif::{ProgressBar, ProgressStyle};

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
    pb
}
