//! [`LabFilter`], the one trait every filter the lab measures sits behind, and the helpers
//! its adapters share: [`same_kind`] for merges, [`spawn_inserts`] for concurrent
//! inserts, the serde round trip, and [`xxh3`], the rivals' hash of a `u64` key.

use std::any::Any;

/// A filter under test. (`Any`: [`LabFilter::merge`] checks that the other filter is the
/// same type.)
pub trait LabFilter: Any {
    /// Name in CSVs and legends.
    fn name(&self) -> String;
    /// Adds a key.
    fn insert(&mut self, key: u64);
    /// Tests a key.
    fn contains(&self, key: u64) -> bool;
    /// Bytes of filter memory.
    fn bytes(&self) -> usize;
    /// How many of `keys` [`contains`](LabFilter::contains) says yes to, one key at a
    /// time: the single-key lookup loop the timing experiments measure. Callers should
    /// not override it. As a provided method it is compiled once per filter type, so a
    /// call through `dyn LabFilter` costs one indirect call per pass, and each key's probe
    /// inlines into the loop as it does in a user's code. (A dynamic call per key costs
    /// more than the probe: through one, linebloom's single-key lead over sbbf-rs-safe
    /// was gone; see `benches/examples/dyn_dispatch.rs`.) Each key passes through
    /// `black_box`, as in `compare`, so the loop does one probe per key.
    fn count_each(&self, keys: &[u64]) -> u64 {
        keys.iter()
            .filter(|&&k| self.contains(std::hint::black_box(k)))
            .count() as u64
    }
    /// Adds `keys` one at a time by [`insert`](LabFilter::insert), in one loop compiled per
    /// filter type, like [`count_each`](LabFilter::count_each): a loop that fills a
    /// filter and asks nothing.
    fn insert_each(&mut self, keys: &[u64]) {
        for &k in keys {
            self.insert(std::hint::black_box(k));
        }
    }
    /// Adds a key and says whether the filter reports it new (some bit was clear).
    /// Filters whose insert answers override this with it; the default tests, then
    /// inserts, as a user of a library whose insert does not answer must.
    fn insert_reporting(&mut self, key: u64) -> bool {
        let seen = self.contains(key);
        self.insert(key);
        !seen
    }
    /// Adds `keys` one at a time by [`insert_reporting`](LabFilter::insert_reporting) and
    /// counts the new ones: a deduplicating loop, which uses every answer. Compiled
    /// per filter type, like [`count_each`](LabFilter::count_each).
    fn dedup_each(&mut self, keys: &[u64]) -> u64 {
        let mut fresh = 0;
        for &k in keys {
            fresh += u64::from(self.insert_reporting(std::hint::black_box(k)));
        }
        fresh
    }
    /// Tests many keys (rivals without a batch API loop).
    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) {
        for (o, &k) in out.iter_mut().zip(keys) {
            *o = self.contains(k);
        }
    }
    /// Adds many keys.
    fn insert_batch(&mut self, keys: &[u64]) {
        for &k in keys {
            self.insert(k);
        }
    }
    /// Does it have a real batch API (prefetching)?
    fn has_batch(&self) -> bool {
        false
    }
    /// Adds a key where the filter can refuse one (a full cuckoo or quotient filter, a
    /// static xor filter); `false` if it did. Filters that cannot refuse insert and
    /// return `true`.
    fn try_insert(&mut self, key: u64) -> bool {
        self.insert(key);
        true
    }
    /// Removes a key the filter holds: `Some(true)` if it did, `Some(false)` if it
    /// refused; `None` where the filter cannot delete.
    fn remove(&mut self, _key: u64) -> Option<bool> {
        None
    }
    /// Removes `keys` (all held) one at a time and counts the removals that succeeded,
    /// in one loop compiled per filter type, like [`count_each`](LabFilter::count_each).
    fn remove_each(&mut self, keys: &[u64]) -> u64 {
        let mut removed = 0;
        for &k in keys {
            removed += u64::from(self.remove(std::hint::black_box(k)) == Some(true));
        }
        removed
    }
    /// Adds `keys` one at a time by [`try_insert`](LabFilter::try_insert) and counts the
    /// inserts the filter took, in one loop compiled per filter type.
    fn try_insert_each(&mut self, keys: &[u64]) -> u64 {
        let mut taken = 0;
        for &k in keys {
            taken += u64::from(self.try_insert(std::hint::black_box(k)));
        }
        taken
    }
    /// The filter's false-positive rate for a uniform non-member, computed from its bits
    /// (linebloom's `estimated_fpr`: exact for the blocked kinds given an ideal hash;
    /// `fill^k` for the classic filter), where the library can say; `None` where only
    /// probing can tell.
    fn exact_fpr(&self) -> Option<f64> {
        None
    }
    /// Adds every key of `other` (the same type, built with the same sizing) by the
    /// library's own merge: `Some(Err)` if it refused, `None` where it has none.
    fn merge(&mut self, _other: &dyn LabFilter) -> Option<anyhow::Result<()>> {
        None
    }
    /// Inserts `keys` from `threads` threads at once through a shared reference; `None`
    /// where the filter needs `&mut self` to insert (a lock around it would serialise).
    fn insert_concurrently(&self, _keys: &[u64], _threads: usize) -> Option<()> {
        None
    }
    /// Serializes by the library's own format and decodes it again: the decoded copy and
    /// the encoding's length in bytes; `None` where the library cannot serialize.
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
        None
    }
}

/// The `other` of a [`LabFilter::merge`] as the type `T`, or an error naming both.
pub fn same_kind<'a, T: LabFilter>(this: &T, other: &'a dyn LabFilter) -> anyhow::Result<&'a T> {
    let any: &dyn Any = other;
    any.downcast_ref::<T>()
        .ok_or_else(|| anyhow::anyhow!("{} cannot merge a {}", this.name(), other.name()))
}

/// Runs `insert` over `keys` split among `threads` scoped threads.
pub fn spawn_inserts(keys: &[u64], threads: usize, insert: impl Fn(u64) + Sync) {
    let chunk = keys.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|s| {
        for part in keys.chunks(chunk) {
            let insert = &insert;
            s.spawn(move || part.iter().for_each(|&k| insert(k)));
        }
    });
}

/// A serde round trip through CBOR (`ciborium`), a compact binary serde format that
/// also takes sequences of unknown length (xorf's fuse filters write those), for the
/// libraries whose only format is serde: the decoded value and the encoding's length.
pub fn serde_round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(
    value: &T,
) -> anyhow::Result<(T, usize)> {
    let mut bytes = Vec::new();
    ciborium::into_writer(value, &mut bytes)?;
    Ok((ciborium::from_reader(bytes.as_slice())?, bytes.len()))
}

/// [`serde_round_trip`] of a library's filter, decoded into the adapter `wrap` makes of
/// it: what [`LabFilter::round_trip`] returns.
pub fn serde_round_trip_into<T, F>(
    value: &T,
    wrap: impl FnOnce(T) -> F,
) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
    F: LabFilter,
{
    Some(serde_round_trip(value).map(|(decoded, len)| (Box::new(wrap(decoded)) as _, len)))
}

/// XXH3-64 of the key's little-endian bytes: linebloom's hash of a `u64` key.
#[inline(always)]
pub fn xxh3(key: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&key.to_le_bytes())
}

/// A boxed filter is a filter: every method forwards, the loops included, so that a
/// pass runs the inner filter's own loop (one dynamic call per pass, as for the box
/// itself), and wrappers such as [`super::Renamed`] can hold a filter built by name.
impl LabFilter for Box<dyn LabFilter> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn insert(&mut self, key: u64) {
        (**self).insert(key)
    }
    fn contains(&self, key: u64) -> bool {
        (**self).contains(key)
    }
    fn bytes(&self) -> usize {
        (**self).bytes()
    }
    fn count_each(&self, keys: &[u64]) -> u64 {
        (**self).count_each(keys)
    }
    fn insert_each(&mut self, keys: &[u64]) {
        (**self).insert_each(keys)
    }
    fn insert_reporting(&mut self, key: u64) -> bool {
        (**self).insert_reporting(key)
    }
    fn dedup_each(&mut self, keys: &[u64]) -> u64 {
        (**self).dedup_each(keys)
    }
    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) {
        (**self).contains_batch(keys, out)
    }
    fn insert_batch(&mut self, keys: &[u64]) {
        (**self).insert_batch(keys)
    }
    fn has_batch(&self) -> bool {
        (**self).has_batch()
    }
    fn try_insert(&mut self, key: u64) -> bool {
        (**self).try_insert(key)
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        (**self).remove(key)
    }
    fn remove_each(&mut self, keys: &[u64]) -> u64 {
        (**self).remove_each(keys)
    }
    fn try_insert_each(&mut self, keys: &[u64]) -> u64 {
        (**self).try_insert_each(keys)
    }
    fn exact_fpr(&self) -> Option<f64> {
        (**self).exact_fpr()
    }
    fn merge(&mut self, other: &dyn LabFilter) -> Option<anyhow::Result<()>> {
        (**self).merge(other)
    }
    fn insert_concurrently(&self, keys: &[u64], threads: usize) -> Option<()> {
        (**self).insert_concurrently(keys, threads)
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
        (**self).round_trip()
    }
}
