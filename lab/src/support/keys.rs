//! The lab's key streams (seeded members and non-members, a keyed stream for filters
//! too large to hold their keys) and the helpers that fill a filter from them or count
//! its false positives, shared by the experiments and the benchmarks.

use crate::Ctx;

/// `n` member keys for this run (even, from the run's seed).
pub fn members(ctx: &Ctx, n: usize, stream: u64) -> Vec<u64> {
    use rand::{RngExt, SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(ctx.seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    (0..n).map(|_| rng.random::<u64>() & !1).collect()
}

/// `n` non-member keys (odd: disjoint from every member set).
pub fn non_members(ctx: &Ctx, n: usize, stream: u64) -> Vec<u64> {
    use rand::{RngExt, SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(!ctx.seed ^ stream.wrapping_mul(0xc2b2_ae3d_27d4_eb4f));
    (0..n).map(|_| rng.random::<u64>() | 1).collect()
}

/// Counts false positives of `f` over `probes`, in batches.
pub fn false_positives(f: &dyn crate::contenders::LabFilter, probes: &[u64]) -> u64 {
    let mut out = vec![false; 4096];
    let mut hits = 0;
    for chunk in probes.chunks(4096) {
        f.contains_batch(chunk, &mut out[..chunk.len()]);
        hits += out[..chunk.len()].iter().filter(|&&x| x).count() as u64;
    }
    hits
}

/// Counts false positives of `f` over keys `key(i)` for `i` in `range`, generated in
/// chunks, so that a billion probes need no list in memory.
pub fn count_positives(
    f: &dyn crate::contenders::LabFilter,
    range: std::ops::Range<u64>,
    key: impl Fn(u64) -> u64,
) -> u64 {
    const CHUNK: u64 = 1 << 16;
    let (mut keys, mut out) = (
        Vec::with_capacity(CHUNK as usize),
        vec![false; CHUNK as usize],
    );
    let mut hits = 0;
    let mut i = range.start;
    while i < range.end {
        let end = range.end.min(i + CHUNK);
        keys.clear();
        keys.extend((i..end).map(&key));
        f.contains_batch(&keys, &mut out[..keys.len()]);
        hits += out[..keys.len()].iter().filter(|&&x| x).count() as u64;
        i = end;
    }
    hits
}

/// Random non-member number `i`: odd, from a SplitMix64 stream of its index and the
/// run's seed (for [`count_positives`]).
pub fn random_probe(ctx: &Ctx, i: u64) -> u64 {
    member_key(ctx, i ^ 0x5bd1_e995_0000_0000) | 1
}

/// Member key number `i` of this run's keyed stream (even), for filters too large to
/// hold their key set in memory: [`keyed_member`] with the run's seed.
#[inline]
pub fn member_key(ctx: &Ctx, i: u64) -> u64 {
    keyed_member(ctx.seed, i)
}

/// Member key number `i` of the stream of `seed` (even; SplitMix64 of `i` and the
/// seed): the lab's and the benchmarks' key streams.
#[inline]
pub fn keyed_member(seed: u64, i: u64) -> u64 {
    let mut z = i
        .wrapping_add(seed.wrapping_mul(0xd6e8_feb8_6659_fd93))
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) & !1
}

/// Inserts `key(0)`, …, `key(n - 1)` into `f` in batches of 2^16, calling `done` with
/// the count inserted after each batch.
pub fn fill<F: crate::contenders::LabFilter + ?Sized>(
    f: &mut F,
    n: u64,
    key: impl Fn(u64) -> u64,
    mut done: impl FnMut(u64),
) {
    let mut chunk = Vec::with_capacity(1 << 16);
    let mut i = 0;
    while i < n {
        chunk.clear();
        chunk.extend((i..n.min(i + (1 << 16))).map(&key));
        f.insert_batch(&chunk);
        i += chunk.len() as u64;
        done(i);
    }
}

/// Inserts member keys `0..n` of the stream into `f`, in chunks, with a progress bar.
pub fn fill_stream(ctx: &Ctx, f: &mut dyn crate::contenders::LabFilter, n: u64, what: &str) {
    let bar = crate::support::progress::bar(ctx, n, what);
    fill(f, n, |i| member_key(ctx, i), |i| bar.set_position(i));
    bar.finish_and_clear();
}
