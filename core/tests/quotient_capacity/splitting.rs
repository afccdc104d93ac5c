//! **64 to 8192 blocks** (the first rows of `MAX_LOAD`): measured. Plain fills
//! cannot see a chance of 1e-9, so the scheme's fills are walked by multilevel
//! splitting: the walks that reach a crowded state (a block one tag short of full,
//! two such, one of them full, two full) are continued from there many times over,
//! and the fractions that reach each next state, times the chance of a refusal summed
//! over the keys that follow, estimate the expected number of refusals without bias.
//! A row is the most keys at which six independent estimates put it, plus two
//! standard errors, at or below `FULL_CHANCE`. The estimate agrees with 40 000
//! fills of a real 64-block filter where the chance is near 2e-3 (a test).

use super::*;
use crate::fluid::{FLUID_MARGIN, fluid_capacity};

/// The generator of [`refusal_estimate`]'s walks (wyrand): its rows must come out
/// the same from every build and platform, so the stream is fixed here.
struct Wyrand(u64);

impl Wyrand {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let product = self.0 as u128 * (self.0 ^ 0xe703_7ed1_a0b4_28db) as u128;
        (product >> 64) as u64 ^ product as u64
    }

    /// Uniform on `0..k`.
    fn below(&mut self, k: usize) -> usize {
        ((self.next() as u128 * k as u128) >> 64) as usize
    }
}

/// A filter's block loads as the scheme fills them: each key's first block uniform,
/// its second `first + d` with `d` uniform on `0..m` and `0` sent to `m/2` (as
/// [`refusal_chances`] says), the key in the first block while that holds fewer than
/// the threshold, else in the emptier (the first on a tie); both full, it is refused
/// and nothing changes.
#[derive(Clone)]
struct Fill {
    loads: Vec<u8>,
    /// Keys offered so far, refused ones included.
    keys: u64,
    /// `at_least[l]`: the blocks holding at least `l` tags.
    at_least: [u32; 50],
    /// The full blocks.
    full: Vec<u32>,
}

impl Fill {
    fn empty(blocks: usize) -> Self {
        let mut at_least = [0; 50];
        at_least[0] = blocks as u32;
        Fill {
            loads: vec![0; blocks],
            keys: 0,
            at_least,
            full: Vec::new(),
        }
    }

    /// Offers one key.
    fn add(&mut self, slots: u8, below: u8, rng: &mut Wyrand) {
        let m = self.loads.len();
        let first = rng.below(m);
        let d = match rng.below(m) {
            0 => m / 2,
            d => d,
        };
        let second = if first + d >= m {
            first + d - m
        } else {
            first + d
        };
        let at_first = self.loads[first];
        let to = if at_first >= below && self.loads[second] < at_first {
            second
        } else {
            first
        };
        self.keys += 1;
        if self.loads[to] < slots {
            self.loads[to] += 1;
            self.at_least[self.loads[to] as usize] += 1;
            if self.loads[to] == slots {
                self.full.push(to as u32);
            }
        }
    }

    /// The chance that the next key is refused: both its blocks full, which is the
    /// first block full (`1/m` each) and the second another full block (`1/m` each,
    /// `2/m` for its couple).
    fn refusal_chance(&self, slots: u8) -> f64 {
        let m = self.loads.len();
        let full = self.full.len();
        let full_couples = self
            .full
            .iter()
            .filter(|&&b| self.loads[(b as usize + m / 2) % m] == slots)
            .count();
        (full * full.saturating_sub(1) + full_couples) as f64 / (m as f64 * m as f64)
    }

    /// Whether at least `count` blocks hold at least `load` tags, for each pair.
    fn reached(&self, level: &[(u32, u8)]) -> bool {
        level
            .iter()
            .all(|&(count, load)| self.at_least[load as usize] >= count)
    }
}

/// The expected number of refusals within the first `horizon − j` keys offered to a
/// filter of `blocks` blocks of `slots` slots, for `j` in `0..back`, estimated from
/// `trajectories` walks a stage by multilevel splitting (fixed effort).
///
/// A refusal needs two full blocks, which at a table's capacity is rare (a chance
/// near 1e-9), so plain fills would never see one. The walks instead pass a ladder of
/// levels, each implied by the next and by a refusal: a block one tag short of full,
/// two such, two and one of them full, two full. Stage `k` starts its walks from
/// states drawn uniformly, with replacement, among those at which the walks of stage
/// `k − 1` first reached their level, and counts the fraction that reach the next
/// before `horizon` keys; the product of the fractions estimates the chance of
/// reaching the last level, without bias. The last stage walks on to `horizon`,
/// adding each key's [`Fill::refusal_chance`]: the chance of a refusal at a key is
/// zero until the last level holds, so the product times the mean of those sums
/// estimates the expected number of refusals, itself at least the chance of one.
/// Summing only the first `horizon − j` keys gives the earlier counts from the same
/// walks (they are noisier the further back they reach).
fn refusal_estimate(
    blocks: usize,
    slots: u8,
    horizon: u64,
    back: usize,
    trajectories: usize,
    seed: u64,
) -> Vec<f64> {
    let below = first_block_below(blocks, slots as u32) as u8;
    let s = slots;
    let ladder: [&[(u32, u8)]; 4] = [
        &[(1, s - 1)],
        &[(2, s - 1)],
        &[(2, s - 1), (1, s)],
        &[(2, s)],
    ];
    let mut rng = Wyrand(seed);
    let mut starts = vec![Fill::empty(blocks)];
    let mut reach = 1.0;
    for level in ladder {
        let mut reached = Vec::new();
        for _ in 0..trajectories {
            let mut fill = starts[rng.below(starts.len())].clone();
            while fill.keys < horizon && !fill.reached(level) {
                fill.add(slots, below, &mut rng);
            }
            if fill.reached(level) {
                reached.push(fill);
            }
        }
        reach *= reached.len() as f64 / trajectories as f64;
        if reached.is_empty() {
            return vec![0.0; back];
        }
        starts = reached;
    }
    // chances[j]: the summed chance of a refusal at key `horizon − j` (1-based).
    let mut chances = vec![0.0; horizon as usize];
    for _ in 0..trajectories {
        let mut fill = starts[rng.below(starts.len())].clone();
        while fill.keys < horizon {
            chances[(horizon - 1 - fill.keys) as usize] += fill.refusal_chance(slots);
            fill.add(slots, below, &mut rng);
        }
    }
    let scale = reach / trajectories as f64;
    let mut within: f64 = chances.iter().sum();
    (0..back)
        .map(|j| {
            let expected = within * scale;
            within -= chances[j];
            expected
        })
        .collect()
}

/// Mean and standard error of `runs` independent [`refusal_estimate`]s (seeds
/// `seed..seed + runs`), for each of its `back` key counts.
fn refusal_estimates(
    blocks: usize,
    slots: u8,
    horizon: u64,
    back: usize,
    runs: u64,
    seed: u64,
) -> Vec<(f64, f64)> {
    extern crate std;
    // One thread a run, as many at once as the machine has cores (a run holds up to
    // two stages of SPLIT_WALKS fills, 5 GB at 131 072 blocks): each run's
    // arithmetic is the same as alone.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut estimates: Vec<Vec<f64>> = Vec::new();
    for wave in (seed..seed + runs).collect::<Vec<u64>>().chunks(cores) {
        std::thread::scope(|scope| {
            let threads: Vec<_> = wave
                .iter()
                .map(|&seed| {
                    scope.spawn(move || {
                        refusal_estimate(blocks, slots, horizon, back, SPLIT_WALKS, seed)
                    })
                })
                .collect();
            estimates.extend(threads.into_iter().map(|t| t.join().unwrap()));
        });
    }
    let runs = estimates;
    (0..back)
        .map(|j| {
            let n = runs.len() as f64;
            let mean = runs.iter().map(|run| run[j]).sum::<f64>() / n;
            let spread = runs.iter().map(|run| (run[j] - mean) * (run[j] - mean));
            (mean, libm::sqrt(spread.sum::<f64>() / (n - 1.0) / n))
        })
        .collect()
}

/// Walks a stage of [`refusal_estimate`] for the table's rows.
const SPLIT_WALKS: usize = 20_000;

/// The most keys at which `estimates` (from [`refusal_estimates`], the first at
/// `horizon` keys, each next one key fewer) put the mean expected number of
/// refusals plus two standard errors at or below [`FULL_CHANCE`]; `None` if none.
fn most_keys_estimated(horizon: u64, estimates: &[(f64, f64)]) -> Option<u64> {
    estimates
        .iter()
        .position(|&(mean, se)| mean + 2.0 * se <= FULL_CHANCE)
        .map(|j| horizon - j as u64)
}

/// The capacity [`MAX_LOAD`]'s measured rows are built from, for `blocks` blocks of
/// `slots` slots, below `ceiling` keys (the fluid limit's capacity, which the walks
/// never pass at these sizes): a rough answer from 2 estimates over the top 5% below
/// the ceiling, then 6 estimates over a window of `w = max(8, ceiling/400)` keys either
/// side of it, the window raised while the answer is its top.
fn measured_capacity(blocks: usize, slots: u8, ceiling: u64) -> u64 {
    let rough = refusal_estimates(blocks, slots, ceiling, ceiling as usize / 20, 2, 100);
    let rough = most_keys_estimated(ceiling, &rough)
        .expect("the rough pass finds a capacity within 5% of the fluid limit's");
    let w = (ceiling / 400).max(8);
    let mut top = (rough + w).min(ceiling);
    loop {
        let window = refusal_estimates(blocks, slots, top, 2 * w as usize, 6, 200 + top);
        let capacity = most_keys_estimated(top, &window).expect("the window holds the capacity");
        if capacity < top || top == ceiling {
            return capacity;
        }
        top = (top + w).min(ceiling);
    }
}

/// The rows of [`MAX_LOAD`] measured by [`measured_capacity`], for 64 to 8192 blocks.
pub(crate) const MEASURED_ROWS: usize = 8;

/// Row `row` of [`MAX_LOAD`] is [`measured_capacity`]'s answer as a load, rounded
/// down, and the shape's capacity.
fn check_measured_load(row: usize) {
    for (column, tag_bits) in [(0, 8u32), (1, 16)] {
        let blocks = 64usize << row;
        let slots = slots_per_block(tag_bits) as u8;
        let measured = measured_capacity(blocks, slots, fluid_capacity(blocks, slots, FULL_CHANCE));
        let load = measured * 10_000 / (blocks as u64 * slots as u64);
        assert_eq!(
            MAX_LOAD[row][column] as u64, load,
            "{blocks} blocks, {slots} slots: measured {measured} keys"
        );
        let p = QuotientParams::new(blocks as u64, tag_bits).unwrap();
        assert!(p.capacity() <= measured);
    }
}

/// [`MAX_LOAD`] for 64 blocks.
#[test]
#[cfg_attr(
    any(miri, debug_assertions, not(target_arch = "x86_64")),
    ignore = "walks millions of partial fills by splitting: 5 s optimised on x86_64, far \
              longer in debug or under an emulator; the arithmetic is the same anywhere"
)]
fn the_load_of_64_blocks_is_measured() {
    check_measured_load(0);
}

/// [`MAX_LOAD`] for 128 to 8192 blocks (128 blocks take 8 s, 256 blocks 16 s). Run by
/// hand:
/// `cargo test --profile tests -p linebloom --test quotient_capacity from_128_blocks -- --ignored`.
#[test]
#[ignore = "walks fills of up to 8192 blocks by splitting: about 10 minutes optimised"]
fn the_loads_from_128_blocks_are_measured() {
    for row in 1..MEASURED_ROWS {
        check_measured_load(row);
    }
}

/// Block counts between powers of two take the lower of the two rows, and refuse no
/// more often than [`FULL_CHANCE`]: at their capacity, the estimate plus two
/// standard errors is at or below it.
#[test]
#[cfg_attr(
    any(miri, debug_assertions, not(target_arch = "x86_64")),
    ignore = "walks fills of 96 and 192 blocks by splitting: seconds optimised on x86_64"
)]
fn the_loads_between_powers_of_two_hold() {
    for blocks in [96usize, 192] {
        for tag_bits in [8u32, 16] {
            assert_capacity_holds(blocks, tag_bits, 300);
        }
    }
}

/// Asserts that a filter of `blocks` blocks of `tag_bits`-bit tags filled to its
/// capacity refuses with an estimated chance (six estimates from seed `seed`, plus two
/// standard errors) at or below [`FULL_CHANCE`]; returns the capacity and the
/// estimate's mean and standard error.
fn assert_capacity_holds(blocks: usize, tag_bits: u32, seed: u64) -> (u64, f64, f64) {
    let capacity = QuotientParams::new(blocks as u64, tag_bits)
        .unwrap()
        .capacity();
    let slots = slots_per_block(tag_bits) as u8;
    let (mean, se) = refusal_estimates(blocks, slots, capacity, 1, 6, seed)[0];
    assert!(
        mean + 2.0 * se <= FULL_CHANCE,
        "{blocks} blocks of {tag_bits}-bit tags: {mean:e} ± {se:e} at {capacity} keys"
    );
    (capacity, mean, se)
}

/// Why the rows past the measured ones take the fluid limit at a tenth of
/// [`FULL_CHANCE`]: at its own capacity (at [`FULL_CHANCE`]) the fluid limit
/// understates the estimated chance at every measured size, but by less than
/// [`FLUID_MARGIN`] (two standard errors either way) from 2048 blocks. Run by hand:
/// `cargo test --profile tests -p linebloom --test quotient_capacity understates -- --ignored --nocapture`.
#[test]
#[ignore = "walks fills of up to 8192 blocks by splitting: about 8 minutes optimised"]
fn the_fluid_limit_understates_refusals_within_its_margin() {
    extern crate std;
    for row in 0..MEASURED_ROWS {
        let blocks = 64usize << row;
        for slots in [48u8, 28] {
            let fluid = fluid_capacity(blocks, slots, FULL_CHANCE);
            let (mean, se) = refusal_estimates(blocks, slots, fluid, 1, 6, 400)[0];
            std::println!(
                "{blocks} blocks, {slots} slots, {fluid} keys: {:.2} ± {:.2} times FULL_CHANCE",
                mean / FULL_CHANCE,
                se / FULL_CHANCE
            );
            assert!(
                mean - 2.0 * se > FULL_CHANCE,
                "{blocks} blocks, {slots} slots"
            );
            if blocks >= 2048 {
                assert!(
                    mean + 2.0 * se < FLUID_MARGIN * FULL_CHANCE,
                    "{blocks} blocks, {slots} slots"
                );
            }
        }
    }
}

/// The first rows past the measured ones, taken from the fluid limit at a tenth of
/// [`FULL_CHANCE`], hold where splitting still reaches: at 16 384, 32 768, 65 536 and
/// 131 072 blocks a filter filled to its capacity refuses with an estimated chance
/// (plus two standard errors) at or below [`FULL_CHANCE`]. Run by hand:
/// `cargo test --profile tests -p linebloom --test quotient_capacity fluid_rows -- --ignored --nocapture`;
/// `LINEBLOOM_FLUID_BLOCKS=131072` (a comma-separated list) walks only those rows.
#[test]
#[ignore = "walks fills of 16 384 to 131 072 blocks by splitting: about two hours optimised"]
fn the_fluid_rows_hold_where_splitting_reaches() {
    extern crate std;
    let only: Option<Vec<usize>> = std::env::var("LINEBLOOM_FLUID_BLOCKS").ok().map(|list| {
        list.split(',')
            .map(|b| {
                b.trim()
                    .parse()
                    .expect("LINEBLOOM_FLUID_BLOCKS: block counts")
            })
            .collect()
    });
    for row in MEASURED_ROWS..MEASURED_ROWS + 4 {
        let blocks = 64usize << row;
        if only.as_ref().is_some_and(|only| !only.contains(&blocks)) {
            continue;
        }
        for tag_bits in [8u32, 16] {
            let started = std::time::Instant::now();
            let (capacity, mean, se) = assert_capacity_holds(blocks, tag_bits, 600);
            std::println!(
                "{blocks} blocks of {tag_bits}-bit tags, {capacity} keys: {:.3} ± {:.3} \
                 times FULL_CHANCE ({:.0} s)",
                mean / FULL_CHANCE,
                se / FULL_CHANCE,
                started.elapsed().as_secs_f64()
            );
        }
    }
}

/// The estimate is the filter: 64 blocks filled to where it puts the chance of a
/// refusal near 2e-3 refuse as often as it says. 40 000 seeded fills a tag width;
/// the count must sit within 5 standard deviations of the estimate's mean, counting
/// the spread of the fills and of the estimate.
#[test]
#[cfg_attr(
    any(miri, debug_assertions, not(target_arch = "x86_64")),
    ignore = "fills 80 000 filters of 64 blocks: seconds optimised on x86_64, minutes in \
              debug or under an emulator"
)]
fn the_filter_refuses_as_often_as_the_estimate_says() {
    for tag_bits in [8u32, 16] {
        let (blocks, slots) = (64usize, slots_per_block(tag_bits) as u8);
        let n = fluid_capacity(blocks, slots, 2e-3);
        let (mean, se) = refusal_estimates(blocks, slots, n, 1, 6, 500)[0];
        let fills = 40_000u32;
        let refused = refused_fills(blocks, tag_bits, n as usize, fills, 64 + tag_bits as u64);
        let expected = fills as f64 * mean;
        let sd = libm::sqrt(expected + (fills as f64 * se) * (fills as f64 * se));
        assert!(
            (refused as f64 - expected).abs() <= 5.0 * sd,
            "{blocks} blocks of {tag_bits}-bit tags, {n} keys: {refused} refused in \
             {fills} fills, the estimate says {expected:.1} ± {:.1}",
            fills as f64 * se
        );
    }
}
