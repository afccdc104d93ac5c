//! The filter family: one property suite, generated once by `family_suite!`, runs over
//! every filter type (no false negatives, agreement with a `HashSet` model, format round
//! trip, union where supported); then each type's own behaviour, seeded FPR tests with
//! binomial bounds, and decode errors with every-byte mutation.

mod common;

use common::{RELEASE, STATIC_BLOCKS, members, non_members};
use linebloom::*;
use proptest::prelude::*;
use std::collections::HashSet;

/// What the shared suite needs of a filter kind beyond [`InsertFilter`], through which
/// the suite inserts and looks up: how to build one, its format round trip, equality as
/// the kind defines it, and its optional view and union.
trait Family: InsertFilter + Sized {
    /// A filter for about `n` keys at 1%.
    fn for_capacity(n: u64) -> Self;
    /// Encoded by the kind's format (or its plain snapshot's) and decoded again.
    fn round_trip(&self) -> Self;
    /// The same shape, hasher and bits.
    fn same_as(&self, other: &Self) -> bool;
    /// The answers for `keys` of a zero-copy `view` of the encoding (in 64-byte aligned
    /// memory), where the type has one; `None` elsewhere, and on big-endian targets.
    fn view_answers(&self, _keys: std::ops::Range<u64>) -> Option<Vec<bool>> {
        None
    }
    /// `self ∪= other` where supported.
    fn union_with(&mut self, _other: &Self) -> bool {
        false
    }
    /// How many inserts (copies) the filter takes before it may refuse one: never, for
    /// the kinds that cannot refuse (and the scalable filter, which grows).
    fn refuses_from(&self) -> u64 {
        u64::MAX
    }
}

/// The answers of a zero-copy `view` of `$f`'s encoding, for a block kind `$ty`.
macro_rules! view_answers {
    ($ty:ident) => {
        #[cfg(target_endian = "little")]
        fn view_answers(&self, keys: std::ops::Range<u64>) -> Option<Vec<bool>> {
            let (buffer, n) = aligned(|out| self.encode_into(out), self.encoded_len());
            let bytes = &block::blocks_as_bytes(&buffer)[..n];
            let view = $ty::<&[Block]>::view(bytes).unwrap();
            Some(keys.map(|k| view.contains(&k)).collect())
        }
    };
}

impl Family for BloomFilter {
    fn for_capacity(n: u64) -> Self {
        BloomFilter::for_fpr(n, 0.01).unwrap()
    }
    fn round_trip(&self) -> Self {
        BloomFilter::from_bytes(&self.to_bytes()).unwrap()
    }
    fn same_as(&self, other: &Self) -> bool {
        self == other
    }
    view_answers!(BloomFilter);
    fn union_with(&mut self, other: &Self) -> bool {
        self.union(other).unwrap();
        true
    }
}

impl Family for CountingBloomFilter {
    fn for_capacity(n: u64) -> Self {
        CountingBloomFilter::for_fpr(n, 0.01).unwrap()
    }
    fn round_trip(&self) -> Self {
        CountingBloomFilter::from_bytes(&self.to_bytes()).unwrap()
    }
    fn same_as(&self, other: &Self) -> bool {
        self == other
    }
    view_answers!(CountingBloomFilter);
    fn union_with(&mut self, other: &Self) -> bool {
        self.union(other).unwrap();
        true
    }
}

impl Family for ClassicBloomFilter {
    fn for_capacity(n: u64) -> Self {
        ClassicBloomFilter::for_fpr(n, 0.01).unwrap()
    }
    fn round_trip(&self) -> Self {
        ClassicBloomFilter::from_bytes(&self.to_bytes()).unwrap()
    }
    fn same_as(&self, other: &Self) -> bool {
        self == other
    }
    view_answers!(ClassicBloomFilter);
    fn union_with(&mut self, other: &Self) -> bool {
        self.union(other).unwrap();
        true
    }
}

impl Family for ScalableBloomFilter {
    fn for_capacity(n: u64) -> Self {
        // Start at a tenth of the capacity so the suite exercises growth.
        ScalableBloomFilter::for_fpr((n / 10).max(1), 0.01).unwrap()
    }
    fn round_trip(&self) -> Self {
        ScalableBloomFilter::from_bytes(&self.to_bytes()).unwrap()
    }
    fn same_as(&self, other: &Self) -> bool {
        self == other
    }
}

impl Family for VectorQuotientFilter {
    fn for_capacity(n: u64) -> Self {
        VectorQuotientFilter::for_fpr(n, 0.01).unwrap()
    }
    fn round_trip(&self) -> Self {
        VectorQuotientFilter::from_bytes(&self.to_bytes()).unwrap()
    }
    fn same_as(&self, other: &Self) -> bool {
        self == other
    }
    view_answers!(VectorQuotientFilter);
    /// Its capacity: the chance of a refusal below it is at most `FULL_CHANCE` (1e-9).
    fn refuses_from(&self) -> u64 {
        self.params().capacity()
    }
}

/// The atomic filter, compared and serialized through its plain snapshot.
impl Family for AtomicBloomFilter {
    fn for_capacity(n: u64) -> Self {
        AtomicBloomFilter::new(Params::for_fpr(n, 0.01).unwrap())
    }
    fn round_trip(&self) -> Self {
        AtomicBloomFilter::from(BloomFilter::from_bytes(&self.to_bloom().to_bytes()).unwrap())
    }
    fn same_as(&self, other: &Self) -> bool {
        self.to_bloom() == other.to_bloom()
    }
    fn union_with(&mut self, other: &Self) -> bool {
        self.union(other).unwrap();
        true
    }
}

/// The static atomic filter, serialized through its plain blocks (`write_blocks`) and
/// loaded back with `union_blocks`.
impl Family for StaticAtomicBloomFilter<STATIC_BLOCKS> {
    fn for_capacity(_n: u64) -> Self {
        StaticAtomicBloomFilter::new(8)
    }
    fn round_trip(&self) -> Self {
        let mut blocks = vec![Block::ZERO; STATIC_BLOCKS];
        self.write_blocks(&mut blocks);
        let plain = BloomFilter::from_storage(blocks, 8).unwrap();
        let decoded = BloomFilter::from_bytes(&plain.to_bytes()).unwrap();
        let copy = StaticAtomicBloomFilter::new(8);
        copy.union_blocks(decoded.as_blocks());
        copy
    }
    fn same_as(&self, other: &Self) -> bool {
        let (mut a, mut b) = (
            vec![Block::ZERO; STATIC_BLOCKS],
            vec![Block::ZERO; STATIC_BLOCKS],
        );
        self.write_blocks(&mut a);
        other.write_blocks(&mut b);
        a == b
    }
}

/// An encoding written into 64-byte aligned memory, as a memory map would give it: the
/// buffer and the encoding's length.
#[cfg(target_endian = "little")]
fn aligned(
    encode: impl FnOnce(&mut [u8]) -> Result<usize, EncodeError>,
    len: usize,
) -> (Vec<Block>, usize) {
    let mut buffer = vec![Block::ZERO; len.div_ceil(Block::BYTES)];
    let n = encode(block::blocks_as_bytes_mut(&mut buffer)).unwrap();
    (buffer, n)
}

/// Inserts `keys` (every answer checked against a set), then looks every key up, all
/// through the family's traits: no false negatives, the format round trip is equal and
/// answers alike, and so does the zero-copy view.
fn agrees_with_a_set<F: Family>(capacity: u64, keys: &[u64]) -> Result<(), TestCaseError> {
    let mut f = F::for_capacity(capacity);
    let mut model = HashSet::new();
    let mut stored = 0u64;
    for &k in keys {
        let new_in_model = model.insert(k);
        match f.insert(&k) {
            // A key already in the set must never be reported as new (that would mean
            // it had been lost).
            Ok(said_new) => {
                prop_assert!(new_in_model || !said_new, "re-insert of {} reported new", k);
                stored += 1;
            }
            // A refusal stores nothing, and comes only past what the kind promises.
            Err(e) => {
                prop_assert!(stored >= f.refuses_from(), "refused at {}: {}", stored, e);
                if new_in_model {
                    model.remove(&k);
                }
            }
        }
    }
    for &k in &model {
        prop_assert!(f.contains(&k), "false negative for {}", k);
    }
    let g = f.round_trip();
    prop_assert!(g.same_as(&f));
    for k in 0..5_000u64 {
        prop_assert_eq!(g.contains(&k), f.contains(&k));
    }
    if let Some(answers) = f.view_answers(0..5_000) {
        let expected: Vec<bool> = (0..5_000).map(|k| f.contains(&k)).collect();
        prop_assert_eq!(answers, expected);
    }
    // The monitoring numbers are those of a filter holding about `model.len()` keys.
    prop_assert!(f.fill_ratio() >= 0.0 && f.fill_ratio() <= 1.0);
    prop_assert!(f.estimated_fpr() >= 0.0 && f.estimated_fpr() <= 1.0);
    prop_assert!(f.memory_bytes() > 0);
    if model.is_empty() {
        prop_assert_eq!(f.estimated_len(), 0.0);
    }
    // An empty filter has no bit set, so it answers no to every key.
    f.clear();
    prop_assert_eq!(f.fill_ratio(), 0.0);
    prop_assert!(model.iter().all(|k| !f.contains(k)));
    Ok(())
}

/// Both sides' keys are in the union, where the kind has one. One side is filled by
/// `insert`, the other by `add` (the set-only form), which must hold every key too.
fn union_keeps_both<F: Family>(a: &[u64], b: &[u64]) -> Result<(), TestCaseError> {
    let (mut fa, mut fb) = (F::for_capacity(1_000), F::for_capacity(1_000));
    // 500 keys at most: within every kind's capacity of 1,000.
    for k in a {
        fa.insert(k).unwrap();
    }
    for k in b {
        fb.add(k).unwrap();
    }
    prop_assert!(b.iter().all(|k| fb.contains(k)), "add lost a key");
    if fa.union_with(&fb) {
        for &k in a.iter().chain(b) {
            prop_assert!(fa.contains(&k));
        }
    }
    Ok(())
}

macro_rules! family_suite {
    ($($module:ident => $ty:ty),* $(,)?) => {$(
        mod $module {
            use super::*;

            proptest! {
                #![proptest_config(ProptestConfig::with_cases(if RELEASE { 128 } else { 32 }))]

                #[test]
                fn no_false_negatives_and_agrees_with_a_set(
                    capacity in 1u64..2_000,
                    keys in prop::collection::vec(0u64..5_000, 0..1_500),
                ) {
                    agrees_with_a_set::<$ty>(capacity, &keys)?;
                }

                #[test]
                fn union_keeps_both_sides(
                    a in prop::collection::vec(any::<u64>(), 0..500),
                    b in prop::collection::vec(any::<u64>(), 0..500),
                ) {
                    union_keeps_both::<$ty>(&a, &b)?;
                }
            }
        }
    )*};
}

family_suite!(
    bloom => BloomFilter,
    counting => CountingBloomFilter,
    classic => ClassicBloomFilter,
    scalable => ScalableBloomFilter,
    atomic => AtomicBloomFilter,
    static_atomic => StaticAtomicBloomFilter<STATIC_BLOCKS>,
    quotient => VectorQuotientFilter,
);

// ---- counting --------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if RELEASE { 128 } else { 32 }))]

    #[test]
    fn removing_keys_never_loses_the_others(
        keep in prop::collection::hash_set(any::<u64>(), 0..400),
        drop in prop::collection::hash_set(any::<u64>(), 0..400),
        k in 1u32..=16,
    ) {
        let mut f = CountingBloomFilter::new(CountingParams::new(40, k).unwrap());
        for key in keep.iter().chain(&drop) {
            f.insert(key);
        }
        for key in drop.difference(&keep) {
            prop_assert!(f.remove(key).is_ok());
        }
        for key in &keep {
            prop_assert!(f.contains(key), "lost {} after removes", key);
        }
    }

    #[test]
    fn to_bloom_answers_exactly_like_the_counting_filter(
        keys in prop::collection::vec(any::<u64>(), 0..600),
        k in 1u32..=16,
    ) {
        let mut c = CountingBloomFilter::new(CountingParams::new(17, k).unwrap());
        c.extend(keys.iter().copied());
        let plain = c.to_bloom();
        for probe in keys.iter().copied().chain(0..3000u64) {
            prop_assert_eq!(plain.contains(&probe), c.contains(&probe));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(if RELEASE { 128 } else { 32 }))]

    /// The union of two counting filters counts like one filter that got both sides'
    /// insertions: every counter is the sum, saturating at 15 (a model of nibble
    /// counters), and removing the keys of one side keeps the other's.
    #[test]
    fn counting_union_adds_the_counts(
        a in prop::collection::vec(0u64..300, 0..300),
        b in prop::collection::vec(0u64..300, 0..300),
        k in 1u32..=16,
    ) {
        let p = CountingParams::new(3, k).unwrap();
        let (mut fa, mut fb, mut both) = (
            CountingBloomFilter::new(p),
            CountingBloomFilter::new(p),
            CountingBloomFilter::new(p),
        );
        a.iter().for_each(|key| { fa.insert(key); both.insert(key); });
        b.iter().for_each(|key| { fb.insert(key); both.insert(key); });
        let before = fa.clone();
        fa.union(&fb).unwrap();
        let nibbles = |f: &CountingBloomFilter| -> Vec<u64> {
            f.as_blocks().iter().flat_map(|blk| blk.0).flat_map(|w| (0..16).map(move |s| (w >> (4 * s)) & 0xf)).collect()
        };
        let expected: Vec<u64> = nibbles(&before).iter().zip(nibbles(&fb)).map(|(x, y)| (x + y).min(15)).collect();
        prop_assert_eq!(nibbles(&fa), expected);
        // Without saturation the union is exactly the filter that got both sides.
        if nibbles(&both).iter().all(|&c| c < 15) {
            prop_assert_eq!(&fa, &both);
        }
        for key in &a {
            fa.remove(key).unwrap();
        }
        for key in &b {
            prop_assert!(fa.contains(key), "lost {} of the other side", key);
        }
    }
}

#[test]
fn remove_of_an_absent_key_changes_nothing() {
    let mut f = CountingBloomFilter::new(CountingParams::new(8, 6).unwrap());
    f.insert("present");
    let before = f.to_bytes();
    assert_eq!(f.remove("never inserted"), Err(RemoveError::NotPresent));
    assert_eq!(f.to_bytes(), before);
    assert_eq!(f.count_estimate("present"), 1);
    f.insert("present");
    assert_eq!(f.count_estimate("present"), 2);
    f.remove("present").unwrap();
    f.remove("present").unwrap();
    assert_eq!(f.count_estimate("present"), 0);
    assert_eq!(f.estimated_len(), 0.0);
}

#[test]
fn saturated_counters_are_sticky() {
    let mut f = CountingBloomFilter::new(CountingParams::new(1, 3).unwrap());
    for _ in 0..20 {
        f.insert("hot");
    }
    assert_eq!(f.count_estimate("hot"), 15);
    assert!(f.saturated_counters() >= 1);
    for _ in 0..20 {
        f.remove("hot").unwrap();
    }
    // Saturated counters never go down, so the key stays (a "maybe", never a false
    // negative for anything that shares them).
    assert!(f.contains("hot"));
}

#[test]
fn counters_rarely_saturate() {
    let n = if RELEASE { 100_000 } else { 10_000 };
    let mut f = CountingBloomFilter::new(CountingParams::for_fpr(n as u64, 0.01).unwrap());
    f.extend(members(3, n));
    assert_eq!(f.saturated_counters(), 0);
    assert!(
        (f.estimated_len() - n as f64).abs() < 1e-9,
        "sum of counters / k is exact without saturation"
    );
}

// ---- scalable --------------------------------------------------------------------

#[test]
fn fixed_mode_reports_full_instead_of_growing() {
    let options = ScalableOptions::new(100, 0.01).with_mode(linebloom::scalable::Mode::Fixed);
    let mut f = ScalableBloomFilter::with_hasher(options, Xxh3::default()).unwrap();
    let mut added = 0;
    let mut err = None;
    for k in 0..1_000u64 {
        match f.insert(&k) {
            Ok(true) => added += 1,
            Ok(false) => {}
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    assert_eq!(added, 100);
    assert_eq!(err, Some(ScalableError::Full(linebloom::FilterFull)));
    assert_eq!((f.len(), f.layers()), (100, 1));
}

#[test]
fn bad_growth_options_are_refused() {
    for (g, r) in [
        (0.5, 0.5),
        (2.0, 0.0),
        (2.0, 1.0),
        (f64::NAN, 0.5),
        (2.0, f64::NAN),
    ] {
        let options = ScalableOptions::new(10, 0.01)
            .with_growth(g)
            .with_tightening(r);
        let e = ScalableBloomFilter::with_hasher(options, Xxh3::default()).unwrap_err();
        assert_eq!(e, ParamsError::InvalidGrowth, "{g} {r}");
    }
}

#[test]
fn scalable_keeps_its_bound_after_growing_100x() {
    // Initial capacity 1e3 (release) grown to 1e5 keys; 10 seeds × 2e5 probes.
    let (initial, seeds, probes) = if RELEASE {
        (1_000u64, 10, 200_000)
    } else {
        (200, 3, 50_000)
    };
    let n = (initial * 100) as usize;
    let target = 0.01;
    let mut hits = 0;
    let mut bound = 0.0;
    let mut f_layers = 0;
    for seed in 0..seeds {
        let mut f = ScalableBloomFilter::for_fpr(initial, target).unwrap();
        for k in members(seed, n) {
            f.insert(&k).unwrap();
        }
        bound = f.fpr_bound();
        f_layers = f.layers();
        hits += non_members(seed)
            .take(probes)
            .filter(|k| f.contains(k))
            .count();
    }
    let total = (seeds as usize * probes) as f64;
    let measured = hits as f64 / total;
    // Binomial slack: 5 standard deviations at the bound.
    let slack = 5.0 * (bound * (1.0 - bound) / total).sqrt();
    println!(
        "scalable after 100x: {f_layers} layers, measured {measured:.5}, bound {bound:.5}, target {target}"
    );
    assert!(bound <= target);
    assert!(
        measured <= bound + slack,
        "measured {measured} > bound {bound} + {slack}"
    );
}

// ---- atomic ----------------------------------------------------------------------

#[test]
fn concurrent_inserts_are_never_lost() {
    let threads = 8u64;
    let per_thread = if RELEASE { 50_000 } else { 5_000 };
    // A small filter, so threads collide on the same words all the time.
    let f = AtomicBloomFilter::new(Params::new(64, 8).unwrap());
    std::thread::scope(|s| {
        for t in 0..threads {
            let f = &f;
            s.spawn(move || {
                for i in 0..per_thread {
                    f.insert(&(t * 1_000_000 + i));
                }
            });
        }
    });
    for t in 0..threads {
        for i in 0..per_thread {
            assert!(f.contains(&(t * 1_000_000 + i)), "lost key {t}/{i}");
        }
    }
}

#[test]
fn atomic_conversions_keep_the_bits() {
    let mut plain = BloomFilter::new(Params::new(32, 7).unwrap());
    plain.extend(0..500u64);
    let before = plain.to_bytes();
    let atomic = AtomicBloomFilter::from(plain);
    atomic.insert(&10_000u64);
    let back = atomic.into_bloom();
    assert!(back.contains(&10_000u64));
    let mut expected = BloomFilter::from_bytes(&before).unwrap();
    expected.insert(&10_000u64);
    assert_eq!(back, expected);
}

// ---- FPR per type ----------------------------------------------------------------

/// Pooled FPR over seeds; tolerance as in `tests/fpr.rs`: 5σ binomial plus 4/sqrt(blocks).
fn pooled(
    seeds: u64,
    probes: usize,
    n: usize,
    build: impl Fn(&[u64]) -> Box<dyn Fn(u64) -> bool>,
) -> f64 {
    let mut hits = 0;
    for seed in 0..seeds {
        let f = build(&members(seed, n));
        hits += non_members(seed).take(probes).filter(|&k| f(k)).count();
    }
    hits as f64 / (seeds as usize * probes) as f64
}

#[test]
fn counting_fpr_matches_its_formula() {
    let (n, seeds, probes) = if RELEASE {
        (200_000, 10, 200_000)
    } else {
        (20_000, 3, 50_000)
    };
    let params = CountingParams::for_fpr(n as u64, 0.01).unwrap();
    let measured = pooled(seeds, probes, n, |keys| {
        let mut f = CountingBloomFilter::new(params);
        f.extend(keys.iter().copied());
        Box::new(move |k| f.contains(&k))
    });
    let predicted = fpr::counting(params.blocks() as u64, params.k(), n as u64);
    let total = (seeds as usize * probes) as f64;
    let tol = 5.0 * (predicted / total).sqrt()
        + 4.0 * predicted / ((params.blocks() as u64 * seeds) as f64).sqrt();
    println!(
        "counting: measured {measured:.5}, predicted {predicted:.5} ± {tol:.5}, {:.2} bits/key",
        params.bytes() as f64 * 8.0 / n as f64
    );
    assert!((measured - predicted).abs() <= tol);
    assert!(measured <= 0.01);
}

#[test]
fn classic_fpr_matches_its_formula() {
    let (n, seeds, probes) = if RELEASE {
        (100_000, 10, 200_000)
    } else {
        (10_000, 3, 50_000)
    };
    let params = ClassicParams::for_fpr(n as u64, 0.01).unwrap();
    let measured = pooled(seeds, probes, n, |keys| {
        let mut f = ClassicBloomFilter::new(params);
        f.extend(keys.iter().copied());
        Box::new(move |k| f.contains(&k))
    });
    let predicted = params.expected_fpr(n as u64);
    let total = (seeds as usize * probes) as f64;
    // The classic filter's rate concentrates tightly (no block loads); 5σ binomial plus
    // 2% relative for the instance spread.
    let tol = 5.0 * (predicted / total).sqrt() + 0.02 * predicted;
    println!(
        "classic: measured {measured:.5}, predicted {predicted:.5} ± {tol:.5}, {:.2} bits/key",
        params.bits() as f64 / n as f64
    );
    assert!((measured - predicted).abs() <= tol);
    assert!(measured <= 0.01);
}

// ---- static atomic -----------------------------------------------------------------

#[test]
fn the_static_atomic_filter_answers_like_the_plain_one() {
    // A concurrent filter for microcontrollers (32-bit atomics, no alloc, in a
    // static). Same blocks, same answers and same monitoring numbers as a BloomFilter of
    // that shape, for k with and without rotation and a partial second round.
    macro_rules! check {
        ($k:expr) => {{
            static F: StaticAtomicBloomFilter<7> = StaticAtomicBloomFilter::new($k);
            let mut plain = BloomFilter::new(Params::new(7, $k).unwrap());
            for key in members(90 + $k, 400) {
                assert_eq!(F.insert(&key), plain.insert(&key), "k = {}", $k);
            }
            let mut snapshot = vec![Block::ZERO; 7];
            F.write_blocks(&mut snapshot);
            assert_eq!(&snapshot[..], plain.as_blocks(), "k = {}", $k);
            assert!(
                non_members(90)
                    .take(20_000)
                    .all(|q| F.contains(&q) == plain.contains(&q))
            );
            assert_eq!(F.params(), plain.params());
            assert_eq!(F.fill_ratio(), plain.fill_ratio());
            assert_eq!(F.estimated_fpr(), plain.estimated_fpr());
            assert_eq!(F.estimated_len(), plain.estimated_len());
        }};
    }
    check!(1);
    check!(6);
    check!(8);
    check!(13);
    check!(16);
}

#[test]
fn the_static_atomic_filter_loses_no_concurrent_insert() {
    static F: StaticAtomicBloomFilter<4> = StaticAtomicBloomFilter::new(8);
    std::thread::scope(|s| {
        for t in 0..4u64 {
            s.spawn(move || {
                for i in 0..5_000u64 {
                    F.insert(&(t << 32 | i));
                }
            });
        }
    });
    assert!((0..4u64).all(|t| (0..5_000u64).all(|i| F.contains(&(t << 32 | i)))));
}
