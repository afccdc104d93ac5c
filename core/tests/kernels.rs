//! Every kernel this CPU runs against the scalar oracle and the naive model: inserts
//! with kernel A and queries with kernel B, byte-identical blocks, equal insert results,
//! `add` equal to `insert`, batch operations equal to one-at-a-time, and the golden
//! vectors through each kernel.

mod common;

use common::NaiveFilter;
use linebloom::arch::{self, Kernel};
use linebloom::{BloomFilter, Params};
use proptest::prelude::*;

fn kernels() -> Vec<&'static Kernel> {
    arch::available().collect()
}

#[test]
fn print_kernels() {
    let ran: Vec<&str> = kernels().iter().map(|k| k.name).collect();
    let compiled: Vec<&str> = arch::compiled().collect();
    println!("kernels compiled for this target: {compiled:?}");
    println!(
        "kernels this CPU runs (tested here): {ran:?}; active: {}",
        linebloom::active_kernel()
    );
    for name in &compiled {
        if !ran.contains(name) {
            println!("SKIPPED kernel {name}: this CPU lacks its instruction set");
        }
    }
    // scalar always; portable wherever it is compiled (where `wide` has vectors).
    assert_eq!(ran[0], "scalar");
    assert_eq!(ran.contains(&"portable"), compiled.contains(&"portable"));
    // A path the host supports must have been built and detected: fail loudly if not.
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            assert!(
                ran.contains(&"avx2"),
                "CPU has AVX2 but the avx2 kernel is missing"
            );
        }
        if std::is_x86_feature_detected!("avx512f") {
            assert!(
                ran.contains(&"avx512"),
                "CPU has AVX-512F but the avx512 kernel is missing"
            );
        }
    }
    #[cfg(target_arch = "aarch64")]
    assert!(ran.contains(&"neon"), "aarch64 without the neon kernel");
    assert_eq!(linebloom::active_kernel(), *ran.last().unwrap());
}

/// The smallest filter whose batch operations run through the prefetch ring.
const RING: u64 = linebloom::arch::SMALL_BATCH_BLOCKS as u64 + 1;

fn shapes() -> impl Strategy<Value = (u64, u32)> {
    (
        prop_oneof![
            Just(1u64),
            1u64..10,
            10u64..200,
            Just(509u64),
            Just(RING),
            RING..RING + 600
        ],
        1u32..=16,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if common::RELEASE { 256 } else { 64 }))]

    #[test]
    fn kernels_agree_bit_for_bit(
        (blocks, k) in shapes(),
        keys in prop::collection::vec(any::<u64>(), 0..400),
        probes in prop::collection::vec(any::<u64>(), 0..200),
    ) {
        let params = Params::new(blocks, k).unwrap();
        let mut model = NaiveFilter::new(blocks as usize, k);
        let mut filters: Vec<_> = kernels().into_iter().map(|kern| BloomFilter::new(params).with_kernel(kern)).collect();
        // The same keys through `add`, the set-only form (for k = 8 on AVX2 and AVX-512
        // its own inline code).
        let mut added = filters.clone();
        for key in &keys {
            let expect = model.insert_hash(filters[0].hash(key));
            for f in &mut filters {
                prop_assert_eq!(f.insert(key), expect, "insert result, kernel {}", f.kernel_name());
            }
            for f in &mut added {
                f.add(key);
            }
        }
        for (a, b) in filters.iter().zip(&added) {
            prop_assert!(a == b, "add differs from insert, kernel {}", b.kernel_name());
        }
        for a in &filters {
            // Bytes identical to the naive model and so across kernels.
            let words: Vec<[u64; 8]> = a.as_blocks().iter().map(|b| b.0).collect();
            prop_assert_eq!(&words, &model.words(), "kernel {} blocks", a.kernel_name());
            // Insert with kernel A, query with every kernel B.
            for kern in kernels() {
                let b = a.clone().with_kernel(kern);
                for key in &keys {
                    prop_assert!(b.contains(key), "false negative: insert {} / query {}", a.kernel_name(), kern.name);
                }
                for key in &probes {
                    prop_assert_eq!(b.contains(key), model.contains_hash(b.hash(key)));
                }
            }
        }
    }

    #[test]
    fn batches_equal_single_operations(
        (blocks, k) in shapes(),
        keys in prop::collection::vec(any::<u64>(), 0..=600),
        probes in prop::collection::vec(any::<u64>(), 0..=40),
    ) {
        let params = Params::new(blocks, k).unwrap();
        for kern in kernels() {
            let mut one = BloomFilter::new(params).with_kernel(kern);
            let mut batch = BloomFilter::new(params).with_kernel(kern);
            for key in &keys {
                one.insert(key);
            }
            batch.insert_batch(&keys);
            prop_assert!(one == batch, "insert_batch differs, kernel {}", kern.name);
            let all: Vec<u64> = keys.iter().chain(&probes).copied().collect();
            let mut out = vec![false; all.len()];
            batch.contains_batch(&all, &mut out);
            for (key, got) in all.iter().zip(&out) {
                prop_assert_eq!(*got, one.contains(key), "contains_batch, kernel {}", kern.name);
            }
        }
    }
}

#[test]
fn every_batch_length_up_to_twice_the_lanes() {
    // Lengths 0..=16 (2 × 8 lanes) and the edges of the batch pipeline's ring (its
    // prefetch distance is 64: shorter batches never reach the steady state), on 1 and 3
    // blocks (the direct loop) and on the smallest filter that runs the ring.
    for kern in kernels() {
        for blocks in [1, 3, RING] {
            for len in (0..=16).chain([63, 64, 65, 127, 128, 129, 200]) {
                let keys: Vec<u64> = (0..len as u64).map(|i| i * 0x9e37_79b9).collect();
                let mut f = BloomFilter::new(Params::new(blocks, 8).unwrap()).with_kernel(kern);
                f.insert_batch(&keys);
                let mut out = vec![false; len];
                f.contains_batch(&keys, &mut out);
                assert!(out.iter().all(|&x| x), "kernel {}, len {len}", kern.name);
            }
        }
    }
}

#[test]
#[should_panic(expected = "differ in length")]
fn batch_length_mismatch_panics_with_a_message() {
    let f = BloomFilter::new(Params::new(1, 8).unwrap());
    f.contains_batch(&[1u64, 2], &mut [false; 1]);
}
