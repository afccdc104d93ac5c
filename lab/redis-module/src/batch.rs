//! The batch logic of the module, free of the Redis API so that it is tested without a
//! server: parse a batch of probes, test them against a shard's bytes, or set them.
//!
//! A *shard* is a run of blocks stored as the binary format's payload: block `b` is
//! bytes `64·b .. 64·b + 64`, eight little-endian `u64` words ([`linebloom::Block`]).
//! A *probe* is 16 bytes: the key's block index within the shard, then the key's 64-bit
//! hash, both little-endian. The module derives the in-block pattern from the hash with
//! the core's own [`linebloom::hash::pattern`], so the bits are exactly those a
//! [`linebloom::BloomFilter`] of the same shape sets.

use linebloom::Block;
use linebloom::hash::pattern;

/// The scheme this module implements: the first word of the filter's meta key in Redis,
/// which clients pass with every command so that a module of another scheme refuses
/// instead of answering with other bits.
pub const SCHEME: &str = linebloom::hash::SCHEME;

/// Bytes per probe: block index, then hash, both `u64` little-endian.
pub const PROBE_BYTES: usize = 16;

/// Why a batch was refused. Nothing is written when a batch is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchError {
    /// The payload is not a whole number of 16-byte probes.
    Payload(usize),
    /// `k` is not a number the scheme accepts.
    K(String),
    /// The client speaks another scheme.
    Scheme(String),
    /// A probe names a block past the end of the shard (a truncated shard, or a client
    /// computing against another shape).
    OutOfRange {
        /// The block asked for.
        block: u64,
        /// Bytes the shard holds.
        len: usize,
    },
    /// The arguments after the probes are not `META <meta key> <meta value>`.
    Guard,
}

impl std::fmt::Display for BatchError {
    /// The Redis error reply: an upper-case code, then the reason.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BatchError::Payload(len) => write!(
                f,
                "LBPAYLOAD the probes are {len} bytes, not a multiple of {PROBE_BYTES}"
            ),
            BatchError::K(k) => write!(f, "LBK k = {k} is not in 1..={}", linebloom::hash::MAX_K),
            BatchError::Scheme(s) => {
                write!(f, "LBSCHEME this module speaks {SCHEME}, the client {s}")
            }
            BatchError::OutOfRange { block, len } => write!(
                f,
                "LBTRUNCATED the shard holds {len} bytes; block {block} needs {}",
                (block + 1) * Block::BYTES as u64
            ),
            BatchError::Guard => write!(
                f,
                "LBGUARD after the probes only META <meta key> <meta value> may follow"
            ),
        }
    }
}

impl std::error::Error for BatchError {}

/// Checks the scheme and `k` arguments of a command.
pub fn check_args(scheme: &[u8], k: &[u8]) -> Result<u32, BatchError> {
    if scheme != SCHEME.as_bytes() {
        return Err(BatchError::Scheme(
            String::from_utf8_lossy(scheme).into_owned(),
        ));
    }
    let text = || String::from_utf8_lossy(k).into_owned();
    let k: u32 = std::str::from_utf8(k)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| BatchError::K(text()))?;
    if !(1..=linebloom::hash::MAX_K).contains(&k) {
        return Err(BatchError::K(text()));
    }
    Ok(k)
}

/// A command's meta guard: the filter's meta key and the value the client expects it
/// to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard<'a> {
    /// The meta key.
    pub key: &'a [u8],
    /// Its expected value.
    pub value: &'a [u8],
}

/// The optional guard after a command's probes: nothing, or `META <meta key> <meta
/// value>` (the word in any case). With a guard the command first checks that the meta
/// key holds exactly that value, so a client on one server knows the batch used the
/// generation it computed against without a `GET` of the meta after it (see
/// [`meta_matches`]).
pub fn guard<'a>(rest: &[&'a [u8]]) -> Result<Option<Guard<'a>>, BatchError> {
    match rest {
        [] => Ok(None),
        [word, key, value] if word.eq_ignore_ascii_case(b"META") => Ok(Some(Guard { key, value })),
        _ => Err(BatchError::Guard),
    }
}

/// Does the meta key hold the guard's value? `held` is `None` where the key is absent
/// or not a string: never a match, so a filter whose meta is gone answers nothing.
pub fn meta_matches(held: Option<&[u8]>, expected: &[u8]) -> bool {
    held == Some(expected)
}

/// The probes of a payload, checked against a shard of `shard_len` bytes: every block
/// index must lie inside it, so a refused batch has touched nothing.
fn probes(payload: &[u8], shard_len: usize) -> Result<Vec<(usize, u64)>, BatchError> {
    if !payload.len().is_multiple_of(PROBE_BYTES) {
        return Err(BatchError::Payload(payload.len()));
    }
    let blocks = (shard_len / Block::BYTES) as u64;
    payload
        .chunks_exact(PROBE_BYTES)
        .map(|p| {
            let block = u64::from_le_bytes(p[..8].try_into().expect("8 bytes"));
            let hash = u64::from_le_bytes(p[8..].try_into().expect("8 bytes"));
            if block >= blocks {
                return Err(BatchError::OutOfRange {
                    block,
                    len: shard_len,
                });
            }
            Ok((block as usize * Block::BYTES, hash))
        })
        .collect()
}

/// The block at byte `at` of a shard.
fn block_at(shard: &[u8], at: usize) -> Block {
    Block::from_le_bytes(shard[at..at + Block::BYTES].try_into().expect("64 bytes"))
}

/// Tests every probe against the shard: one byte per probe, 1 where every bit of the
/// key's pattern is set ("maybe present"), 0 where one is clear ("absent").
pub fn test_all(shard: &[u8], k: u32, payload: &[u8]) -> Result<Vec<u8>, BatchError> {
    let probes = probes(payload, shard.len())?;
    Ok(probes
        .iter()
        .map(|&(at, hash)| u8::from(block_at(shard, at).contains_mask(&pattern(hash, k))))
        .collect())
}

/// Sets every probe's bits in the shard. Returns how many probes had a bit clear
/// before (keys that were certainly new, as `BF.MADD` counts them). Refuses the whole
/// batch, writing nothing, if any probe is out of range.
pub fn set_all(shard: &mut [u8], k: u32, payload: &[u8]) -> Result<u64, BatchError> {
    let probes = probes(payload, shard.len())?;
    let mut added = 0;
    for (at, hash) in probes {
        let mask = pattern(hash, k);
        let mut block = block_at(shard, at);
        if !block.contains_mask(&mask) {
            added += 1;
            for (word, bits) in block.0.iter_mut().zip(mask.0) {
                *word |= bits;
            }
            shard[at..at + Block::BYTES].copy_from_slice(&block.to_le_bytes());
        }
    }
    Ok(added)
}

/// Encodes probes as the commands take them (what a client sends).
pub fn encode(probes: impl IntoIterator<Item = (u64, u64)>) -> Vec<u8> {
    probes
        .into_iter()
        .flat_map(|(block, hash)| {
            let mut p = [0u8; PROBE_BYTES];
            p[..8].copy_from_slice(&block.to_le_bytes());
            p[8..].copy_from_slice(&hash.to_le_bytes());
            p
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use linebloom::hash::location;
    use linebloom::{BloomFilter, IntFold, Key, Params};
    use proptest::prelude::*;

    fn probes_of(keys: &[u64], params: Params, hasher: &IntFold) -> Vec<(u64, u64)> {
        keys.iter()
            .map(|key| {
                let hash = key.hash_key(hasher);
                (
                    location(hash, params.blocks(), params.k()).block as u64,
                    hash,
                )
            })
            .collect()
    }

    proptest! {
        /// The module's bits are the core filter's bits, byte for byte, and every
        /// inserted key tests present (no false negatives); keys the model filter calls
        /// absent, the module calls absent too.
        #[test]
        fn matches_the_core_filter(
            keys in proptest::collection::vec(any::<u64>(), 0..300),
            others in proptest::collection::vec(any::<u64>(), 0..300),
            blocks in 1u64..40,
            k in 1u32..=linebloom::hash::MAX_K,
            seed in any::<u64>(),
        ) {
            let params = Params::new(blocks, k).unwrap();
            let hasher = IntFold::with_seed(seed);
            let mut model = BloomFilter::with_hasher(params, hasher);
            for key in &keys {
                model.insert(key);
            }
            let mut shard = vec![0u8; params.bytes()];
            set_all(&mut shard, k, &encode(probes_of(&keys, params, &hasher))).unwrap();
            prop_assert_eq!(&shard[..], linebloom::block::blocks_as_bytes(model.as_blocks()));
            let present = test_all(&shard, k, &encode(probes_of(&keys, params, &hasher))).unwrap();
            prop_assert!(present.iter().all(|&p| p == 1));
            let answers = test_all(&shard, k, &encode(probes_of(&others, params, &hasher))).unwrap();
            for (key, answer) in others.iter().zip(answers) {
                prop_assert_eq!(answer == 1, model.contains(key));
            }
        }
    }

    #[test]
    fn counts_new_keys_like_bf_madd() {
        let params = Params::new(4, 8).unwrap();
        let mut shard = vec![0u8; params.bytes()];
        let batch = encode(probes_of(&[1, 2, 3], params, &IntFold::with_seed(7)));
        assert_eq!(set_all(&mut shard, 8, &batch), Ok(3));
        assert_eq!(set_all(&mut shard, 8, &batch), Ok(0));
    }

    #[test]
    fn refuses_bad_batches_without_writing() {
        let mut shard = vec![0u8; 2 * 64];
        // The second probe is past the end: the first must not be written either.
        let batch = encode([(0, 42), (2, 43)]);
        assert_eq!(
            set_all(&mut shard, 8, &batch),
            Err(BatchError::OutOfRange { block: 2, len: 128 })
        );
        assert!(shard.iter().all(|&b| b == 0));
        assert_eq!(
            test_all(&shard, 8, &batch[..17]),
            Err(BatchError::Payload(17))
        );
        // A truncated shard (not a whole block at the end) holds only its whole blocks.
        assert!(matches!(
            test_all(&shard[..100], 8, &encode([(1, 5)])),
            Err(BatchError::OutOfRange { block: 1, len: 100 })
        ));
        assert_eq!(test_all(&shard, 8, &[]), Ok(Vec::new()));
    }

    #[test]
    fn checks_scheme_and_k() {
        assert_eq!(check_args(b"linebloom-v2", b"8"), Ok(8));
        assert!(matches!(
            check_args(b"linebloom-v1", b"8"),
            Err(BatchError::Scheme(_))
        ));
        for bad in [&b"0"[..], b"-1", b"x", b"", b"99999999999"] {
            assert!(matches!(
                check_args(b"linebloom-v2", bad),
                Err(BatchError::K(_))
            ));
        }
        let max = linebloom::hash::MAX_K.to_string();
        assert!(check_args(b"linebloom-v2", max.as_bytes()).is_ok());
        let over = (linebloom::hash::MAX_K + 1).to_string();
        assert!(check_args(b"linebloom-v2", over.as_bytes()).is_err());
        // Every error reads as a Redis error reply: a code, then the reason.
        let e = BatchError::OutOfRange { block: 3, len: 128 }.to_string();
        assert_eq!(
            e,
            "LBTRUNCATED the shard holds 128 bytes; block 3 needs 256"
        );
    }

    #[test]
    fn the_meta_guard_is_all_or_nothing() {
        assert_eq!(guard(&[]), Ok(None));
        let (key, value) = (&b"f:meta"[..], &b"linebloom-v2 1 64 8 0 1048576"[..]);
        assert_eq!(
            guard(&[b"META", key, value]),
            Ok(Some(Guard { key, value }))
        );
        assert_eq!(
            guard(&[b"meta", key, value]),
            Ok(Some(Guard { key, value }))
        );
        for bad in [
            &[&b"META"[..]][..],
            &[b"META", key],
            &[b"METAX", key, value],
            &[b"META", key, value, b"x"],
        ] {
            assert_eq!(guard(bad), Err(BatchError::Guard));
        }
        assert!(BatchError::Guard.to_string().starts_with("LBGUARD "));
        assert!(meta_matches(Some(value), value));
        assert!(!meta_matches(Some(b"linebloom-v2 2 64 8 0 1048576"), value));
        assert!(!meta_matches(None, value));
        assert!(!meta_matches(Some(b""), value));
    }
}
