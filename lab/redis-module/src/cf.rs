//! The filter behind `CF.*`: linebloom's vector quotient filter, in layers that grow as
//! RedisBloom's cuckoo filter grows, and its body in a dump ([`crate::dump`]). It knows
//! nothing of Redis.
//!
//! * **Layers.** The first holds the reserved `capacity` items; when every layer is
//!   full the next is built, `EXPANSION` times the newest (RedisBloom rounds the
//!   expansion up to a power of two, and so does this filter), up to
//!   [`MAX_LAYERS`]; with `EXPANSION 0` a full filter refuses the item. A layer is a
//!   [`VectorQuotientFilter`] of 8-bit tags sized for its capacity, and takes items
//!   until it holds that many (or, with a chance below 10⁻⁹ per filter, its blocks
//!   refuse one first).
//! * **Items** are counted with their copies, as RedisBloom counts them: `CF.ADD`
//!   stores one more copy each time, `CF.DEL` removes one, `CF.COUNT` counts them (and
//!   any other item's that share the fingerprint: never fewer than the true count).
//! * **RedisBloom's cuckoo parameters** (`BUCKETSIZE`, `MAXITERATIONS`) have no meaning
//!   for a quotient filter, whose buckets are fixed by its block layout and which never
//!   kicks items: they are checked as RedisBloom checks them, kept, and reported by
//!   `CF.INFO` as given.
//!
//! Like every quotient or cuckoo filter, deleting an item that was never added may
//! delete another item's matching fingerprint: delete only what you added.

use crate::memory::{self, CreateError};
use linebloom::{FilterFull, QuotientParams, VectorQuotientFilter};

/// Tag bits of every layer: 8, the width the core picks for rates of about 0.25% and
/// above (`QuotientParams::for_fpr` says what each width costs).
pub const TAG_BITS: u32 = 8;
/// The most layers a filter grows to (RedisBloom's `cf-max-expansions` default).
pub const MAX_LAYERS: usize = 32;
/// The largest capacity (RedisBloom's `cf-initial-size` maximum).
pub const MAX_CAPACITY: u64 = 1 << 30;
/// RedisBloom's range of `BUCKETSIZE`.
pub const BUCKET_SIZE: std::ops::RangeInclusive<u64> = 1..=255;
/// RedisBloom's range of `MAXITERATIONS`.
pub const MAX_ITERATIONS: std::ops::RangeInclusive<u64> = 1..=65535;
/// RedisBloom's range of `EXPANSION`.
pub const EXPANSION: std::ops::RangeInclusive<u64> = 0..=32768;
/// Items a batch hashes and looks up at a time, on the stack.
const BATCH: usize = 128;

/// RedisBloom's defaults for a filter `CF.ADD` creates.
pub const DEFAULT_CAPACITY: u64 = 1024;
/// See [`DEFAULT_CAPACITY`].
pub const DEFAULT_BUCKET_SIZE: u64 = 2;
/// See [`DEFAULT_CAPACITY`].
pub const DEFAULT_MAX_ITERATIONS: u64 = 20;
/// See [`DEFAULT_CAPACITY`].
pub const DEFAULT_EXPANSION: u64 = 1;

/// What `CF.RESERVE` or `CF.INSERT` asked for, checked by the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfOptions {
    /// Items of the first layer.
    pub capacity: u64,
    /// Kept and reported only.
    pub bucket_size: u64,
    /// Kept and reported only.
    pub max_iterations: u64,
    /// Each next layer's capacity over the newest's (rounded up to a power of two); 0
    /// for a filter that never grows.
    pub expansion: u64,
}

impl Default for CfOptions {
    fn default() -> Self {
        CfOptions {
            capacity: DEFAULT_CAPACITY,
            bucket_size: DEFAULT_BUCKET_SIZE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            expansion: DEFAULT_EXPANSION,
        }
    }
}

/// Why an item was not stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Every layer is full and the filter does not grow (`EXPANSION 0`).
    Full,
    /// Every layer is full and the filter has [`MAX_LAYERS`].
    MaxLayers,
    /// The next layer would take more than [`memory::MAX_LAYER_BYTES`].
    TooLarge,
}

/// The filter behind `CF.*` (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct CfFilter {
    layers: Vec<VectorQuotientFilter>,
    options: CfOptions,
    deletes: u64,
}

/// RedisBloom's expansion: the next power of two at or above it, 0 for 0.
fn rounded_expansion(expansion: u64) -> u64 {
    if expansion == 0 {
        0
    } else {
        expansion.next_power_of_two()
    }
}

/// The capacity of layer `i`: the reserved capacity times the expansion to the `i`,
/// `None` past `u64`.
fn layer_capacity(options: &CfOptions, i: usize) -> Option<u64> {
    let growth = options
        .expansion
        .max(1)
        .checked_pow(u32::try_from(i).ok()?)?;
    options.capacity.checked_mul(growth)
}

/// A layer for `capacity` items, refused past the module's memory limit.
fn layer(capacity: u64) -> Result<VectorQuotientFilter, CreateError> {
    let params = QuotientParams::for_capacity(capacity, TAG_BITS).map_err(CreateError::Params)?;
    memory::check(params.bytes())?;
    Ok(VectorQuotientFilter::new(params))
}

impl CfFilter {
    /// An empty filter of one layer.
    pub fn new(options: CfOptions) -> Result<CfFilter, CreateError> {
        let options = CfOptions {
            expansion: rounded_expansion(options.expansion),
            ..options
        };
        Ok(CfFilter {
            layers: vec![layer(options.capacity)?],
            options,
            deletes: 0,
        })
    }

    fn hash(&self, item: &[u8]) -> u64 {
        self.layers[0].hash(item)
    }

    /// Is `item` possibly in the filter?
    pub fn exists(&self, item: &[u8]) -> bool {
        let h = self.hash(item);
        self.layers.iter().any(|l| l.contains_hash(h))
    }

    /// `out[i] = exists(items[i])`, as a batch: each layer's batch lookup fetches the
    /// blocks of later items while it tests earlier ones.
    ///
    /// # Panics
    ///
    /// If the lengths differ.
    pub fn exists_many(&self, items: &[&[u8]], out: &mut [bool]) {
        assert_eq!(
            items.len(),
            out.len(),
            "exists_many: items and out differ in length"
        );
        let mut hashes = [0u64; BATCH];
        let mut found = [false; BATCH];
        for (items, out) in items.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let hashes = &mut hashes[..items.len()];
            for (h, item) in hashes.iter_mut().zip(items) {
                *h = self.hash(item);
            }
            out.fill(false);
            let found = &mut found[..items.len()];
            for layer in &self.layers {
                layer.contains_hash_batch(hashes, found);
                for (o, &f) in out.iter_mut().zip(found.iter()) {
                    *o |= f;
                }
            }
        }
    }

    /// Copies of `item`'s fingerprint held (at least `item`'s own).
    pub fn count(&self, item: &[u8]) -> u64 {
        let h = self.hash(item);
        self.layers.iter().map(|l| u64::from(l.count_hash(h))).sum()
    }

    /// Stores one more copy of `item`: the newest layer with room takes it, else a new
    /// layer.
    pub fn add(&mut self, item: &[u8]) -> Result<(), Refused> {
        let h = self.hash(item);
        for i in (0..self.layers.len()).rev() {
            let capacity = layer_capacity(&self.options, i).unwrap_or(u64::MAX);
            let layer = &mut self.layers[i];
            if layer.len() < capacity && layer.add_hash(h).is_ok() {
                return Ok(());
            }
        }
        if self.options.expansion == 0 {
            return Err(Refused::Full);
        }
        if self.layers.len() >= MAX_LAYERS {
            return Err(Refused::MaxLayers);
        }
        let capacity = layer_capacity(&self.options, self.layers.len()).ok_or(Refused::TooLarge)?;
        let mut next = layer(capacity).map_err(|_| Refused::TooLarge)?;
        next.insert_hash(h)
            .map_err(|FilterFull| Refused::TooLarge)?;
        self.layers.push(next);
        Ok(())
    }

    /// Stores `item` unless it is possibly present: `Ok(false)` then, and nothing
    /// changes.
    pub fn add_new(&mut self, item: &[u8]) -> Result<bool, Refused> {
        if self.exists(item) {
            return Ok(false);
        }
        self.add(item).map(|()| true)
    }

    /// Removes one copy of `item`'s fingerprint, from the newest layer that holds one;
    /// `false` if none does.
    pub fn delete(&mut self, item: &[u8]) -> bool {
        let h = self.hash(item);
        let removed = self
            .layers
            .iter_mut()
            .rev()
            .any(|l| l.remove_hash(h).is_ok());
        if removed {
            // Saturating: a loaded dump may hold any count.
            self.deletes = self.deletes.saturating_add(1);
        }
        removed
    }

    /// Copies held (`Number of items inserted`, as RedisBloom counts: inserts less
    /// deletes).
    pub fn items(&self) -> u64 {
        self.layers.iter().map(|l| l.len()).sum()
    }

    /// Deletes made (`Number of items deleted`).
    pub fn deletes(&self) -> u64 {
        self.deletes
    }

    /// Layers (`Number of filters`).
    pub fn layers(&self) -> usize {
        self.layers.len()
    }

    /// Buckets of the first layer (`Number of buckets`): the quotient filter's own.
    pub fn buckets(&self) -> u64 {
        let p = self.layers[0].params();
        p.blocks() as u64 * u64::from(p.buckets_per_block())
    }

    /// The options as `CF.INFO` reports them (the expansion rounded).
    pub fn options(&self) -> CfOptions {
        self.options
    }

    /// Bytes the value takes in memory (`MEMORY USAGE`, `Size`).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<CfFilter>()
            + self
                .layers
                .iter()
                .map(|l| l.params().bytes() + std::mem::size_of::<VectorQuotientFilter>())
                .sum::<usize>()
    }

    /// The body of this filter's dump: the options, the delete count, then each layer's
    /// core encoding after its length.
    pub fn to_body(&self) -> Vec<u8> {
        let o = &self.options;
        let mut body = Vec::new();
        for word in [
            o.capacity,
            o.bucket_size,
            o.max_iterations,
            o.expansion,
            self.deletes,
            self.layers.len() as u64,
        ] {
            body.extend_from_slice(&word.to_le_bytes());
        }
        for layer in &self.layers {
            let bytes = layer.to_bytes();
            body.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            body.extend_from_slice(&bytes);
        }
        body
    }

    /// The filter a dump's body holds, every field checked: options in RedisBloom's
    /// ranges, each layer decoded by the core (blocks well formed, checksum) and of the
    /// shape its capacity gives.
    pub fn from_body(body: &[u8]) -> Result<CfFilter, String> {
        let mut r = Reader { bytes: body, at: 0 };
        let mut word = || r.word();
        let options = CfOptions {
            capacity: word()?,
            bucket_size: word()?,
            max_iterations: word()?,
            expansion: word()?,
        };
        let (deletes, count) = (word()?, word()?);
        if !(1..=MAX_CAPACITY).contains(&options.capacity)
            || !BUCKET_SIZE.contains(&options.bucket_size)
            || !MAX_ITERATIONS.contains(&options.max_iterations)
            || !EXPANSION.contains(&options.expansion)
            || rounded_expansion(options.expansion) != options.expansion
            || !(1..=MAX_LAYERS as u64).contains(&count)
            || (options.expansion == 0 && count != 1)
        {
            return Err("options CF.RESERVE cannot give".into());
        }
        let mut layers = Vec::new();
        for i in 0..count as usize {
            let len = usize::try_from(r.word()?).map_err(|_| "a layer length past memory")?;
            let bytes = r
                .take(len)
                .ok_or_else(|| format!("layer {i} runs past the body's end"))?;
            let layer = VectorQuotientFilter::from_bytes(bytes).map_err(|e| e.to_string())?;
            let capacity = layer_capacity(&options, i).ok_or("a layer capacity past u64")?;
            if QuotientParams::for_capacity(capacity, TAG_BITS) != Ok(layer.params())
                || layer.len() > capacity
            {
                return Err(format!("layer {i} is not the shape its capacity gives"));
            }
            layers.push(layer);
        }
        if r.at != body.len() {
            return Err(format!("{} bytes after the last layer", body.len() - r.at));
        }
        Ok(CfFilter {
            layers,
            options,
            deletes,
        })
    }
}

/// Reads a body from the front.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// The next `n` bytes, if there are that many.
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    /// The next little-endian `u64`.
    fn word(&mut self) -> Result<u64, String> {
        let len = self.bytes.len();
        self.take(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .ok_or_else(|| format!("the body ends at {len} bytes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn item(i: u32) -> Vec<u8> {
        format!("item:{i}").into_bytes()
    }

    #[test]
    fn layers_grow_by_the_rounded_expansion_and_keep_every_item() {
        let mut f = CfFilter::new(CfOptions {
            capacity: 100,
            expansion: 3,
            ..CfOptions::default()
        })
        .unwrap();
        assert_eq!(f.options().expansion, 4);
        for i in 0..2000 {
            f.add(&item(i)).unwrap();
        }
        // 100 + 400 + 1600 ≥ 2000.
        assert_eq!((f.layers(), f.items()), (3, 2000));
        assert!((0..2000).all(|i| f.exists(&item(i))));
        assert_eq!(CfFilter::from_body(&f.to_body()).unwrap(), f);
    }

    #[test]
    fn a_filter_without_expansion_refuses_past_its_capacity() {
        let mut f = CfFilter::new(CfOptions {
            capacity: 4,
            expansion: 0,
            ..CfOptions::default()
        })
        .unwrap();
        for i in 0..4 {
            f.add(&item(i)).unwrap();
        }
        assert_eq!(f.add(&item(4)), Err(Refused::Full));
        assert!(f.delete(&item(0)));
        assert_eq!(f.add(&item(4)), Ok(()), "a delete makes room");
    }

    #[test]
    fn growth_stops_at_the_layer_limit() {
        let mut f = CfFilter::new(CfOptions {
            capacity: 4,
            ..CfOptions::default()
        })
        .unwrap();
        let mut stored = 0;
        while f.add(&item(stored)).is_ok() {
            stored += 1;
        }
        assert_eq!((stored, f.layers()), (4 * MAX_LAYERS as u32, MAX_LAYERS));
        assert_eq!(f.add(&item(stored)), Err(Refused::MaxLayers));
    }

    /// Adds, deletes and lookups against a multiset model: no false negatives, counts
    /// never below the model's, and the dump round trip in between.
    #[test]
    fn the_filter_matches_a_multiset_model() {
        let mut f = CfFilter::new(CfOptions {
            capacity: 50,
            expansion: 2,
            ..CfOptions::default()
        })
        .unwrap();
        let mut model: HashMap<u32, u64> = HashMap::new();
        let mut state = 12345u64;
        for step in 0..20_000u32 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = (state >> 40) as u32 % 300;
            match (state >> 20) % 4 {
                0 | 1 => {
                    f.add(&item(key)).unwrap();
                    *model.entry(key).or_default() += 1;
                }
                2 => {
                    let held = model.get(&key).copied().unwrap_or(0);
                    if held > 0 {
                        assert!(f.delete(&item(key)));
                        model.insert(key, held - 1);
                    }
                }
                _ => {
                    let held = model.get(&key).copied().unwrap_or(0);
                    assert!(f.count(&item(key)) >= held);
                    if held > 0 {
                        assert!(f.exists(&item(key)), "false negative at step {step}");
                    }
                }
            }
            if step % 5000 == 0 {
                f = CfFilter::from_body(&f.to_body()).unwrap();
            }
        }
        assert_eq!(f.items(), model.values().sum::<u64>());
    }

    #[test]
    fn bodies_out_of_range_are_refused() {
        let f = CfFilter::new(CfOptions::default()).unwrap();
        let body = f.to_body();
        assert_eq!(CfFilter::from_body(&body).unwrap(), f);
        for (word, value) in [(0, 0u64), (1, 0), (1, 256), (2, 0), (3, 3), (5, 0), (5, 33)] {
            let mut bad = body.clone();
            bad[word * 8..word * 8 + 8].copy_from_slice(&value.to_le_bytes());
            assert!(CfFilter::from_body(&bad).is_err(), "word {word} = {value}");
        }
        assert!(CfFilter::from_body(&body[..body.len() - 1]).is_err());
        let mut longer = body.clone();
        longer.push(0);
        assert!(CfFilter::from_body(&longer).is_err());
    }

    /// A dump may carry any delete count (they are not bounded by the items held); a
    /// delete after it saturates (the fuzzer found the overflow).
    #[test]
    fn a_loaded_delete_count_saturates() {
        let mut f = CfFilter::new(CfOptions::default()).unwrap();
        f.add(b"item").unwrap();
        let mut body = f.to_body();
        body[4 * 8..5 * 8].copy_from_slice(&u64::MAX.to_le_bytes());
        let mut f = CfFilter::from_body(&body).unwrap();
        assert_eq!(f.deletes(), u64::MAX);
        assert!(f.delete(b"item"));
        assert_eq!(f.deletes(), u64::MAX);
    }
}
