//! [`BloomFilter::union`] and [`BloomFilter::intersect`]: two filters of one shape and
//! hasher combined bit by bit, by the kernel's merge.

use super::BloomFilter;
#[cfg(doc)]
use crate::IncompatibleError;
use crate::arch;
use crate::block::Block;
use crate::hasher::KeyHasher;

impl<S: AsRef<[Block]> + AsMut<[Block]>, H: KeyHasher> BloomFilter<S, H> {
    fn combine<S2: AsRef<[Block]>>(
        &mut self,
        other: &BloomFilter<S2, H>,
        and: bool,
    ) -> Result<(), crate::IncompatibleError>
    where
        H: PartialEq,
    {
        crate::IncompatibleError::check(
            (self.params, &self.hasher),
            (other.params, &other.hasher),
        )?;
        let kernel = self.kernel;
        let theirs = other.checked_blocks();
        let ours = self.checked_blocks_mut();
        // SAFETY: the kernel runs on this CPU (see `contains_hash`).
        unsafe { arch::merge(kernel, ours, theirs, and) };
        Ok(())
    }

    /// Adds every key of `other` (bitwise OR). Both must have the same parameters and
    /// hasher.
    ///
    /// # Errors
    ///
    /// [`IncompatibleError::Params`] when the shapes differ, [`IncompatibleError::Hasher`]
    /// when the hashers do; `self` is unchanged.
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params};
    /// let p = Params::new(8, 6)?;
    /// let (mut a, mut b) = (BloomFilter::new(p), BloomFilter::new(p));
    /// a.insert("x");
    /// b.insert("y");
    /// a.union(&b)?;
    /// assert!(a.contains("x") && a.contains("y"));
    /// assert!(a.union(&BloomFilter::new(Params::new(9, 6)?)).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn union<S2: AsRef<[Block]>>(
        &mut self,
        other: &BloomFilter<S2, H>,
    ) -> Result<(), crate::IncompatibleError>
    where
        H: PartialEq,
    {
        self.combine(other, false)
    }

    /// Keeps only bits set in both (bitwise AND): a filter that contains every key
    /// inserted into both. Both must have the same parameters and hasher.
    ///
    /// # Errors
    ///
    /// As for [`union`](Self::union).
    pub fn intersect<S2: AsRef<[Block]>>(
        &mut self,
        other: &BloomFilter<S2, H>,
    ) -> Result<(), crate::IncompatibleError>
    where
        H: PartialEq,
    {
        self.combine(other, true)
    }
}
