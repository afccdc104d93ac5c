//! [`ScalableBloomFilter`]: grows by adding layers, keeping the compounded rate ≤ target.
//!
//! Layer `i` (from 0) has capacity `n₀·gⁱ` and target rate `pᵢ = p₀·rⁱ`, where `g` is the
//! growth factor (default 2), `r` the tightening ratio (default 0.8) and
//! `p₀ = p·(1 − r)`. A query checks every layer, so a non-member is a false positive if
//! any layer says "maybe":
//!
//! ```text
//! FPR = 1 − Π (1 − pᵢ) ≤ Σ pᵢ = p₀ · Σ rⁱ < p₀ / (1 − r) = p
//! ```
//!
//! for any number of layers, the first included (Almeida et al. 2007). Each layer is a
//! [`BloomFilter`] sized by [`Params::for_fpr`], whose measured rate at capacity is at
//! most its `pᵢ`. When the newest layer has taken its capacity of new keys, the next
//! insert of a new key opens a layer; in [`Mode::Fixed`], `insert` returns [`Full`]
//! instead, as the vector quotient filter does when it is full. Options are
//! set with [`ScalableOptions`]; at most [`MAX_LAYERS`] layers are built, which is also
//! the most the decoder reads.
//!
//! The defaults were chosen by measurement: `benches/src/bin/scalable_sweep.rs` tries
//! growth 1.5–8 and tightening 0.5–0.95 at a 1% target, and of the pairs whose every
//! measured rate stays within the target, growth 2 with tightening 0.8 takes the fewest
//! bits per key for a set grown up to 100× (`benches/README.md`, "Scalable filter
//! defaults", has the table).
//! A larger tightening ratio loosens the large late layers, which hold most keys, at
//! the cost of a tighter first layer.
//!
//! [`Full`]: ScalableError::Full

use crate::bloom::BloomFilter;
use crate::filter::FilterFull;
use crate::hasher::{IntFold, Key, KeyHasher};
use crate::params::{Params, ParamsError};
use crate::storage::Blocks;
use alloc::vec::Vec;

mod options;

pub use options::{DEFAULT_GROWTH, DEFAULT_TIGHTENING, Mode, ScalableOptions};

/// The most layers a scalable filter builds, and the most its decoder accepts.
///
/// Whatever the library builds, it can read back: the layer that would be number
/// `MAX_LAYERS + 1` is refused with [`ScalableError::LayerLimit`], and the decoder
/// accepts up to this many. Growth 2 reaches the largest filter ([`crate::MAX_BYTES`])
/// within about 40 layers; only growth factors near 1 come close to this limit.
pub const MAX_LAYERS: usize = 1024;

/// Why an insert into a scalable filter failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScalableError {
    /// [`Mode::Fixed`] and the capacity is reached; the key was not added.
    Full(FilterFull),
    /// The next layer's parameters are not valid (too large, or a rate below what a
    /// 64-bit hash delivers); the key was not added.
    Layer(ParamsError),
    /// The filter has [`MAX_LAYERS`] layers; the key was not added.
    LayerLimit,
}

impl core::fmt::Display for ScalableError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ScalableError::Full(full) => write!(f, "{full} (Mode::Fixed adds no layers)"),
            ScalableError::Layer(e) => write!(f, "cannot add a layer: {e}"),
            ScalableError::LayerLimit => {
                write!(f, "cannot add a layer: the filter has {MAX_LAYERS} layers")
            }
        }
    }
}

impl core::error::Error for ScalableError {}

/// A Bloom filter that grows in layers (see the module docs).
#[derive(Clone, Debug)]
pub struct ScalableBloomFilter<H = IntFold> {
    layers: Vec<BloomFilter<Blocks, H>>,
    /// Capacity of each layer, parallel to `layers`.
    capacities: Vec<u64>,
    /// New keys inserted into the newest layer.
    newest_len: u64,
    len: u64,
    options: ScalableOptions,
    hasher: H,
    /// Why the next layer could not be built, once that was tried: sizing depends only
    /// on the options and the layer count, so it would fail the same way again, and a
    /// later insert returns this at once instead of re-running the sizing search.
    next_layer_error: Option<ScalableError>,
}

/// Equal options, hasher, counts and layers. `next_layer_error` is left out: it caches
/// a result that follows from the rest.
impl<H: PartialEq> PartialEq for ScalableBloomFilter<H> {
    fn eq(&self, other: &Self) -> bool {
        self.layers == other.layers
            && self.capacities == other.capacities
            && self.newest_len == other.newest_len
            && self.len == other.len
            && self.options == other.options
            && self.hasher == other.hasher
    }
}

impl ScalableBloomFilter {
    /// A filter with these options and the default stable hasher; builds the first
    /// layer.
    ///
    /// # Errors
    ///
    /// As for [`with_hasher`](ScalableBloomFilter::with_hasher).
    ///
    /// ```
    /// use linebloom::{ScalableBloomFilter, ScalableOptions};
    /// let f = ScalableBloomFilter::new(ScalableOptions::new(1_000, 0.01).with_growth(4.0))?;
    /// assert_eq!(f.options().growth(), 4.0);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn new(options: ScalableOptions) -> Result<Self, ParamsError> {
        ScalableBloomFilter::with_hasher(options, IntFold::default())
    }

    /// A scaling filter for an initial capacity and a target rate, with growth 2 and
    /// tightening 0.8 and the default stable hasher.
    ///
    /// # Errors
    ///
    /// As for [`with_hasher`](ScalableBloomFilter::with_hasher).
    ///
    /// ```
    /// use linebloom::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::for_fpr(1_000, 0.01)?;
    /// for i in 0..10_000u64 {
    ///     f.insert(&i)?;
    /// }
    /// assert!(f.layers() > 1);
    /// assert!((0..10_000u64).all(|i| f.contains(&i)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_fpr(initial_capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        ScalableBloomFilter::new(ScalableOptions::new(initial_capacity, fpr))
    }
}

impl<H: KeyHasher + Clone> ScalableBloomFilter<H> {
    /// A filter with the given options and hasher; builds the first layer.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidGrowth`] for a growth factor below 1 or a tightening ratio
    /// outside (0, 1), [`ParamsError::InvalidFpr`], [`ParamsError::ZeroCapacity`], or
    /// any error of [`Params::for_fpr`] for the first layer.
    ///
    /// ```
    /// use linebloom::scalable::Mode;
    /// use linebloom::{IntFold, ParamsError, ScalableBloomFilter, ScalableOptions};
    /// let options = ScalableOptions::new(100, 0.01).with_growth(0.5);
    /// let bad = ScalableBloomFilter::with_hasher(options, IntFold::default());
    /// assert_eq!(bad.err(), Some(ParamsError::InvalidGrowth));
    ///
    /// let fixed = ScalableOptions::new(100, 0.01).with_mode(Mode::Fixed);
    /// let f = ScalableBloomFilter::with_hasher(fixed, IntFold::default())?;
    /// assert_eq!(f.capacity(), 100);
    /// # Ok::<(), ParamsError>(())
    /// ```
    pub fn with_hasher(options: ScalableOptions, hasher: H) -> Result<Self, ParamsError> {
        options.check()?;
        let mut f = ScalableBloomFilter::from_parts(options, hasher, Vec::new(), 0, 0);
        f.add_layer().map_err(|e| match e {
            ScalableError::Layer(e) => e,
            _ => unreachable!("the first layer is within every limit but its parameters"),
        })?;
        Ok(f)
    }

    fn add_layer(&mut self) -> Result<(), ScalableError> {
        if let Some(e) = self.next_layer_error {
            return Err(e);
        }
        if self.layers.len() >= MAX_LAYERS {
            self.next_layer_error = Some(ScalableError::LayerLimit);
            return Err(ScalableError::LayerLimit);
        }
        let (cap, p) = self.options.layer_shape(self.layers.len());
        let params = Params::for_fpr(cap, p).map_err(ScalableError::Layer);
        let params = params.inspect_err(|e| self.next_layer_error = Some(*e))?;
        self.layers
            .push(BloomFilter::with_hasher(params, self.hasher.clone()));
        self.capacities.push(cap);
        self.newest_len = 0;
        Ok(())
    }

    /// Crate-internal (decoding): the filter from validated parts.
    pub(crate) fn from_parts(
        options: ScalableOptions,
        hasher: H,
        layers: Vec<BloomFilter<Blocks, H>>,
        len: u64,
        newest_len: u64,
    ) -> Self {
        let capacities = (0..layers.len())
            .map(|i| options.layer_shape(i).0)
            .collect();
        ScalableBloomFilter {
            layers,
            capacities,
            newest_len,
            len,
            options,
            hasher,
            next_layer_error: None,
        }
    }

    /// The hasher, shared by every layer.
    #[must_use]
    pub fn hasher(&self) -> &H {
        &self.hasher
    }

    /// Removes every key: back to one empty first layer.
    pub fn clear(&mut self) {
        *self = ScalableBloomFilter::with_hasher(self.options, self.hasher.clone())
            .expect("these options built a first layer before");
    }

    /// The options the filter was built with.
    #[must_use]
    pub fn options(&self) -> ScalableOptions {
        self.options
    }

    /// New keys in the newest layer.
    pub fn newest_len(&self) -> u64 {
        self.newest_len
    }

    /// Capacity of the newest layer: once [`newest_len`](Self::newest_len) reaches
    /// it, the next new key opens a layer (or, in [`Mode::Fixed`], is refused).
    pub fn newest_capacity(&self) -> u64 {
        *self.capacities.last().expect("at least one layer")
    }

    /// Is `key` possibly in any layer?
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(key.hash_key(&self.hasher))
    }

    /// [`contains`](Self::contains) for a caller's hash.
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.layers.iter().any(|l| l.contains_hash(hash))
    }

    /// Adds `key`, or says why it cannot: `Ok(true)` if it was new, `Ok(false)` if some
    /// layer already reported it present (then nothing changes), as `HashSet::insert`
    /// answers. In [`Mode::Scaling`] only a next layer that cannot be built refuses a key
    /// ([`MAX_LAYERS`], or a layer too large or with a rate below the 64-bit hash's
    /// floor, which only growth factors near 1 or absurd sizes reach).
    ///
    /// # Errors
    ///
    /// [`ScalableError::Full`] in [`Mode::Fixed`] past the first layer's capacity,
    /// [`ScalableError::LayerLimit`] at [`MAX_LAYERS`] layers, [`ScalableError::Layer`]
    /// when the next layer cannot be sized; the filter is unchanged.
    ///
    /// ```
    /// use linebloom::scalable::Mode;
    /// use linebloom::{FilterFull, IntFold, ScalableBloomFilter, ScalableError, ScalableOptions};
    /// let options = ScalableOptions::new(10, 0.01).with_mode(Mode::Fixed);
    /// let mut f = ScalableBloomFilter::with_hasher(options, IntFold::default())?;
    /// for i in 0..10u64 {
    ///     assert_eq!(f.insert(&i), Ok(true));
    /// }
    /// assert_eq!(f.insert(&1000u64), Err(ScalableError::Full(FilterFull)));
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, ScalableError> {
        self.insert_hash(key.hash_key(&self.hasher))
    }

    /// [`insert`](Self::insert) for a caller's hash.
    ///
    /// # Errors
    ///
    /// As for [`insert`](Self::insert).
    pub fn insert_hash(&mut self, hash: u64) -> Result<bool, ScalableError> {
        if self.contains_hash(hash) {
            return Ok(false);
        }
        let newest_cap = *self.capacities.last().expect("at least one layer");
        if self.newest_len >= newest_cap {
            match self.options.mode() {
                Mode::Fixed => return Err(ScalableError::Full(FilterFull)),
                Mode::Scaling => self.add_layer()?,
            }
        }
        self.layers
            .last_mut()
            .expect("at least one layer")
            .insert_hash(hash);
        self.newest_len += 1;
        self.len += 1;
        Ok(true)
    }

    /// Number of layers.
    pub fn layers(&self) -> usize {
        self.layers.len()
    }

    /// Total capacity of the layers so far.
    pub fn capacity(&self) -> u64 {
        self.capacities.iter().sum()
    }

    /// Keys that were added: inserts that returned `true`.
    ///
    /// A key whose bits were all set already is not added, whether it is a repeat or a
    /// new key that met a false positive. So after `n` distinct inserts `len()` is `n`
    /// minus the false positives met on the way, about `n·p` at most (99,144 for 100,000
    /// keys at 1%). This is the count that decides when a layer is full. For an estimate
    /// of the distinct keys inserted, use [`estimated_len`](Self::estimated_len).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// No key added yet?
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of all layers' bits.
    pub fn memory_bytes(&self) -> usize {
        self.layers.iter().map(|l| l.params().bytes()).sum()
    }

    /// Fraction of all layers' bits that are set.
    pub fn fill_ratio(&self) -> f64 {
        let set: f64 = self
            .layers
            .iter()
            .map(|l| l.fill_ratio() * l.params().bits() as f64)
            .sum();
        let bits: u64 = self.layers.iter().map(|l| l.params().bits()).sum();
        set / bits as f64
    }

    /// Estimated number of distinct keys inserted: the sum of the layers'
    /// [`BloomFilter::estimated_len`] (each key lives in exactly one layer).
    pub fn estimated_len(&self) -> f64 {
        self.layers.iter().map(|l| l.estimated_len()).sum()
    }

    /// The false-positive rate of the filter as it is now, for a random non-member:
    /// `1 − Π(1 − fᵢ)` over the layers' [`BloomFilter::estimated_fpr`]. Compare it with
    /// [`fpr_bound`](Self::fpr_bound), the rate the options promise.
    pub fn estimated_fpr(&self) -> f64 {
        1.0 - self
            .layers
            .iter()
            .map(|l| 1.0 - l.estimated_fpr())
            .product::<f64>()
    }

    /// The bound on the compounded rate with the current layers: `1 − Π(1 − pᵢ)`.
    pub fn fpr_bound(&self) -> f64 {
        1.0 - (0..self.layers.len())
            .map(|i| 1.0 - self.options.layer_shape(i).1)
            .product::<f64>()
    }

    /// The layers, oldest first.
    pub fn layer_filters(&self) -> &[BloomFilter<Blocks, H>] {
        &self.layers
    }
}

crate::filter::family_traits!(
    ScalableBloomFilter<H>, [H: KeyHasher + Clone], hasher: H, read: [], write: [],
    memory: |f| f.memory_bytes(),
);

/// Inserts every key, one at a time.
///
/// # Panics
///
/// Where [`insert`](ScalableBloomFilter::insert) refuses a key ([`Mode::Fixed`] at
/// capacity, or no next layer): `Extend` has no way to return the error, so, as
/// `Vec::extend` does when it cannot grow, it panics rather than drop the key. Insert
/// one at a time to handle the refusal.
impl<H: KeyHasher + Clone, K: Key> Extend<K> for ScalableBloomFilter<H> {
    #[track_caller]
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        for key in keys {
            if let Err(e) = self.insert(&key) {
                panic!("ScalableBloomFilter::extend: {e}");
            }
        }
    }
}

/// Inserts through [`insert_hash`](ScalableBloomFilter::insert_hash): a refusal
/// ([`Mode::Fixed`] at capacity, or no next layer) is the error.
impl<H: KeyHasher + Clone> crate::InsertFilter for ScalableBloomFilter<H> {
    type InsertError = ScalableError;
    #[inline]
    fn insert_hash(&mut self, hash: u64) -> Result<bool, ScalableError> {
        ScalableBloomFilter::insert_hash(self, hash)
    }
    fn clear(&mut self) {
        ScalableBloomFilter::clear(self)
    }
}
