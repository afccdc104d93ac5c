//! [`ScalableOptions`]: a scalable filter's first layer, target rate, growth factor,
//! tightening ratio and [`Mode`], with their defaults and each layer's shape.

use crate::params::ParamsError;

/// The default growth factor: each layer twice the previous one's capacity
/// (`scalable_sweep`, see the `scalable` module's docs).
pub const DEFAULT_GROWTH: f64 = 2.0;

/// The default tightening ratio: each layer's rate 0.8 times the previous one's
/// (`scalable_sweep`, see the `scalable` module's docs).
pub const DEFAULT_TIGHTENING: f64 = 0.8;

/// Whether the filter may add layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Add a layer when the newest one is full.
    Scaling,
    /// Never grow: inserting a new key beyond the capacity returns [`ScalableError::Full`](super::ScalableError::Full).
    Fixed,
}

/// The options of a [`ScalableBloomFilter`](super::ScalableBloomFilter): initial capacity and target rate, plus
/// growth factor, tightening ratio and [`Mode`], whose defaults are 2, 0.8 (chosen by
/// measurement: see the `scalable` module's docs) and [`Mode::Scaling`].
///
/// ```
/// use linebloom::ScalableOptions;
/// use linebloom::scalable::Mode;
/// let o = ScalableOptions::new(1_000, 0.01).with_growth(4.0).with_mode(Mode::Fixed);
/// assert_eq!((o.growth(), o.tightening(), o.mode()), (4.0, 0.8, Mode::Fixed));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalableOptions {
    initial_capacity: u64,
    fpr: f64,
    growth: f64,
    tightening: f64,
    mode: Mode,
}

impl ScalableOptions {
    /// A scaling filter for `initial_capacity` keys in its first layer and a compounded
    /// rate of at most `fpr`, with growth 2 and tightening 0.8. Checked when the filter
    /// is built ([`ScalableBloomFilter::with_hasher`](super::ScalableBloomFilter::with_hasher)).
    #[must_use]
    pub fn new(initial_capacity: u64, fpr: f64) -> Self {
        ScalableOptions {
            initial_capacity,
            fpr,
            growth: DEFAULT_GROWTH,
            tightening: DEFAULT_TIGHTENING,
            mode: Mode::Scaling,
        }
    }

    /// Each layer's capacity is this factor (≥ 1) times the previous one's.
    #[must_use]
    pub fn with_growth(self, growth: f64) -> Self {
        ScalableOptions { growth, ..self }
    }

    /// Each layer's target rate is this ratio (in (0, 1)) times the previous one's.
    #[must_use]
    pub fn with_tightening(self, tightening: f64) -> Self {
        ScalableOptions { tightening, ..self }
    }

    /// Grow, or refuse new keys past the first layer's capacity.
    #[must_use]
    pub fn with_mode(self, mode: Mode) -> Self {
        ScalableOptions { mode, ..self }
    }

    /// The first layer's capacity.
    #[must_use]
    pub fn initial_capacity(&self) -> u64 {
        self.initial_capacity
    }

    /// The target compounded rate.
    #[must_use]
    pub fn fpr(&self) -> f64 {
        self.fpr
    }

    /// The growth factor.
    #[must_use]
    pub fn growth(&self) -> f64 {
        self.growth
    }

    /// The tightening ratio.
    #[must_use]
    pub fn tightening(&self) -> f64 {
        self.tightening
    }

    /// The mode.
    #[must_use]
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Capacity and target rate of layer `i` (from 0): `⌈n₀·gⁱ⌉` keys at
    /// `p·(1 − r)·rⁱ`. A caller that must bound memory sizes a layer with
    /// [`Params::for_fpr`](crate::Params::for_fpr) from these before an insert builds it.
    ///
    /// ```
    /// use linebloom::ScalableOptions;
    /// let o = ScalableOptions::new(1_000, 0.01).with_tightening(0.5);
    /// assert_eq!(o.layer_shape(0), (1_000, 0.005));
    /// assert_eq!(o.layer_shape(2), (4_000, 0.00125));
    /// ```
    #[must_use]
    pub fn layer_shape(&self, i: usize) -> (u64, f64) {
        let cap =
            (self.initial_capacity as f64 * libm::pow(self.growth, i as f64)).min(u64::MAX as f64);
        let p = self.fpr * (1.0 - self.tightening) * libm::pow(self.tightening, i as f64);
        (libm::ceil(cap) as u64, p)
    }

    /// The checks of [`ScalableBloomFilter::with_hasher`](super::ScalableBloomFilter::with_hasher) (the first layer is checked
    /// by building it).
    pub(crate) fn check(&self) -> Result<(), ParamsError> {
        let (growth, tightening) = (self.growth, self.tightening);
        if !(growth >= 1.0 && growth.is_finite() && tightening > 0.0 && tightening < 1.0) {
            return Err(ParamsError::InvalidGrowth);
        }
        if !(self.fpr > 0.0 && self.fpr < 1.0) {
            return Err(ParamsError::InvalidFpr);
        }
        if self.initial_capacity == 0 {
            return Err(ParamsError::ZeroCapacity);
        }
        Ok(())
    }
}
