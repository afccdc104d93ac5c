//! linebloom's own kinds as lab contenders: one adapter, [`Linebloom`], over the core's
//! traits for every kind ([`LinebloomKind`] adds what only some kinds have), and the
//! blocked filter's constructors with a chosen kernel and hasher.

use super::lab_filter::{LabFilter, same_kind, spawn_inserts};
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

/// Any linebloom kind as a [`LabFilter`]: one impl over the core's traits.
pub struct Linebloom<F>(pub F);

impl<F: LinebloomKind> LabFilter for Linebloom<F> {
    fn name(&self) -> String {
        self.0.label()
    }
    /// The core's `add`: the lab's `insert` asks for no answer; a refusal is what
    /// [`try_insert`](LabFilter::try_insert) reports.
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
    fn merge(&mut self, other: &dyn LabFilter) -> Option<anyhow::Result<()>> {
        match same_kind(self, other) {
            Ok(o) => self.0.union_with(&o.0),
            Err(e) => Some(Err(e)),
        }
    }
    fn insert_concurrently(&self, keys: &[u64], threads: usize) -> Option<()> {
        self.0.insert_concurrently(keys, threads)
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
        Some(
            self.0
                .encode_and_decode()
                .map(|(f, len)| (Box::new(Linebloom(f)) as Box<dyn LabFilter>, len)),
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
