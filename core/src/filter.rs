//! The filter family's shared shape: the [`Filter`], [`InsertFilter`] and
//! [`RemoveFilter`] traits, the errors of removing a key ([`RemoveError`]) and of
//! combining two filters ([`IncompatibleError`]), and the macros that write what the
//! kinds share.
//!
//! Every kind implements [`Filter`] and [`InsertFilter`]; the counting and the vector
//! quotient filters also [`RemoveFilter`]; [`InsertFilter`] says what the answers
//! mean for the filters that count copies of a key.
//!
//! Each kind keeps its operations as inherent methods too (so calling them needs no
//! import); the traits are for code generic over the kind: a test suite, a benchmark,
//! a service that picks its filter at start-up. `core/DESIGN.md` ("The family") says
//! which kind implements which trait.
//!
//! ```
//! use linebloom::{BloomFilter, Filter, InsertFilter, VectorQuotientFilter};
//!
//! /// Inserts `keys` and reports how full the filter is, whatever its kind; the first
//! /// refused key stops it (only the vector quotient filter and a scalable filter that
//! /// may not grow refuse one).
//! fn load<F: InsertFilter>(filter: &mut F, keys: &[u64]) -> Result<f64, F::InsertError> {
//!     for key in keys {
//!         filter.add(key)?;
//!     }
//!     assert!(keys.iter().all(|k| filter.contains(k)));
//!     Ok(filter.estimated_fpr())
//! }
//! let keys: Vec<u64> = (0..1000).collect();
//! // A Bloom filter never refuses: its error type is `Infallible`.
//! let Ok(plain) = load(&mut BloomFilter::for_fpr(1000, 0.01)?, &keys);
//! let quotient = load(&mut VectorQuotientFilter::for_fpr(1000, 0.01)?, &keys)?;
//! assert!(plain < 0.01 && quotient < 0.01);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::hasher::{Key, KeyHasher};
use crate::params::Params;

/// What every filter answers: membership and the monitoring numbers.
///
/// `contains` never gives a false negative for a key inserted since the last `clear`.
pub trait Filter {
    /// The hasher that turns keys into the 64-bit hashes the filter probes.
    type Hasher: KeyHasher;

    /// The hasher.
    fn hasher(&self) -> &Self::Hasher;

    /// The 64-bit hash this filter uses for `key`.
    fn hash<K: Key + ?Sized>(&self, key: &K) -> u64
    where
        Self: Sized,
    {
        key.hash_key(self.hasher())
    }

    /// Is the key with this hash possibly in the set? `false` means certainly not.
    fn contains_hash(&self, hash: u64) -> bool;

    /// Is `key` possibly in the set? `false` means certainly not.
    fn contains<K: Key + ?Sized>(&self, key: &K) -> bool
    where
        Self: Sized,
    {
        self.contains_hash(self.hash(key))
    }

    /// Bytes of filter memory (bits or counters; not the struct around them).
    fn memory_bytes(&self) -> usize;

    /// How full the filter is, from 0 to 1: the fraction of bits (or counters) set; for
    /// the vector quotient filter, of tag slots in use.
    fn fill_ratio(&self) -> f64;

    /// Estimated number of keys inserted: distinct keys for a set, copies for a
    /// multiset (the counting and vector quotient filters; see [`InsertFilter`]).
    fn estimated_len(&self) -> f64;

    /// The false-positive rate of this filter as it is now, for a random non-member.
    fn estimated_fpr(&self) -> f64;
}

/// Why an insert changed nothing: the filter is full. No key was dropped or moved.
///
/// The vector quotient filter refuses a key when both of its blocks are full: the
/// filter holds more than its [`capacity`](crate::QuotientParams::capacity) (below it
/// this happens with a chance of about [`crate::quotient::FULL_CHANCE`] at most), or,
/// rarely, a crowd of keys landed in the same two blocks. A scalable filter in
/// `Mode::Fixed` refuses a new key once its one layer holds its capacity
/// (`ScalableError::Full`). Either way: rebuild it larger, or remove keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FilterFull;

impl core::fmt::Display for FilterFull {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the filter is full; nothing was inserted (rebuild it larger, or remove keys)")
    }
}

impl core::error::Error for FilterFull {}

/// A filter that takes new keys.
///
/// An insert can be refused only where [`InsertError`](Self::InsertError) says so:
/// [`Infallible`](core::convert::Infallible) for the Bloom kinds (a filter past its
/// capacity takes keys at a higher false-positive rate),
/// [`FilterFull`] for the vector quotient filter and
/// `ScalableError` for the scalable filter (`alloc`; it refuses only in `Mode::Fixed`,
/// or past its layer limit). A refused insert changes nothing.
///
/// # Sets and multisets
///
/// The Bloom kinds hold a set: inserting a key twice changes nothing the second time.
/// The counting and the vector quotient filters hold a multiset: every insert counts
/// one more copy (a counter step, a stored fingerprint), and every `remove` takes one
/// away, so a key inserted twice stays present after one removal. For both:
///
/// * `insert` answers `true` when the key was certainly not present before (a bit or
///   counter was zero, no block held its fingerprint) and `false` when it was possibly
///   present; a multiset then holds one more copy, a set is unchanged;
/// * [`Filter::estimated_len`] estimates the distinct keys of a set from its bits; a
///   multiset counts copies: the vector quotient filter its stored fingerprints,
///   exactly (its `len`), and the counting filter the sum of its counters over `k`
///   (exact while none saturates), so a key inserted twice counts twice;
/// * [`Filter::fill_ratio`] is the fraction of bits or counters that are nonzero, or of
///   the quotient filter's tag slots in use.
pub trait InsertFilter: Filter {
    /// Why an insert can be refused.
    type InsertError: core::error::Error;

    /// Adds the key with this hash: `Ok(true)` if it was certainly not present before,
    /// `Ok(false)` if it possibly was (a multiset then holds one more copy).
    ///
    /// # Errors
    ///
    /// [`InsertError`](Self::InsertError) when the filter cannot take the key; nothing
    /// changes.
    fn insert_hash(&mut self, hash: u64) -> Result<bool, Self::InsertError>;

    /// Adds `key`: `Ok(true)` if it was certainly not present before.
    ///
    /// # Errors
    ///
    /// As for [`insert_hash`](Self::insert_hash).
    fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool, Self::InsertError>
    where
        Self: Sized,
    {
        let hash = self.hash(key);
        self.insert_hash(hash)
    }

    /// Adds the key with this hash without saying whether it was new. The default
    /// inserts and drops the answer; a kind whose test costs something on its own
    /// ([`BloomFilter::add`](crate::BloomFilter::add)) leaves the test out.
    ///
    /// # Errors
    ///
    /// As for [`insert_hash`](Self::insert_hash).
    #[inline]
    fn add_hash(&mut self, hash: u64) -> Result<(), Self::InsertError> {
        self.insert_hash(hash).map(drop)
    }

    /// Adds `key` without saying whether it was new: the form for loading a filter
    /// ([`add_hash`](Self::add_hash)).
    ///
    /// # Errors
    ///
    /// As for [`insert_hash`](Self::insert_hash).
    #[inline]
    fn add<K: Key + ?Sized>(&mut self, key: &K) -> Result<(), Self::InsertError>
    where
        Self: Sized,
    {
        let hash = self.hash(key);
        self.add_hash(hash)
    }

    /// Removes every key.
    fn clear(&mut self);
}

/// A filter that removes keys it holds: one `remove` undoes one `insert`.
pub trait RemoveFilter: Filter {
    /// Removes one insertion of the key with this hash.
    ///
    /// # Errors
    ///
    /// [`RemoveError::NotPresent`] when the key is certainly absent; nothing changes.
    fn remove_hash(&mut self, hash: u64) -> Result<(), RemoveError>;

    /// Removes one insertion of `key`. Remove only keys you inserted: removing a false
    /// positive takes away another key's count or fingerprint.
    ///
    /// # Errors
    ///
    /// As for [`remove_hash`](Self::remove_hash).
    fn remove<K: Key + ?Sized>(&mut self, key: &K) -> Result<(), RemoveError>
    where
        Self: Sized,
    {
        let hash = self.hash(key);
        self.remove_hash(hash)
    }
}

/// Why `remove` changed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemoveError {
    /// The key is certainly not in the filter: one of its counters is zero, or neither
    /// of its blocks holds its fingerprint.
    NotPresent,
}

impl core::fmt::Display for RemoveError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("key is not in the filter; nothing was removed")
    }
}

impl core::error::Error for RemoveError {}

/// Why two filters cannot be combined. `P` is the kinds' shape type: [`Params`] for
/// the blocked kinds, [`ClassicParams`](crate::ClassicParams) for the classic filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum IncompatibleError<P = Params> {
    /// Different shapes: block counts or `k` (for the classic filter, bit counts or `k`).
    Params {
        /// This filter's parameters.
        ours: P,
        /// The other filter's parameters.
        theirs: P,
    },
    /// Different hashers or seeds.
    Hasher,
}

impl<P: PartialEq> IncompatibleError<P> {
    /// `Ok` when two filters can be combined: the same shape, then the same hasher (the
    /// one check behind every kind's `union`).
    pub(crate) fn check<H: PartialEq>(ours: (P, &H), theirs: (P, &H)) -> Result<(), Self> {
        if ours.0 != theirs.0 {
            return Err(IncompatibleError::Params {
                ours: ours.0,
                theirs: theirs.0,
            });
        }
        if ours.1 != theirs.1 {
            return Err(IncompatibleError::Hasher);
        }
        Ok(())
    }
}

impl<P: core::fmt::Display> core::fmt::Display for IncompatibleError<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            IncompatibleError::Params { ours, theirs } => {
                write!(f, "filters differ in shape: {ours} vs {theirs}")
            }
            IncompatibleError::Hasher => f.write_str("filters use different hashers or seeds"),
        }
    }
}

impl<P: core::fmt::Debug + core::fmt::Display> core::error::Error for IncompatibleError<P> {}

/// The traits of a kind whose inherent methods carry the family's names: [`Filter`],
/// forwarding to them; with `insert`, [`InsertFilter`] for a kind that never refuses a
/// key (with `insert_and_add`, also its `add_hash`, for a kind with its own); with
/// `extend`, `Extend` one key at a time
/// through `insert_hash`. `$generics` are the impl's parameters, `$read` and
/// `$write` the bounds that reading and writing need, `$memory` the memory in bytes.
macro_rules! family_traits {
    (
        $ty:ty, $generics:tt, hasher: $hasher:ty, read: $read:tt, write: $write:tt,
        memory: |$f:ident| $memory:expr $(, $capability:ident)* $(,)?
    ) => {
        $crate::filter::family_traits!(@filter $ty, $generics, $hasher, $read, |$f| $memory);
        $($crate::filter::family_traits!(@ $capability $ty, $generics, $write);)*
    };
    (@filter $ty:ty, [$($generics:tt)*], $hasher:ty, [$($read:tt)*], |$f:ident| $memory:expr) => {
        impl<$($generics)*> $crate::Filter for $ty where $($read)* {
            type Hasher = $hasher;
            #[inline]
            fn hasher(&self) -> &$hasher {
                <$ty>::hasher(self)
            }
            #[inline]
            fn contains_hash(&self, hash: u64) -> bool {
                <$ty>::contains_hash(self, hash)
            }
            fn memory_bytes(&self) -> usize {
                let $f = self;
                $memory
            }
            fn fill_ratio(&self) -> f64 {
                <$ty>::fill_ratio(self)
            }
            fn estimated_len(&self) -> f64 {
                <$ty>::estimated_len(self)
            }
            fn estimated_fpr(&self) -> f64 {
                <$ty>::estimated_fpr(self)
            }
        }
    };
    (@insert $ty:ty, $generics:tt, $write:tt) => {
        $crate::filter::family_traits!(@insert_impl $ty, $generics, $write,);
    };
    (@insert_and_add $ty:ty, $generics:tt, $write:tt) => {
        $crate::filter::family_traits!(@insert_impl $ty, $generics, $write,
            #[inline]
            fn add_hash(&mut self, hash: u64) -> Result<(), core::convert::Infallible> {
                <$ty>::add_hash(self, hash);
                Ok(())
            }
        );
    };
    (@insert_impl $ty:ty, [$($generics:tt)*], [$($write:tt)*], $($add:tt)*) => {
        impl<$($generics)*> $crate::InsertFilter for $ty where $($write)* {
            type InsertError = core::convert::Infallible;
            #[inline]
            fn insert_hash(&mut self, hash: u64) -> Result<bool, core::convert::Infallible> {
                Ok(<$ty>::insert_hash(self, hash))
            }
            $($add)*
            fn clear(&mut self) {
                <$ty>::clear(self)
            }
        }
    };
    (@extend $ty:ty, [$($generics:tt)*], [$($write:tt)*]) => {
        /// Inserts every key, one at a time.
        impl<$($generics)*, K: $crate::Key> Extend<K> for $ty where $($write)* {
            fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
                for key in keys {
                    let hash = <$ty as $crate::Filter>::hash(self, &key);
                    <$ty>::insert_hash(self, hash);
                }
            }
        }
    };
}
pub(crate) use family_traits;

/// The accessors every kind over block storage shares (fields `blocks`, `params`,
/// `hasher`), written once: `params`, `hasher`, `as_blocks`, `hash`, `into_parts`; with
/// `bit_array` (a kind whose blocks are plain bits and whose shape estimates the key
/// count from the set bits), also `fill_ratio` and `estimated_len`.
macro_rules! block_storage_accessors {
    ($ty:ident, $params:ty, bit_array) => {
        $crate::filter::block_storage_accessors!($ty, $params);

        impl<S: AsRef<[$crate::Block]>, H: $crate::KeyHasher> $ty<S, H> {
            /// Fraction of the filter's bits set.
            #[must_use]
            pub fn fill_ratio(&self) -> f64 {
                $crate::block::count_ones(self.blocks.as_ref()) as f64 / self.params.bits() as f64
            }

            /// Estimated number of distinct keys inserted, from the fraction of clear
            /// bits: each key leaves a given bit clear with probability `1 − k/m`, so
            /// `n̂ = ln(clear fraction) / ln(1 − k/m)`; `f64::INFINITY` when every bit
            /// is set.
            ///
            /// Watch it against the capacity the filter was sized for: past it the rate
            /// climbs above the target, and the filter should be rebuilt larger.
            #[must_use]
            pub fn estimated_len(&self) -> f64 {
                self.params
                    .estimated_len($crate::block::count_ones(self.blocks.as_ref()))
            }
        }
    };
    ($ty:ident, $params:ty) => {
        impl<S: AsRef<[$crate::Block]>, H: $crate::KeyHasher> $ty<S, H> {
            /// The filter's shape.
            #[must_use]
            pub fn params(&self) -> $params {
                self.params
            }

            /// The hasher.
            #[must_use]
            pub fn hasher(&self) -> &H {
                &self.hasher
            }

            /// The storage blocks.
            #[must_use]
            pub fn as_blocks(&self) -> &[$crate::Block] {
                self.blocks.as_ref()
            }

            /// The 64-bit hash this filter uses for `key`.
            #[inline]
            #[must_use]
            pub fn hash<K: $crate::Key + ?Sized>(&self, key: &K) -> u64 {
                key.hash_key(&self.hasher)
            }

            /// The storage and the hasher.
            pub fn into_parts(self) -> (S, H) {
                (self.blocks, self.hasher)
            }

            /// Gives the storage back.
            pub fn into_storage(self) -> S {
                self.blocks
            }
        }

        /// Same shape, same hasher, same bits, whatever the storage or kernel.
        impl<S: AsRef<[$crate::Block]>, S2: AsRef<[$crate::Block]>, H: PartialEq>
            PartialEq<$ty<S2, H>> for $ty<S, H>
        {
            fn eq(&self, other: &$ty<S2, H>) -> bool {
                self.params == other.params
                    && self.hasher == other.hasher
                    && self.blocks.as_ref() == other.blocks.as_ref()
            }
        }

        impl<S: AsRef<[$crate::Block]>, H: Eq> Eq for $ty<S, H> {}
    };
}
pub(crate) use block_storage_accessors;
