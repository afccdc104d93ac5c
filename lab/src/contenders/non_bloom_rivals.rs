//! The rivals that are not Bloom filters, and another crate's counting Bloom filter,
//! behind the lab's one [`LabFilter`] interface: cuckoo filters (`cuckoofilter`,
//! `scalable_cuckoo_filter`), a quotient filter (`qfilter`), xor and binary fuse
//! filters (`xorf`: Xor8, Xor16, BinaryFuse8, BinaryFuse16), and `fastbloom-rs`'s
//! counting Bloom filter.
//!
//! Every one gets the same keys. Those that take a hash take XXH3-64 of the key, as
//! sbbf-rs-safe and fastbloom do; `cuckoofilter` and `scalable_cuckoo_filter` only
//! take `Hash` values and hash the key with their own SipHash. Each declares its
//! sizing recipe in [`super::build`]: from `(n, p)` where it has one; the cuckoo filter
//! and the xor filters have a fixed fingerprint and size from `n` alone.

use super::lab_filter::{LabFilter, same_kind, serde_round_trip_into, xxh3};
use fastbloom_rs::{Deletable, Membership};

/// `cuckoofilter`: 4 entries of 8-bit fingerprints per bucket, SipHash; its only recipe
/// is a capacity (rounded up to a power of two), so its rate is fixed near 3%. The lab
/// asks for `n / 0.9`: at `n` itself a 2000-key filter got 2048 slots, 98% full, and
/// refused inserts (a cuckoo filter fills to about 95%).
pub struct Cuckoo(pub cuckoofilter::CuckooFilter<std::collections::hash_map::DefaultHasher>);

impl LabFilter for Cuckoo {
    fn name(&self) -> String {
        "cuckoofilter".into()
    }
    fn insert(&mut self, key: u64) {
        self.try_insert(key);
    }
    fn try_insert(&mut self, key: u64) -> bool {
        self.0.add(&key).is_ok()
    }
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        Some(self.0.delete(&key))
    }
    fn bytes(&self) -> usize {
        self.0.memory_usage()
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
        let exported = self.0.export();
        let len = exported.values.len();
        Some(Ok((
            Box::new(Cuckoo(cuckoofilter::CuckooFilter::from(exported))),
            len,
        )))
    }
}

/// `scalable_cuckoo_filter`: cuckoo filters that grow, sized from `(n, p)`.
pub struct ScalableCuckoo(pub scalable_cuckoo_filter::ScalableCuckooFilter<u64>);

impl LabFilter for ScalableCuckoo {
    fn name(&self) -> String {
        "scalable-cuckoo-filter".into()
    }
    fn insert(&mut self, key: u64) {
        self.0.insert(&key);
    }
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        Some(self.0.remove(&key))
    }
    fn bytes(&self) -> usize {
        (self.0.bits() / 8) as usize
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
        serde_round_trip_into(&self.0, ScalableCuckoo)
    }
}

/// `qfilter`: a quotient filter sized from `(n, p)`, taking the XXH3 hash. Inserts keep
/// duplicate fingerprints (`insert_fingerprint(true, …)`), the mode in which a delete
/// cannot take another key's fingerprint with it: without it, two keys sharing a
/// fingerprint keep one copy, and deleting either loses the other (623 false negatives
/// in the `churn` experiment's ten rounds). Not linebloom's vector quotient filter
/// (`linebloom-quotient`).
pub struct Qfilter(pub qfilter::Filter);

impl LabFilter for Qfilter {
    fn name(&self) -> String {
        "qfilter".into()
    }
    fn insert(&mut self, key: u64) {
        self.try_insert(key);
    }
    fn try_insert(&mut self, key: u64) -> bool {
        self.0.insert_fingerprint(true, xxh3(key)).is_ok()
    }
    fn contains(&self, key: u64) -> bool {
        self.0.contains_fingerprint(xxh3(key))
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        Some(self.0.remove_fingerprint(xxh3(key)))
    }
    fn bytes(&self) -> usize {
        self.0.memory_usage()
    }
    fn merge(&mut self, other: &dyn LabFilter) -> Option<anyhow::Result<()>> {
        Some(same_kind(self, other).and_then(|o| {
            self.0
                .merge(true, &o.0)
                .map_err(|e| anyhow::anyhow!("qfilter merge: {e:?}"))
        }))
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
        serde_round_trip_into(&self.0, Qfilter)
    }
}

/// `fastbloom-rs`'s counting Bloom filter (4-bit counters), sized from `(n, p)`,
/// given the XXH3 hash's 8 bytes.
pub struct FastbloomRsCounting(pub fastbloom_rs::CountingBloomFilter);

impl LabFilter for FastbloomRsCounting {
    fn name(&self) -> String {
        "fastbloom-rs-counting".into()
    }
    fn insert(&mut self, key: u64) {
        self.0.add(&xxh3(key).to_le_bytes());
    }
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&xxh3(key).to_le_bytes())
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        let bytes = xxh3(key).to_le_bytes();
        let held = self.0.contains(&bytes);
        if held {
            self.0.remove(&bytes);
        }
        Some(held)
    }
    fn bytes(&self) -> usize {
        // One 4-bit counter per position.
        (self.0.config().size / 2) as usize
    }
    /// Through `get_u8_array` and `from_u64_array`. (The crate's `from_u8_array` reads
    /// the byte slice as `usize`s through a cast pointer, which is undefined behaviour
    /// for bytes that are not 8-aligned; the lab hands it aligned words instead.)
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
        use fastbloom_rs::Hashes;
        let bytes = self.0.get_u8_array();
        let words: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let config = self.0.config();
        let decoded = fastbloom_rs::CountingBloomFilter::from_u64_array(
            &words,
            self.0.hashes(),
            config.enable_repeat_insert,
        );
        Some(Ok((Box::new(FastbloomRsCounting(decoded)), bytes.len())))
    }
}

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
impl LabFilter for Fuse8 {
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
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
        serde_round_trip_into(&self.0, Fuse8)
    }
}

/// A static xor filter from `xorf`, built once from the XXH3 hashes of all keys.
pub struct Xorf<F> {
    name: &'static str,
    filter: F,
    bytes: usize,
}

impl<F: xorf::Filter<u64>> Xorf<F> {
    /// Builds `name` from `keys` with `make` (deduplicated hashes, as xorf requires);
    /// `bytes_of` reads the filter's fingerprint memory.
    pub fn build(
        name: &'static str,
        keys: &[u64],
        make: impl FnOnce(&[u64]) -> anyhow::Result<F>,
        bytes_of: impl FnOnce(&F) -> usize,
    ) -> anyhow::Result<Self> {
        let mut hashes: Vec<u64> = keys.iter().map(|&k| xxh3(k)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        let filter = make(&hashes)?;
        let bytes = bytes_of(&filter);
        Ok(Xorf {
            name,
            filter,
            bytes,
        })
    }
}

impl<F: xorf::Filter<u64> + serde::Serialize + serde::de::DeserializeOwned + 'static> LabFilter
    for Xorf<F>
{
    fn name(&self) -> String {
        self.name.into()
    }
    fn insert(&mut self, _key: u64) {
        panic!("{} is static: build it from all its keys", self.name);
    }
    fn try_insert(&mut self, _key: u64) -> bool {
        false
    }
    fn contains(&self, key: u64) -> bool {
        self.filter.contains(&xxh3(key))
    }
    fn bytes(&self) -> usize {
        self.bytes
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
        serde_round_trip_into(&self.filter, |filter| Xorf {
            name: self.name,
            filter,
            bytes: self.bytes,
        })
    }
}

/// `f` holding every key of `keys`, inserted one at a time: an error where it refused
/// any (a cuckoo or quotient filter past its capacity at its sizing recipe).
pub fn holding(
    name: &str,
    mut f: Box<dyn LabFilter>,
    keys: &[u64],
) -> anyhow::Result<Option<Box<dyn LabFilter>>> {
    let refused = keys.iter().filter(|&&k| !f.try_insert(k)).count();
    anyhow::ensure!(
        refused == 0,
        "{name} refused {refused} of {} inserts at its sizing recipe",
        keys.len()
    );
    Ok(Some(f))
}
