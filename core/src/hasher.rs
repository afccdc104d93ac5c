//! Keys and the hashers that turn them into one 64-bit hash.
//!
//! # Which keys are portable
//!
//! A filter written on one machine must answer the same on every other machine that
//! reads the same format version. That holds when both the hasher and the key encoding
//! are fixed:
//!
//! * the hasher implements [`StableHasher`]: [`IntFold`] (the default) or [`Xxh3`];
//! * the key goes through [`Key`], whose encodings are specified here.
//!
//! # How keys are encoded
//!
//! * **Integers are keys by value.** Every integer type (and `char`, as its `u32` code
//!   point) is widened to 64 bits: unsigned types by zero extension, signed types by sign
//!   extension, so `5u8`, `5i32`, `5usize` and `5u64` are the same key, on 32- and 64-bit
//!   targets alike. The 64-bit value goes to [`KeyHasher::hash_u64`]. A `u128`/`i128`
//!   whose value fits in `u64` or `i64` is widened the same way; larger ones are hashed
//!   as their 16 little-endian bytes. Two's complement makes `-1i64` and `u64::MAX` one
//!   key (a collision, never a false negative).
//! * **Byte strings** (`[u8]`, `[u8; N]`, `Vec<u8>`, `str` and `String` as UTF-8) go to
//!   [`KeyHasher::hash_bytes`]. `"5"` and `5u64` are different keys.
//!
//! Rust's `core::hash::Hash` is **not** portable: it writes integers in native byte order
//! and slice lengths as `usize`. [`Hashed`] accepts any `Hash` value for in-memory use;
//! do not rely on its hashes across machines or versions.
//!
//! # The hashers
//!
//! | hasher | format id | byte strings | integers |
//! |---|---|---|---|
//! | [`IntFold`] (default) | 2 | XXH3-64 with the seed | a folded 64×64→128 multiply and one more multiply ([`IntFold::fold`]) |
//! | [`Xxh3`] | 1 | XXH3-64 with the seed | XXH3-64 of the 8 little-endian bytes |
//!
//! [`IntFold`] exists for speed: XXH3 of 8 bytes is about 18 instructions, half of a
//! probe, while the fold is two multiplies, a rotation and three xors. Its false-positive rate on structured
//! integer sets (sequential, strided by powers of two, bit-reversed, built against its
//! constants) is checked against the formula in `tests/fpr.rs` and in the lab.
//!
//! # Why the type system forbids serializing some filters
//!
//! `AHash` (feature `ahash`) is faster on some inputs, but its output depends on CPU
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

    /// The 64-bit hash of an integer key, already widened to 64 bits (see the module
    /// docs). The default hashes its 8 little-endian bytes with [`hash_bytes`].
    ///
    /// [`hash_bytes`]: KeyHasher::hash_bytes
    #[inline]
    fn hash_u64(&self, value: u64) -> u64 {
        self.hash_bytes(&value.to_le_bytes())
    }

    /// The 64-bit hash of a value through `core::hash::Hash` (not portable; see the
    /// module docs).
    fn hash_value<T: Hash + ?Sized>(&self, value: &T) -> u64;
}

/// The seal of [`StableHasher`]: a public trait in a private module, so no other crate
/// can name it and implement it.
mod sealed {
    /// Implemented by this crate's stable hashers only.
    pub trait Sealed {}
}

/// A hasher whose output is specified and fixed: same bytes and seed, same hash, on every
/// platform and every crate version that reads the same format version.
///
/// Only filters over a `StableHasher` can be serialized, and the trait is **sealed**: its
/// only implementations are this crate's [`Xxh3`] (format id 1) and [`IntFold`] (id 2).
/// The format stores the hasher's id and a decoder trusts it, so a hasher of another
/// crate that declared a built-in id would decode bytes written with its own hash as a
/// built-in hasher's, and every key it had inserted could then answer "absent". A
/// hasher of your own implements [`KeyHasher`] only: its filters work in memory, and to
/// move one elsewhere you ship its keys, or rebuild it over `Xxh3` or `IntFold`.
///
/// ```compile_fail,E0277
/// use linebloom::{KeyHasher, StableHasher};
/// struct Forged; // hashes differently, claims IntFold's id
/// impl KeyHasher for Forged {
///     fn hash_bytes(&self, b: &[u8]) -> u64 { b.len() as u64 }
///     fn hash_value<T: core::hash::Hash + ?Sized>(&self, _: &T) -> u64 { 0 }
/// }
/// impl StableHasher for Forged { // error[E0277]: `Forged: Sealed` is not satisfied
///     const ID: u32 = 2;
///     fn seed(&self) -> u64 { 0 }
///     fn from_seed(_: u64) -> Self { Forged }
/// }
/// ```
pub trait StableHasher: KeyHasher + sealed::Sealed {
    /// The hasher's id in the binary format.
    const ID: u32;
    /// The seed stored in the binary format.
    fn seed(&self) -> u64;
    /// The hasher for a stored seed.
    fn from_seed(seed: u64) -> Self;
}

/// XXH3-64 (from `xxhash-rust`) with a 64-bit seed for every key, integers included (as
/// their 8 little-endian bytes). Stable; format hasher id 1.
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
    #[must_use]
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

impl sealed::Sealed for Xxh3 {}

impl StableHasher for Xxh3 {
    const ID: u32 = 1;
    fn seed(&self) -> u64 {
        self.seed
    }
    fn from_seed(seed: u64) -> Self {
        Xxh3 { seed }
    }
}

/// The default stable hasher: XXH3-64 for byte strings, and for integer keys a folded
/// multiply and one more multiply ([`IntFold::fold`]), about a third of XXH3's
/// instructions. Format hasher id 2.
///
/// ```
/// use linebloom::{IntFold, Key, KeyHasher};
/// let h = IntFold::default();
/// assert_eq!(5u8.hash_key(&h), 5u64.hash_key(&h)); // integers are keys by value
/// assert_eq!(h.hash_u64(5), IntFold::fold(5, 0));
/// assert_eq!(h.hash_bytes(b"five"), linebloom::Xxh3::default().hash_bytes(b"five"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct IntFold {
    seed: u64,
}

impl IntFold {
    /// The first multiplicand's constant (wyhash's first secret).
    pub const K1: u64 = 0xa076_1d64_78bd_642f;
    /// The second multiplicand's constant (wyhash's second secret).
    pub const K2: u64 = 0xe703_7ed1_a0b4_28db;
    /// The final multiplier, `⌊2⁶⁴/φ⌋` (odd).
    pub const K3: u64 = 0x9e37_79b9_7f4a_7c15;

    /// `IntFold` with this seed. Seed 0 is the default.
    ///
    /// ```
    /// use linebloom::{IntFold, KeyHasher};
    /// assert_ne!(IntFold::with_seed(1).hash_u64(7), IntFold::default().hash_u64(7));
    /// ```
    #[must_use]
    pub const fn with_seed(seed: u64) -> Self {
        IntFold { seed }
    }

    /// The integer hash, specified (format hasher id 2):
    ///
    /// ```text
    /// a = rotate_left(x, 32) ^ K1 ^ seed
    /// b = x ^ K2
    /// p = a · b                                  // the full 128-bit product
    /// fold(x, seed) = ((p >> 64) ^ (p mod 2⁶⁴)) · K3 mod 2⁶⁴
    /// ```
    ///
    /// The first three lines are wyhash's folded multiply ("wy1"). The rotation puts the
    /// key's low half into the high half of `a`. The final multiply carries the folded
    /// low half, which varies most, into the high bits, where the blocked scheme takes
    /// the block index from: without it, 2²⁰ sequential keys loaded the blocks unevenly
    /// and measured 2.3% above the formula's rate (4.5σ); with it every structured set
    /// tried stays within about 2σ (`tests/fpr.rs` checks them).
    ///
    /// ```
    /// use linebloom::IntFold;
    /// let p = IntFold::K1 as u128 * IntFold::K2 as u128;
    /// assert_eq!(IntFold::fold(0, 0), ((p >> 64) as u64 ^ p as u64).wrapping_mul(IntFold::K3));
    /// ```
    #[inline(always)]
    #[must_use]
    pub const fn fold(x: u64, seed: u64) -> u64 {
        let a = x.rotate_left(32) ^ Self::K1 ^ seed;
        let b = x ^ Self::K2;
        let p = a as u128 * b as u128;
        ((p >> 64) as u64 ^ p as u64).wrapping_mul(Self::K3)
    }
}

/// Byte strings and `Hash` values hash exactly as with [`Xxh3`] and the same seed.
impl KeyHasher for IntFold {
    #[inline]
    fn hash_bytes(&self, bytes: &[u8]) -> u64 {
        Xxh3::with_seed(self.seed).hash_bytes(bytes)
    }

    #[inline(always)]
    fn hash_u64(&self, value: u64) -> u64 {
        IntFold::fold(value, self.seed)
    }

    fn hash_value<T: Hash + ?Sized>(&self, value: &T) -> u64 {
        Xxh3::with_seed(self.seed).hash_value(value)
    }
}

impl sealed::Sealed for IntFold {}

impl StableHasher for IntFold {
    const ID: u32 = 2;
    fn seed(&self) -> u64 {
        self.seed
    }
    fn from_seed(seed: u64) -> Self {
        IntFold { seed }
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
    #[must_use]
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
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a linebloom `Key`",
    note = "keys are integers, `char`, byte strings and `str`/`String`; wrap any other `Hash` \
            value as `linebloom::Hashed(&value)` (in-memory only: its hash is not portable)"
)]
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

/// Integer keys by value: widened to 64 bits (zero or sign extension), then
/// [`KeyHasher::hash_u64`].
macro_rules! int_keys {
    ($($t:ty => $via:ty),* $(,)?) => {$(
        impl Key for $t {
            #[inline(always)]
            fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
                hasher.hash_u64(*self as $via as u64)
            }
        }
    )*};
}

int_keys!(
    u8 => u64, u16 => u64, u32 => u64, u64 => u64, usize => u64, char => u32,
    i8 => i64, i16 => i64, i32 => i64, i64 => i64, isize => i64,
);

impl Key for u128 {
    #[inline]
    fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
        match u64::try_from(*self) {
            Ok(v) => hasher.hash_u64(v),
            Err(_) => hasher.hash_bytes(&self.to_le_bytes()),
        }
    }
}

impl Key for i128 {
    #[inline]
    fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
        match (i64::try_from(*self), u64::try_from(*self)) {
            (Ok(v), _) => hasher.hash_u64(v as u64),
            (_, Ok(v)) => hasher.hash_u64(v),
            _ => hasher.hash_bytes(&self.to_le_bytes()),
        }
    }
}

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
/// let mut f = BloomFilter::new(Params::for_fpr(100, 0.01)?);
/// f.insert(&Hashed(&(1u8, "pair")));
/// assert!(f.contains(&Hashed(&(1u8, "pair"))));
/// # Ok::<(), linebloom::ParamsError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Hashed<'a, T: Hash + ?Sized>(pub &'a T);

impl<T: Hash + ?Sized> Key for Hashed<'_, T> {
    #[inline]
    fn hash_key<H: KeyHasher>(&self, hasher: &H) -> u64 {
        hasher.hash_value(self.0)
    }
}
