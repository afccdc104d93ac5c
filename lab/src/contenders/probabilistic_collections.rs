//! `probabilistic-collections`' `QuotientFilter`: a classic quotient filter (one slot
//! per fingerprint, three metadata bits, linear probing over runs and clusters), the
//! design linebloom's vector quotient filter and qfilter improve on. It hashes the key
//! with SipHash under a fixed seed, so a run is reproducible.

use super::lab_filter::{LabFilter, serde_round_trip_into};
use probabilistic_collections::SipHasherBuilder;
use probabilistic_collections::quotient::QuotientFilter;

/// The contender's name.
pub const NAME: &str = "probabilistic-collections";

/// The crate's quotient filter on `u64` keys.
pub struct ClassicQuotient(pub QuotientFilter<u64>);

impl ClassicQuotient {
    /// For `n` keys at rate `p` by the crate's own recipe (`from_fpp`: a table of twice
    /// `n` slots, so it is half full at `n`).
    pub fn for_fpr(n: u64, p: f64) -> ClassicQuotient {
        ClassicQuotient(QuotientFilter::from_fpp_with_hasher(
            n.max(1) as usize,
            p,
            SipHasherBuilder::from_seed(7, 42),
        ))
    }
}

impl LabFilter for ClassicQuotient {
    fn name(&self) -> String {
        NAME.into()
    }
    fn insert(&mut self, key: u64) {
        self.try_insert(key);
    }
    /// Refuses a key once every slot is taken (the crate's insert panics there).
    fn try_insert(&mut self, key: u64) -> bool {
        if self.0.len() >= self.0.capacity() {
            return false;
        }
        self.0.insert(&key);
        true
    }
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        let held = self.0.contains(&key);
        self.0.remove(&key);
        Some(held)
    }
    /// The slot table: `capacity` slots of the remainder and three metadata bits,
    /// packed in 64-bit words.
    fn bytes(&self) -> usize {
        let slot_bits = usize::from(self.0.remainder_bits()) + 3;
        (self.0.capacity() * slot_bits).div_ceil(64) * 8
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
        serde_round_trip_into(&self.0, ClassicQuotient)
    }
}
