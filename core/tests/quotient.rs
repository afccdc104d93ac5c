//! The vector quotient filter against a model (a multiset of hashes), through every
//! kernel this CPU runs: no false negatives, exact counts, `len`, refusals that change
//! nothing, bit-identical blocks and answers across kernels, blocks that stay well
//! formed (a decoder would take them back), and the sizing promises.

use linebloom::arch::quotient::{self, QuotientKernel};
use linebloom::{
    Block, FilterFull, MAX_BYTES, ParamsError, QuotientParams, RemoveError, Stored,
    VectorQuotientFilter,
};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng, rngs::StdRng};
use std::collections::HashMap;

fn kernels() -> Vec<&'static QuotientKernel> {
    quotient::available().collect()
}

#[test]
fn print_quotient_kernels() {
    let ran: Vec<&str> = kernels().iter().map(|k| k.name).collect();
    let compiled: Vec<&str> = quotient::compiled().collect();
    println!("quotient kernels compiled: {compiled:?}");
    println!("quotient kernels this CPU runs (tested here): {ran:?}");
    for name in &compiled {
        if !ran.contains(name) {
            println!("SKIPPED quotient kernel {name}: this CPU lacks its instruction set");
        }
    }
    assert_eq!(ran[0], "scalar");
    assert_eq!(quotient::detect().name, *ran.last().unwrap());
    #[cfg(target_arch = "x86_64")]
    {
        use std::is_x86_feature_detected as has;
        assert_eq!(ran.contains(&"avx2"), has!("avx2") && has!("popcnt"));
        assert_eq!(
            ran.contains(&"avx512"),
            has!("avx512bw") && has!("bmi1") && has!("bmi2") && has!("popcnt")
        );
    }
    #[cfg(target_arch = "aarch64")]
    assert!(ran.contains(&"neon"));
}

/// One operation of a property run; keys are indexes into a small pool, so that
/// repeats, removals of held keys and lookups of absent ones all happen.
#[derive(Clone, Debug)]
enum Op {
    Insert(u8),
    Add(u8),
    Remove(u8),
    Contains(u8),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            3 => any::<u8>().prop_map(Op::Insert),
            1 => any::<u8>().prop_map(Op::Add),
            2 => any::<u8>().prop_map(Op::Remove),
            2 => any::<u8>().prop_map(Op::Contains),
        ],
        0..400,
    )
}

/// Runs `ops` on one filter per kernel, checking each against the model and all of
/// them against each other after every step.
fn run(blocks: u64, tag_bits: u32, seed: u64, ops: &[Op]) {
    let params = QuotientParams::new(blocks, tag_bits).unwrap();
    let mut filters: Vec<VectorQuotientFilter> = kernels()
        .into_iter()
        .map(|k| VectorQuotientFilter::new(params).with_kernel(k))
        .collect();
    let key = |i: u8| linebloom::pattern::fmix64(seed ^ i as u64);
    let mut model: HashMap<u64, u64> = HashMap::new();
    for op in ops {
        match *op {
            Op::Insert(i) | Op::Add(i) => {
                let h = key(i);
                let present = filters[0].contains_hash(h);
                let results: Vec<Result<bool, FilterFull>> = filters
                    .iter_mut()
                    .map(|f| match op {
                        Op::Insert(_) => f.insert_hash(h).map(|s| s == Stored::New),
                        _ => f.add_hash(h).map(|()| !present),
                    })
                    .collect();
                assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:?}");
                if let Ok(new) = results[0] {
                    assert_eq!(new, !present);
                    *model.entry(h).or_default() += 1;
                }
            }
            Op::Remove(i) => {
                let h = key(i);
                if model.get(&h).copied().unwrap_or(0) == 0 {
                    continue; // remove only what was inserted
                }
                for f in &mut filters {
                    assert_eq!(f.remove_hash(h), Ok(()), "kernel {}", f.kernel_name());
                }
                *model.get_mut(&h).unwrap() -= 1;
            }
            Op::Contains(i) => {
                let h = key(i);
                let answers: Vec<bool> = filters.iter().map(|f| f.contains_hash(h)).collect();
                assert!(answers.windows(2).all(|w| w[0] == w[1]));
            }
        }
        for f in &filters[1..] {
            assert!(
                f.as_blocks() == filters[0].as_blocks(),
                "kernel {} differs from scalar",
                f.kernel_name()
            );
        }
        let held: u64 = model.values().sum();
        for (&h, &count) in &model {
            if count > 0 {
                assert!(filters.iter().all(|f| f.contains_hash(h)), "false negative");
            }
            // A count is at least the copies held, and the whole filter's counts of
            // distinct fingerprints cannot exceed what it holds.
            assert!(
                filters[0].count_hash(h) as u64 >= count,
                "count below the model"
            );
            assert!(filters[0].count_hash(h) as u64 <= held);
        }
        assert!(filters.iter().all(|f| f.len() == held));
    }
    // A batch lookup answers as single lookups do, on every kernel (every key the ops
    // could name, in an order that repeats none, and a prefix shorter than the
    // prefetch distance).
    let hashes: Vec<u64> = (0..=255u8).rev().map(key).collect();
    for f in &filters {
        for hashes in [&hashes[..], &hashes[..5]] {
            let mut out = vec![false; hashes.len()];
            f.contains_hash_batch(hashes, &mut out);
            let single: Vec<bool> = hashes.iter().map(|&h| f.contains_hash(h)).collect();
            assert_eq!(out, single, "kernel {}", f.kernel_name());
        }
    }
    // The blocks are well formed: storage built from them is accepted.
    let copy: Vec<Block> = filters[0].as_blocks().to_vec();
    let back = VectorQuotientFilter::from_storage(copy, tag_bits).unwrap();
    assert_eq!(back.len(), filters[0].len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Tiny filters fill up, so refusals and full blocks are exercised; larger ones
    /// hold every key.
    #[test]
    fn kernels_match_the_model(
        blocks in prop_oneof![Just(2u64), Just(4), 2u64..40],
        tag_bits in prop_oneof![Just(8u32), Just(16)],
        seed in any::<u64>(),
        ops in ops(),
    ) {
        let blocks = blocks + blocks % 2;
        run(blocks, tag_bits, seed, &ops);
    }
}

/// One key inserted until a 2-block filter is full, so that its bucket's run fills
/// both blocks, then removed one by one: counts and refusals, per kernel. The key's
/// bucket is the first, the second, a middle one and the last in turn (the runs that
/// start at the first slot and end past the last are the edge cases of the lookup).
#[test]
fn full_filter_refuses_and_counts() {
    for kernel in kernels() {
        for (tag_bits, buckets) in [(8u32, 80u32), (16, 36)] {
            for bucket in [0, 1, buckets / 2, buckets - 1] {
                let h = (0u64..)
                    .map(linebloom::pattern::fmix64)
                    .find(|&h| linebloom::quotient::location(h, 2, tag_bits).bucket == bucket)
                    .unwrap();
                let params = QuotientParams::new(2, tag_bits).unwrap();
                let mut f = VectorQuotientFilter::new(params).with_kernel(kernel);
                let slots = params.slots();
                for i in 0..slots {
                    let stored = if i == 0 { Stored::New } else { Stored::Again };
                    assert_eq!(f.insert_hash(h), Ok(stored));
                    assert!(f.contains_hash(h), "{tag_bits}-bit, bucket {bucket}");
                }
                let before = f.as_blocks().to_vec();
                assert_eq!(f.insert_hash(h), Err(FilterFull));
                assert_eq!(f.insert_hash(h ^ 1), Err(FilterFull));
                assert!(f.as_blocks() == &before[..], "a refusal changed nothing");
                assert_eq!(f.len(), slots);
                assert!((f.load_factor() - 1.0).abs() < 1e-12);
                for _ in 0..slots {
                    assert!(f.contains_hash(h), "{tag_bits}-bit, bucket {bucket}");
                    f.remove_hash(h).unwrap();
                }
                assert_eq!(f.remove_hash(h), Err(RemoveError::NotPresent));
                assert!(f.is_empty() && f.as_blocks().iter().all(|b| *b == Block::ZERO));
            }
        }
    }
}

/// From 64 blocks up an insert fills the key's first block to the width's threshold
/// (36 of 48 tags, 18 of 28) whatever its second block holds, then takes the emptier
/// block; below 64 blocks every key goes to the emptier block. Keys whose first block is
/// block 0 (found with `location`) show where each went.
#[test]
fn inserts_prefer_the_first_block_from_64_blocks_up() {
    for kernel in kernels() {
        for (tag_bits, threshold) in [(8u32, 36u64), (16, 18)] {
            for blocks in [62u64, 64, 1000] {
                let params = QuotientParams::new(blocks, tag_bits).unwrap();
                let mut f = VectorQuotientFilter::new(params).with_kernel(kernel);
                let mut rng = StdRng::seed_from_u64(blocks + u64::from(tag_bits));
                let first_in_block_0 =
                    std::iter::repeat_with(|| rng.random::<u64>()).filter(|&h| {
                        linebloom::quotient::location(h, blocks as usize, tag_bits).first == 0
                    });
                for h in first_in_block_0.take(threshold as usize + 1) {
                    f.add_hash(h).unwrap();
                }
                let load_0 = f.block_loads().next().unwrap() as u64;
                if blocks >= 64 {
                    // The threshold's keys filled block 0; the next went to its (empty)
                    // second block.
                    assert_eq!(load_0, threshold, "{tag_bits}-bit, {blocks} blocks");
                } else {
                    // Each key went to the emptier block: block 0 took the first, and
                    // later ones only on a tie with a second block that earlier keys
                    // shared.
                    assert!(
                        load_0 < threshold / 4,
                        "{tag_bits}-bit, {blocks} blocks: {load_0}"
                    );
                }
            }
        }
    }
}

/// Long churn at high load on a filter big enough for every kernel's path: every held
/// key found after every step; the deleted keys were all inserted (the model holds
/// them); the blocks of every kernel identical at the end.
#[test]
fn churn_at_high_load_has_no_false_negatives() {
    for tag_bits in [8, 16] {
        let params = QuotientParams::for_capacity(20_000, tag_bits).unwrap();
        let mut filters: Vec<VectorQuotientFilter> = kernels()
            .into_iter()
            .map(|k| VectorQuotientFilter::new(params).with_kernel(k))
            .collect();
        let mut rng = StdRng::seed_from_u64(37 + tag_bits as u64);
        let mut held: Vec<u64> = Vec::new();
        for step in 0..200_000u32 {
            let grow = held.len() < 20_000 && (held.len() < 15_000 || rng.random::<bool>());
            if grow {
                let h: u64 = rng.random();
                for f in &mut filters {
                    f.add_hash(h).expect("below capacity");
                }
                held.push(h);
            } else {
                let i = rng.random_range(0..held.len());
                let h = held.swap_remove(i);
                for f in &mut filters {
                    assert_eq!(f.remove_hash(h), Ok(()), "step {step}");
                }
            }
            if step % 20_000 == 0 {
                assert!(
                    held.iter()
                        .all(|&h| filters.iter().all(|f| f.contains_hash(h)))
                );
            }
        }
        assert!(
            held.iter()
                .all(|&h| filters.iter().all(|f| f.contains_hash(h)))
        );
        for f in &filters[1..] {
            assert!(
                f.as_blocks() == filters[0].as_blocks(),
                "{}",
                f.kernel_name()
            );
        }
    }
}

#[test]
fn sizing_meets_capacity_and_rate() {
    for tag_bits in [8, 16] {
        for n in [1u64, 2, 10, 47, 48, 49, 1000, 123_457, 10_000_000] {
            let p = QuotientParams::for_capacity(n, tag_bits).unwrap();
            assert!(p.capacity() >= n, "{n} {tag_bits}");
            assert!(p.blocks().is_multiple_of(2));
            if p.blocks() > 2 {
                let smaller = QuotientParams::new(p.blocks() as u64 - 2, tag_bits).unwrap();
                assert!(smaller.capacity() < n, "{n} {tag_bits}: not the smallest");
            }
        }
    }
    for fpr in [0.05, 0.01, 0.005, 0.003, 0.001, 1e-4, 1e-5, 1e-7] {
        for n in [100u64, 10_000, 1_000_000] {
            let p = QuotientParams::for_fpr(n, fpr).unwrap();
            assert!(p.fpr_bound(n) <= 0.95 * fpr * (1.0 + 1e-12), "{n} {fpr}");
            assert!(p.expected_fpr(n) <= p.fpr_bound(n));
            assert!(p.capacity() >= n);
            assert!(p.capacity_at(fpr) >= n);
            // The other width would not be smaller.
            let other = if p.tag_bits() == 8 { 16 } else { 8 };
            if let Ok(q) = QuotientParams::for_capacity(n, other) {
                let q_rate = 2.0 * n as f64
                    / (0.95 * fpr * q.buckets_per_block() as f64 * (1u64 << other) as f64);
                assert!(
                    q.blocks().max(q_rate.ceil() as usize) + 1 >= p.blocks(),
                    "{n} {fpr}"
                );
            }
        }
    }
    // 8-bit tags at 1%: under 12 bits per key at a million keys.
    let p = QuotientParams::for_fpr(1_000_000, 0.01).unwrap();
    assert_eq!(p.tag_bits(), 8);
    assert!(
        p.bits_per_key(1_000_000) < 11.6,
        "{}",
        p.bits_per_key(1_000_000)
    );
    assert_eq!(QuotientParams::new(3, 8), Err(ParamsError::OddBlocks(3)));
    assert_eq!(
        QuotientParams::new(4, 12),
        Err(ParamsError::InvalidTagBits(12))
    );
    assert_eq!(QuotientParams::new(0, 8), Err(ParamsError::ZeroBlocks));
    assert!(QuotientParams::for_fpr(0, 0.01).is_err());
    assert!(QuotientParams::for_fpr(10, 1.5).is_err());
}

/// `for_fpr` keeps both promises over a dense grid of capacities and rates, both
/// widths among them: room for `n` keys (`capacity() >= n`) and the rate at `n`
/// (`expected_fpr(n) <= p`), including the shapes whose block count the rate pushes
/// just past a power of two, where the capacity's load row drops.
#[test]
fn for_fpr_keeps_capacity_and_rate_over_a_dense_grid() {
    let mut pairs = vec![(182_845u64, 0.004_587_685), (93_073_195, 0.004_56)];
    for i in 0..120 {
        let n = (10f64.powf(1.0 + 7.0 * i as f64 / 119.0)) as u64;
        for j in 0..160 {
            pairs.push((n, 10f64.powf(-6.0 + 5.0 * j as f64 / 159.0)));
        }
    }
    // Rates at the tag widths' crossings, finely.
    for n in [1_000u64, 65_537, 182_845, 1 << 20, 3_000_001] {
        for j in 0..400 {
            pairs.push((n, 0.0044 + 0.0003 * j as f64 / 399.0));
            pairs.push((n, 1.9e-5 + 0.3e-5 * j as f64 / 399.0));
        }
    }
    let mut widths = [0usize; 2];
    let mut refused = 0;
    for (n, fpr) in pairs {
        let p = match QuotientParams::for_fpr(n, fpr) {
            Ok(p) => p,
            // Only on 32-bit targets, where `MAX_BYTES` is 2 GiB: the refusal must
            // name a size truly past it.
            Err(ParamsError::TooLarge { bytes }) if bytes > MAX_BYTES => {
                refused += 1;
                continue;
            }
            Err(e) => panic!("for_fpr({n}, {fpr}): {e}"),
        };
        widths[usize::from(p.tag_bits() == 16)] += 1;
        assert!(
            p.capacity() >= n,
            "for_fpr({n}, {fpr}): capacity {}",
            p.capacity()
        );
        assert!(p.expected_fpr(n) <= fpr, "for_fpr({n}, {fpr})");
    }
    assert!(widths[0] > 1000 && widths[1] > 1000, "{widths:?}");
    if MAX_BYTES >= 1 << 40 {
        assert_eq!(refused, 0, "no shape on this grid needs a terabyte");
    }
}

#[test]
fn malformed_storage_is_refused() {
    let mut blocks = vec![Block::ZERO; 4];
    blocks[2].0[7] = 5; // a tag in an empty block's last slot
    assert_eq!(
        VectorQuotientFilter::from_storage(&blocks[..], 8).err(),
        Some(ParamsError::MalformedBlock { index: 2 })
    );
    assert_eq!(
        VectorQuotientFilter::from_storage(&blocks[..3], 8).err(),
        Some(ParamsError::OddBlocks(3))
    );
    blocks[2] = Block([u64::MAX; 8]);
    assert!(VectorQuotientFilter::from_storage(&blocks[..], 16).is_err());
}

/// Filling to the sized capacity never hits a full pair: 300 filters of each width at
/// three small sizes (where the fluid limit is least accurate), every insert accepted.
#[test]
fn sized_capacity_is_never_refused() {
    for tag_bits in [8, 16] {
        for n in [100u64, 1000, 20_000] {
            let params = QuotientParams::for_capacity(n, tag_bits).unwrap();
            let rounds = if n == 20_000 { 30 } else { 300 };
            for seed in 0..rounds {
                let mut rng = StdRng::seed_from_u64(seed);
                let mut f = VectorQuotientFilter::new(params);
                for _ in 0..params.capacity() {
                    f.add_hash(rng.random()).expect("refused below capacity");
                }
            }
        }
    }
}

/// The rate formula against measurement at 50%, 80% and 94% load (8-bit tags), and
/// the filter's estimate from its block loads against the formula. Bound: the issue's
/// ±3% plus 4 binomial standard deviations of the 2^22 probes (about 1.2% at 0.23%, the
/// lowest rate here); the keys are seeded, so the outcome is fixed.
#[test]
fn rate_matches_the_formula_at_50_80_and_94_percent() {
    let params = QuotientParams::new(1 << 12, 8).unwrap();
    let mut f = VectorQuotientFilter::new(params);
    let mut rng = StdRng::seed_from_u64(94);
    for load in [0.5, 0.8, 0.94] {
        let target = (load * params.slots() as f64) as u64;
        while f.len() < target {
            f.add_hash(rng.random()).unwrap();
        }
        let probes = 1u64 << 22;
        let hits = (0..probes)
            .filter(|_| f.contains_hash(rng.random()))
            .count();
        let measured = hits as f64 / probes as f64;
        let formula = params.expected_fpr(f.len());
        let sigma = (formula * (1.0 - formula) / probes as f64).sqrt() / formula;
        let deviation = (measured / formula - 1.0).abs();
        assert!(
            deviation <= 0.03 + 4.0 * sigma,
            "{load}: measured {measured:.5}, formula {formula:.5}"
        );
        let estimated = f.estimated_fpr();
        assert!(
            (estimated / formula - 1.0).abs() < 0.01,
            "{estimated} vs {formula}"
        );
        assert!(measured <= params.fpr_bound(f.len()) * (1.0 + 4.0 * sigma));
    }
}

/// `contains_batch` hashes keys in chunks and prefetches ahead through a ring: for
/// batches shorter and longer than the ring, and across chunk boundaries, every member
/// answers present and every answer is the single lookup's; unequal
/// lengths panic.
#[test]
fn batch_lookup_matches_single_lookups_across_chunks() {
    for k in kernels() {
        // Larger than 128 KiB, so the batch takes its prefetching loop.
        let mut f = VectorQuotientFilter::new(QuotientParams::for_fpr(150_000, 0.01).unwrap())
            .with_kernel(k);
        assert!(f.params().bytes() > 128 << 10);
        let members: std::collections::HashSet<u64> = (0..150_000u64).map(|i| i * 7919).collect();
        for key in &members {
            f.add(key).unwrap();
        }
        let probes: Vec<u64> = (0..1001u64).map(|i| i * 7919 * 3 + i % 2).collect();
        // Batches shorter than, as long as and longer than the 16-key prefetch ring, and
        // one across hashing chunks.
        for len in [0, 1, 15, 16, 17, probes.len()] {
            let probes = &probes[..len];
            let mut out = vec![false; len];
            f.contains_batch(probes, &mut out);
            for (key, &answer) in probes.iter().zip(&out) {
                assert_eq!(answer, f.contains(key), "kernel {} key {key}", k.name);
                if members.contains(key) {
                    assert!(answer, "false negative, kernel {}", k.name);
                }
            }
        }
    }
    let f = VectorQuotientFilter::new(QuotientParams::new(4, 8).unwrap());
    let unequal = std::panic::catch_unwind(|| f.contains_batch(&[1u64, 2], &mut [false; 3]));
    assert!(
        unequal.is_err(),
        "keys and out of unequal length must panic"
    );
}
