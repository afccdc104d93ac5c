//! Keys and the hashers that turn them into one 64-bit hash.
//!
//! # Which keys are portable
//!
//! A filter written on one machine must answer the same on every other machine that
//! reads the same format version. That holds when both the hasher and the key encoding
//! are fixed:
//!
//! * the hasher implements [`StableHasher`] ([`Xxh3`]: XXH3-64 with a stored seed);
//! * the key goes through [`Key`], whose encodings are specified here:
//!   `[u8]`, `[u8; N]`, `str` (its UTF-8 bytes), all integer types as little-endian bytes
//!   of their own width, except `usize`/`isize`, which are widened to 8 bytes so 32- and
//!   64-bit targets agree, and `char` as a little-endian `u32`.
//!
//! Rust's `core::hash::Hash` is **not** portable: it writes integers in native byte order
//! and slice lengths as `usize`. [`Hashed`] accepts any `Hash` value for in-memory use;
//! do not rely on its hashes across machines or versions.
//!
//! # Why the type system forbids serializing some filters
//!
//! [`AHash`] (feature `ahash`) is faster on some inputs, but its output depends on CPU
//! features and crate versions. It implements [`KeyHasher`] but not [`StableHasher`], and
//! `to_bytes`/`from_bytes` exist only for `H: StableHasher`, so a filter built with it
//! cannot be written out:
//!
//! ```compile_fail,E0599
//! use linebloom::{BloomFilter, KeyHasher, Params};
//! #[derive(Clone, PartialEq)]
//! struct InMemoryOnly; // like AHash: a KeyHasher, not a StableHasher
//! impl KeyHasher for InMemoryOnly {
//!     fn hash_bytes(&self, b: &[u8]) -> u64 { b.len() as u64 }
//!     fn hash_value<T: core::hash::Hash + ?Sized>(&self, _: &T) -> u64 { 0 }
//! }
//! let f = BloomFilter::with_hasher(Params::new(1, 4).unwrap(), InMemoryOnly);
//! let _ = f.to_bytes(); // error[E0599]: `to_bytes` needs `H: StableHasher`
//! ```

use core::hash::{Hash, Hasher};

/// Hashes a key's canonical bytes to 64 bits.
pub trait KeyHasher {
    /// The 64-bit hash of `bytes`.
    fn hash_bytes(&self, bytes: &[u8]) -> u64;

    /// The 64-bit hash of a value through `core::hash::Hash` (not portable; see the
    /// module docs).
    fn hash_value<T: Hash + ?Sized>(&self, value: &T) -> u64;
}

/// A hasher whose output is specified and fixed: same bytes and seed, same hash, on every
/// platform and every crate version that reads the same format version.
///
/// Only filters over a `StableHasher` can be serialized.
pub trait StableHasher: KeyHasher {
    /// The hasher's id in the binary format.
    const ID: u32;
    /// The seed stored in the binary format.
    fn seed(&self) -> u64;
    /// The hasher for a stored seed.
    fn from_seed(seed: u64) -> Self;
}

/// XXH3-64 (from `xxhash-rust`) with a 64-bit seed: the default, stable hasher.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Xxh3 {
    seed: u64,
}

impl Xxh3 {
    /// XXH3-64 with this seed. Seed 0 is the default.
    ///
    /// ```
    /// use linebloom::{KeyHasher, Xxh3};
    /// assert_ne!(Xxh3::with_seed(1).hash_bytes(b"a"), Xxh3::default().hash_bytes(b"a"));
    /// ```
    pub const fn with_seed(seed: u64) -> Self {
        Xxh3 { seed }
    }
}

impl KeyHasher for Xxh3 {
    #[inline]
    fn hash_bytes(&self, bytes: &[u8]) -> u64 {
        xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.seed)
    }

    fn hash_value<T: Hash + ?Sized>(&self, value: &T) -> u64 {
        let mut h = xxhash_rust::xxh3::Xxh3::with_seed(self.seed);
        value.hash(&mut h);
        h.finish()
    }
}

impl StableHasher for Xxh3 {
    const ID: u32 = 1;
    fn seed(&self) -> u64 {
        self.seed
    }
    fn from_seed(seed: u64) -> Self {
        Xxh3 { seed }
    }
}

/// aHash with fixed seeds: fast for in-memory filters, never serializable (its output
/// changes with CPU features and crate versions).
#[cfg(feature = "ahash")]
#[derive(Clone, Debug)]
pub struct AHash {
    state: ahash::RandomState,
    seeds: [u64; 4],
}

#[cfg(feature = "ahash")]
impl AHash {
    /// aHash with these four seeds.
    ///
    /// ```
    /// # #[cfg(feature = "ahash")] {
    /// use linebloom::{AHash, KeyHasher};
    /// let h = AHash::with_seeds([1, 2, 3, 4]);
    /// assert_eq!(h.hash_bytes(b"k"), AHash::with_seeds([1, 2, 3, 4]).hash_bytes(b"k"));
    /// # }
    /// ```
    pub fn with_seeds(seeds: [u64; 4]) -> Self {
        let [a, b, c, d] = seeds;
        AHash {
            state: ahash::RandomState::with_seeds(a, b, c, d),
            seeds,
        }
    }
}

#[cfg(feature = "ahash")]
impl Default for AHash {
    fn default() -> Self {
        AHash::with_seeds([
            0x243f_6a88_85a3_08d3,
            0x1319_8a2e_0370_7344,
            0xa409_3822_299f_31d0,
            0x082e_fa98_ec4e_6c89,
        ])
    }
}

#[cfg(feature = "ahash")]
impl PartialEq for AHash {
    fn eq(&self, other: &Self) -> bool {
        self.seeds == other.seeds
    }
}

#[cfg(feature = "ahash")]
impl KeyHasher for AHash {
    #[inline]
    fn hash_bytes(&self, bytes: &[u8]) -> u64 {
        self.state.hash_one(bytes)
    }
    fn hash_value<T: Hash + ?Sized>(&self, value: &T) -> u64 {
        self.state.hash_one(value)
    }
}

/// A key with a specified, platform-independent byte encoding (see the module docs).
pub trait Key {
    /// This key's hash under `hasher`.
    fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64;
}

impl Key for [u8] {
    #[inline]
    fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
        hasher.hash_bytes(self)
    }
}

impl<const N: usize> Key for [u8; N] {
    #[inline]
    fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
        hasher.hash_bytes(self)
    }
}

impl Key for str {
    #[inline]
    fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
        hasher.hash_bytes(self.as_bytes())
    }
}

impl<T: Key + ?Sized> Key for &T {
    #[inline]
    fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
        (**self).hash_key(hasher)
    }
}

macro_rules! int_keys {
    ($($t:ty => $wide:ty),* $(,)?) => {$(
        impl Key for $t {
            #[inline]
            fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
                hasher.hash_bytes(&(*self as $wide).to_le_bytes())
            }
        }
    )*};
}

int_keys!(
    u8 => u8, u16 => u16, u32 => u32, u64 => u64, u128 => u128,
    i8 => i8, i16 => i16, i32 => i32, i64 => i64, i128 => i128,
    usize => u64, isize => i64, char => u32,
);

#[cfg(feature = "alloc")]
mod alloc_keys {
    use super::{Key, KeyHasher};
    use alloc::{boxed::Box, string::String, vec::Vec};

    impl Key for String {
        #[inline]
        fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
            hasher.hash_bytes(self.as_bytes())
        }
    }
    impl Key for Vec<u8> {
        #[inline]
        fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
            hasher.hash_bytes(self)
        }
    }
    impl<T: Key + ?Sized> Key for Box<T> {
        #[inline]
        fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
            (**self).hash_key(hasher)
        }
    }
}

/// Any `Hash` value as a key, through the hasher's `core::hash::Hasher` path.
///
/// Convenient for in-memory filters of structs; **not portable** across endianness,
/// word size or Rust versions, because `Hash` impls write native-endian integers and
/// `usize` lengths.
///
/// ```
/// use linebloom::{BloomFilter, Hashed, Params};
/// let mut f = BloomFilter::new(Params::for_fpr(100, 0.01).unwrap());
/// f.insert(&Hashed(&(1u8, "pair")));
/// assert!(f.contains(&Hashed(&(1u8, "pair"))));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Hashed<'a, T: Hash + ?Sized>(pub &'a T);

impl<T: Hash + ?Sized> Key for Hashed<'_, T> {
    #[inline]
    fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
        hasher.hash_value(self.0)
    }
}
