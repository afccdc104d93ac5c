//! [`ClassicParams`]: the shape of a [`crate::ClassicBloomFilter`], its sizing, and
//! its probe scheme (scheme 1 of the format: one mixed 64-bit value per probe; the
//! filter's docs say why).

use crate::block::Block;
use crate::fpr;
use crate::params::{MAX_BYTES, ParamsError};
use crate::pattern::fmix64;

/// Largest `k` of the classic filter.
pub const MAX_CLASSIC_K: u32 = 32;

/// Shape of a [`crate::ClassicBloomFilter`]: `bits` bits and `k` probes per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClassicParams {
    bits: u64,
    k: u32,
}

impl ClassicParams {
    /// Raw shape.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidK`] unless `k` is in `1..=32`, [`ParamsError::ZeroBlocks`]
    /// for zero bits, [`ParamsError::TooLarge`] past [`MAX_BYTES`].
    ///
    /// ```
    /// use linebloom::ClassicParams;
    /// assert_eq!(ClassicParams::new(1000, 7)?.blocks(), 2);
    /// assert!(ClassicParams::new(0, 7).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(bits: u64, k: u32) -> Result<Self, ParamsError> {
        crate::params::check_shape(k, MAX_CLASSIC_K, bits.div_ceil(8))?;
        Ok(ClassicParams { bits, k })
    }

    /// Sized by the classic formula, `m = −n ln p / (ln 2)²` and `k = (m/n) ln 2`, then
    /// the smallest `m` from there (with `k = round((m/n) ln 2)`, at most 32) whose
    /// predicted rate ([`expected_fpr`](Self::expected_fpr): [`fpr::classic_exact`] plus
    /// the 64-bit hash's floor) is at most `SIZING_MARGIN × p`, as the blocked filter's
    /// sizing does: steps that double from 0.5% until one meets the target, then
    /// bisection.
    ///
    /// Refused with [`ParamsError::FprBelowHashFloor`] when `p` (with the margin) is at or
    /// below [`fpr::hash_floor`]: no size can deliver it.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidFpr`] for a rate outside (0, 1),
    /// [`ParamsError::ZeroCapacity`], [`ParamsError::CapacityTooLarge`] (as for
    /// [`Params::for_fpr`](crate::Params::for_fpr)), [`ParamsError::FprBelowHashFloor`]
    /// (below), or [`ParamsError::TooLarge`] when no filter up to [`MAX_BYTES`] meets
    /// the target.
    ///
    /// ```
    /// use linebloom::{ClassicParams, ParamsError};
    /// let p = ClassicParams::for_fpr(100_000, 0.01)?;
    /// assert!(p.expected_fpr(100_000) <= 0.01);
    /// let floor = ClassicParams::for_fpr(1 << 28, 1e-11);
    /// assert_eq!(floor, Err(ParamsError::FprBelowHashFloor { capacity: 1 << 28 }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        let goal = crate::params::sizing_goal(capacity, fpr)?;
        let ln2 = core::f64::consts::LN_2;
        let max_bits = MAX_BYTES.saturating_mul(8);
        let shape = |m: u64| {
            let k = libm::round(m as f64 / capacity as f64 * ln2) as u32;
            ClassicParams::new(m, k.clamp(1, MAX_CLASSIC_K))
        };
        let meets = |m: u64| {
            shape(m).is_ok_and(|p| {
                let mean = p.expected_fpr(capacity);
                mean <= goal && fpr::classic_per_filter(m, p.k, capacity) <= fpr
            })
        };
        let start = libm::ceil(-(capacity as f64) * libm::log(fpr) / (ln2 * ln2)).max(1.0);
        if start > max_bits as f64 {
            return Err(ParamsError::TooLarge {
                bytes: (start / 8.0).min(u64::MAX as f64) as u64,
            });
        }
        let start = start as u64;
        // `lo` fails (or is below the start), `hi` meets.
        let (mut lo, mut hi) = (start - 1, start);
        let mut step = 0.005;
        while !meets(hi) {
            if hi >= max_bits {
                return Err(ParamsError::TooLarge {
                    bytes: (hi as f64 * (1.0 + step) / 8.0).min(u64::MAX as f64) as u64,
                });
            }
            lo = hi;
            hi = (libm::ceil(start as f64 * (1.0 + step)) as u64).clamp(hi + 1, max_bits);
            step *= 2.0;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if meets(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        shape(hi)
    }

    /// Bits.
    #[must_use]
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// Probes per key.
    #[must_use]
    pub fn k(&self) -> u32 {
        self.k
    }

    /// 64-byte blocks of storage (`⌈bits/512⌉`; the tail of the last one is unused).
    #[must_use]
    pub fn blocks(&self) -> usize {
        self.bits.div_ceil(Block::BITS as u64) as usize
    }

    /// Calls `f` with each of `hash`'s `k` bit indices in `0..bits`: the positions this
    /// filter sets and tests, for callers that keep the bits elsewhere (a Redis string
    /// with `SETBIT`/`GETBIT`).
    ///
    /// ```
    /// use linebloom::ClassicParams;
    /// let p = ClassicParams::new(1000, 3)?;
    /// let mut bits = Vec::new();
    /// p.for_each_position(42, |b| bits.push(b));
    /// assert_eq!(bits.len(), 3);
    /// assert!(bits.iter().all(|&b| b < 1000));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_each_position(&self, hash: u64, f: impl FnMut(u64)) {
        for_each_probe(hash, self.bits, self.k, f)
    }

    /// The most distinct keys this shape holds with a predicted rate at most `fpr` (see
    /// [`crate::Params::capacity_at`]).
    ///
    /// ```
    /// use linebloom::ClassicParams;
    /// let p = ClassicParams::for_fpr(10_000, 0.01)?;
    /// assert!(p.capacity_at(0.01) >= 10_000);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn capacity_at(&self, fpr: f64) -> u64 {
        crate::params::largest_meeting(|n| self.expected_fpr(n) <= fpr)
    }

    /// Estimated number of distinct keys in a classic filter of this shape with `ones`
    /// of its `m` bits set ([`crate::ClassicBloomFilter::estimated_len`]'s estimator), for bits
    /// kept elsewhere, such as a Redis string counted with `BITCOUNT`.
    ///
    /// ```
    /// use linebloom::{ClassicBloomFilter, ClassicParams};
    /// let params = ClassicParams::for_fpr(10_000, 0.01)?;
    /// let mut f = ClassicBloomFilter::new(params);
    /// for key in 0..10_000u64 { f.insert(&key); }
    /// let ones = (f.fill_ratio() * params.bits() as f64).round() as u64;
    /// assert_eq!(params.estimated_len(ones), f.estimated_len());
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn estimated_len(&self, ones: u64) -> f64 {
        let clear = self.bits.saturating_sub(ones) as f64 / self.bits as f64;
        fpr::estimated_keys(clear, self.k, self.bits as f64)
    }

    /// The predicted rate after `n` distinct keys: [`fpr::classic_exact`] plus the 64-bit
    /// hash's floor ([`fpr::hash_floor`]), as [`crate::fpr::blocked`] includes it.
    #[must_use]
    pub fn expected_fpr(&self, n: u64) -> f64 {
        let ideal = fpr::classic_exact(self.bits, self.k, n);
        ideal + (1.0 - ideal) * fpr::hash_floor(n)
    }
}

/// `"95851 bits, k = 7"`: the shape, as [`IncompatibleError`](crate::IncompatibleError)
/// names it.
impl core::fmt::Display for ClassicParams {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} bits, k = {}", self.bits(), self.k())
    }
}

/// The step of the Weyl sequence the probes are drawn from: `2⁶⁴/φ`, odd.
const PROBE_STEP: u64 = 0x9e37_79b9_7f4a_7c15;

/// The format's id of the probe scheme above (bytes 40..48 of a classic encoding).
pub(crate) const PROBE_SCHEME: u64 = 1;

/// Calls `f(bit)` for each of the key's `k` bit indices in `0..m`.
#[inline(always)]
pub(crate) fn for_each_probe(hash: u64, m: u64, k: u32, mut f: impl FnMut(u64)) {
    let mut state = hash;
    for _ in 0..k {
        state = state.wrapping_add(PROBE_STEP);
        f(((fmix64(state) as u128 * m as u128) >> 64) as u64);
    }
}
