//! Null caching against the filter when the attack repeats its ids.
//!
//! The main scenario's attack ids never repeat, the case where caching "this id does
//! not exist" cannot help. Here each in-process defence also serves a 90% attack that
//! replays a list of [`POOL`] ids, next to the never-repeating one, so the report shows
//! where null caching helps and where it does not. Same seed, database and cache as the
//! main scenario; no server needed.

use super::db::Db;
use super::defences::defences;
use super::row::{NAME, Row};
use super::scenario::Scenario;
use crate::Ctx;
use crate::contenders::looks;
use crate::support::csvio;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Distinct ids in the replayed attack list.
pub const POOL: u64 = 1_000;

/// The attack share of both workloads.
const ATTACK_SHARE: f64 = 0.9;

/// One defence under one workload.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ReplayRow {
    /// Defence.
    #[serde(alias = "scheme")]
    pub contender: String,
    /// `never repeat` or `replay <POOL> ids`.
    pub attack_ids: String,
    /// Requests served.
    pub requests: u64,
    /// Database queries they caused.
    pub db_queries: u64,
    /// Database queries per 1000 requests.
    pub db_per_1000: f64,
    /// Requests answered per second.
    pub requests_per_s: f64,
}

/// Runs each in-process defence for `secs` under each workload and returns the rows.
pub fn run(
    ctx: &Ctx,
    n: u64,
    secs: u64,
    fresh_db: &dyn Fn(&str) -> anyhow::Result<Db>,
) -> anyhow::Result<Vec<ReplayRow>> {
    let mut out = Vec::new();
    for (label, pool) in [
        ("never repeat".to_string(), None),
        (format!("replay {POOL} ids"), Some(POOL)),
    ] {
        for scenario in defences(ctx, None, n, fresh_db)? {
            let scenario = match pool {
                Some(pool) => scenario.replaying(pool),
                None => scenario,
            };
            out.push(drive_fixed(scenario, secs, &label)?);
        }
    }
    Ok(out)
}

/// Serves `ATTACK_SHARE` attack traffic for `secs` and sums the defence's rows.
fn drive_fixed(mut scenario: Scenario, secs: u64, label: &str) -> anyhow::Result<ReplayRow> {
    let start = Instant::now();
    let total = Duration::from_secs(secs);
    while start.elapsed() < total {
        scenario.step(ATTACK_SHARE)?;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let row: Row = scenario.finish_second(0);
    Ok(ReplayRow {
        contender: scenario.defence().to_string(),
        attack_ids: label.to_string(),
        requests: row.requests,
        db_queries: row.db_queries,
        db_per_1000: 1000.0 * row.db_queries as f64 / row.requests.max(1) as f64,
        requests_per_s: row.requests as f64 / elapsed,
    })
}

/// The report's table: database queries per 1000 requests for each defence under each
/// workload, read back from `replay.csv`; adds to `notes` where a defence let fewer
/// queries through than linebloom in process.
pub fn table(rows: &[ReplayRow], notes: &mut Vec<String>) -> String {
    let per_1000 = |defence: &str, replayed: bool| {
        rows.iter()
            .find(|r| r.contender == defence && r.attack_ids.starts_with("replay") == replayed)
            .map(|r| r.db_per_1000)
    };
    for replayed in [false, true] {
        let Some(ours) = per_1000(looks::IN_PROCESS, replayed) else {
            continue;
        };
        for r in rows.iter().filter(|r| {
            r.attack_ids.starts_with("replay") == replayed
                && r.contender != looks::IN_PROCESS
                && r.db_per_1000 < ours
        }) {
            notes.push(format!(
                "with attack ids that {}, {} let {:.1} database queries per 1000 requests through against linebloom in process's {ours:.1} (the filter's false positives among the replayed ids reach the database every time; a filter in front of a null cache would stop both)",
                if replayed { "repeat" } else { "never repeat" },
                r.contender,
                r.db_per_1000
            ));
        }
    }
    let mut defences: Vec<&str> = Vec::new();
    for r in rows {
        if !defences.contains(&r.contender.as_str()) {
            defences.push(&r.contender);
        }
    }
    let cell = |defence: &str, replayed: bool| {
        rows.iter()
            .find(|r| r.contender == defence && r.attack_ids.starts_with("replay") == replayed)
            .map_or("—".into(), |r| format!("{:.1}", r.db_per_1000))
    };
    let body: Vec<Vec<String>> = defences
        .iter()
        .map(|s| vec![s.to_string(), cell(s, false), cell(s, true)])
        .collect();
    format!(
        "\nWhen the attack repeats its ids (a {:.0}% attack replaying a list of {POOL} ids, next to one whose ids never repeat; `replay.csv`), null caching answers the repeats from the cache:\n\n{}",
        100.0 * ATTACK_SHARE,
        crate::support::table::markdown_table(
            &[
                "defence",
                "DB queries per 1000 requests, ids never repeat",
                "DB queries per 1000 requests, ids replayed",
            ],
            &body,
        )
    )
}

/// Writes `replay.csv` into the experiment's folder.
pub fn write(ctx: &Ctx, rows: &[ReplayRow]) -> anyhow::Result<()> {
    csvio::write(&ctx.dir(NAME)?.join("replay.csv"), rows)
}

#[cfg(test)]
mod tests {
    use super::{ReplayRow, table};

    fn row(defence: &str, replayed: bool, db_per_1000: f64) -> ReplayRow {
        ReplayRow {
            contender: defence.into(),
            attack_ids: if replayed {
                "replay 1000 ids"
            } else {
                "never repeat"
            }
            .into(),
            requests: 1000,
            db_queries: db_per_1000 as u64,
            db_per_1000,
            requests_per_s: 1e5,
        }
    }

    #[test]
    fn the_table_has_a_line_per_defence_and_notes_only_where_we_lose() {
        let rows = [
            row("null-caching", false, 940.0),
            row("linebloom-in-process", false, 37.0),
            row("null-caching", true, 28.0),
            row("linebloom-in-process", true, 39.0),
        ];
        let mut notes = Vec::new();
        let text = table(&rows, &mut notes);
        assert_eq!(text.matches("| null-caching |").count(), 1, "{text}");
        assert!(
            text.contains("| linebloom-in-process | 37.0 | 39.0 |"),
            "{text}"
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("ids that repeat, null-caching let 28.0"));
    }
}
