//! [`Renamed`]: a filter under another name, the control copy of a timing table's
//! baseline.

use super::lab_filter::LabFilter;
use std::any::Any;

/// A filter under another name: the control copy of a baseline (an identical second
/// filter, timed as a contender of its own, whose ratio to the baseline is the noise
/// floor of a timing table).
pub struct Renamed<F>(pub &'static str, pub F);

impl<F: LabFilter> LabFilter for Renamed<F> {
    fn name(&self) -> String {
        self.0.into()
    }
    // The loops forward too, so that a named box runs its filter's own loops.
    fn count_each(&self, keys: &[u64]) -> u64 {
        self.1.count_each(keys)
    }
    fn insert_each(&mut self, keys: &[u64]) {
        self.1.insert_each(keys)
    }
    fn dedup_each(&mut self, keys: &[u64]) -> u64 {
        self.1.dedup_each(keys)
    }
    fn remove_each(&mut self, keys: &[u64]) -> u64 {
        self.1.remove_each(keys)
    }
    fn try_insert_each(&mut self, keys: &[u64]) -> u64 {
        self.1.try_insert_each(keys)
    }
    #[inline]
    fn insert(&mut self, key: u64) {
        self.1.insert(key)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.1.contains(key)
    }
    #[inline]
    fn insert_reporting(&mut self, key: u64) -> bool {
        self.1.insert_reporting(key)
    }
    fn bytes(&self) -> usize {
        self.1.bytes()
    }
    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) {
        self.1.contains_batch(keys, out)
    }
    fn insert_batch(&mut self, keys: &[u64]) {
        self.1.insert_batch(keys)
    }
    fn has_batch(&self) -> bool {
        self.1.has_batch()
    }
    fn exact_fpr(&self) -> Option<f64> {
        self.1.exact_fpr()
    }
    fn try_insert(&mut self, key: u64) -> bool {
        self.1.try_insert(key)
    }
    fn remove(&mut self, key: u64) -> Option<bool> {
        self.1.remove(key)
    }
    fn merge(&mut self, other: &dyn LabFilter) -> Option<anyhow::Result<()>> {
        let any: &dyn Any = other;
        match any.downcast_ref::<Self>() {
            Some(o) => self.1.merge(&o.1),
            None => self.1.merge(other),
        }
    }
    fn insert_concurrently(&self, keys: &[u64], threads: usize) -> Option<()> {
        self.1.insert_concurrently(keys, threads)
    }
    fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
        self.1.round_trip()
    }
}
