//! `Serialize` and `Deserialize` for every kind with a format (feature `serde`, which
//! implies `alloc`): each filter is one byte string, its checksummed binary encoding,
//! so a serde round trip checks everything `from_bytes` checks.

use crate::block::Block;
use crate::hasher::StableHasher;
use crate::{
    BloomFilter, ClassicBloomFilter, CountingBloomFilter, ScalableBloomFilter, VectorQuotientFilter,
};

/// Reads one byte string, or a sequence of bytes (formats without a byte type, such as
/// JSON), and decodes it with `decode`.
struct BytesVisitor<T>(fn(&[u8]) -> Result<T, super::DecodeError>);

impl<'de, T> serde::de::Visitor<'de> for BytesVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a linebloom filter encoding")
    }
    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<T, E> {
        (self.0)(v).map_err(E::custom)
    }
    /// The vector grows as elements arrive, so it never holds more than the input gave.
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        let mut bytes = alloc::vec::Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(b) = seq.next_element::<u8>()? {
            bytes.push(b);
        }
        (self.0)(&bytes).map_err(serde::de::Error::custom)
    }
}

/// `Serialize` for a kind as its `to_bytes`, and `Deserialize` for its owned form as
/// its `from_bytes_with_hasher`.
macro_rules! serde_through_bytes {
    ($ty:ty, [$($bounds:tt)*], $owned:ty, [$($dbounds:tt)*]) => {
        impl<$($bounds)*> serde::Serialize for $ty {
            /// Serialized as the checksummed binary format, as one byte string.
            fn serialize<Ser: serde::Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
                s.serialize_bytes(&self.to_bytes())
            }
        }

        impl<'de, $($dbounds)*> serde::Deserialize<'de> for $owned {
            /// Decoded from the binary format, with every check of `from_bytes`.
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_bytes(BytesVisitor(<$owned>::from_bytes_with_hasher))
            }
        }
    };
}

serde_through_bytes!(BloomFilter<S, H>, [S: AsRef<[Block]>, H: StableHasher], BloomFilter<crate::Blocks, H>, [H: StableHasher]);
serde_through_bytes!(
    CountingBloomFilter<S, H>,
    [S: AsRef<[Block]>, H: StableHasher],
    CountingBloomFilter<crate::Blocks, H>,
    [H: StableHasher]
);
serde_through_bytes!(
    ClassicBloomFilter<S, H>,
    [S: AsRef<[Block]>, H: StableHasher],
    ClassicBloomFilter<crate::Blocks, H>,
    [H: StableHasher]
);
serde_through_bytes!(
    ScalableBloomFilter<H>,
    [H: StableHasher + Clone],
    ScalableBloomFilter<H>,
    [H: StableHasher + Clone]
);
serde_through_bytes!(
    VectorQuotientFilter<S, H>,
    [S: AsRef<[Block]>, H: StableHasher],
    VectorQuotientFilter<crate::Blocks, H>,
    [H: StableHasher]
);
