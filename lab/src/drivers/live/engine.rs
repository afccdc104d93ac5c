//! The live pipeline: every defence of the penetration scenario at once, each in its own
//! thread with its own database copy, all on the same traffic (same seed, same attack
//! share, same request rate), under controls that take effect within a second.
//!
//! Each thread drives a [`Scenario`], the code `lab run penetration` uses, and keeps
//! its last [`WINDOW`] per-second [`Row`]s and its latest heat map in [`Live`], which
//! the server reads. A defence whose guard or cache fails keeps running: its requests
//! count as degraded (never "absent"), and the page shows it.

use crate::experiments::penetration::Row;
use crate::experiments::penetration::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Seconds of history kept per defence: the page's sliding window (5 minutes).
pub const WINDOW: usize = 300;
/// Cells of the heat map.
pub const HEATMAP_CELLS: usize = 64;

/// What the page can change.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Controls {
    /// Share of requests for ids that do not exist, 0..=1.
    pub attack_share: f64,
    /// Requests per second, per defence.
    pub rate: u32,
    /// Paused: no requests are sent.
    pub paused: bool,
}

/// One control request from the page: every field optional, unknown fields refused.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlRequest {
    /// New attack share, 0..=1.
    pub attack_share: Option<f64>,
    /// New rate, 1..=[`MAX_RATE`] requests per second per defence.
    pub rate: Option<u32>,
    /// Pause (true) or resume (false).
    pub paused: Option<bool>,
    /// Add this many new legitimate ids to every defence, 1..=[`MAX_ADD`].
    pub add: Option<u64>,
    /// Rebuild every filter that can be rebuilt from its database.
    pub rebuild: Option<bool>,
}

/// Highest request rate the page may ask for, per defence.
pub const MAX_RATE: u32 = 100_000;
/// Most ids one "add" may ask for.
pub const MAX_ADD: u64 = 1_000_000;

impl ControlRequest {
    /// Checks every field; the error says which one is wrong and why. Nothing changes
    /// unless the whole request is valid.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(a) = self.attack_share
            && !(0.0..=1.0).contains(&a)
        {
            return Err(format!("attack_share must be in 0..=1, got {a}"));
        }
        if let Some(r) = self.rate
            && !(1..=MAX_RATE).contains(&r)
        {
            return Err(format!("rate must be in 1..={MAX_RATE}, got {r}"));
        }
        if let Some(n) = self.add
            && !(1..=MAX_ADD).contains(&n)
        {
            return Err(format!("add must be in 1..={MAX_ADD}, got {n}"));
        }
        if self.rebuild == Some(false) {
            return Err("rebuild takes only true".into());
        }
        Ok(())
    }
}

/// One defence's state as the page sees it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DefenceState {
    /// Defence name.
    pub name: String,
    /// Its last seconds, oldest first (at most [`WINDOW`]).
    pub rows: VecDeque<Row>,
    /// Bit density per cell of its filter (empty: no filter, or not visible).
    pub heatmap: Vec<f64>,
    /// The last error of its pipeline, if the last second had one.
    pub error: Option<String>,
}

/// What the threads and the server share.
pub struct Live {
    controls: Mutex<Controls>,
    /// Total ids asked for by "add" since the start (each thread catches up).
    added: AtomicU64,
    /// Rebuilds asked for since the start.
    rebuilds: AtomicU64,
    stop: AtomicBool,
    defences: Mutex<Vec<DefenceState>>,
    started: Instant,
}

/// Everything the page shows at one moment.
#[derive(Clone, Debug, Serialize)]
pub struct Snapshot {
    /// Seconds since the start.
    pub uptime_s: f64,
    /// The controls in force.
    pub controls: Controls,
    /// The target false-positive rate of every filter.
    pub target_fpr: f64,
    /// Every defence, with its last `rows` seconds.
    pub defences: Vec<DefenceState>,
}

impl Live {
    /// Shared state for `names`, starting with `controls`.
    pub fn new(names: &[String], controls: Controls) -> Arc<Live> {
        Arc::new(Live {
            controls: Mutex::new(controls),
            added: AtomicU64::new(0),
            rebuilds: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            defences: Mutex::new(
                names
                    .iter()
                    .map(|n| DefenceState {
                        name: n.clone(),
                        ..DefenceState::default()
                    })
                    .collect(),
            ),
            started: Instant::now(),
        })
    }

    /// Applies a validated control request.
    pub fn apply(&self, req: &ControlRequest) -> Result<Controls, String> {
        req.validate()?;
        let mut c = self.controls.lock().expect("controls lock");
        if let Some(a) = req.attack_share {
            c.attack_share = a;
        }
        if let Some(r) = req.rate {
            c.rate = r;
        }
        if let Some(p) = req.paused {
            c.paused = p;
        }
        if let Some(n) = req.add {
            self.added.fetch_add(n, Ordering::Relaxed);
        }
        if req.rebuild == Some(true) {
            self.rebuilds.fetch_add(1, Ordering::Relaxed);
        }
        Ok(*c)
    }

    /// The controls in force.
    pub fn controls(&self) -> Controls {
        *self.controls.lock().expect("controls lock")
    }

    /// A snapshot with each defence's last `seconds` rows.
    pub fn snapshot(&self, seconds: usize) -> Snapshot {
        let defences = self.defences.lock().expect("defences lock");
        Snapshot {
            uptime_s: self.started.elapsed().as_secs_f64(),
            controls: self.controls(),
            target_fpr: crate::experiments::penetration::FPR,
            defences: defences
                .iter()
                .map(|s| DefenceState {
                    name: s.name.clone(),
                    rows: s.rows.iter().rev().take(seconds).rev().cloned().collect(),
                    heatmap: s.heatmap.clone(),
                    error: s.error.clone(),
                })
                .collect(),
        }
    }

    /// Asks every thread to stop.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Has [`stop`](Self::stop) been called?
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn record(&self, index: usize, row: Row, heatmap: Option<Vec<f64>>, error: Option<String>) {
        let mut defences = self.defences.lock().expect("defences lock");
        let s = &mut defences[index];
        s.rows.push_back(row);
        while s.rows.len() > WINDOW {
            s.rows.pop_front();
        }
        if let Some(h) = heatmap {
            s.heatmap = h;
        }
        s.error = error;
    }
}

/// Starts one thread per scenario; each runs until [`Live::stop`].
pub fn spawn(live: &Arc<Live>, scenarios: Vec<Scenario>) -> Vec<std::thread::JoinHandle<()>> {
    scenarios
        .into_iter()
        .enumerate()
        .map(|(index, scenario)| {
            let live = Arc::clone(live);
            std::thread::Builder::new()
                .name(format!("live-{}", scenario.defence()))
                .spawn(move || run_defence(&live, index, scenario))
                .expect("spawn a defence thread")
        })
        .collect()
}

/// One defence's loop: requests paced at the rate, controls and commands applied as
/// they come, one row per second.
fn run_defence(live: &Live, index: usize, mut scenario: Scenario) {
    let start = Instant::now();
    let (mut second, mut sent) = (0u32, 0u64);
    let (mut added, mut rebuilds) = (0u64, 0u64);
    let mut error: Option<String> = None;
    while !live.stopped() {
        let now = start.elapsed();
        if now.as_secs() as u32 != second {
            let row = scenario.finish_second(second);
            let heatmap = match scenario.heatmap(HEATMAP_CELLS) {
                Some(Ok(h)) => Some(h),
                Some(Err(e)) => {
                    error.get_or_insert(format!("heat map: {e:#}"));
                    None
                }
                None => None,
            };
            live.record(index, row, heatmap, error.take());
            second = now.as_secs() as u32;
            sent = 0;
        }
        let want_added = live.added.load(Ordering::Relaxed);
        if want_added > added {
            if let Err(e) = scenario.add_ids(want_added - added) {
                error = Some(format!("add: {e:#}"));
            }
            added = want_added;
        }
        let want_rebuilds = live.rebuilds.load(Ordering::Relaxed);
        if want_rebuilds > rebuilds {
            rebuilds = want_rebuilds;
            if let Some(Err(e)) = scenario.rebuild() {
                error = Some(format!("rebuild: {e:#}"));
            }
        }
        let controls = live.controls();
        // Pace: by this point of the second, `rate × fraction` requests.
        let due = (controls.rate as f64 * now.subsec_nanos() as f64 / 1e9) as u64 + 1;
        if controls.paused || sent >= due {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        if let Err(e) = scenario.step(controls.attack_share) {
            error = Some(format!("{e:#}"));
            std::thread::sleep(Duration::from_millis(50));
        }
        sent += 1;
    }
}
