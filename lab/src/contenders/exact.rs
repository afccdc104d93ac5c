//! [`Exact`]: a `HashSet`, the exact set every filter's memory is compared with.

use super::lab_filter::LabFilter;

/// `std::collections::HashSet`: exact, the memory reference.
pub struct Exact(pub std::collections::HashSet<u64>);
impl LabFilter for Exact {
    fn name(&self) -> String {
        "hashset".into()
    }
    fn insert(&mut self, key: u64) {
        self.0.insert(key);
    }
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
    fn bytes(&self) -> usize {
        // hashbrown: one u64 slot plus one control byte per bucket.
        self.0.capacity() * 9
    }
}
