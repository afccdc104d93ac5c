//! What the length of a single-key probe's loop costs once the filter is outside the
//! private caches: the one-load floor (`OneBitFloor`) with 0, 2, 4 and 6 rounds of
//! key-only integer work, next to linebloom, sbbf-rs-safe and its control copy.
//!
//! ```text
//! cargo run --release -p linebloom-benches --example probe_window -- [ROUNDS]
//! ```
//!
//! Every variant reads the same one line a key; only the instructions around the read
//! grow. If the time a key grows with them, the loop is bound by how many keys the
//! core's window holds in flight, not by the memory system. Negative lookups at
//! n = 1e4, 1e6 and 1e7, interleaved with a rotating start order, CPU time per pass;
//! prints each contender's median ns per lookup and its median paired speed-up over
//! sbbf-rs-safe.

use linebloom_benches::*;
use linebloom_lab::support::timing::paired_speedup;

fn main() {
    let kernel = linebloom::arch::detect();
    let rounds = rounds_arg(9);
    let misses = &non_member_keys(PROBE_KEYS);
    for n in [10_000u64, 1_000_000, 10_000_000] {
        let mut contenders: Vec<Box<dyn LabFilter>> = vec![
            Box::new(sbbf(n)),
            Box::new(Renamed("control", sbbf(n))),
            Box::new(linebloom(n, kernel)),
            Box::new(OneBitFloor::<0>::new(n)),
            Box::new(OneBitFloor::<2>::new(n)),
            Box::new(OneBitFloor::<4>::new(n)),
            Box::new(OneBitFloor::<6>::new(n)),
        ];
        for f in contenders.iter_mut() {
            fill_and_check(f.as_mut(), n, misses);
        }
        let refs: Vec<&dyn LabFilter> = contenders.iter().map(|f| f.as_ref()).collect();
        let samples = interleaved_lookups(&refs, misses, rounds);
        for (f, s) in contenders.iter().zip(&samples) {
            let (median, _, _) = linebloom_lab::support::stats::summary(s);
            println!(
                "n = {n:>9}  {:<20} {median:6.2} ns  ×{:.2} vs sbbf-rs-safe",
                f.name(),
                paired_speedup(&samples[0], s)
            );
        }
    }
}
