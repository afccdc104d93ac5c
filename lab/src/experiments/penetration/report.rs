//! The scenario's plots (database queries per 1000 requests, per second, and requests
//! per second, with the attack phases shaded) and its part of REPORT.md, all read back
//! from `data.csv` (and `replay.csv`, `sidebyside.csv` where they exist).

use super::row::{FPR, Row};
use super::sidebyside::SideBySide;
use super::{replay, sidebyside};
use crate::contenders::looks;
use crate::support::csvio;
use crate::support::experiment::{Run, Summary};
use crate::support::plot::{LineChart, Series, Style};
use crate::support::table::markdown_table;

/// The run's attack phases from the CSV: the seconds of the first defence, grouped by
/// attack share, as shaded spans.
fn attack_phases(rows: &[Row]) -> Vec<crate::support::plot::Band> {
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let mut bands: Vec<crate::support::plot::Band> = Vec::new();
    for r in rows.iter().filter(|r| r.contender == first.contender) {
        let label = format!("attack {:.0}%", 100.0 * r.attack_share);
        let second = r.second as f64;
        match bands.last_mut() {
            Some(band) if band.label == label => band.to = second + 0.5,
            _ => bands.push(crate::support::plot::Band {
                from: second - 0.5,
                to: second + 0.5,
                label,
            }),
        }
    }
    bands
}

/// Draws database queries per second and requests per second over time.
pub fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
    let mut defences: Vec<String> = rows.iter().map(|r| r.contender.clone()).collect();
    defences.dedup();
    let series = |pick: fn(&Row) -> f64| -> Vec<Series> {
        defences
            .iter()
            .map(|s| Series {
                name: s.clone(),
                colour_key: s.clone(),
                points: rows
                    .iter()
                    .filter(|r| &r.contender == s)
                    .map(|r| (r.second as f64, pick(r).max(0.5)))
                    .collect(),
                errors: None,
                style: Style::Measured,
            })
            .collect()
    };
    let bands = attack_phases(rows);
    let dir = &run.dir;
    // The headline is per request: defences serve at very different rates (the Redis
    // ones pay a round trip per request), so absolute rates alone mislead.
    crate::support::plot::line_chart(
        dir,
        &LineChart::new(
            "Database queries per 1000 requests, by attack phase",
            "second",
            "database queries per 1000 requests",
        )
        .log_y()
        .bands(&bands),
        &series(|r| 1000.0 * r.db_queries as f64 / r.requests.max(1) as f64),
    )?;
    crate::support::plot::line_chart_as(
        dir,
        "dbps",
        &LineChart::new(
            "Database queries per second (absolute), by attack phase",
            "second",
            "database queries / s",
        )
        .log_y()
        .bands(&bands),
        &series(|r| r.db_queries as f64),
    )?;
    crate::support::plot::line_chart_as(
        dir,
        "requests",
        &LineChart::new(
            "Requests answered per second (one client, closed loop)",
            "second",
            "requests / s",
        )
        .log_y()
        .bands(&bands),
        &series(|r| r.requests as f64),
    )
}

/// Report material from the CSV.
pub fn summary(rows: &[Row], run: &Run) -> anyhow::Result<Summary> {
    let mut defences: Vec<String> = rows.iter().map(|r| r.contender.clone()).collect();
    defences.dedup();
    let attack = |s: &str| {
        rows.iter()
            .filter(move |r| r.contender == s && r.attack_share >= 0.9)
            .collect::<Vec<_>>()
    };
    let sum = |rs: &[&Row], f: fn(&Row) -> u64| rs.iter().map(|r| f(r)).sum::<u64>();
    let none_db = {
        let a = attack(looks::NO_PROTECTION);
        sum(&a, |r| r.db_queries) as f64 / sum(&a, |r| r.requests).max(1) as f64
    };
    let mut table = Vec::new();
    let mut notes = Vec::new();
    for s in &defences {
        let all: Vec<&Row> = rows.iter().filter(|r| &r.contender == s).collect();
        let a = attack(s);
        let secs = all.len().max(1) as f64;
        let db_per_req = sum(&a, |r| r.db_queries) as f64 / sum(&a, |r| r.requests).max(1) as f64;
        let fpr =
            sum(&all, |r| r.false_positives) as f64 / sum(&all, |r| r.absent_checked).max(1) as f64;
        let fneg = sum(&all, |r| r.false_negatives);
        let p50 = all.iter().map(|r| r.p50_us).sum::<f64>() / secs;
        let p99 = all.iter().map(|r| r.p99_us).fold(0.0, f64::max);
        table.push(vec![
            s.clone(),
            all[0].cache.clone(),
            format!("{:.0}", sum(&all, |r| r.requests) as f64 / secs),
            format!(
                "{:.0}",
                sum(&a, |r| r.requests) as f64 / a.len().max(1) as f64
            ),
            format!("{:.3}", db_per_req),
            format!("{:.1}%", 100.0 * (1.0 - db_per_req / none_db)),
            format!("{p50:.1} / {p99:.1}"),
            format!("{:.2}", all[0].filter_bytes as f64 / (1 << 20) as f64),
            if all.iter().any(|r| r.absent_checked > 0) {
                format!("{:.4}", fpr)
            } else {
                "—".into()
            },
            fneg.to_string(),
            sum(&all, |r| r.degraded).to_string(),
        ]);
        if fneg > 0 {
            notes.push(format!(
                "{s} rejected {fneg} valid ids (a bug: this must be 0)"
            ));
        }
    }
    let best_db = table
        .iter()
        .map(|r| r[4].parse::<f64>().unwrap_or(1.0))
        .fold(1.0, f64::min);
    let ours_db = table
        .iter()
        .find(|r| r[0] == looks::IN_PROCESS)
        .and_then(|r| r[4].parse::<f64>().ok())
        .unwrap_or(1.0);
    if best_db < ours_db {
        let who: Vec<&String> = table
            .iter()
            .filter(|r| r[4].parse::<f64>().unwrap_or(1.0) < ours_db)
            .map(|r| &r[0])
            .collect();
        notes.push(format!(
            "fewer database queries per request during the attack than linebloom in process: {}",
            who.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    notes.extend(module_notes(&table));
    let mut text = markdown_table(
        &[
            "defence",
            "cache",
            "requests/s",
            "requests/s in attack",
            "DB queries per request in attack",
            "DB load reduction",
            "latency p50 / p99 µs",
            "filter MiB",
            "measured FPR",
            "false negatives",
            "degraded",
        ],
        &table,
    );
    let monitored: Vec<Vec<String>> = defences
        .iter()
        .filter_map(|s| {
            rows.iter()
                .rfind(|r| &r.contender == s && r.capacity.is_some())
        })
        .map(|r| {
            let alarm = r.capacity().is_some_and(|c| c.over_target());
            vec![
                r.contender.clone(),
                r.fill_ratio.map_or("—".into(), |f| format!("{f:.3}")),
                format!(
                    "{:.0} / {}",
                    r.estimated_len.unwrap_or(f64::NAN),
                    r.capacity.unwrap_or(0)
                ),
                r.estimated_fpr.map_or("—".into(), |p| format!("{:.4}", p)),
                format!("{FPR}"),
                if alarm { "**over target**" } else { "ok" }.into(),
                rows.iter()
                    .filter(|x| x.contender == r.contender)
                    .map(|x| x.rebuilds)
                    .sum::<u64>()
                    .to_string(),
            ]
        })
        .collect();
    if !monitored.is_empty() {
        text.push_str(
            "\nCapacity monitor at the end of each defence's run (sampled once a second into \
             `data.csv`; the in-process filter is a counting filter; the filters behind \
             RedisBloom's commands, on RedisBloom and on the linebloom module, show only \
             their item count against their capacity). The linebloom filters are rebuilt from \
             the database at each attack phase change, larger when the monitor is over \
             target; in Redis into a new generation switched to without a gap:\n\n",
        );
        text.push_str(&markdown_table(
            &[
                "defence",
                "fill ratio",
                "estimated keys / capacity",
                "estimated FPR now",
                "target",
                "alarm",
                "rebuilds",
            ],
            &monitored,
        ));
    }
    let replay_path = run.dir.join("replay.csv");
    if replay_path.exists() {
        text.push_str(&replay::table(&csvio::read(&replay_path)?, &mut notes));
    }
    let sbs_path = run.dir.join("sidebyside.csv");
    if sbs_path.exists() {
        let sbs: Vec<SideBySide> = csvio::read(&sbs_path)?;
        text.push_str(&sidebyside::table(&sbs, &mut notes));
    } else {
        text.push_str("\nThis run had no Redis server (`--redis` not given): the Redis defences and the RedisBloom comparison are not in it.\n");
    }
    Ok(Summary {
        table: text,
        caption: "Database queries per 1000 requests over time for each defence, as the share of requests for ids that do not exist steps from 0% to 10%, 50% and 90%. Beside it, [`dbps.svg`](penetration/dbps.svg) shows the absolute database queries per second and [`requests.svg`](penetration/requests.svg) the requests answered per second: absolute rates also reflect how fast each defence serves (the Redis defences pay a network round trip per request), so queries *per request*, here and in the table, are the fair comparison: without protection the attack lands on the database, null caching only helps for repeated ids (the second table measures it), and every filter rejects about 99% of them before cache and database.".into(),
        not_leading: if notes.is_empty() { "— (linebloom in process had the fewest database queries per request during the attack of every defence measured)".into() } else { notes.join("; ") + "." },
    })
}

/// Where the linebloom module's `BF.*` and `CF.*` defences trail RedisBloom's on the same
/// commands (`linebloom-module-bf` against `redisbloom`, `linebloom-module-cf` against
/// `redisbloom-cuckoo`), from rows of the defence table: filter memory, measured rate,
/// database queries per request in the attack, and requests per second, the last from
/// one closed-loop run each and no control, so said with that caveat.
fn module_notes(table: &[Vec<String>]) -> Vec<String> {
    // Column, what trailing on it reads as, its unit, and whether more is better.
    const FIGURES: [(usize, &str, &str, bool); 4] = [
        (7, "used less filter memory", " MiB", false),
        (8, "had the lower measured FPR", "", false),
        (
            4,
            "let fewer database queries per request through in the attack",
            "",
            false,
        ),
        (
            2,
            "answered more requests per second",
            "; one closed-loop run each, no control",
            true,
        ),
    ];
    let mut notes = Vec::new();
    for (ours, theirs) in [
        (looks::LINEBLOOM_MODULE_BF, looks::REDISBLOOM),
        (looks::LINEBLOOM_MODULE_CF, looks::REDISBLOOM_CUCKOO),
    ] {
        let find = |name: &str| table.iter().find(|r| r[0] == name);
        let (Some(o), Some(t)) = (find(ours), find(theirs)) else {
            continue;
        };
        for (column, what, unit, more_is_better) in FIGURES {
            let (Ok(a), Ok(b)) = (o[column].parse::<f64>(), t[column].parse::<f64>()) else {
                continue;
            };
            if (more_is_better && b > a) || (!more_is_better && b < a) {
                notes.push(format!(
                    "{theirs} {what} than {ours} ({} vs {}{unit})",
                    t[column], o[column]
                ));
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A defence-table row with the columns `module_notes` reads.
    fn row(name: &str, requests: &str, db: &str, mib: &str, fpr: &str) -> Vec<String> {
        let mut r = vec![String::new(); 11];
        r[0] = name.into();
        r[2] = requests.into();
        r[4] = db.into();
        r[7] = mib.into();
        r[8] = fpr.into();
        r
    }

    #[test]
    fn module_notes_name_each_figure_the_module_trails_on() {
        let table = [
            row(looks::REDISBLOOM, "10647", "0.038", "1.31", "0.0052"),
            row(
                looks::LINEBLOOM_MODULE_BF,
                "9804",
                "0.039",
                "1.40",
                "0.0045",
            ),
            row(looks::REDISBLOOM_CUCKOO, "10108", "0.047", "2.00", "0.0154"),
            row(
                looks::LINEBLOOM_MODULE_CF,
                "10129",
                "0.038",
                "1.38",
                "0.0043",
            ),
        ];
        assert_eq!(
            module_notes(&table),
            [
                "redisbloom used less filter memory than linebloom-module-bf (1.31 vs 1.40 MiB)",
                "redisbloom let fewer database queries per request through in the attack than \
                 linebloom-module-bf (0.038 vs 0.039)",
                "redisbloom answered more requests per second than linebloom-module-bf (10647 \
                 vs 9804; one closed-loop run each, no control)",
            ]
        );
        // Without the module's rows (no `--redis`, or a server without it), nothing.
        assert!(module_notes(&table[..1]).is_empty());
    }
}
