//! [`ScalableBloomFilter`]: grows by adding layers, keeping the compounded rate ≤ target.
//!
//! Layer `i` (from 0) has capacity `n₀·gⁱ` and target rate `pᵢ = p₀·rⁱ`, where `g` is the
//! growth factor (default 2), `r` the tightening ratio (default 0.5, as RedisBloom) and
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
//! insert of a new key opens a layer; in [`Mode::Fixed`] it returns [`Full`] instead.
//!
//! [`Full`]: ScalableError::Full

use crate::block::Block;
use crate::bloom::BloomFilter;
use crate::hasher::{IntFold, Key, KeyHasher};
use crate::params::{Params, ParamsError};
use alloc::boxed::Box;
use alloc::vec::Vec;

/// Whether the filter may add layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Add a layer when the newest one is full.
    Scaling,
    /// Never grow: inserting a new key beyond the capacity returns [`ScalableError::Full`].
    Fixed,
}

/// Why an insert into a scalable filter failed.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum ScalableError {
    /// [`Mode::Fixed`] and the capacity is reached; the key was not added.
    Full {
        /// Keys the filter holds.
        len: u64,
    },
    /// The next layer's parameters are not valid (too large, or a rate that underflowed).
    Layer(ParamsError),
}

impl core::fmt::Display for ScalableError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ScalableError::Full { len } => {
                write!(f, "filter is full ({len} keys) and does not scale")
            }
            ScalableError::Layer(e) => write!(f, "cannot add a layer: {e}"),
        }
    }
}

impl core::error::Error for ScalableError {}

/// A Bloom filter that grows in layers (see the module docs).
#[derive(Clone, Debug)]
pub struct ScalableBloomFilter<H = IntFold> {
    layers: Vec<BloomFilter<Box<[Block]>, H>>,
    /// Capacity of each layer, parallel to `layers`.
    capacities: Vec<u64>,
    /// New keys inserted into the newest layer.
    newest_len: u64,
    len: u64,
    initial_capacity: u64,
    fpr: f64,
    growth: f64,
    tightening: f64,
    mode: Mode,
    hasher: H,
    /// Why the next layer could not be built, once that was tried: sizing depends only
    /// on the options and the layer count, so it would fail the same way again, and a
    /// later insert returns this at once instead of re-running the sizing search.
    next_layer_error: Option<ParamsError>,
}

/// Equal options, hasher, counts and layers. `next_layer_error` is left out: it caches
/// a result that follows from the rest.
impl<H: PartialEq> PartialEq for ScalableBloomFilter<H> {
    fn eq(&self, other: &Self) -> bool {
        self.layers == other.layers
            && self.capacities == other.capacities
            && self.newest_len == other.newest_len
            && self.len == other.len
            && self.initial_capacity == other.initial_capacity
            && self.fpr == other.fpr
            && self.growth == other.growth
            && self.tightening == other.tightening
            && self.mode == other.mode
            && self.hasher == other.hasher
    }
}

/// Capacity and target rate of layer `i` for these options.
pub(crate) fn layer_shape(
    initial_capacity: u64,
    fpr: f64,
    growth: f64,
    tightening: f64,
    i: usize,
) -> (u64, f64) {
    let cap = (initial_capacity as f64 * libm::pow(growth, i as f64)).min(u64::MAX as f64);
    let p = fpr * (1.0 - tightening) * libm::pow(tightening, i as f64);
    (libm::ceil(cap) as u64, p)
}

/// The option checks of [`ScalableBloomFilter::with_options`].
pub(crate) fn check_options(
    initial_capacity: u64,
    fpr: f64,
    growth: f64,
    tightening: f64,
) -> Result<(), ParamsError> {
    if !(growth >= 1.0 && growth.is_finite() && tightening > 0.0 && tightening < 1.0) {
        return Err(ParamsError::InvalidGrowth { growth, tightening });
    }
    if !(fpr > 0.0 && fpr < 1.0) {
        return Err(ParamsError::InvalidFpr(fpr));
    }
    if initial_capacity == 0 {
        return Err(ParamsError::ZeroCapacity);
    }
    Ok(())
}

impl ScalableBloomFilter {
    /// A scaling filter for an initial capacity and a target rate, with growth 2 and
    /// tightening 0.5 and the default stable hasher.
    ///
    /// ```
    /// use linebloom::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(1_000, 0.01)?;
    /// for i in 0..10_000u64 {
    ///     f.insert(&i)?;
    /// }
    /// assert!(f.layers() > 1);
    /// assert!((0..10_000u64).all(|i| f.contains(&i)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(initial_capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        ScalableBloomFilter::with_options(
            initial_capacity,
            fpr,
            2.0,
            0.5,
            Mode::Scaling,
            IntFold::default(),
        )
    }
}

impl<H: KeyHasher + Clone> ScalableBloomFilter<H> {
    /// A filter with every option: growth factor (≥ 1), tightening ratio (in (0, 1)),
    /// mode and hasher.
    ///
    /// ```
    /// use linebloom::{IntFold, Mode, ParamsError, ScalableBloomFilter};
    /// let bad = ScalableBloomFilter::with_options(100, 0.01, 0.5, 0.5, Mode::Scaling, IntFold::default());
    /// assert!(matches!(bad, Err(ParamsError::InvalidGrowth { .. })));
    /// ```
    pub fn with_options(
        initial_capacity: u64,
        fpr: f64,
        growth: f64,
        tightening: f64,
        mode: Mode,
        hasher: H,
    ) -> Result<Self, ParamsError> {
        check_options(initial_capacity, fpr, growth, tightening)?;
        let options = (initial_capacity, fpr, growth, tightening, mode);
        let mut f = ScalableBloomFilter::from_parts(options, hasher, Vec::new(), 0, 0);
        f.add_layer()?;
        Ok(f)
    }

    /// Capacity and rate of layer `i`.
    fn layer_shape(&self, i: usize) -> (u64, f64) {
        layer_shape(
            self.initial_capacity,
            self.fpr,
            self.growth,
            self.tightening,
            i,
        )
    }

    fn add_layer(&mut self) -> Result<(), ParamsError> {
        if let Some(e) = self.next_layer_error {
            return Err(e);
        }
        let (cap, p) = self.layer_shape(self.layers.len());
        let params = Params::for_fpr(cap, p).inspect_err(|e| self.next_layer_error = Some(*e))?;
        self.layers
            .push(BloomFilter::with_hasher(params, self.hasher.clone()));
        self.capacities.push(cap);
        self.newest_len = 0;
        Ok(())
    }

    /// Crate-internal (decoding): the filter from validated parts.
    pub(crate) fn from_parts(
        options: (u64, f64, f64, f64, Mode),
        hasher: H,
        layers: Vec<BloomFilter<Box<[Block]>, H>>,
        len: u64,
        newest_len: u64,
    ) -> Self {
        let (initial_capacity, fpr, growth, tightening, mode) = options;
        let capacities = (0..layers.len())
            .map(|i| layer_shape(initial_capacity, fpr, growth, tightening, i).0)
            .collect();
        ScalableBloomFilter {
            layers,
            capacities,
            newest_len,
            len,
            initial_capacity,
            fpr,
            growth,
            tightening,
            mode,
            hasher,
            next_layer_error: None,
        }
    }

    /// The capacity of the first layer.
    pub fn initial_capacity(&self) -> u64 {
        self.initial_capacity
    }

    /// New keys in the newest layer.
    pub fn newest_len(&self) -> u64 {
        self.newest_len
    }

    /// Is `key` possibly in any layer?
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(key.hash_key(&self.hasher))
    }

    /// [`contains`](Self::contains) for a caller's hash.
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.layers.iter().any(|l| l.contains_hash(hash))
    }

    /// Adds `key`. `Ok(true)` if it was new, `Ok(false)` if it was possibly present in
    /// some layer already (then nothing changes). Errors leave the filter unchanged.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, ScalableError> {
        self.insert_hash(key.hash_key(&self.hasher))
    }

    /// [`insert`](Self::insert) for a caller's hash.
    pub fn insert_hash(&mut self, hash: u64) -> Result<bool, ScalableError> {
        if self.contains_hash(hash) {
            return Ok(false);
        }
        let newest_cap = *self.capacities.last().expect("at least one layer");
        if self.newest_len >= newest_cap {
            match self.mode {
                Mode::Fixed => return Err(ScalableError::Full { len: self.len }),
                Mode::Scaling => self.add_layer().map_err(ScalableError::Layer)?,
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

    /// New keys inserted (inserts that returned `Ok(true)`).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// No key inserted yet?
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of all layers' bits.
    pub fn memory_bytes(&self) -> usize {
        self.layers.iter().map(|l| l.params().bytes()).sum()
    }

    /// The bound on the compounded rate with the current layers: `1 − Π(1 − pᵢ)`.
    pub fn fpr_bound(&self) -> f64 {
        1.0 - (0..self.layers.len())
            .map(|i| 1.0 - self.layer_shape(i).1)
            .product::<f64>()
    }

    /// The layers, oldest first.
    pub fn layer_filters(&self) -> &[BloomFilter<Box<[Block]>, H>] {
        &self.layers
    }

    /// Target rate, growth factor, tightening ratio and mode.
    pub fn options(&self) -> (f64, f64, f64, Mode) {
        (self.fpr, self.growth, self.tightening, self.mode)
    }
}
