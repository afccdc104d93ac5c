//! Shared set-up for the criterion benchmarks and `compare`: the contenders (the lab's
//! [`LabFilter`] adapters, so benchmarks and lab measure the same code), the sizes, the keys,
//! and a false-positive check so that speed is only compared at equal or lower measured
//! FPR.
//!
//! Every contender gets the same `u64` keys. The rivals hash them with XXH3-64 of the
//! key's 8 little-endian bytes (through `insert_hash`/`contains_hash`); linebloom with its
//! default `IntFold` (through its `Key` impl for `u64`), and `linebloom-xxh3-*` with the
//! same XXH3-64 as the rivals.

use linebloom::arch::Kernel;
use linebloom::{Block, Blocks, BloomFilter, Params};
use rand::{RngExt, SeedableRng, rngs::StdRng};
use serde::{Deserialize, Serialize};

/// Target false-positive rate the filters are built for.
pub const TARGET_FPR: f64 = 0.01;

/// Capacities benchmarked, and where each linebloom filter (≈10 bits per key) sits on the
/// machine of the committed runs (an AMD EPYC VM: 32 KiB L1d and 512 KiB L2 per core,
/// 32 MiB L3 shared with other tenants): 12 KiB (L1), 1.2 MiB (L3), 12 MiB (L3, where
/// the tenants leave it room) and 1.2 GiB (DRAM).
pub const CAPACITIES: [u64; 4] = [10_000, 1_000_000, 10_000_000, 1_000_000_000];

/// The capacities without the DRAM one, when `LINEBLOOM_BENCH_QUICK` is set (for a
/// fast look; the committed results use all four).
pub fn capacities() -> Vec<u64> {
    let quick = std::env::var_os("LINEBLOOM_BENCH_QUICK").is_some();
    CAPACITIES
        .iter()
        .copied()
        .filter(|&n| !quick || n < 100_000_000)
        .collect()
}

/// Keys per measured iteration; criterion reports time per iteration, and the summary
/// divides by this.
pub const KEYS_PER_ITER: usize = 1024;

pub use linebloom_lab::contenders::{Blocked, Fastbloom, LabFilter, Linebloom, Renamed, Sbbf};

/// linebloom sized by `Params::for_fpr(n, TARGET_FPR)`, with a forced kernel.
pub fn linebloom(n: u64, kernel: &'static Kernel) -> Blocked<linebloom::Blocks> {
    linebloom_lab::contenders::blocked(Params::for_fpr(n, TARGET_FPR).expect("valid size"), kernel)
}

/// sbbf-rs-safe for `n` keys at 1% by the lab's recipe (the Parquet spec's 10 bits per
/// key).
pub fn sbbf(n: u64) -> Sbbf {
    Sbbf::for_fpr(n, TARGET_FPR)
}

/// fastbloom for `n` keys at 1% by the lab's recipe (its own
/// `with_false_pos(0.01).expected_items(n)`).
pub fn fastbloom(n: u64) -> Fastbloom {
    Fastbloom::for_fpr(n, TARGET_FPR)
}

/// The seed of the benchmarks' member keys (the lab's default seed).
pub const KEY_SEED: u64 = 42;

/// Member key `i` (even): the lab's keyed stream of [`KEY_SEED`], so a billion keys
/// need no storage.
#[inline]
pub fn member_key(i: u64) -> u64 {
    linebloom_lab::support::keys::keyed_member(KEY_SEED, i)
}

/// Keys that the lookup benchmarks cycle through: 2^16 of them (512 KiB), random
/// positions in the filter, so each lookup touches an unpredictable line.
pub const PROBE_KEYS: usize = 1 << 16;

/// 2^24 lookups for a DRAM-sized filter of `n` members: members at random indices
/// and non-members, alternating. They touch more distinct lines than the caches hold.
pub fn dram_probes(n: u64) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(0xd7a3);
    (0..1u64 << 24)
        .map(|i| {
            if i % 2 == 0 {
                member_key(rng.random_range(0..n))
            } else {
                rng.random::<u64>() | 1
            }
        })
        .collect()
}

/// The first `PROBE_KEYS` members (hits).
pub fn hit_keys(n: u64) -> Vec<u64> {
    (0..(PROBE_KEYS as u64).min(n)).map(member_key).collect()
}

/// `count` non-member keys (odd, seeded): disjoint from every member set.
pub fn non_member_keys(count: usize) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(0xfeed);
    (0..count).map(|_| rng.random::<u64>() | 1).collect()
}

/// Fills `c` with members `0..n`, checks the first ones are found, measures its FPR on
/// `probes`, and appends one row to `target/linebloom-bench/fpr.csv` (name, capacity,
/// bytes, bits per key, FPR), which the summary joins to the timings.
pub fn fill_and_check<C: LabFilter + ?Sized>(c: &mut C, n: u64, probes: &[u64]) {
    linebloom_lab::support::keys::fill(c, n, member_key, |_| {});
    assert!(
        (0..n.min(10_000)).all(|i| c.contains(member_key(i))),
        "{}: false negative",
        c.name()
    );
    let fp = probes.iter().filter(|&&k| c.contains(k)).count();
    let rate = fp as f64 / probes.len() as f64;
    let bits_per_key = c.bytes() as f64 * 8.0 / n as f64;
    eprintln!(
        "{:>20} n = {n:>10}: {:>11} bytes, {bits_per_key:.2} bits/key, measured FPR {rate:.5}",
        c.name(),
        c.bytes(),
    );
    std::fs::create_dir_all("target/linebloom-bench").expect("create target/linebloom-bench");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(FPR_CSV)
        .expect("open fpr.csv");
    let mut out = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(file);
    out.serialize(FprRecord {
        contender: c.name(),
        capacity: n,
        bytes: c.bytes(),
        bits_per_key: rounded(bits_per_key, 4),
        measured_fpr: rate,
    })
    .and_then(|()| out.flush().map_err(Into::into))
    .expect("write fpr.csv");
}

/// Where [`fill_and_check`] appends its rows (no header: one per filled contender).
pub const FPR_CSV: &str = "target/linebloom-bench/fpr.csv";

/// One row of [`FPR_CSV`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FprRecord {
    /// The contender's name.
    pub contender: String,
    /// Keys it was filled with.
    pub capacity: u64,
    /// Its memory.
    pub bytes: usize,
    /// Bits per key.
    pub bits_per_key: f64,
    /// Measured false-positive rate.
    pub measured_fpr: f64,
}

/// One row of `compare`'s CSV (written by `compare`, read by `compare_table`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CompareRecord {
    /// The workload's table (`hit`, `miss`, `insert`, `add`, `atomic-…`).
    pub table: String,
    /// Keys in the filter.
    pub n: u64,
    /// The contender's name.
    pub contender: String,
    /// Median CPU ns per key over the rounds.
    pub median_cpu_ns: f64,
    /// Fastest round.
    pub min_cpu_ns: f64,
    /// Slowest round.
    pub max_cpu_ns: f64,
    /// Median over rounds of sbbf-rs-safe's time over this contender's.
    pub speedup_vs_sbbf: f64,
    /// Bits per key.
    pub bits_per_key: f64,
    /// Measured false-positive rate.
    pub measured_fpr: f64,
    /// Non-members the rate was measured on.
    pub fpr_probes: usize,
}

/// `x` rounded to `digits` decimals, for CSV columns that need no more.
#[must_use]
pub fn rounded(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// linebloom sized like [`linebloom()`] on ordinary 4 KiB pages (a boxed slice from the
/// global allocator) rather than the huge-page mapping `BloomFilter::new` makes from
/// 2 MiB up: what the pages alone are worth, with the kernel and hash unchanged.
pub fn small_page_filter(n: u64, kernel: &'static Kernel) -> Blocked<Blocks> {
    let params = Params::for_fpr(n, TARGET_FPR).expect("valid size");
    let storage = Blocks::from(vec![Block::ZERO; params.blocks()].into_boxed_slice());
    let f = BloomFilter::from_storage(storage, params.k())
        .expect("valid params")
        .with_kernel(kernel);
    Linebloom(f)
}

/// The least work a one-line-per-key filter's single-key probe can do, as a contender:
/// one multiply for the hash, one multiply-shift for the block, one load of one word
/// of that block's 64-byte line, one bit test (k = 1). It is a real filter (no false
/// negatives; its false-positive rate is that of k = 1 at the same memory, far above
/// 1%), at the size linebloom's default filter takes for `n` keys, so its time per key
/// in the same loop is the floor under every single-key filter that reads one line a
/// key, linebloom's included: on a filter outside the private caches, the time of the
/// line's read, overlapped only as far as the core's window holds keys in flight.
///
/// `PAD` rounds of key-only integer work (a rotate, a shift and two xors each, which
/// the bit index then takes in) lengthen the loop without lengthening the wait on the
/// line: `benches/examples/probe_window.rs` uses them to show what the length of a
/// probe's loop alone costs when the filter is outside the private caches.
pub struct OneBitFloor<const PAD: u32 = 0>(Blocks);

impl<const PAD: u32> OneBitFloor<PAD> {
    /// Sized like [`linebloom()`]'s filter for `n` keys, on the same storage.
    pub fn new(n: u64) -> Self {
        OneBitFloor(Blocks::zeroed(
            Params::for_fpr(n, TARGET_FPR).expect("valid size").blocks(),
        ))
    }

    #[inline(always)]
    fn slot(&self, key: u64) -> (usize, u64) {
        let h = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let block = linebloom::pattern::block_index(h, self.0.as_ref().len());
        let mut pad = h;
        for round in 0..PAD {
            pad = pad.rotate_left(7 + round) ^ (pad >> 3) ^ key;
        }
        (block, 1 << ((pad >> 32) & 63))
    }
}

impl<const PAD: u32> LabFilter for OneBitFloor<PAD> {
    fn name(&self) -> String {
        match PAD {
            0 => "floor-1bit".into(),
            pad => format!("floor-1bit-pad{pad}"),
        }
    }
    fn insert(&mut self, key: u64) {
        let (block, bit) = self.slot(key);
        self.0.as_mut()[block].0[0] |= bit;
    }
    fn contains(&self, key: u64) -> bool {
        let (block, bit) = self.slot(key);
        self.0.as_ref()[block].0[0] & bit != 0
    }
    fn bytes(&self) -> usize {
        self.0.as_ref().len() * 64
    }
}

/// The examples' one argument: the number of rounds.
#[derive(clap::Parser)]
pub struct RoundsArg {
    /// Rounds (contenders interleaved, the start order rotating every round).
    pub rounds: Option<usize>,
}

/// The examples' one argument, the number of rounds: `default` when absent; a value
/// that is not a number ends the program with clap's message.
#[must_use]
pub fn rounds_arg(default: usize) -> usize {
    <RoundsArg as clap::Parser>::parse()
        .rounds
        .unwrap_or(default)
}

/// Times [`LabFilter::count_each`] over `keys` for every filter, interleaved for `rounds`
/// rounds with a rotating start order (`linebloom_lab::support::timing::interleaved_boxed`), each pass
/// in CPU ns per key: one dynamic call per pass, so each filter runs its own loop.
/// Returns one sample list per filter, in order.
pub fn interleaved_lookups(
    filters: &[&dyn LabFilter],
    keys: &[u64],
    rounds: usize,
) -> Vec<Vec<f64>> {
    use linebloom_lab::support::timing::{interleaved_boxed, ns_per_key};
    let mut closures: Vec<Box<dyn FnMut() -> f64 + '_>> = filters
        .iter()
        .map(|f| Box::new(move || ns_per_key(keys, |k| f.count_each(k))) as Box<dyn FnMut() -> f64>)
        .collect();
    interleaved_boxed(rounds, &mut closures)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The floor is a real filter: no false negatives, and the false-positive rate of
    /// one bit in one 64-bit word a block, within a binomial bound.
    #[test]
    fn the_floor_finds_every_member_at_the_rate_of_one_bit_a_key() {
        fn check<const PAD: u32>() {
            let n = 20_000u64;
            let mut f = OneBitFloor::<PAD>::new(n);
            for i in 0..n {
                f.insert(member_key(i));
            }
            assert!((0..n).all(|i| f.contains(member_key(i))), "false negative");
            let probes = non_member_keys(200_000);
            let fp = probes.iter().filter(|&&k| f.contains(k)).count() as f64;
            // Each key sets one of the 64·blocks bits of the words tested.
            let bits = f.0.as_ref().len() as f64 * 64.0;
            let p = 1.0 - (1.0 - 1.0 / bits).powf(n as f64);
            let m = probes.len() as f64;
            let sigma = (m * p * (1.0 - p)).sqrt();
            // 6σ of the binomial, plus 2% of the mean for the hash's unevenness.
            let slack = 6.0 * sigma + 0.02 * m * p;
            assert!(
                (fp - m * p).abs() <= slack,
                "PAD {PAD}: {fp} false positives, expected {:.0}",
                m * p
            );
        }
        check::<0>();
        check::<4>();
    }
}
