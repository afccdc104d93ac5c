//! `capabilities`: what each contender can do, found by doing it. For every filter the
//! lab knows and every operation (insert after build, delete, grow past capacity,
//! merge, concurrent insert, serialize) the lab runs the operation on real keys and
//! checks the answers; a cell reads ✓ only when that check passed. A library without
//! the operation reads "—"; one that has it but failed the check reads ✗ with what
//! went wrong. The seventh column, `no_std`, is a property of the build, not of a run:
//! it says which CI step checks it (linebloom's firmware under QEMU, the `no_std`
//! builds), or that only the crate's documentation claims it.

use crate::Ctx;
use crate::contenders::names as filter_names;
use crate::contenders::{self, Facts, LabFilter, NoStd, Sizing, build_sized};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{false_positives, members, non_members};
use crate::support::table::markdown_table;
use linebloom::arch::Kernel;
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "capabilities";

/// The rate every filter is sized for.
const TARGET: f64 = 0.01;

/// A grown filter passes when its measured rate is at most this many times the target
/// (the scalable filters promise a compounded bound near 2×; a filter that cannot
/// grow reaches tens of percent at 10× its keys).
const GROWTH_SLACK: f64 = 2.0;

/// How many times its sizing a filter is filled in the growth check.
const GROWTH: u64 = 10;

/// Threads in the concurrent-insert check.
const THREADS: usize = 2;

/// The operations, in the matrix's column order.
pub const OPERATIONS: &[&str] = &[
    "insert after build",
    "delete",
    "grow past capacity",
    "merge",
    "concurrent insert",
    "serialize",
    "no_std",
];

/// What a check found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The lab ran the operation and every answer checked out.
    Works,
    /// The library has the operation, and the check failed (details say how).
    Fails,
    /// The library has no such operation.
    Absent,
    /// `no_std` only: checked by a CI step, not by this run.
    CiChecked,
    /// `no_std` only: the crate's documentation says so; nothing here checks it.
    Declared,
}

impl Verdict {
    /// The matrix's cell mark.
    pub fn mark(self) -> &'static str {
        match self {
            Verdict::Works => "✓",
            Verdict::Fails => "✗",
            Verdict::Absent => "—",
            Verdict::CiChecked => "✓ CI",
            Verdict::Declared => "declared",
        }
    }
}

/// One CSV row: one contender, one operation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Contender (a name of [`crate::contenders::CONTENDERS`]).
    pub contender: String,
    /// Its structure (blocked Bloom, cuckoo, xor, …).
    pub structure: String,
    /// The operation (one of [`OPERATIONS`]).
    pub operation: String,
    /// What the check found.
    pub verdict: Verdict,
    /// What was run and measured, or why it failed.
    pub detail: String,
    /// Keys the filter was sized for.
    pub keys: u64,
}

/// The structure of a contender.
pub fn structure(contender: &str) -> &'static str {
    crate::contenders::looks::find(contender)
        .map(|s| s.structure)
        .filter(|f| !f.is_empty())
        .unwrap_or("other")
}

/// The `no_std` cell, from the contender's facts: which CI step checks it, or what the
/// crate declares.
fn no_std(facts: &Facts) -> Cell {
    match facts.no_std {
        NoStd::CiChecked(how) => cell(Verdict::CiChecked, how),
        NoStd::Declared(what) => cell(Verdict::Declared, what),
        NoStd::Absent => cell(
            Verdict::Absent,
            "needs std (no no_std support in the crate)",
        ),
    }
}

/// A check's outcome: verdict and detail.
type Cell = (Verdict, String);

fn cell(verdict: Verdict, detail: impl Into<String>) -> Cell {
    (verdict, detail.into())
}

/// Keys in `keys` that `f` answers "absent" for.
fn missing(f: &dyn LabFilter, keys: &[u64]) -> usize {
    keys.iter().filter(|&&k| !f.contains(k)).count()
}

/// The keys a check uses: `n` members, as many fresh keys again (for inserts after build,
/// the other half of a merge, and growth), and non-member probes.
pub struct Keys {
    /// Sized-for member keys.
    pub members: Vec<u64>,
    /// Further member keys, `GROWTH - 1` times as many.
    pub more: Vec<u64>,
    /// Non-members.
    pub probes: Vec<u64>,
}

impl Keys {
    /// Keys from the run's seed.
    pub fn new(ctx: &Ctx, n: usize, probes: usize) -> Self {
        Keys {
            members: members(ctx, n, 31),
            more: members(ctx, n * (GROWTH as usize - 1), 32),
            probes: non_members(ctx, probes, 31),
        }
    }
}

/// Runs every operation on `contender`; one cell per operation, in [`OPERATIONS`]
/// order.
pub fn check(contender: &str, keys: &Keys, kernel: &'static Kernel) -> anyhow::Result<Vec<Cell>> {
    let n = keys.members.len() as u64;
    let make = |members: &[u64]| -> anyhow::Result<Box<dyn LabFilter>> {
        build_sized(contender, Sizing::Fpr(TARGET), n, members, kernel)?
            .ok_or_else(|| anyhow::anyhow!("{contender} cannot be sized for a rate"))
    };
    let extra = &keys.more[..keys.members.len() / 10];
    Ok(vec![
        insert_after_build(make(&keys.members)?, &keys.members, extra),
        delete(make(&keys.members)?, &keys.members),
        grow(make(&keys.members)?, keys),
        {
            let (left, right) = keys.members.split_at(keys.members.len() / 2);
            merge(make(left)?, make(right)?, keys)
        },
        concurrent_insert(make(&keys.members)?, make(&keys.members)?, extra, keys),
        serialize(make(&keys.members)?.as_ref(), keys),
        no_std(&contenders::contender(contender)?.facts),
    ])
}

/// Inserts a tenth more keys into a built filter; all must be accepted and held.
fn insert_after_build(mut f: Box<dyn LabFilter>, members: &[u64], extra: &[u64]) -> Cell {
    let refused = extra.iter().filter(|&&k| !f.try_insert(k)).count();
    if refused == extra.len() {
        return cell(
            Verdict::Absent,
            "static: built once from all its keys, refuses every insert",
        );
    }
    let lost = missing(f.as_ref(), members) + missing(f.as_ref(), extra);
    if refused > 0 || lost > 0 {
        return cell(
            Verdict::Fails,
            format!(
                "refused {refused} of {} inserts; {lost} keys answered absent",
                extra.len()
            ),
        );
    }
    cell(
        Verdict::Works,
        format!(
            "{} more keys accepted after {} at build; all held",
            extra.len(),
            members.len()
        ),
    )
}

/// Deletes half the keys: every delete accepted, every kept key held, the deleted keys
/// mostly gone.
fn delete(mut f: Box<dyn LabFilter>, members: &[u64]) -> Cell {
    let (gone, kept) = members.split_at(members.len() / 2);
    let mut refused = 0;
    for &k in gone {
        match f.remove(k) {
            None => return cell(Verdict::Absent, "no delete operation"),
            Some(false) => refused += 1,
            Some(true) => {}
        }
    }
    let lost = missing(f.as_ref(), kept);
    let still = gone.len() - missing(f.as_ref(), gone);
    let still_share = still as f64 / gone.len().max(1) as f64;
    // A deleted key still answers "present" about as often as a non-member does: allow
    // ten times the target before calling the delete ineffective.
    if refused > 0 || lost > 0 || still_share > 10.0 * TARGET {
        return cell(
            Verdict::Fails,
            format!(
                "refused {refused} deletes; {lost} kept keys lost; {:.2}% of deleted keys still present",
                100.0 * still_share
            ),
        );
    }
    cell(
        Verdict::Works,
        format!(
            "deleted {}; kept keys all held; {:.2}% of deleted keys still answer present",
            gone.len(),
            100.0 * still_share
        ),
    )
}

/// Fills a filter to `GROWTH` times the keys it was sized for: every insert accepted,
/// every key held, and the rate within `GROWTH_SLACK` times the target.
fn grow(mut f: Box<dyn LabFilter>, keys: &Keys) -> Cell {
    let bytes_before = f.bytes();
    let accepted: Vec<u64> = keys
        .more
        .iter()
        .copied()
        .filter(|&k| f.try_insert(k))
        .collect();
    let refused = keys.more.len() - accepted.len();
    if accepted.is_empty() {
        return cell(Verdict::Absent, "static: refuses every insert");
    }
    let lost = missing(f.as_ref(), &keys.members) + missing(f.as_ref(), &accepted);
    let rate = false_positives(f.as_ref(), &keys.probes) as f64 / keys.probes.len() as f64;
    let growth = f.bytes() as f64 / bytes_before.max(1) as f64;
    let detail = format!(
        "at {GROWTH}× its keys: {:.2}% false positives (target {:.0}%), memory ×{growth:.1}, {refused} inserts refused, {lost} accepted keys lost",
        100.0 * rate,
        100.0 * TARGET
    );
    if f.bytes() == bytes_before {
        // Fixed size: no growth operation to check, only what overfilling does.
        return cell(Verdict::Absent, format!("fixed size; {detail}"));
    }
    let verdict = if refused == 0 && lost == 0 && rate <= GROWTH_SLACK * TARGET {
        Verdict::Works
    } else {
        Verdict::Fails
    };
    cell(verdict, detail)
}

/// Merges `b` into `a`, two filters of one recipe over the two halves of the keys, and
/// checks that it holds both halves.
fn merge(mut a: Box<dyn LabFilter>, b: Box<dyn LabFilter>, keys: &Keys) -> Cell {
    let half = keys.members.len() / 2;
    match a.merge(b.as_ref()) {
        None => cell(Verdict::Absent, "no merge operation"),
        Some(Err(e)) => cell(Verdict::Fails, format!("merge refused: {e:#}")),
        Some(Ok(())) => {
            let lost = missing(a.as_ref(), &keys.members);
            if lost > 0 {
                cell(
                    Verdict::Fails,
                    format!("{lost} keys answered absent after the merge"),
                )
            } else {
                cell(
                    Verdict::Works,
                    format!(
                        "two filters of {half} keys each merged; all {} held",
                        keys.members.len()
                    ),
                )
            }
        }
    }
}

/// Inserts `extra` from `THREADS` threads into one filter and one key at a time into a
/// twin: every key held, and the same answer as the twin on every probe.
fn concurrent_insert(
    shared: Box<dyn LabFilter>,
    mut twin: Box<dyn LabFilter>,
    extra: &[u64],
    keys: &Keys,
) -> Cell {
    if shared.insert_concurrently(extra, THREADS).is_none() {
        return cell(Verdict::Absent, "no insert through a shared reference");
    }
    for &k in extra {
        twin.insert(k);
    }
    let lost = missing(shared.as_ref(), extra) + missing(shared.as_ref(), &keys.members);
    let differ = keys
        .probes
        .iter()
        .filter(|&&k| shared.contains(k) != twin.contains(k))
        .count();
    if lost > 0 || differ > 0 {
        return cell(
            Verdict::Fails,
            format!("{lost} keys lost; {differ} probes answered unlike a sequential twin"),
        );
    }
    cell(
        Verdict::Works,
        format!(
            "{} keys from {THREADS} threads; all held, every probe answered as by the sequential twin",
            extra.len()
        ),
    )
}

/// Serializes and decodes: the copy answers every member and probe as the original.
fn serialize(f: &dyn LabFilter, keys: &Keys) -> Cell {
    match f.round_trip() {
        None => cell(Verdict::Absent, "no serialization"),
        Some(Err(e)) => cell(Verdict::Fails, format!("round trip failed: {e:#}")),
        Some(Ok((copy, len))) => {
            let differ = keys
                .members
                .iter()
                .chain(&keys.probes)
                .filter(|&&k| f.contains(k) != copy.contains(k))
                .count();
            if differ > 0 {
                cell(
                    Verdict::Fails,
                    format!("the decoded copy answered {differ} keys differently"),
                )
            } else {
                cell(
                    Verdict::Works,
                    format!(
                        "{len} bytes ({:.1} bits per key); the copy answers alike",
                        len as f64 * 8.0 / keys.members.len() as f64
                    ),
                )
            }
        }
    }
}

/// The `capabilities` experiment.
pub struct Capabilities;

impl Experiment for Capabilities {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str = "the capability matrix: insert after build, delete, grow, merge, concurrent insert and serialize, each run and checked for every contender";
    type Row = Row;

    /// Runs every check on every contender and writes `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (n, probes) = ctx.scale.pick(
            (2_000, 20_000),
            (20_000, 200_000),
            (20_000, 200_000),
            (100_000, 1_000_000),
        );
        let keys = Keys::new(ctx, n, probes);
        let bar = crate::support::progress::bar(ctx, filter_names().count() as u64, NAME);
        let mut rows = Vec::new();
        for contender in filter_names() {
            bar.set_message(contender);
            let cells = check(contender, &keys, ctx.kernel)
                .map_err(|e| anyhow::anyhow!("{contender}: {e:#}"))?;
            for (operation, (verdict, detail)) in OPERATIONS.iter().zip(cells) {
                rows.push(Row {
                    contender: contender.into(),
                    structure: structure(contender).into(),
                    operation: (*operation).into(),
                    verdict,
                    detail,
                    keys: n as u64,
                });
            }
            bar.inc(1);
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// The matrix has no plot: the table is the result.
    fn plot(_rows: &[Row], _run: &Run) -> anyhow::Result<()> {
        Ok(())
    }

    /// Report material from the CSV: the matrix, and the failed checks spelled out.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let mut header = vec!["contender", "structure"];
        header.extend(OPERATIONS);
        let table: Vec<Vec<String>> = contenders(rows)
            .into_iter()
            .map(|c| {
                let mut line = vec![c.to_string(), structure(c).to_string()];
                line.extend(
                    OPERATIONS
                        .iter()
                        .map(|op| verdict(rows, c, op).map_or("?", Verdict::mark).to_string()),
                );
                line
            })
            .collect();
        let failures: Vec<String> = rows
            .iter()
            .filter(|r| r.verdict == Verdict::Fails)
            .map(|r| format!("- {} / {}: {}", r.contender, r.operation, r.detail))
            .collect();
        let mut table = markdown_table(&header, &table);
        if !failures.is_empty() {
            table.push_str("\nChecks that failed:\n\n");
            table.push_str(&failures.join("\n"));
            table.push('\n');
        }
        let (ours, theirs): (Vec<&str>, Vec<&str>) =
            filter_names().partition(|c| c.starts_with("linebloom"));
        let mut gaps = Vec::new();
        for op in OPERATIONS.iter().filter(|&&op| op != "no_std") {
            let we_do = ours
                .iter()
                .any(|c| verdict(rows, c, op) == Some(Verdict::Works));
            let who: Vec<&str> = theirs
                .iter()
                .copied()
                .filter(|c| verdict(rows, c, op) == Some(Verdict::Works))
                .collect();
            if !we_do && !who.is_empty() {
                gaps.push(format!(
                    "no linebloom kind can {op}; {} can",
                    who.join(", ")
                ));
            }
        }
        Ok(Summary {
            table,
            caption: format!(
                "Each cell is one check the lab ran on {} keys sized at {:.0}% (the details, with what was measured, are in the CSV): ✓ the operation ran and every answer checked out; ✗ it ran and a check failed; — the library has no such operation (a fixed-size filter has no growth: the CSV says what overfilling it did). Growth means {GROWTH}× the keys it was sized for (the scalable kinds start at a hundredth of them, as in every experiment, so they grow a thousandfold) with every insert accepted, every key held and the rate within {GROWTH_SLACK}× the target; concurrent insert means {THREADS} threads inserting through a shared reference, with every probe answered as by a filter filled one key at a time. Serialize is a round trip through the library's own format (CBOR for those whose only format is serde, which writes each 16-bit fingerprint as a 1–3 byte integer), with its size in the detail. `no_std` is checked by building, not by this run: \"✓ CI\" names a step of `.ci/run`, \"declared\" is only the crate's word.",
                rows.first().map_or(0, |r| r.keys),
                100.0 * TARGET
            ),
            not_leading: if gaps.is_empty() {
                "— (every operation some rival passes, some linebloom kind passes too)".into()
            } else {
                gaps.join("; ") + "."
            },
        })
    }
}

/// The contenders in the CSV, in first-seen order.
fn contenders(rows: &[Row]) -> Vec<&str> {
    let mut seen: Vec<&str> = Vec::new();
    for r in rows {
        if !seen.contains(&r.contender.as_str()) {
            seen.push(&r.contender);
        }
    }
    seen
}

/// The verdict of `contender` on `operation`, if the CSV has it.
pub fn verdict(rows: &[Row], contender: &str, operation: &str) -> Option<Verdict> {
    rows.iter()
        .find(|r| r.contender == contender && r.operation == operation)
        .map(|r| r.verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx::tiny(std::env::temp_dir())
    }

    /// Whether a run's verdict on `operation` agrees with a contender's facts; the fact
    /// it contradicts if not. A fact that can fail its check (a full filter refusing
    /// the tenth more keys, a growing filter past its rate, a delete that loses a
    /// kept key) agrees with either.
    fn agrees(facts: &Facts, operation: &str, got: Verdict) -> Result<(), String> {
        use crate::contenders::Inserts;
        use Verdict::*;
        let (ok, fact): (&[Verdict], String) = match operation {
            "insert after build" => match facts.inserts {
                Inserts::BuiltOnce => (&[Absent], "it is built once".into()),
                Inserts::UpToCapacity => (&[Works, Fails], "it holds up to a capacity".into()),
                Inserts::Unbounded | Inserts::Grows => (&[Works], "it inserts".into()),
            },
            // A delete that loses another key's fingerprint is the library's bug, which
            // the matrix shows as ✗; the row still says it deletes.
            "delete" if facts.deletes => (&[Works, Fails], "it deletes".into()),
            "delete" => (&[Absent], "it does not delete".into()),
            "grow past capacity" if facts.grows() => (&[Works, Fails], "it grows".into()),
            "grow past capacity" => (&[Absent], "it does not grow".into()),
            "concurrent insert" if facts.concurrent => (&[Works], "it is concurrent".into()),
            "concurrent insert" => (&[Absent], "it is not concurrent".into()),
            _ => return Ok(()),
        };
        if ok.contains(&got) { Ok(()) } else { Err(fact) }
    }

    /// Every cell of the matrix: the lab runs each operation on each contender (at a
    /// small size); every contender's facts agree with what the runs find, and for the
    /// contenders listed here every verdict is the one the libraries' documentation
    /// leads to expect. A library that changes behaviour fails this test.
    #[test]
    fn every_cell_runs_its_operation() {
        use Verdict::*;
        let ctx = ctx();
        let keys = Keys::new(&ctx, 2_000, 20_000);
        #[rustfmt::skip]
        let expected: &[(&str, [Verdict; 6])] = &[
            // insert after build, delete, grow, merge, concurrent, serialize
            ("linebloom",              [Works,  Absent, Absent, Works,  Absent, Works]),
            ("linebloom-classic",      [Works,  Absent, Absent, Works,  Absent, Works]),
            ("linebloom-counting",     [Works,  Works,  Absent, Works,  Absent, Works]),
            // Sized to hold n: the tenth more fills its blocks, and it refuses some.
            ("linebloom-quotient",     [Fails,  Works,  Absent, Absent, Absent, Works]),
            ("linebloom-scalable",     [Works,  Absent, Works,  Absent, Absent, Works]),
            ("linebloom-atomic",       [Works,  Absent, Absent, Works,  Works,  Works]),
            ("sbbf-rs-safe",           [Works,  Absent, Absent, Absent, Absent, Works]),
            ("split-block-256",        [Works,  Absent, Absent, Absent, Absent, Absent]),
            ("fastbloom",              [Works,  Absent, Absent, Works,  Absent, Works]),
            ("fastbloom-atomic",       [Works,  Absent, Absent, Works,  Works,  Works]),
            ("bloomfilter",            [Works,  Absent, Absent, Absent, Absent, Works]),
            // Grows, but past its target: 4.6% at 1000× its first layer.
            ("growable-bloom-filter",  [Works,  Absent, Fails,  Absent, Absent, Works]),
            ("xorf-binaryfuse8",       [Absent, Absent, Absent, Absent, Absent, Works]),
            ("xorf-binaryfuse16",      [Absent, Absent, Absent, Absent, Absent, Works]),
            ("xorf-xor8",              [Absent, Absent, Absent, Absent, Absent, Works]),
            ("xorf-xor16",             [Absent, Absent, Absent, Absent, Absent, Works]),
            ("cuckoofilter",           [Works,  Works,  Absent, Absent, Absent, Works]),
            ("scalable-cuckoo-filter", [Works,  Works,  Works,  Absent, Absent, Works]),
            ("qfilter",                [Works,  Works,  Absent, Works,  Absent, Works]),
            ("fastbloom-rs-counting",  [Works,  Works,  Absent, Absent, Absent, Works]),
        ];
        let mut wrong = Vec::new();
        for contender in contenders::CONTENDERS {
            let name = contender.name();
            let cells = check(name, &keys, ctx.kernel).unwrap();
            assert_eq!(cells.len(), OPERATIONS.len());
            // Every contender's row states what the runs find.
            for (op, got) in OPERATIONS.iter().zip(&cells) {
                if let Err(fact) = agrees(&contender.facts, op, got.0) {
                    wrong.push(format!("{name} / {op}: {got:?}, but its row says {fact}"));
                }
            }
            // The contenders known here: every verdict, the merges and round trips too.
            if let Some((_, want)) = expected.iter().find(|(c, _)| *c == name) {
                for ((op, (got, detail)), want) in OPERATIONS.iter().zip(&cells).zip(want) {
                    if got != want {
                        wrong.push(format!(
                            "{name} / {op}: {got:?}, expected {want:?} ({detail})"
                        ));
                    }
                }
            }
            // Every run cell says what it measured.
            assert!(cells.iter().all(|(_, d)| !d.is_empty()), "{name}");
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        assert!(
            expected.iter().all(|(c, _)| contenders::find(c).is_some()),
            "an expectation for a contender the table lacks"
        );
    }

    /// A merge of two different kinds is refused, not a panic or a silent no-op.
    #[test]
    fn merging_another_kind_is_refused() {
        let ctx = ctx();
        let keys = members(&ctx, 1_000, 1);
        let make = |name| build_sized(name, Sizing::Fpr(0.01), 1_000, &keys, ctx.kernel);
        let mut ours = make("linebloom").unwrap().unwrap();
        let classic = make("linebloom-classic").unwrap().unwrap();
        let err = ours.merge(classic.as_ref()).unwrap().unwrap_err();
        assert!(err.to_string().contains("cannot merge"), "{err}");
    }
}
