//! The other crates' Bloom filters: sbbf-rs-safe and fastbloom (blocked; XXH3-64 of the
//! key through their `*_hash` entry points), `bloomfilter` and `growable-bloom-filter`
//! (classic and scalable; they only take `Hash` values and hash with their own SipHash).

use super::adapter::{adapter, attempt};
use super::lab_filter::{LabFilter, same_kind, serde_round_trip, spawn_inserts, xxh3};

adapter!(
    /// sbbf-rs-safe: Parquet's split-block filter (256-bit blocks, k = 8).
    Sbbf(sbbf_rs_safe::Filter), "sbbf-rs-safe",
    insert: |f, k| f.insert_hash(xxh3(k)),
    // Its insert returns true when the hash was already present.
    reporting: |f, k| !f.insert_hash(xxh3(k)),
    contains: |f, k| f.contains_hash(xxh3(k)),
    bytes: |f| f.as_bytes().len(),
    round_trip: |f| {
        let bytes = f.as_bytes();
        let decoded = sbbf_rs_safe::Filter::from_bytes(bytes)
            .ok_or_else(|| anyhow::anyhow!("sbbf-rs-safe refused its own bytes"))?;
        Ok((decoded, bytes.len()))
    },
);
adapter!(
    /// fastbloom (blocked 512-bit, its own k).
    Fastbloom(fastbloom::BloomFilter), "fastbloom",
    insert: |f, k| f.insert_hash(xxh3(k)),
    // Its insert returns true when the key was possibly present before.
    reporting: |f, k| !f.insert_hash(xxh3(k)),
    contains: |f, k| f.contains_hash(xxh3(k)),
    bytes: |f| f.num_bits() / 8,
    // fastbloom's union panics on a different number of hashes: the check builds both
    // filters with one recipe.
    merge: |f, o| {
        f.union(o);
        Ok(())
    },
    round_trip: |f| serde_round_trip(f),
);
adapter!(
    /// fastbloom's `AtomicBloomFilter` (the same layout, inserts through `&self`).
    FastbloomAtomic(fastbloom::AtomicBloomFilter), "fastbloom-atomic",
    insert: |f, k| f.insert_hash(xxh3(k)),
    contains: |f, k| f.contains_hash(xxh3(k)),
    bytes: |f| f.num_bits() / 8,
    merge: |f, o| {
        f.union(o);
        Ok(())
    },
    concurrent: |f, k| f.insert_hash(xxh3(k)),
    round_trip: |f| serde_round_trip(f),
);
adapter!(
    /// The `bloomfilter` crate (classic, SipHash), with a fixed seed.
    Bloomfilter(bloomfilter::Bloom<u64>), "bloomfilter",
    insert: |f, k| f.set(&k),
    contains: |f, k| f.check(&k),
    bytes: |f| f.as_slice().len(),
    round_trip: |f| {
        let bytes = f.to_bytes();
        let len = bytes.len();
        Ok((bloomfilter::Bloom::from_bytes(bytes).map_err(anyhow::Error::msg)?, len))
    },
);
adapter!(
    /// `growable-bloom-filter` (scalable, its own hashing).
    Growable(growable_bloom_filter::GrowableBloom), "growable-bloom-filter",
    insert: |f, k| f.insert(k),
    contains: |f, k| f.contains(k),
    bytes: |f| growable_bytes(f),
    round_trip: |f| serde_round_trip(f),
);

/// Bytes of a `GrowableBloom`'s bit buffers. The crate does not report its memory, but
/// its serde form holds each layer's buffer (`serde_bytes`, key `"b"`) as one array
/// element per byte, so counting those elements is exact.
fn growable_bytes(f: &growable_bloom_filter::GrowableBloom) -> usize {
    fn walk(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::Object(m) => m
                .iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    // A layer's buffer: one number per byte. (The list of layers is
                    // also called "b"; its elements are objects, so it is walked.)
                    ("b", serde_json::Value::Array(a))
                        if a.iter().all(serde_json::Value::is_number) =>
                    {
                        a.len()
                    }
                    _ => walk(v),
                })
                .sum(),
            serde_json::Value::Array(a) => a.iter().map(walk).sum(),
            _ => 0,
        }
    }
    serde_json::to_value(f).map(|v| walk(&v)).unwrap_or(0)
}

/// Bits per key the Parquet spec's sizing gives for rate `p` (one bit per 32-bit word of
/// an 8-word block: `m = −8n / ln(1 − p^{1/8})`), rounded up as sbbf-rs-safe takes
/// whole bits per key.
pub fn parquet_bits_per_key(p: f64) -> usize {
    (-8.0 / (1.0 - p.powf(1.0 / 8.0)).ln()).ceil() as usize
}

impl Sbbf {
    /// sbbf-rs-safe for `n` keys at rate `p` by the Parquet spec's sizing
    /// ([`parquet_bits_per_key`]: 10 bits per key at 1%): the recipe of
    /// [`build`](super::build), the timing experiments and the benchmarks alike.
    pub fn for_fpr(n: u64, p: f64) -> Sbbf {
        Sbbf(sbbf_rs_safe::Filter::new(
            parquet_bits_per_key(p),
            n as usize,
        ))
    }
}

impl Fastbloom {
    /// fastbloom for `n` keys at rate `p` by its own recipe
    /// (`with_false_pos(p).expected_items(n)`): the recipe of [`build`](super::build), the
    /// timing experiments and the benchmarks alike.
    pub fn for_fpr(n: u64, p: f64) -> Fastbloom {
        Fastbloom(fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize))
    }
}

impl FastbloomAtomic {
    /// fastbloom's atomic filter for `n` keys at rate `p` by its own recipe, as
    /// [`Fastbloom::for_fpr`].
    pub fn for_fpr(n: u64, p: f64) -> FastbloomAtomic {
        FastbloomAtomic(fastbloom::AtomicBloomFilter::with_false_pos(p).expected_items(n as usize))
    }
}

/// The fixed seed given to `bloomfilter` (its docs' recipe for reproducible filters).
pub const BLOOMFILTER_SEED: [u8; 32] = [7; 32];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growable_memory_is_counted() {
        let mut g = Growable(growable_bloom_filter::GrowableBloom::new(0.01, 10_000));
        for k in 0..10_000u64 {
            g.insert(k);
        }
        // About 9.6 bits per key at 1%: between 8 and 20 KB for 10 000 keys.
        let bytes = g.bytes();
        assert!((8_000..20_000).contains(&bytes), "{bytes} bytes");
    }
}
