//! `footprint`: what linebloom costs a microcontroller and a wasm module, next to
//! sbbf-rs built the same way.
//!
//! It builds the reference firmware `core/footprint` once per variant, for
//! `thumbv7em-none-eabihf` (a Cortex-M4F) and `wasm32-unknown-unknown`, at opt-level `s`
//! and (except at the test scale) `3`, with LTO and `panic = "abort"`:
//!
//! | variant | what the program calls |
//! |---|---|
//! | `dummy` | no filter (keys go to `black_box`): the harness alone, the baseline |
//! | `linebloom` | `BloomFilter::from_storage`, `insert`, `contains` (default features off) |
//! | `linebloom+format` | …and `encode_into` and a zero-copy `view` |
//! | `linebloom+sizing` | …and `Params::for_fpr` and `expected_fpr` (f64) |
//! | `linebloom-quotient` | `VectorQuotientFilter::from_storage` (8-bit tags), `insert`, `contains` |
//! | `sbbf-rs` | sbbf-rs 0.2.8 `insert` and `contains`, keys hashed with XXH3-64 |
//!
//! It reads the sizes with the `object` crate: `text` is the code (ELF sections of kind
//! text, the wasm code section), `image` what is stored (ELF text, read-only data and
//! data; the whole `.wasm` file), and `over dummy` a variant's text minus the dummy's.
//! The bounds it judges: insert + contains over the dummy, thumbv7em, opt-level s, at
//! most 2 KiB of code; the whole wasm file at opt-level s, at most 2 KiB.
//!
//! Where `qemu-system-arm` is installed it also runs the `stack` variant on an emulated
//! Cortex-M4 (mps2-an386): the firmware paints the free stack, calls `insert` and
//! `contains` once each, and reports the deepest byte they wrote (bound: 128 B each).
//!
//! A missing target or tool is a row that says what is missing, never a number.

use crate::Ctx;
use crate::support::experiment::{Experiment, Run, Summary, Unavailable};
use crate::support::table::markdown_table;
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Experiment name.
pub const NAME: &str = "footprint";

/// The bound for insert + contains over the dummy and for the wasm file (bytes).
pub const CODE_BOUND: f64 = 2048.0;
/// The bound for the stack of one insert or one contains (bytes).
pub const STACK_BOUND: f64 = 128.0;

/// The variants: contender name and the firmware's Cargo feature.
const VARIANTS: &[(&str, &str)] = &[
    ("dummy", "dummy"),
    ("linebloom", "linebloom"),
    ("linebloom+format", "format"),
    ("linebloom+sizing", "sizing"),
    ("linebloom-quotient", "quotient"),
    ("sbbf-rs", "sbbf"),
];

/// The targets and their short names.
const TARGETS: &[(&str, &str)] = &[
    ("thumbv7em-none-eabihf", "thumbv7em"),
    ("wasm32-unknown-unknown", "wasm32"),
];

/// Whether the toolchain on `PATH` has the standard library of `target` (what
/// `rustup target add` installs): its directory under `rustc --print target-libdir`.
fn target_installed(target: &str) -> bool {
    Command::new("rustc")
        .args(["--print", "target-libdir", "--target", target])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .is_some_and(|dir| dir.is_dir())
}

/// The experiment's prerequisite: both targets' standard libraries, or what is missing.
/// (QEMU is not one: without `qemu-system-arm` only the stack rows are missing, each
/// saying why.)
fn prerequisites() -> Result<(), Unavailable> {
    let missing: Vec<&str> = TARGETS
        .iter()
        .map(|&(target, _)| target)
        .filter(|target| !target_installed(target))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Unavailable {
        missing: format!(
            "the Rust target{} {}",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(" and ")
        ),
        install: format!("rustup target add {}", missing.join(" ")),
    })
}

/// One CSV row: one measure of one build.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// The variant (see the module docs).
    pub contender: String,
    /// `thumbv7em` or `wasm32`.
    pub target: String,
    /// `s` or `3`.
    pub opt_level: String,
    /// `text`, `image`, `stack insert` or `stack contains`.
    pub measure: String,
    /// Bytes; NaN when the build or run was not possible.
    pub bytes: f64,
    /// `text` minus the dummy's `text` for the same target and opt-level (NaN otherwise).
    pub over_dummy: f64,
    /// Why a number is missing, or how it was obtained.
    pub note: String,
}

/// The firmware crate's directory.
fn firmware_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/footprint")
}

/// The Cargo profile for an opt-level.
fn profile(opt: &str) -> &'static str {
    if opt == "3" { "release-o3" } else { "release" }
}

/// Builds one variant and returns the path of the program.
fn build(target: &str, opt: &str, feature: &str, target_dir: &Path) -> Result<PathBuf, String> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(firmware_dir())
        // The lab's own flags (a `target-cpu`, say) are not the firmware's.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .args([
            "build",
            "--quiet",
            "--profile",
            profile(opt),
            "--target",
            target,
        ])
        .args(["--features", feature, "--target-dir"])
        .arg(target_dir)
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(format!(
            "cargo build failed (is the target installed? `rustup target add {target}`): {last}"
        ));
    }
    let name = if target.starts_with("wasm") {
        "linebloom-footprint.wasm"
    } else {
        "linebloom-footprint"
    };
    Ok(target_dir.join(target).join(profile(opt)).join(name))
}

/// (text, image) bytes of a built program.
fn sizes(path: &Path) -> Result<(u64, u64), String> {
    use object::{Object, ObjectSection, SectionKind};
    let data = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let file =
        object::File::parse(&*data).map_err(|e| format!("parsing {}: {e}", path.display()))?;
    let of = |kinds: &[SectionKind]| -> u64 {
        file.sections()
            .filter(|s| kinds.contains(&s.kind()))
            .map(|s| s.size())
            .sum()
    };
    let text = of(&[SectionKind::Text]);
    let image = if file.format() == object::BinaryFormat::Wasm {
        data.len() as u64
    } else {
        of(&[
            SectionKind::Text,
            SectionKind::ReadOnlyData,
            SectionKind::Data,
        ])
    };
    if text == 0 {
        return Err(format!("no code section in {}", path.display()));
    }
    Ok((text, image))
}

/// Runs the `stack` firmware under QEMU: (insert, contains) bytes.
fn stack(opt: &str, target_dir: &Path) -> Result<(u64, u64), String> {
    let elf = build("thumbv7em-none-eabihf", opt, "stack", target_dir)?;
    let mut child = Command::new("qemu-system-arm")
        .args(["-cpu", "cortex-m4", "-machine", "mps2-an386", "-nographic"])
        .args(["-semihosting-config", "enable=on,target=native", "-kernel"])
        .arg(&elf)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run qemu-system-arm (apt install qemu-system-arm): {e}"))?;
    // The firmware exits through semihosting within a second; a hang is a failure.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err("the stack firmware did not exit within 30 s under QEMU".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_stack(&text).ok_or_else(|| {
        format!(
            "unexpected output from the stack firmware (exit {}): {text:?}",
            out.status
        )
    })
}

/// Parses `stack insert N contains M`.
fn parse_stack(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("stack insert "))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    match words[..] {
        ["stack", "insert", i, "contains", c] => Some((i.parse().ok()?, c.parse().ok()?)),
        _ => None,
    }
}

/// The `footprint` experiment.
pub struct Footprint;

impl Experiment for Footprint {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str = "flash and stack on a Cortex-M4 and wasm32: code over a program with no filter at opt-level s and 3, next to sbbf-rs";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        prerequisites()?;
        let opts: &[&str] = ctx.scale.pick(&["s"], &["s"], &["s", "3"], &["s", "3"]);
        let target_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/footprint");
        let bar = crate::support::progress::bar(
            ctx,
            (opts.len() * (TARGETS.len() * VARIANTS.len() + 1)) as u64,
            NAME,
        );
        let mut rows = Vec::new();
        let row =
            |contender: &str, target: &str, opt: &str, measure: &str, bytes: f64, note: String| {
                Row {
                    contender: contender.into(),
                    target: target.into(),
                    opt_level: opt.into(),
                    measure: measure.into(),
                    bytes,
                    over_dummy: f64::NAN,
                    note,
                }
            };
        for &opt in opts {
            for &(target, short) in TARGETS {
                for &(contender, feature) in VARIANTS {
                    bar.set_message(format!("{contender} for {short}, opt-level {opt}"));
                    let (text, image, note) = match build(target, opt, feature, &target_dir)
                        .and_then(|p| sizes(&p))
                    {
                        Ok((text, image)) => (
                            text as f64,
                            image as f64,
                            format!(
                                "cargo build --profile {} --target {target} --features {feature}",
                                profile(opt)
                            ),
                        ),
                        Err(why) => (f64::NAN, f64::NAN, why),
                    };
                    rows.push(row(contender, short, opt, "text", text, note.clone()));
                    rows.push(row(contender, short, opt, "image", image, note));
                    bar.inc(1);
                }
            }
            bar.set_message(format!("stack under QEMU, opt-level {opt}"));
            let (insert, contains, note) = match stack(opt, &target_dir) {
                Ok((insert, contains)) => (
                    insert as f64,
                    contains as f64,
                    "painted stack, mps2-an386 under qemu-system-arm".to_string(),
                ),
                Err(why) => (f64::NAN, f64::NAN, why),
            };
            let linebloom = |measure: &str, bytes: f64, note: String| {
                row("linebloom", "thumbv7em", opt, measure, bytes, note)
            };
            rows.push(linebloom("stack insert", insert, note.clone()));
            rows.push(linebloom("stack contains", contains, note));
            bar.inc(1);
        }
        bar.finish_and_clear();
        with_over_dummy(&mut rows);
        Ok(rows)
    }

    /// Draws each variant's code over the dummy's, per target and opt-level, on a log axis
    /// (sizing costs fifty times what insert + contains do): linebloom next to sbbf-rs
    /// first, then what the format and sizing add.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let mut bars = Vec::new();
        for opt in ["s", "3"] {
            for &(_, target) in TARGETS {
                for contender in [
                    "linebloom",
                    "sbbf-rs",
                    "linebloom-quotient",
                    "linebloom+format",
                    "linebloom+sizing",
                ] {
                    let built =
                        measure(rows, target, opt, "text").find(|r| r.contender == contender);
                    if let Some(r) = built.filter(|r| r.over_dummy > 0.0) {
                        bars.push((
                            format!("{target}, opt-level {opt}"),
                            r.contender.clone(),
                            r.over_dummy,
                        ));
                    }
                }
            }
        }
        anyhow::ensure!(
            !bars.is_empty(),
            "no footprint build succeeded; data.csv says why for each"
        );
        crate::support::plot::bar_chart_scaled(
            &run.dir,
            "Code each filter adds to a program (LTO; log scale)",
            "bytes of code over the same program with no filter",
            &bars,
            crate::support::plot::BarScale::Log,
        )
        .context("drawing the footprint chart")
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let table: Vec<Vec<String>> = rows
            .iter()
            .filter(|r| r.measure != "image" || r.target == "wasm32")
            .map(|r| {
                vec![
                    r.contender.clone(),
                    r.target.clone(),
                    r.opt_level.clone(),
                    r.measure.clone(),
                    bytes(r.bytes),
                    bytes(r.over_dummy),
                    if r.bytes.is_finite() {
                        String::new()
                    } else {
                        r.note.clone()
                    },
                ]
            })
            .collect();
        let find = |target: &str, opt: &str, what: &str| linebloom_at(rows, target, opt, what);
        let mut verdicts = Vec::new();
        let mut misses = Vec::new();
        let mut judge =
            |label: &str, value: Option<f64>, bound: f64| match value.filter(|v| v.is_finite()) {
                Some(v) if v <= bound => {
                    verdicts.push(format!("{label}: {v:.0} B (≤ {bound:.0} B, met)"))
                }
                Some(v) => {
                    verdicts.push(format!("{label}: {v:.0} B (> {bound:.0} B, not met)"));
                    misses.push(format!("{label} is {v:.0} B, over its {bound:.0} B bound"));
                }
                None => verdicts.push(format!("{label}: not measured here")),
            };
        // The bounds at opt-level s: code over the dummy, the wasm module as it is.
        let text = find("thumbv7em", "s", "text");
        judge(
            "code of insert + contains on thumbv7em at opt-level s, over the dummy",
            text,
            CODE_BOUND,
        );
        let wasm = find("wasm32", "s", "image");
        judge("the whole wasm32 file at opt-level s", wasm, CODE_BOUND);
        // The stack at every opt-level measured (3 unrolls the probe and spills).
        for opt in ["s", "3"] {
            for op in ["insert", "contains"] {
                let what = format!("stack {op}");
                // A row that exists but has no number is judged "not measured here".
                if measure(rows, "thumbv7em", opt, &what).any(|r| r.contender == "linebloom") {
                    let label = format!("stack of one {op} at opt-level {opt}");
                    judge(&label, find("thumbv7em", opt, &what), STACK_BOUND);
                }
            }
        }
        // Every build where sbbf-rs's insert + contains took less code than linebloom's.
        for r in rows
            .iter()
            .filter(|r| r.contender == "linebloom" && r.measure == "text")
        {
            let theirs = measure(rows, &r.target, &r.opt_level, "text")
                .find(|s| s.contender == "sbbf-rs")
                .map(|s| s.over_dummy);
            if let Some(b) = theirs
                && r.over_dummy > b
            {
                misses.push(format!(
                "on {} at opt-level {}, insert + contains take {:.0} B of code against sbbf-rs's {b:.0} B",
                r.target, r.opt_level, r.over_dummy
            ));
            }
        }
        Ok(Summary {
            table: markdown_table(
                &[
                    "variant",
                    "target",
                    "opt-level",
                    "measure",
                    "bytes",
                    "over dummy",
                    "note",
                ],
                &table,
            ),
            caption: format!(
                "Code each variant of the reference firmware (core/footprint) adds over the same program with no filter, built with LTO for a Cortex-M4F and for wasm32, read from the ELF and wasm files; stack measured by painting under QEMU. {}.",
                verdicts.join("; ")
            ),
            not_leading: if misses.is_empty() {
                "— (linebloom's insert + contains took less code than sbbf-rs's in every build, and every bound measured was met)".into()
            } else {
                format!("{}.", misses.join("; "))
            },
        })
    }
}

/// Fills `over_dummy` for every `text` row whose dummy build succeeded.
fn with_over_dummy(rows: &mut [Row]) {
    let dummy: Vec<(String, String, f64)> = rows
        .iter()
        .filter(|r| r.contender == "dummy" && r.measure == "text")
        .map(|r| (r.target.clone(), r.opt_level.clone(), r.bytes))
        .collect();
    for r in rows.iter_mut().filter(|r| r.measure == "text") {
        if let Some((_, _, base)) = dummy
            .iter()
            .find(|(t, o, _)| *t == r.target && *o == r.opt_level)
        {
            r.over_dummy = r.bytes - base;
        }
    }
}

/// The rows of one measure, built for one target and opt-level.
fn measure<'a>(
    rows: &'a [Row],
    target: &str,
    opt: &str,
    what: &str,
) -> impl Iterator<Item = &'a Row> {
    let (target, opt, what) = (target.to_string(), opt.to_string(), what.to_string());
    rows.iter()
        .filter(move |r| r.target == target && r.opt_level == opt && r.measure == what)
}

/// linebloom's number for one measure of one build: its code over the dummy for
/// `text`, the bytes as measured otherwise; `None` where it is missing.
pub fn linebloom_at(rows: &[Row], target: &str, opt: &str, what: &str) -> Option<f64> {
    measure(rows, target, opt, what)
        .find(|r| r.contender == "linebloom")
        .map(|r| {
            if what == "text" {
                r.over_dummy
            } else {
                r.bytes
            }
        })
        .filter(|v| v.is_finite())
}

/// `1,234 B`, or `—` for a missing number.
fn bytes(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.0} B")
    } else {
        "—".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_output_parses_and_garbage_does_not() {
        assert_eq!(
            parse_stack("boot\nstack insert 44 contains 36\n"),
            Some((44, 36))
        );
        assert_eq!(parse_stack("stack insert 44\n"), None);
        assert_eq!(parse_stack("stack insert x contains 36"), None);
        assert_eq!(parse_stack(""), None);
    }

    #[test]
    fn over_dummy_subtracts_the_same_builds_dummy() {
        let r = |c: &str, t: &str, o: &str, m: &str, b: f64| Row {
            contender: c.into(),
            target: t.into(),
            opt_level: o.into(),
            measure: m.into(),
            bytes: b,
            over_dummy: f64::NAN,
            note: String::new(),
        };
        let mut rows = vec![
            r("dummy", "wasm32", "s", "text", 100.0),
            r("dummy", "wasm32", "3", "text", 150.0),
            r("linebloom", "wasm32", "s", "text", 400.0),
            r("linebloom", "wasm32", "3", "text", 500.0),
            r("linebloom", "wasm32", "s", "image", 900.0),
            r("linebloom", "thumbv7em", "s", "text", 700.0),
        ];
        with_over_dummy(&mut rows);
        assert_eq!(rows[2].over_dummy, 300.0);
        assert_eq!(rows[3].over_dummy, 350.0);
        assert!(rows[4].over_dummy.is_nan(), "only text rows");
        assert!(rows[5].over_dummy.is_nan(), "no dummy for that target");
    }
}
