//! Every `unsafe` path of the crate at sizes Miri can run in seconds: CI runs this file
//! (and the unit tests) under `cargo +nightly miri test`. The other test files run
//! thousands of keys or proptest cases per test and are skipped under Miri (the list
//! and the reasons are in `.ci/run`); the paths they reach are the ones below.
//!
//! Each test checks answers against the spec model in `common`, so it is a real test
//! on any target, not only a Miri harness.

mod common;

use common::{NaiveFilter, naive_bits};
use linebloom::block::{blocks_as_bytes, blocks_as_bytes_mut};
use linebloom::{
    AtomicBloomFilter, Block, Blocks, BloomFilter, ClassicBloomFilter, ClassicParams,
    CountingBloomFilter, CountingParams, Params, ScalableBloomFilter, Xxh3,
};

/// Hashes spread over the whole 64-bit range (a Weyl sequence).
fn hashes(seed: u64, n: usize) -> Vec<u64> {
    (1..=n as u64)
        .map(|i| (seed ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect()
}

#[test]
fn every_kernel_and_shape_agrees_with_the_model() {
    // Single-key and batch probes (the kernels' pointer arithmetic, `get_unchecked`,
    // prefetches; 72 keys, past the batch pipeline's 64-key ring) through every kernel
    // this target runs, for k with and without the rotation and with a partial second
    // round, on the smallest filter whose batches run through the ring (3 blocks under
    // Miri) and, for k = 8 and 11, on one block (the batch's direct loop).
    let kernels: Vec<_> = linebloom::arch::available().collect();
    println!(
        "kernels: {:?}",
        kernels.iter().map(|k| k.name).collect::<Vec<_>>()
    );
    for kernel in kernels {
        let ring = linebloom::arch::SMALL_BATCH_BLOCKS as u64 + 1;
        let shapes = [1, 5, 7, 8, 11, 16].map(|k| (ring, k)).into_iter();
        for (blocks, k) in shapes.chain([(1, 8), (1, 11)]) {
            let params = Params::new(blocks, k).unwrap();
            let mut single = BloomFilter::new(params).with_kernel(kernel);
            let mut batch = BloomFilter::new(params).with_kernel(kernel);
            let mut model = NaiveFilter::new(blocks as usize, k);
            let members = hashes(k as u64, 72);
            for &h in &members {
                assert_eq!(
                    single.insert_hash(h),
                    model.insert_hash(h),
                    "{}",
                    kernel.name
                );
            }
            batch.insert_hash_batch(&members);
            let words: Vec<[u64; 8]> = single.as_blocks().iter().map(|b| b.0).collect();
            assert_eq!(words, model.words(), "kernel {} k {k}", kernel.name);
            assert_eq!(single, batch);
            let probes = hashes(1000 + k as u64, 72);
            let mut out = vec![false; probes.len()];
            single.contains_hash_batch(&probes, &mut out);
            for (&h, &got) in probes.iter().zip(&out) {
                assert_eq!(got, model.contains_hash(h));
                assert_eq!(single.contains_hash(h), got);
            }
            // Merge kernels.
            let mut union = BloomFilter::new(params).with_kernel(kernel);
            union.union(&single).unwrap();
            assert_eq!(union, single);
            union.intersect(&BloomFilter::new(params)).unwrap();
            assert_eq!(union.fill_ratio(), 0.0);
        }
    }
}

#[test]
fn storage_kinds_and_conversions() {
    // `Blocks` (owned, borrowed, cloned, back to a box), a caller's `&mut [Block]`, and
    // the atomic filter's in-place conversions in both directions.
    let params = Params::new(2, 8).unwrap();
    let mut owned = BloomFilter::new(params);
    owned.insert(&7u64);
    let copy = owned.clone();
    assert!(copy.contains(&7u64));

    let mut array = [Block::ZERO; 2];
    let mut borrowed = BloomFilter::from_storage(&mut array[..], 8).unwrap();
    borrowed.insert(&7u64);
    assert_eq!(borrowed, owned);

    let shared = AtomicBloomFilter::from(owned);
    assert!(shared.insert(&8u64));
    assert!(shared.contains(&7u64) && shared.contains(&8u64));
    let snapshot = shared.to_bloom();
    let back = shared.into_bloom();
    assert_eq!(snapshot, back);
    let (blocks, _) = back.into_parts();
    let boxed = blocks.into_boxed_slice();
    assert_eq!(boxed.len(), 2);
    let again = Blocks::from(boxed);
    assert_eq!(again.as_ref().len(), 2);
}

#[test]
fn bytes_views_and_every_decoder() {
    let mut f = BloomFilter::with_hasher(Params::new(2, 6).unwrap(), Xxh3::with_seed(3));
    for h in hashes(5, 10) {
        f.insert_hash(h);
    }
    // `blocks_as_bytes` and an aligned, zero-copy `view` (little-endian only).
    let mut buffer = vec![Block::ZERO; f.encoded_len().div_ceil(64)];
    let n = f.encode_into(blocks_as_bytes_mut(&mut buffer)).unwrap();
    assert_eq!(&blocks_as_bytes(&buffer)[..n], &f.to_bytes()[..]);
    #[cfg(target_endian = "little")]
    {
        let view = BloomFilter::<&[Block], Xxh3>::view(&blocks_as_bytes(&buffer)[..n]).unwrap();
        assert_eq!(view, f);
    }
    assert_eq!(
        BloomFilter::<Blocks, Xxh3>::from_bytes_with_hasher(&f.to_bytes()).unwrap(),
        f
    );

    let mut counting = CountingBloomFilter::new(CountingParams::new(2, 5).unwrap());
    counting.insert(&1u64);
    counting.insert(&1u64);
    counting.remove(&1u64).unwrap();
    assert_eq!(counting.count_estimate(&1u64), 1);
    assert_eq!(
        CountingBloomFilter::from_bytes(&counting.to_bytes()).unwrap(),
        counting
    );
    #[cfg(target_endian = "little")]
    {
        let mut buffer = vec![Block::ZERO; counting.encoded_len().div_ceil(64)];
        let n = counting
            .encode_into(blocks_as_bytes_mut(&mut buffer))
            .unwrap();
        let view = CountingBloomFilter::<&[Block]>::view(&blocks_as_bytes(&buffer)[..n]).unwrap();
        assert_eq!(view.count_estimate(&1u64), 1);
        assert_eq!(view.as_blocks(), counting.as_blocks());
    }

    let mut classic = ClassicBloomFilter::new(ClassicParams::new(700, 4).unwrap());
    classic.insert("a");
    assert_eq!(
        ClassicBloomFilter::from_bytes(&classic.to_bytes()).unwrap(),
        classic
    );
    #[cfg(target_endian = "little")]
    {
        let mut buffer = vec![Block::ZERO; classic.encoded_len().div_ceil(64)];
        let n = classic
            .encode_into(blocks_as_bytes_mut(&mut buffer))
            .unwrap();
        let view = ClassicBloomFilter::<&[Block]>::view(&blocks_as_bytes(&buffer)[..n]).unwrap();
        assert!(view.contains("a"));
        assert_eq!(view.as_blocks(), classic.as_blocks());
    }

    let mut scalable = ScalableBloomFilter::for_fpr(4, 0.1).unwrap();
    for i in 0..20u64 {
        scalable.insert(&i).unwrap();
    }
    assert!(scalable.layers() > 1);
    assert_eq!(
        ScalableBloomFilter::from_bytes(&scalable.to_bytes()).unwrap(),
        scalable
    );

    // Corrupt bytes are refused before anything is allocated from them.
    let mut bad = f.to_bytes();
    bad[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(BloomFilter::<Blocks, Xxh3>::from_bytes_with_hasher(&bad).is_err());
    assert!(BloomFilter::<Blocks, Xxh3>::from_bytes_with_hasher(&bad[..10]).is_err());
}

#[test]
fn the_spec_model_and_the_filter_agree_on_bit_positions() {
    // The same check as the kernels' tests, through `hash::for_each_position`, which the
    // counting and atomic filters use.
    for k in [3, 8, 13] {
        for h in hashes(k as u64, 8) {
            let mut bits = Vec::new();
            linebloom::pattern::for_each_position(h, k, |w, f| bits.push(w * 64 + f as usize));
            let block = ((h as u128 * 5u128) >> 64) as usize;
            let mut expected: Vec<usize> = naive_bits(h, 5, k)
                .into_iter()
                .map(|b| b - block * 512)
                .collect();
            bits.sort_unstable();
            expected.sort_unstable();
            assert_eq!(bits, expected, "k {k}");
        }
    }
}

#[test]
fn static_blocks_are_handed_out_once() {
    // The one `unsafe` of `StaticBlocks`: a `&'static mut` to the static's cell, made at
    // most once.
    static STORAGE: linebloom::StaticBlocks<2> = linebloom::StaticBlocks::new();
    let mut f: BloomFilter = BloomFilter::from_storage(STORAGE.take().unwrap(), 8).unwrap();
    assert!(STORAGE.take().is_none());
    f.insert(&3u64);
    assert!(f.contains(&3u64));
    let taken = std::thread::spawn(|| STORAGE.take().is_some())
        .join()
        .unwrap();
    assert!(!taken);
}

#[test]
fn the_static_atomic_filter_matches_the_plain_one() {
    static F: linebloom::StaticAtomicBloomFilter<2> = linebloom::StaticAtomicBloomFilter::new(7);
    let mut plain = BloomFilter::new(Params::new(2, 7).unwrap());
    for h in hashes(9, 20) {
        assert_eq!(F.insert_hash(h), plain.insert_hash(h));
    }
    let mut snapshot = [Block::ZERO; 2];
    F.write_blocks(&mut snapshot);
    assert_eq!(&snapshot[..], plain.as_blocks());
}

#[test]
fn quotient_filters_agree_with_a_multiset_through_every_kernel() {
    // The quotient kernels' entry points (unsafe fn pointers), their block reads and the
    // slot shifts, on two shapes small enough to fill: inserts until the filter refuses,
    // removals of what went in, lookups; then the bytes through every decoder.
    use linebloom::{FilterFull, QuotientParams, VectorQuotientFilter};
    for kernel in linebloom::arch::quotient::available() {
        for tag_bits in [8, 16] {
            let params = QuotientParams::new(2, tag_bits).unwrap();
            let mut f = VectorQuotientFilter::new(params).with_kernel(kernel);
            let mut held = Vec::new();
            for h in hashes(tag_bits as u64, 120) {
                match f.add_hash(h) {
                    Ok(()) => held.push(h),
                    Err(FilterFull) => assert_eq!(f.len(), params.slots()),
                }
            }
            assert!(held.iter().all(|&h| f.contains_hash(h)), "{}", kernel.name);
            for &h in held.iter().step_by(2) {
                f.remove_hash(h).unwrap();
            }
            assert!(held.iter().skip(1).step_by(2).all(|&h| f.contains_hash(h)));
            let mut batch = vec![false; held.len()];
            f.contains_hash_batch(&held, &mut batch);
            assert!(batch.iter().skip(1).step_by(2).all(|&present| present));
            // The batch's prefetching ring, on the smallest filter that takes it.
            let ring =
                QuotientParams::new(linebloom::arch::SMALL_BATCH_BLOCKS as u64 + 2, tag_bits);
            let mut big = VectorQuotientFilter::new(ring.unwrap()).with_kernel(kernel);
            let keys = hashes(tag_bits as u64 + 1, 20);
            keys.iter().for_each(|&h| big.add_hash(h).unwrap());
            let mut batch = vec![false; keys.len()];
            big.contains_hash_batch(&keys, &mut batch);
            assert!(batch.iter().all(|&present| present), "{}", kernel.name);
            let bytes = f.to_bytes();
            assert_eq!(VectorQuotientFilter::from_bytes(&bytes).unwrap(), f);
            let mut storage = [Block::ZERO; 2];
            let into = VectorQuotientFilter::from_bytes_into(&bytes, &mut storage[..]).unwrap();
            assert_eq!(into.len(), f.len());
            #[cfg(target_endian = "little")]
            {
                let aligned = common::aligned_copy(&bytes);
                let copy = &blocks_as_bytes(&aligned)[..bytes.len()];
                let view = VectorQuotientFilter::<&[Block]>::view(copy).unwrap();
                assert!(
                    held.iter()
                        .skip(1)
                        .step_by(2)
                        .all(|&h| view.contains_hash(h))
                );
            }
        }
    }
}
