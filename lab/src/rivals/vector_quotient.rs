//! linebloom's [`VectorQuotientFilter`] behind the lab's [`Filter`]: its own adapter,
//! because its insert can refuse (a full pair of blocks), where the Bloom kinds behind
//! [`super::Linebloom`] always take a key. Keys are `u64` values hashed by the default
//! `IntFold`, as for every linebloom contender.

use super::filter::Filter;
use linebloom::arch::quotient::QuotientKernel;
use linebloom::{QuotientParams, Stored, VectorQuotientFilter};

/// The contender's name.
pub const NAME: &str = "linebloom-quotient";

/// The vector quotient filter as a contender.
pub struct LinebloomQuotient(pub VectorQuotientFilter);

impl LinebloomQuotient {
    /// An empty filter of this shape, on `kernel` (the detected one by default).
    #[must_use]
    pub fn new(params: QuotientParams, kernel: &'static QuotientKernel) -> Self {
        LinebloomQuotient(VectorQuotientFilter::new(params).with_kernel(kernel))
    }

    /// The shape for `n` keys at `bits` bits per key: the blocks those bits buy, with
    /// 16-bit tags where they hold `n` keys within their capacity (their rate is 150×
    /// lower at the same load), else 8-bit tags; `None` where neither holds `n`.
    #[must_use]
    pub fn params_for_bits(n: u64, bits: f64) -> Option<QuotientParams> {
        let blocks = ((bits * n as f64 / 512.0).floor() as u64 / 2 * 2).max(2);
        [16, 8]
            .into_iter()
            .filter_map(|tag_bits| QuotientParams::new(blocks, tag_bits).ok())
            .find(|p| p.capacity() >= n)
    }
}

impl Filter for LinebloomQuotient {
    fn name(&self) -> String {
        NAME.into()
    }
    /// The core's `add`; a refusal is what [`try_insert`](Filter::try_insert) reports.
    #[inline]
    fn insert(&mut self, key: u64) {
        let _ = self.0.add(&key);
    }
    #[inline]
    fn try_insert(&mut self, key: u64) -> bool {
        self.0.add(&key).is_ok()
    }
    #[inline]
    fn insert_reporting(&mut self, key: u64) -> bool {
        self.0.insert(&key) == Ok(Stored::New)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    #[inline]
    fn remove(&mut self, key: u64) -> Option<bool> {
        Some(self.0.remove(&key).is_ok())
    }
    fn bytes(&self) -> usize {
        self.0.params().bytes()
    }
    fn exact_fpr(&self) -> Option<f64> {
        Some(self.0.estimated_fpr())
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn Filter>, usize)>> {
        let bytes = self.0.to_bytes();
        Some(
            VectorQuotientFilter::from_bytes(&bytes)
                .map(|f| {
                    (
                        Box::new(LinebloomQuotient(f)) as Box<dyn Filter>,
                        bytes.len(),
                    )
                })
                .map_err(anyhow::Error::from),
        )
    }
}
