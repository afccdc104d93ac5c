//! The run's traffic over time: the scale's products and seconds, the attack share
//! stepping by quarters (0%, 10%, 50%, 90%), and the loop that drives one defence
//! through those phases, one second per [`Row`].

use super::row::Row;
use super::scenario::Scenario;
use crate::Ctx;
use std::time::{Duration, Instant};

/// The attack share at `t` of `total`: 0, 10%, 50%, 90% by quarters.
pub fn attack_share(t: Duration, total: Duration) -> f64 {
    match (4.0 * t.as_secs_f64() / total.as_secs_f64()) as u32 {
        0 => 0.0,
        1 => 0.1,
        2 => 0.5,
        _ => 0.9,
    }
}

/// Scale parameters: products, seconds per defence.
pub fn sizes(ctx: &Ctx) -> (u64, u64) {
    ctx.scale
        .pick((20_000, 2), (200_000, 4), (1_000_000, 12), (1_000_000, 40))
}

/// Runs one defence for `secs` seconds, the attack share stepping by quarters, and
/// returns its rows. Each phase change rebuilds the filter where the defence can.
pub fn drive(ctx: &Ctx, mut scenario: Scenario, secs: u64) -> anyhow::Result<Vec<Row>> {
    let total = Duration::from_secs(secs);
    let start = Instant::now();
    let mut rows: Vec<Row> = Vec::new();
    let bar = crate::support::progress::bar(ctx, secs, scenario.defence());
    let mut second = 0u32;
    let mut phase = attack_share(Duration::ZERO, total);
    loop {
        let elapsed = start.elapsed();
        if elapsed >= total {
            break;
        }
        if elapsed.as_secs() as u32 != second {
            rows.push(scenario.finish_second(second));
            second = elapsed.as_secs() as u32;
            bar.set_position(second as u64);
        }
        let share = attack_share(elapsed, total);
        if share != phase {
            phase = share;
            if let Some(Err(e)) = scenario.rebuild() {
                eprintln!("warning: rebuild of {} failed: {e:#}", scenario.defence());
            }
        }
        scenario.step(share)?;
    }
    rows.push(scenario.finish_second(second));
    bar.finish_and_clear();
    Ok(rows)
}
