//! Every filter the lab measures behind one trait, [`Filter`], on `u64` keys.
//!
//! linebloom's five types and the rivals are all real crates. Hashing: linebloom hashes
//! `u64` keys with its default [`IntFold`] (a folded multiply; XXH3-64 for byte
//! strings), and `linebloom-xxh3-*` contenders with XXH3-64 of the key's 8 bytes;
//! sbbf-rs-safe and fastbloom get XXH3-64 through their `*_hash` entry points;
//! `bloomfilter` and `growable-bloom-filter` only accept `Hash` values and hash with
//! their own SipHash; xorf's BinaryFuse8 takes the XXH3 hash as its key. The other
//! families (cuckoo, quotient, xor, another counting filter) are in [`families`];
//! what only linebloom's vector quotient filter needs (its sizing by bits per key) in
//! [`vector_quotient`]; [`split_block`] is a 256-bit split-block filter on linebloom's
//! own hash, the reference for linebloom's single-key probe.

pub mod contenders;
pub mod families;
pub mod filter;
pub mod split_block;
pub mod vector_quotient;

pub use contenders::{CONTENDERS, Contender, Sizing, build, build_sized, contender, names};
pub use filter::{Filter, same_kind, serde_round_trip, serde_round_trip_into, spawn_inserts, xxh3};
pub use split_block::SplitBlock256;
pub use vector_quotient::LinebloomQuotient;

use linebloom::arch::Kernel;
use linebloom::{
    AtomicBloomFilter, Blocks, BloomFilter, ClassicBloomFilter, CountingBloomFilter, InsertFilter,
    IntFold, Params, ScalableBloomFilter, StableHasher, Xxh3,
};
use std::any::Any;

/// How a linebloom hasher shows in contender names: nothing for the default.
pub trait HasherLabel: StableHasher + PartialEq + 'static {
    /// Inserted after `linebloom-`: `""` or `"xxh3-"`.
    const LABEL: &'static str;
}
impl HasherLabel for IntFold {
    const LABEL: &'static str = "";
}
impl HasherLabel for Xxh3 {
    const LABEL: &'static str = "xxh3-";
}

/// What the lab needs of a linebloom kind beyond the core's [`InsertFilter`]: its name,
/// and the capabilities only some kinds have (batches, removal, merge, concurrent
/// inserts). The lookups, inserts, memory and rate all come from the core's traits, so
/// [`Linebloom`] is one adapter for every kind.
pub trait LinebloomKind: InsertFilter + Any + Sized {
    /// Name in CSVs and legends.
    fn label(&self) -> String;
    /// Serializes by the kind's format (the atomic kind through its plain snapshot)
    /// and decodes it again: the copy and the encoding's length.
    fn encode_and_decode(&self) -> anyhow::Result<(Self, usize)>;
    /// Does it have a real batch API (prefetching)?
    const HAS_BATCH: bool = false;
    /// Tests many keys (kinds without a batch API loop).
    fn contains_many(&self, keys: &[u64], out: &mut [bool]) {
        for (o, k) in out.iter_mut().zip(keys) {
            *o = self.contains(k);
        }
    }
    /// Adds many keys (a refused one is skipped, as the lab's `insert` does).
    fn insert_many(&mut self, keys: &[u64]) {
        for k in keys {
            let _ = self.add(k);
        }
    }
    /// Removes a key it holds: `Some(true)` if it did; `None` where the kind cannot.
    fn remove_key(&mut self, _key: u64) -> Option<bool> {
        None
    }
    /// The kind's own union with a filter of the same kind; `None` where it has none.
    fn union_with(&mut self, _other: &Self) -> Option<anyhow::Result<()>> {
        None
    }
    /// Inserts through `&self` from several threads; `None` where it needs `&mut self`.
    fn insert_concurrently(&self, _keys: &[u64], _threads: usize) -> Option<()> {
        None
    }
}

/// Any linebloom kind as a [`Filter`]: one impl over the core's traits.
pub struct Linebloom<F>(pub F);

impl<F: LinebloomKind> Filter for Linebloom<F> {
    fn name(&self) -> String {
        self.0.label()
    }
    /// The core's `add`: the lab's `insert` asks for no answer; a refusal is what
    /// [`try_insert`](Filter::try_insert) reports.
    #[inline]
    fn insert(&mut self, key: u64) {
        let _ = InsertFilter::add(&mut self.0, &key);
    }
    #[inline]
    fn try_insert(&mut self, key: u64) -> bool {
        InsertFilter::add(&mut self.0, &key).is_ok()
    }
    #[inline]
    fn insert_reporting(&mut self, key: u64) -> bool {
        matches!(InsertFilter::insert(&mut self.0, &key), Ok(true))
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        linebloom::Filter::contains(&self.0, &key)
    }
    fn bytes(&self) -> usize {
        linebloom::Filter::memory_bytes(&self.0)
    }
    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) {
        self.0.contains_many(keys, out);
    }
    fn insert_batch(&mut self, keys: &[u64]) {
        self.0.insert_many(keys);
    }
    fn has_batch(&self) -> bool {
        F::HAS_BATCH
    }
    fn exact_fpr(&self) -> Option<f64> {
        Some(linebloom::Filter::estimated_fpr(&self.0))
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        self.0.remove_key(key)
    }
    fn merge(&mut self, other: &dyn Filter) -> Option<anyhow::Result<()>> {
        match same_kind(self, other) {
            Ok(o) => self.0.union_with(&o.0),
            Err(e) => Some(Err(e)),
        }
    }
    fn insert_concurrently(&self, keys: &[u64], threads: usize) -> Option<()> {
        self.0.insert_concurrently(keys, threads)
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn Filter>, usize)>> {
        Some(
            self.0
                .encode_and_decode()
                .map(|(f, len)| (Box::new(Linebloom(f)) as Box<dyn Filter>, len)),
        )
    }
}

/// linebloom's blocked filter (owned storage) with a chosen kernel and hasher.
pub type Blocked<S, H = IntFold> = Linebloom<BloomFilter<S, H>>;

impl<H: HasherLabel> LinebloomKind for BloomFilter<Blocks, H> {
    fn label(&self) -> String {
        format!("linebloom-{}{}", H::LABEL, self.kernel_name())
    }
    fn encode_and_decode(&self) -> anyhow::Result<(Self, usize)> {
        let bytes = self.to_bytes();
        let mut decoded = BloomFilter::<Blocks, H>::from_bytes_with_hasher(&bytes)?;
        if let Some(kernel) = linebloom::arch::by_name(self.kernel_name()) {
            decoded = decoded.with_kernel(kernel);
        }
        Ok((decoded, bytes.len()))
    }
    const HAS_BATCH: bool = true;
    fn contains_many(&self, keys: &[u64], out: &mut [bool]) {
        self.contains_batch(keys, out);
    }
    fn insert_many(&mut self, keys: &[u64]) {
        self.insert_batch(keys);
    }
    fn union_with(&mut self, other: &Self) -> Option<anyhow::Result<()>> {
        Some(self.union(other).map_err(Into::into))
    }
}

/// A linebloom blocked filter with `params` and `kernel`, owned storage, default hasher.
pub fn blocked(params: Params, kernel: &'static Kernel) -> Blocked<Blocks> {
    Linebloom(BloomFilter::new(params).with_kernel(kernel))
}

/// Like [`blocked`], hashing keys with XXH3-64 ([`Xxh3`]) as the rivals do.
pub fn blocked_xxh3(params: Params, kernel: &'static Kernel) -> Blocked<Blocks, Xxh3> {
    Linebloom(BloomFilter::with_hasher(params, Xxh3::default()).with_kernel(kernel))
}

/// A filter under another name: the control copy of a baseline (an identical second
/// filter, timed as a contender of its own, whose ratio to the baseline is the noise
/// floor of a timing table).
pub struct Named<F>(pub &'static str, pub F);

impl<F: Filter> Filter for Named<F> {
    fn name(&self) -> String {
        self.0.into()
    }
    // The loops forward too, so that a named box runs its filter's own loops.
    fn count_each(&self, keys: &[u64]) -> u64 {
        self.1.count_each(keys)
    }
    fn insert_each(&mut self, keys: &[u64]) {
        self.1.insert_each(keys)
    }
    fn dedup_each(&mut self, keys: &[u64]) -> u64 {
        self.1.dedup_each(keys)
    }
    fn remove_each(&mut self, keys: &[u64]) -> u64 {
        self.1.remove_each(keys)
    }
    fn try_insert_each(&mut self, keys: &[u64]) -> u64 {
        self.1.try_insert_each(keys)
    }
    #[inline]
    fn insert(&mut self, key: u64) {
        self.1.insert(key)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.1.contains(key)
    }
    #[inline]
    fn insert_reporting(&mut self, key: u64) -> bool {
        self.1.insert_reporting(key)
    }
    fn bytes(&self) -> usize {
        self.1.bytes()
    }
    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) {
        self.1.contains_batch(keys, out)
    }
    fn insert_batch(&mut self, keys: &[u64]) {
        self.1.insert_batch(keys)
    }
    fn has_batch(&self) -> bool {
        self.1.has_batch()
    }
    fn exact_fpr(&self) -> Option<f64> {
        self.1.exact_fpr()
    }
    fn try_insert(&mut self, key: u64) -> bool {
        self.1.try_insert(key)
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        self.1.remove(key)
    }
    fn merge(&mut self, other: &dyn Filter) -> Option<anyhow::Result<()>> {
        let any: &dyn Any = other;
        match any.downcast_ref::<Self>() {
            Some(o) => self.1.merge(&o.1),
            None => self.1.merge(other),
        }
    }
    fn insert_concurrently(&self, keys: &[u64], threads: usize) -> Option<()> {
        self.1.insert_concurrently(keys, threads)
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn Filter>, usize)>> {
        self.1.round_trip()
    }
}

/// Runs `f`: a block in which `?` returns its error (inside a method that returns an
/// `Option`).
fn attempt<T>(f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    f()
}

/// A [`Filter`] adapter: a newtype over a filter with how to insert, query and size it.
macro_rules! adapter {
    ($(#[$doc:meta])* $name:ident($inner:ty), $label:literal,
     insert: |$fi:ident, $ki:ident| $insert:expr,
     $(reporting: |$fn:ident, $kn:ident| $reporting:expr,)?
     contains: |$fc:ident, $kc:ident| $contains:expr,
     bytes: |$fb:ident| $bytes:expr
     $(, exact: |$fe:ident| $exact:expr)?
     $(, remove: |$fr:ident, $kr:ident| $remove:expr)?
     $(, merge: |$fm:ident, $om:ident| $merge:expr)?
     $(, concurrent: |$fcc:ident, $kcc:ident| $concurrent:expr)?
     $(, round_trip: |$ft:ident| $round_trip:expr)? $(,)?) => {
        $(#[$doc])*
        pub struct $name(pub $inner);
        impl Filter for $name {
            fn name(&self) -> String {
                $label.into()
            }
            #[inline]
            fn insert(&mut self, $ki: u64) {
                let $fi = &mut self.0;
                $insert;
            }
            $(
                #[inline]
                fn insert_reporting(&mut self, $kn: u64) -> bool {
                    let $fn = &mut self.0;
                    $reporting
                }
            )?
            #[inline]
            fn contains(&self, $kc: u64) -> bool {
                let $fc = &self.0;
                $contains
            }
            fn bytes(&self) -> usize {
                let $fb = &self.0;
                $bytes
            }
            $(
                fn exact_fpr(&self) -> Option<f64> {
                    let $fe = &self.0;
                    Some($exact)
                }
            )?
            $(
                fn remove(&mut self, $kr: u64) -> Option<bool> {
                    let $fr = &mut self.0;
                    Some($remove)
                }
            )?
            $(
                fn merge(&mut self, other: &dyn Filter) -> Option<anyhow::Result<()>> {
                    let other = match same_kind(self, other) {
                        Ok(o) => o,
                        Err(e) => return Some(Err(e)),
                    };
                    let ($fm, $om) = (&mut self.0, &other.0);
                    Some(attempt(|| -> anyhow::Result<()> { $merge }))
                }
            )?
            $(
                fn insert_concurrently(&self, keys: &[u64], threads: usize) -> Option<()> {
                    let $fcc = &self.0;
                    spawn_inserts(keys, threads, |$kcc| {
                        $concurrent;
                    });
                    Some(())
                }
            )?
            $(
                fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn Filter>, usize)>> {
                    let $ft = &self.0;
                    let decoded = attempt(|| -> anyhow::Result<(_, usize)> { $round_trip });
                    Some(decoded.map(|(f, len)| (Box::new($name(f)) as Box<dyn Filter>, len)))
                }
            )?
        }
    };
}

/// linebloom's counting filter.
pub type Counting = Linebloom<CountingBloomFilter>;
/// linebloom's scalable filter (its default growth and tightening).
pub type Scalable = Linebloom<ScalableBloomFilter>;
/// linebloom's atomic filter (used single-threaded except in `insert_concurrently`;
/// see the `threads` experiment).
pub type Atomic = Linebloom<AtomicBloomFilter>;
/// linebloom's classic (unblocked) filter.
pub type Classic = Linebloom<ClassicBloomFilter>;

impl LinebloomKind for CountingBloomFilter {
    fn label(&self) -> String {
        "linebloom-counting".into()
    }
    fn encode_and_decode(&self) -> anyhow::Result<(Self, usize)> {
        let bytes = self.to_bytes();
        Ok((CountingBloomFilter::from_bytes(&bytes)?, bytes.len()))
    }
    fn remove_key(&mut self, key: u64) -> Option<bool> {
        Some(self.remove(&key).is_ok())
    }
    fn union_with(&mut self, other: &Self) -> Option<anyhow::Result<()>> {
        Some(self.union(other).map_err(Into::into))
    }
}

impl LinebloomKind for ScalableBloomFilter {
    fn label(&self) -> String {
        "linebloom-scalable".into()
    }
    fn encode_and_decode(&self) -> anyhow::Result<(Self, usize)> {
        let bytes = self.to_bytes();
        Ok((ScalableBloomFilter::from_bytes(&bytes)?, bytes.len()))
    }
}

impl LinebloomKind for AtomicBloomFilter {
    fn label(&self) -> String {
        "linebloom-atomic".into()
    }
    /// Through the plain filter's format, the atomic filter's documented path.
    fn encode_and_decode(&self) -> anyhow::Result<(Self, usize)> {
        let bytes = self.to_bloom().to_bytes();
        let plain = BloomFilter::from_bytes(&bytes)?;
        Ok((AtomicBloomFilter::from(plain), bytes.len()))
    }
    fn union_with(&mut self, other: &Self) -> Option<anyhow::Result<()>> {
        Some(self.union(other).map_err(Into::into))
    }
    fn insert_concurrently(&self, keys: &[u64], threads: usize) -> Option<()> {
        spawn_inserts(keys, threads, |k| {
            self.insert(&k);
        });
        Some(())
    }
}

impl LinebloomKind for ClassicBloomFilter {
    fn label(&self) -> String {
        "linebloom-classic".into()
    }
    fn encode_and_decode(&self) -> anyhow::Result<(Self, usize)> {
        let bytes = self.to_bytes();
        Ok((ClassicBloomFilter::from_bytes(&bytes)?, bytes.len()))
    }
    fn union_with(&mut self, other: &Self) -> Option<anyhow::Result<()>> {
        Some(self.union(other).map_err(Into::into))
    }
}

adapter!(
    /// sbbf-rs-safe: Parquet's split-block filter (256-bit blocks, k = 8).
    Sbbf(sbbf_rs_safe::Filter), "sbbf-rs-safe",
    insert: |f, k| f.insert_hash(xxh3(k)),
    // Its insert returns true when the hash was already present.
    reporting: |f, k| !f.insert_hash(xxh3(k)),
    contains: |f, k| f.contains_hash(xxh3(k)),
    bytes: |f| f.as_bytes().len(),
    round_trip: |f| {
        let bytes = f.as_bytes();
        let decoded = sbbf_rs_safe::Filter::from_bytes(bytes)
            .ok_or_else(|| anyhow::anyhow!("sbbf-rs-safe refused its own bytes"))?;
        Ok((decoded, bytes.len()))
    },
);
adapter!(
    /// fastbloom (blocked 512-bit, its own k).
    Fastbloom(fastbloom::BloomFilter), "fastbloom",
    insert: |f, k| f.insert_hash(xxh3(k)),
    // Its insert returns true when the key was possibly present before.
    reporting: |f, k| !f.insert_hash(xxh3(k)),
    contains: |f, k| f.contains_hash(xxh3(k)),
    bytes: |f| f.num_bits() / 8,
    // fastbloom's union panics on a different number of hashes: the check builds both
    // filters with one recipe.
    merge: |f, o| {
        f.union(o);
        Ok(())
    },
    round_trip: |f| serde_round_trip(f),
);
adapter!(
    /// fastbloom's `AtomicBloomFilter` (the same layout, inserts through `&self`).
    FastbloomAtomic(fastbloom::AtomicBloomFilter), "fastbloom-atomic",
    insert: |f, k| f.insert_hash(xxh3(k)),
    contains: |f, k| f.contains_hash(xxh3(k)),
    bytes: |f| f.num_bits() / 8,
    merge: |f, o| {
        f.union(o);
        Ok(())
    },
    concurrent: |f, k| f.insert_hash(xxh3(k)),
    round_trip: |f| serde_round_trip(f),
);
adapter!(
    /// The `bloomfilter` crate (classic, SipHash), with a fixed seed.
    Bloomfilter(bloomfilter::Bloom<u64>), "bloomfilter",
    insert: |f, k| f.set(&k),
    contains: |f, k| f.check(&k),
    bytes: |f| f.as_slice().len(),
    round_trip: |f| {
        let bytes = f.to_bytes();
        let len = bytes.len();
        Ok((bloomfilter::Bloom::from_bytes(bytes).map_err(anyhow::Error::msg)?, len))
    },
);
adapter!(
    /// `growable-bloom-filter` (scalable, its own hashing).
    Growable(growable_bloom_filter::GrowableBloom), "growable-bloom-filter",
    insert: |f, k| f.insert(k),
    contains: |f, k| f.contains(k),
    bytes: |f| growable_bytes(f),
    round_trip: |f| serde_round_trip(f),
);

/// Bytes of a `GrowableBloom`'s bit buffers. The crate does not report its memory, but
/// its serde form holds each layer's buffer (`serde_bytes`, key `"b"`) as one array
/// element per byte, so counting those elements is exact.
fn growable_bytes(f: &growable_bloom_filter::GrowableBloom) -> usize {
    fn walk(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::Object(m) => m
                .iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    // A layer's buffer: one number per byte. (The list of layers is
                    // also called "b"; its elements are objects, so it is walked.)
                    ("b", serde_json::Value::Array(a))
                        if a.iter().all(serde_json::Value::is_number) =>
                    {
                        a.len()
                    }
                    _ => walk(v),
                })
                .sum(),
            serde_json::Value::Array(a) => a.iter().map(walk).sum(),
            _ => 0,
        }
    }
    serde_json::to_value(f).map(|v| walk(&v)).unwrap_or(0)
}

/// Bits per key the Parquet spec's sizing gives for rate `p` (one bit per 32-bit word of
/// an 8-word block: `m = −8n / ln(1 − p^{1/8})`), rounded up as sbbf-rs-safe takes
/// whole bits per key.
pub fn parquet_bits_per_key(p: f64) -> usize {
    (-8.0 / (1.0 - p.powf(1.0 / 8.0)).ln()).ceil() as usize
}

impl Sbbf {
    /// sbbf-rs-safe for `n` keys at rate `p` by the Parquet spec's sizing
    /// ([`parquet_bits_per_key`]: 10 bits per key at 1%): the recipe of [`build`], the
    /// timing experiments and the benchmarks alike.
    pub fn for_fpr(n: u64, p: f64) -> Sbbf {
        Sbbf(sbbf_rs_safe::Filter::new(
            parquet_bits_per_key(p),
            n as usize,
        ))
    }
}

impl Fastbloom {
    /// fastbloom for `n` keys at rate `p` by its own recipe
    /// (`with_false_pos(p).expected_items(n)`): the recipe of [`build`], the timing
    /// experiments and the benchmarks alike.
    pub fn for_fpr(n: u64, p: f64) -> Fastbloom {
        Fastbloom(fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize))
    }
}

impl FastbloomAtomic {
    /// fastbloom's atomic filter for `n` keys at rate `p` by its own recipe, as
    /// [`Fastbloom::for_fpr`].
    pub fn for_fpr(n: u64, p: f64) -> FastbloomAtomic {
        FastbloomAtomic(fastbloom::AtomicBloomFilter::with_false_pos(p).expected_items(n as usize))
    }
}

/// The most keys linebloom's own sizing (`Params::for_fpr(n, p)`) fits in at most
/// `bytes`: how the timing experiments turn a filter size into a key count, so that
/// every contender is built for the same keys at the same rate by its own recipe.
pub fn keys_for_bytes(bytes: u64, p: f64) -> anyhow::Result<u64> {
    let fits =
        |n: u64| -> anyhow::Result<bool> { Ok(Params::for_fpr(n, p)?.bytes() as u64 <= bytes) };
    anyhow::ensure!(p < 0.5, "rate {p} is not below 1/2");
    anyhow::ensure!(fits(1)?, "{bytes} bytes hold no key at rate {p}");
    // Invariant: `lo` fits, `hi` does not (no filter at rate p < 1/2 spends under one
    // bit per key).
    let (mut lo, mut hi) = (1u64, bytes.saturating_mul(8).max(2));
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// The fixed seed given to `bloomfilter` (its docs' recipe for reproducible filters).
pub const BLOOMFILTER_SEED: [u8; 32] = [7; 32];

/// xorf's BinaryFuse8: a static filter built once from all keys (no inserts).
pub struct Fuse8(pub xorf::BinaryFuse8);
impl Fuse8 {
    /// Builds from member keys (hashed with XXH3, deduplicated).
    pub fn build(keys: &[u64]) -> anyhow::Result<Self> {
        let mut hashes: Vec<u64> = keys.iter().map(|&k| xxh3(k)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        xorf::BinaryFuse8::try_from(&hashes)
            .map(Fuse8)
            .map_err(|e| anyhow::anyhow!("BinaryFuse8: {e}"))
    }
}
impl Filter for Fuse8 {
    fn name(&self) -> String {
        "xorf-binaryfuse8".into()
    }
    fn insert(&mut self, _key: u64) {
        panic!("BinaryFuse8 is static: build it with Fuse8::build");
    }
    fn contains(&self, key: u64) -> bool {
        use xorf::Filter as _;
        self.0.contains(&xxh3(key))
    }
    fn bytes(&self) -> usize {
        self.0.fingerprints.len()
    }
    fn try_insert(&mut self, _key: u64) -> bool {
        false
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn Filter>, usize)>> {
        serde_round_trip_into(&self.0, Fuse8)
    }
}

/// `std::collections::HashSet`: exact, the memory reference.
pub struct Exact(pub std::collections::HashSet<u64>);
impl Filter for Exact {
    fn name(&self) -> String {
        "hashset".into()
    }
    fn insert(&mut self, key: u64) {
        self.0.insert(key);
    }
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn bytes(&self) -> usize {
        // hashbrown: one u64 slot plus one control byte per bucket.
        self.0.capacity() * 9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `keys_for_bytes` is exact: its count fits in the size and one more key does not.
    #[test]
    fn keys_for_bytes_is_the_largest_count_that_fits() {
        for bytes in [64u64, 16 << 10, 1 << 20, 64 << 20, 1 << 30] {
            for p in [0.1, 0.01, 1e-4] {
                let n = keys_for_bytes(bytes, p).unwrap();
                let size = |n| Params::for_fpr(n, p).unwrap().bytes() as u64;
                assert!(
                    size(n) <= bytes && size(n + 1) > bytes,
                    "{bytes} B at {p}: {n}"
                );
            }
        }
        assert!(keys_for_bytes(32, 0.01).is_err(), "less than one block");
    }

    /// The pass-level loops the timing experiments call answer exactly as a loop of
    /// per-key calls does, through `dyn Filter`; `insert_each` leaves no member out;
    /// `dedup_each` counts every key of a fresh filter new but for the few its own
    /// earlier keys cover, and none the second time.
    #[test]
    fn count_each_and_insert_each_agree_with_the_per_key_calls() {
        let members: Vec<u64> = (0..2_000u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let probes: Vec<u64> = (0..20_000u64).map(|i| (i << 1) | 1).collect();
        let params = Params::for_fpr(2_000, 0.01).unwrap();
        let mut filters: Vec<Box<dyn Filter>> = linebloom::arch::available()
            .map(|kernel| Box::new(blocked(params, kernel)) as Box<dyn Filter>)
            .collect();
        filters.push(Box::new(Sbbf::for_fpr(2_000, 0.01)));
        filters.push(Box::new(Named("control", Sbbf::for_fpr(2_000, 0.01))));
        filters.push(Box::new(Fastbloom::for_fpr(2_000, 0.01)));
        filters.push(Box::new(SplitBlock256::for_fpr(2_000, 0.01).unwrap()));
        for f in filters.iter_mut() {
            let fresh = f.dedup_each(&members[..1_000]);
            // A key already covered by earlier keys' bits is reported as seen: at 1%
            // and 1 000 keys, a few; 30 is beyond 6σ of a 1% binomial over 1 000.
            assert!((970..=1_000).contains(&fresh), "{}: {fresh} new", f.name());
            assert_eq!(f.dedup_each(&members[..1_000]), 0, "{}", f.name());
            f.insert_each(&members);
            assert_eq!(f.count_each(&members), members.len() as u64, "{}", f.name());
            let one_by_one = probes.iter().filter(|&&k| f.contains(k)).count() as u64;
            assert_eq!(f.count_each(&probes), one_by_one, "{}", f.name());
            // About 200 positives expected (1%), so the comparison is not of two zeros.
            assert!(
                one_by_one > 0,
                "{}: no positive among 20 000 probes",
                f.name()
            );
        }
    }

    #[test]
    fn growable_memory_is_counted() {
        let mut g = Growable(growable_bloom_filter::GrowableBloom::new(0.01, 10_000));
        for k in 0..10_000u64 {
            g.insert(k);
        }
        // About 9.6 bits per key at 1%: between 8 and 20 KB for 10 000 keys.
        let bytes = g.bytes();
        assert!((8_000..20_000).contains(&bytes), "{bytes} bytes");
    }
}
