//! The one criterion target: `cargo bench -p linebloom-benches [-- FILTER]`.
//!
//! Modules, each with `register(c)`:
//! * `insert`: single-key insert per contender and size;
//! * `contains`: single-key lookup, hits and misses, per contender and size;
//! * `batch`: `contains_batch` against the single-key loop on the same filter.
//!
//! IDs are `<topic>/<contender>/<capacity>`, so one run compares every kernel and rival
//! at each size; `cargo run -p linebloom-benches --bin summarize` turns the run into
//! `results/bench/main/<date>.csv`.

mod batch;
mod contains;
mod insert;

use criterion::Criterion;
use std::time::Duration;

fn config() -> Criterion {
    // Short windows: the suite covers 4 sizes × 6 contenders × 3 topics on a 2-core box.
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}

fn main() {
    let mut c = config();
    insert::register(&mut c);
    contains::register(&mut c);
    batch::register(&mut c);
    c.final_summary();
}
