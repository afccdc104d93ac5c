//! linebloom's [`VectorQuotientFilter`] as a [`LinebloomKind`], behind the one
//! [`Linebloom`] adapter like every linebloom kind (its refusals come through the core's
//! `InsertFilter`), and its sizing by bits per key. Keys are `u64` values hashed by the
//! default `IntFold`, as for every linebloom contender.

use super::{Linebloom, LinebloomKind};
use linebloom::arch::quotient::QuotientKernel;
use linebloom::{QuotientParams, RemoveFilter, VectorQuotientFilter};

/// The contender's name.
pub const NAME: &str = "linebloom-quotient";

/// The vector quotient filter as a contender.
pub type LinebloomQuotient = Linebloom<VectorQuotientFilter>;

impl LinebloomQuotient {
    /// An empty filter of this shape, on `kernel` (the detected one by default).
    #[must_use]
    pub fn new(params: QuotientParams, kernel: &'static QuotientKernel) -> Self {
        Linebloom(VectorQuotientFilter::new(params).with_kernel(kernel))
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

impl LinebloomKind for VectorQuotientFilter {
    fn label(&self) -> String {
        NAME.into()
    }
    fn encode_and_decode(&self) -> anyhow::Result<(Self, usize)> {
        let bytes = self.to_bytes();
        let mut decoded = VectorQuotientFilter::from_bytes(&bytes)?;
        if let Some(kernel) = linebloom::arch::quotient::by_name(self.kernel_name()) {
            decoded = decoded.with_kernel(kernel);
        }
        Ok((decoded, bytes.len()))
    }
    const HAS_BATCH: bool = true;
    fn contains_many(&self, keys: &[u64], out: &mut [bool]) {
        self.contains_batch(keys, out);
    }
    fn remove_key(&mut self, key: u64) -> Option<bool> {
        Some(RemoveFilter::remove(self, &key).is_ok())
    }
}
