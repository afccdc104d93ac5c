//! Timing tools: per-pass CPU time, interleaved rounds whose start order rotates (so a
//! noisy neighbour, or a fixed position in the round, favours no contender), paired
//! ratios with a control copy as the noise floor, the memory limit lines (independent
//! and dependent random 64-byte reads), and how much of the process sits on huge pages.
//!
//! Why CPU time: the machines are shared, so wall time also counts time the thread spent
//! descheduled. `CLOCK_THREAD_CPUTIME_ID` counts only this thread's time on a core.
//! Why rotation: with a fixed order, an identical copy of one contender measured 1.67×
//! against the original (the first contender of a round pays for the previous round's
//! cache state and frequency changes).

use linebloom::Blocks;
use std::hint::black_box;

/// This thread's CPU time in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> u64 {
    cpu_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// This process's CPU time in nanoseconds, every thread's (`CLOCK_PROCESS_CPUTIME_ID`):
/// for work spread over a runtime's threads.
pub fn process_cpu_ns() -> u64 {
    cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// The time of one of the CPU-time clocks, in nanoseconds.
fn cpu_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; both callers pass a CPU-time clock id
    // that Linux and every POSIX system with CPU-time clocks support.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime of a CPU-time clock failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU nanoseconds per key of one pass of `op` over `keys` (this thread's CPU time).
pub fn ns_per_key(keys: &[u64], op: impl FnOnce(&[u64]) -> u64) -> f64 {
    let t = thread_cpu_ns();
    black_box(op(black_box(keys)));
    (thread_cpu_ns() - t) as f64 / keys.len().max(1) as f64
}

/// This process's anonymous huge-page bytes (`AnonHugePages` of
/// `/proc/self/smaps_rollup`), 0 where the file is missing.
pub fn anon_huge_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("AnonHugePages:"))
                .and_then(|l| {
                    l.split_whitespace()
                        .nth(1)
                        .and_then(|v| v.parse::<u64>().ok())
                })
        })
        .map(|kib| kib * 1024)
        .unwrap_or(0)
}

/// A buffer of `bytes` (rounded to lines) for the memory limit lines, holding a random
/// cyclic permutation of its lines so that a pointer chase visits every line once.
pub struct MemoryProbe {
    lines: Blocks,
}

impl MemoryProbe {
    /// A probe buffer the size of a filter of `bytes`.
    pub fn new(bytes: usize, seed: u64) -> Self {
        use rand::{RngExt, SeedableRng, rngs::StdRng};
        let n = (bytes / 64).max(2);
        // On huge pages from 2 MiB up, like a filter of the same size (`Blocks::zeroed`).
        let mut lines = Blocks::zeroed(n);
        // Sattolo's algorithm: a single cycle through all lines.
        let mut order: Vec<u64> = (0..n as u64).collect();
        let mut rng = StdRng::seed_from_u64(seed);
        for i in (1..n).rev() {
            let j = rng.random_range(0..i);
            order.swap(i, j);
        }
        let blocks = lines.as_mut();
        for (i, &next) in order.iter().enumerate() {
            blocks[i].0[0] = next;
        }
        MemoryProbe { lines }
    }

    /// ns per read of `count` independent random lines (addresses from a cheap
    /// generator, nothing else): what the memory system gives when reads overlap.
    pub fn independent_reads(&self, count: usize, seed: u64) -> f64 {
        let blocks = self.lines.as_ref();
        let n = blocks.len() as u64;
        let t = thread_cpu_ns();
        let mut x = seed | 1;
        let mut acc = 0u64;
        for _ in 0..count {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = ((x as u128 * n as u128) >> 64) as usize;
            acc = acc.wrapping_add(blocks[i].0[1]);
        }
        black_box(acc);
        (thread_cpu_ns() - t) as f64 / count as f64
    }

    /// ns per read of a chain of `count` dependent reads (each address comes from the
    /// previous line): the latency of one line.
    pub fn dependent_chain(&self, count: usize) -> f64 {
        let blocks = self.lines.as_ref();
        let t = thread_cpu_ns();
        let mut i = 0usize;
        for _ in 0..count {
            i = blocks[i].0[0] as usize;
        }
        black_box(i);
        (thread_cpu_ns() - t) as f64 / count as f64
    }
}

/// The order of `len` contenders in round `round`: it starts with contender
/// `round mod len` and goes round from there, so every contender starts a round equally
/// often (a fixed order biased an identical copy by 1.67×).
pub fn round_order(round: usize, len: usize) -> impl Iterator<Item = usize> {
    (0..len).map(move |j| (round + j) % len)
}

/// Runs `rounds` rounds of every closure in `contenders`, interleaved in
/// [`round_order`]. Returns each contender's samples, in round order.
pub fn interleaved(rounds: usize, contenders: &mut [&mut dyn FnMut() -> f64]) -> Vec<Vec<f64>> {
    let len = contenders.len();
    let mut samples = vec![Vec::with_capacity(rounds); len];
    for round in 0..rounds {
        for i in round_order(round, len) {
            samples[i].push(contenders[i]());
        }
    }
    samples
}

/// [`interleaved`] for contenders built in a loop, one boxed closure each.
pub fn interleaved_boxed(
    rounds: usize,
    contenders: &mut [Box<dyn FnMut() -> f64 + '_>],
) -> Vec<Vec<f64>> {
    let mut refs: Vec<&mut dyn FnMut() -> f64> =
        contenders.iter_mut().map(|c| &mut **c as _).collect();
    interleaved(rounds, &mut refs)
}

/// Runs `op` over `keys` split into `threads` slices on scoped threads, each timing its
/// own slice in its CPU time; returns the threads' summed CPU nanoseconds. `op` is a
/// type parameter, so each contender's loop is compiled for it and its operation
/// inlines (a dynamic call per key costs more than a probe).
pub fn parallel_cpu_ns(keys: &[u64], threads: usize, op: &(impl Fn(u64) -> bool + Sync)) -> u64 {
    std::thread::scope(|s| {
        let workers: Vec<_> = keys
            .chunks(keys.len().div_ceil(threads.max(1)).max(1))
            .map(|chunk| {
                s.spawn(move || {
                    let t = thread_cpu_ns();
                    black_box(chunk.iter().filter(|&&k| op(k)).count());
                    thread_cpu_ns() - t
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).sum()
    })
}

/// The median over rounds of `baseline[r] / contender[r]`: how many times faster the
/// contender ran than the baseline in the same round (> 1 = faster). Pairing by round
/// cancels slow drifts that hit both alike.
pub fn paired_speedup(baseline: &[f64], contender: &[f64]) -> f64 {
    let ratios: Vec<f64> = baseline.iter().zip(contender).map(|(b, c)| b / c).collect();
    crate::support::stats::summary(&ratios).0
}
