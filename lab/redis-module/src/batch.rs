//! The batch logic of the module, free of the Redis API so that it is tested without a
//! server: parse a command's arguments, test a batch of probes against a shard's bytes,
//! or set them and say which blocks changed.
//!
//! A *shard* is a run of blocks stored as the binary format's payload: block `b` is
//! bytes `64·b .. 64·b + 64`, eight little-endian `u64` words ([`linebloom::Block`]).
//! A *batch* is one argument: its head (scheme, `k`, the shard's block count), then its
//! probes ([`linebloom_redis_wire::batch`]). A *probe* is the key's block index within
//! the shard and its 64-bit hash, in the wire encoding ([`linebloom_redis_wire::probe`]).
//! The module derives the in-block pattern from the hash with the core's own
//! [`linebloom::pattern::pattern`], so the bits are exactly those a
//! [`linebloom::BloomFilter`] of the same shape sets.

use linebloom::Block;
use linebloom::pattern::pattern;
use linebloom_redis_wire::{self as wire, errors};

pub use wire::{COUNT_BYTES, PROBE_BYTES, SCHEME};

/// Where the shard key is ([`wire::position::SHARD`]).
pub const SHARD_ARG: usize = wire::position::SHARD;
/// Where the options (`COUNT`, `META`) start ([`wire::position::OPTIONS`]).
pub const OPTIONS_ARG: usize = wire::position::OPTIONS;

/// Why a batch was refused. Nothing is written when a batch is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchError {
    /// The probes are not a whole number of them ([`PROBE_BYTES`] each).
    Payload(usize),
    /// A probe is not in the wire encoding (a byte from 0x80, or bits past the 128th).
    Encoding,
    /// `k` is not a number the scheme accepts.
    K(String),
    /// The shard's block count is not a positive number.
    Blocks(String),
    /// The client speaks another scheme, or sends a batch without a head (its first
    /// bytes, at most [`QUOTED`]).
    Scheme(String),
    /// The shard does not hold exactly `blocks` blocks: truncated, extended, or
    /// replaced by a foreign write.
    Length {
        /// Bytes the shard holds.
        held: usize,
        /// Bytes it must hold.
        needed: u64,
    },
    /// A probe names a block past the end of the shard (a client computing against
    /// another shape).
    Probe {
        /// The block asked for.
        block: u64,
        /// Blocks in the shard.
        blocks: u64,
    },
    /// The arguments after the probes are not `[COUNT <key>] [META <key> <value>]`, or
    /// `COUNT` on a command that writes nothing.
    Options,
    /// The count key holds something other than a count ([`COUNT_BYTES`] bytes).
    Count,
}

impl std::fmt::Display for BatchError {
    /// The Redis error reply: an upper-case code, then the reason.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BatchError::Payload(len) => write!(
                f,
                "{} the probes are {len} bytes, not a multiple of {PROBE_BYTES}",
                errors::PAYLOAD
            ),
            BatchError::Encoding => write!(
                f,
                "{} a probe is not in the encoding of {SCHEME}",
                errors::PAYLOAD
            ),
            BatchError::K(k) => {
                let max = linebloom::pattern::MAX_K;
                write!(f, "{} k = {k} is not in 1..={max}", errors::K)
            }
            BatchError::Blocks(b) => {
                write!(f, "{} {b} is not a positive block count", errors::BLOCKS)
            }
            BatchError::Scheme(s) => {
                write!(
                    f,
                    "{} this module speaks {SCHEME}, the client {s}",
                    errors::SCHEME
                )
            }
            BatchError::Length { held, needed } => write!(
                f,
                "{} the shard holds {held} bytes where the filter's shape needs {needed}",
                errors::LENGTH
            ),
            BatchError::Probe { block, blocks } => write!(
                f,
                "{} block {block} is past the end of a shard of {blocks} blocks",
                errors::PROBE
            ),
            BatchError::Options => write!(
                f,
                "{} after the probes only {} <count key> ({}) and {} <meta key> <meta value> \
                 may follow, each once",
                errors::OPTIONS,
                wire::COUNT,
                wire::MADD,
                wire::META
            ),
            BatchError::Count => write!(
                f,
                "{} the count key does not hold a count ({COUNT_BYTES} bytes, a big-endian i64)",
                errors::COUNT
            ),
        }
    }
}

impl std::error::Error for BatchError {}

/// The most bytes of a client's argument an error quotes.
pub const QUOTED: usize = 64;

/// A batch's checked head, and its probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked<'a> {
    /// The pattern's bit count.
    pub k: u32,
    /// The shard's length in blocks.
    pub blocks: u64,
    /// The probes, still to be decoded.
    pub probes: &'a [u8],
}

/// Checks a batch argument's head (scheme, `k`, block count): an argument without one
/// (an older client's scheme argument) is another scheme.
pub fn check_batch(arg: &[u8]) -> Result<Checked<'_>, BatchError> {
    let quoted = |a: &[u8]| String::from_utf8_lossy(&a[..a.len().min(QUOTED)]).into_owned();
    let parts = wire::batch(arg).ok_or_else(|| BatchError::Scheme(quoted(arg)))?;
    let (k, blocks) = check_head(parts.scheme, parts.k, parts.blocks)?;
    Ok(Checked {
        k,
        blocks,
        probes: parts.probes,
    })
}

/// Checks a head's scheme, `k` and block count; returns `k` and the block count.
fn check_head(scheme: &[u8], k: &[u8], blocks: &[u8]) -> Result<(u32, u64), BatchError> {
    let text = |a: &[u8]| String::from_utf8_lossy(&a[..a.len().min(QUOTED)]).into_owned();
    if scheme != SCHEME.as_bytes() {
        return Err(BatchError::Scheme(text(scheme)));
    }
    // Plain decimal digits, as the client writes them (no sign, no spaces).
    let number = |a: &[u8]| {
        if a.is_empty() {
            return None;
        }
        a.iter().try_fold(0u64, |n, &d| {
            let d = d.checked_sub(b'0').filter(|d| *d < 10)?;
            n.checked_mul(10)?.checked_add(u64::from(d))
        })
    };
    let k = number(k)
        .and_then(|k| u32::try_from(k).ok())
        .filter(|k| (1..=linebloom::pattern::MAX_K).contains(k))
        .ok_or_else(|| BatchError::K(text(k)))?;
    let blocks = number(blocks)
        .filter(|&b| b > 0 && b.checked_mul(Block::BYTES as u64).is_some())
        .ok_or_else(|| BatchError::Blocks(text(blocks)))?;
    Ok((k, blocks))
}

/// A key named among a command's options, with its argument position (Redis asks the
/// command where its keys are).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionKey<'a> {
    /// The key.
    pub key: &'a [u8],
    /// Its position in the command's arguments.
    pub position: usize,
}

/// A command's meta guard: the filter's meta key and the value the client expects it
/// to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard<'a> {
    /// The meta key.
    pub key: OptionKey<'a>,
    /// Its expected value.
    pub value: &'a [u8],
}

/// The options after a command's probes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options<'a> {
    /// `COUNT <key>`: the shard's count of keys that were new, increased by every
    /// `LINEBLOOM.MADD` that adds some (only while the key exists).
    pub count: Option<OptionKey<'a>>,
    /// `META <key> <value>`: the command first checks that the meta key holds exactly
    /// the value, so a client on one server knows the batch used the generation it
    /// computed against (see [`meta_matches`]).
    pub guard: Option<Guard<'a>>,
}

/// Parses the options of a command whose arguments are `argv` (the command name first):
/// `[COUNT <count key>] [META <meta key> <meta value>]`, in either order, each at most
/// once, the words in any case. `COUNT` is refused unless `writes`.
pub fn options<'a>(argv: &[&'a [u8]], writes: bool) -> Result<Options<'a>, BatchError> {
    let mut options = Options::default();
    let mut at = OPTIONS_ARG;
    while at < argv.len() {
        let word = argv[at];
        if word.eq_ignore_ascii_case(wire::COUNT.as_bytes()) && writes && options.count.is_none() {
            let key = *argv.get(at + 1).ok_or(BatchError::Options)?;
            options.count = Some(OptionKey {
                key,
                position: at + 1,
            });
            at += 2;
        } else if word.eq_ignore_ascii_case(wire::META.as_bytes()) && options.guard.is_none() {
            let (Some(&key), Some(&value)) = (argv.get(at + 1), argv.get(at + 2)) else {
                return Err(BatchError::Options);
            };
            options.guard = Some(Guard {
                key: OptionKey {
                    key,
                    position: at + 1,
                },
                value,
            });
            at += 3;
        } else {
            return Err(BatchError::Options);
        }
    }
    Ok(options)
}

/// Does the meta key hold the guard's value? `held` is `None` where the key is absent
/// or not a string: never a match, so a filter whose meta is gone answers nothing.
pub fn meta_matches(held: Option<&[u8]>, expected: &[u8]) -> bool {
    held == Some(expected)
}

/// Checks that a shard of `held` bytes is exactly `blocks` blocks long.
pub fn check_length(held: usize, blocks: u64) -> Result<(), BatchError> {
    let needed = blocks * Block::BYTES as u64;
    if held as u64 != needed {
        return Err(BatchError::Length { held, needed });
    }
    Ok(())
}

/// Adds `n` to a count key's bytes ([`wire::add_count`]). Refuses bytes that are not
/// one count.
pub fn add_count(held: &mut [u8], n: u64) -> Result<(), BatchError> {
    let held: &mut [u8; COUNT_BYTES] = held.try_into().map_err(|_| BatchError::Count)?;
    wire::add_count(held, n);
    Ok(())
}

/// The probes of a payload, each checked against a shard of `blocks` blocks, as (byte
/// offset of the block, hash): a probe out of the encoding or past the shard's end is
/// an error in its place. Decoded as they are read, so that a batch allocates nothing
/// for its probes.
fn probes(
    payload: &[u8],
    blocks: u64,
) -> Result<impl Iterator<Item = Result<(usize, u64), BatchError>> + '_, BatchError> {
    Ok(wire::probes(payload)
        .map_err(BatchError::Payload)?
        .map(move |probe| {
            let (block, hash) = probe.ok_or(BatchError::Encoding)?;
            if block >= blocks {
                return Err(BatchError::Probe { block, blocks });
            }
            Ok((block as usize * Block::BYTES, hash))
        }))
}

/// The block at byte `at` of a shard.
fn block_at(shard: &[u8], at: usize) -> Block {
    Block::from_le_bytes(shard[at..at + Block::BYTES].try_into().expect("64 bytes"))
}

/// Tests every probe against a shard of exactly `blocks` blocks: one byte per probe, 1
/// where every bit of the key's pattern is set ("maybe present"), 0 where one is clear
/// ("absent").
pub fn test_all(shard: &[u8], k: u32, blocks: u64, payload: &[u8]) -> Result<Vec<u8>, BatchError> {
    check_length(shard.len(), blocks)?;
    let mut answers = Vec::with_capacity(payload.len() / PROBE_BYTES);
    for probe in probes(payload, blocks)? {
        let (at, hash) = probe?;
        answers.push(u8::from(
            block_at(shard, at).contains_mask(&pattern(hash, k)),
        ));
    }
    Ok(answers)
}

/// What [`set_all`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    /// Probes that had a bit clear before (keys that were certainly new, as `BF.MADD`
    /// counts them).
    pub new: u64,
    /// Byte offsets of the blocks that changed, ascending, each once: what the command
    /// replicates (one `SETRANGE` of the block's new bytes each).
    pub changed: Vec<usize>,
}

/// Sets every probe's bits in a shard of exactly `blocks` blocks. Refuses the whole
/// batch, writing nothing, if the shard's length or any probe is wrong.
pub fn set_all(shard: &mut [u8], k: u32, blocks: u64, payload: &[u8]) -> Result<Added, BatchError> {
    check_length(shard.len(), blocks)?;
    // Every probe is checked before the first bit is set, then decoded again to set it.
    for probe in probes(payload, blocks)? {
        probe?;
    }
    let mut added = Added {
        new: 0,
        changed: Vec::new(),
    };
    for probe in probes(payload, blocks)? {
        let (at, hash) = probe?;
        let mask = pattern(hash, k);
        let mut block = block_at(shard, at);
        if !block.contains_mask(&mask) {
            added.new += 1;
            added.changed.push(at);
            for (word, bits) in block.0.iter_mut().zip(mask.0) {
                *word |= bits;
            }
            shard[at..at + Block::BYTES].copy_from_slice(&block.to_le_bytes());
        }
    }
    added.changed.sort_unstable();
    added.changed.dedup();
    Ok(added)
}

/// The script `LINEBLOOM.MADD` replicates, so that a replica or an append-only file
/// without the module writes the same bytes, in one command however many blocks
/// changed: `KEYS[1]` the shard, `KEYS[2]` (if given) its count key; `ARGV[1]` per
/// changed block its byte offset (`u32`, little-endian) and its 64 new bytes
/// ([`replication_blob`]), `ARGV[2]` the count's increase.
pub const REPLICATE_BLOCKS: &std::ffi::CStr = c"for p = 1, #ARGV[1], 68 do \
redis.call('SETRANGE', KEYS[1], struct.unpack('<I4', ARGV[1], p), \
string.sub(ARGV[1], p + 4, p + 67)) end \
if KEYS[2] then redis.call('BITFIELD', KEYS[2], 'INCRBY', 'i64', 0, ARGV[2]) end";

/// [`REPLICATE_BLOCKS`]' argument for the blocks at byte offsets `changed` of `shard`
/// (a shard is at most 512 MiB, so an offset fits 32 bits).
pub fn replication_blob(shard: &[u8], changed: &[usize]) -> Vec<u8> {
    let mut blob = Vec::with_capacity(changed.len() * (4 + Block::BYTES));
    for &at in changed {
        blob.extend_from_slice(&(at as u32).to_le_bytes());
        blob.extend_from_slice(&shard[at..at + Block::BYTES]);
    }
    blob
}

/// Encodes probes as the commands take them (what a client sends).
pub fn encode(probes: impl IntoIterator<Item = (u64, u64)>) -> Vec<u8> {
    probes
        .into_iter()
        .flat_map(|(block, hash)| wire::probe(block, hash))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use linebloom::pattern::location;
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
        /// absent, the module calls absent too. The changed blocks it reports are
        /// exactly the blocks whose bytes differ from before.
        #[test]
        fn matches_the_core_filter(
            keys in proptest::collection::vec(any::<u64>(), 0..300),
            more in proptest::collection::vec(any::<u64>(), 0..100),
            others in proptest::collection::vec(any::<u64>(), 0..300),
            blocks in 1u64..40,
            k in 1u32..=linebloom::pattern::MAX_K,
            seed in any::<u64>(),
        ) {
            let params = Params::new(blocks, k).unwrap();
            let hasher = IntFold::with_seed(seed);
            let mut model = BloomFilter::with_hasher(params, hasher);
            for key in &keys {
                model.insert(key);
            }
            let mut shard = vec![0u8; params.bytes()];
            set_all(&mut shard, k, blocks, &encode(probes_of(&keys, params, &hasher))).unwrap();
            prop_assert_eq!(&shard[..], linebloom::block::blocks_as_bytes(model.as_blocks()));
            let present = test_all(&shard, k, blocks, &encode(probes_of(&keys, params, &hasher))).unwrap();
            prop_assert!(present.iter().all(|&p| p == 1));
            let answers = test_all(&shard, k, blocks, &encode(probes_of(&others, params, &hasher))).unwrap();
            for (key, answer) in others.iter().zip(answers) {
                prop_assert_eq!(answer == 1, model.contains(key));
            }
            // A second batch: `new` counts what the model calls new, and `changed`
            // names exactly the blocks that differ.
            let before = shard.clone();
            let added = set_all(&mut shard, k, blocks, &encode(probes_of(&more, params, &hasher))).unwrap();
            let model_new = more.iter().filter(|key| model.insert(*key)).count() as u64;
            prop_assert_eq!(added.new, model_new);
            let differing: Vec<usize> = (0..blocks as usize)
                .map(|b| b * 64)
                .filter(|&at| before[at..at + 64] != shard[at..at + 64])
                .collect();
            prop_assert_eq!(added.changed, differing);
        }
    }

    #[test]
    fn counts_new_keys_like_bf_madd() {
        let params = Params::new(4, 8).unwrap();
        let mut shard = vec![0u8; params.bytes()];
        let batch = encode(probes_of(&[1, 2, 3], params, &IntFold::with_seed(7)));
        assert_eq!(set_all(&mut shard, 8, 4, &batch).unwrap().new, 3);
        let again = set_all(&mut shard, 8, 4, &batch).unwrap();
        assert_eq!((again.new, again.changed.len()), (0, 0));
    }

    #[test]
    fn refuses_bad_batches_without_writing() {
        let mut shard = vec![0u8; 2 * 64];
        // The second probe is past the end: the first must not be written either.
        let batch = encode([(0, 42), (2, 43)]);
        assert_eq!(
            set_all(&mut shard, 8, 2, &batch),
            Err(BatchError::Probe {
                block: 2,
                blocks: 2
            })
        );
        assert!(shard.iter().all(|&b| b == 0));
        assert_eq!(
            test_all(&shard, 8, 2, &batch[..17]),
            Err(BatchError::Payload(17))
        );
        // A shard of any other length than the shape's is refused, shorter or longer,
        // for reads and writes alike.
        for (held, blocks) in [(100, 2), (128, 1), (128, 3), (0, 1)] {
            let needed = blocks * 64;
            let mut bytes = vec![0u8; held];
            assert_eq!(
                test_all(&bytes, 8, blocks, &encode([(0, 5)])),
                Err(BatchError::Length { held, needed })
            );
            assert_eq!(
                set_all(&mut bytes, 8, blocks, &encode([(0, 5)])),
                Err(BatchError::Length { held, needed })
            );
            assert!(bytes.iter().all(|&b| b == 0));
        }
        assert_eq!(test_all(&shard, 8, 2, &[]), Ok(Vec::new()));
    }

    #[test]
    fn probes_outside_the_encoding_are_refused_whole() {
        let mut shard = vec![0u8; 2 * Block::BYTES];
        let mut payload = encode([(0, 1), (1, 2)]);
        payload[PROBE_BYTES + 2] = 0x80;
        assert_eq!(test_all(&shard, 8, 2, &payload), Err(BatchError::Encoding));
        assert_eq!(
            set_all(&mut shard, 8, 2, &payload),
            Err(BatchError::Encoding)
        );
        assert!(shard.iter().all(|&b| b == 0), "nothing written");
    }

    /// A batch argument of a head with these parts and these probes.
    fn batch(scheme: &[u8], k: &[u8], blocks: &[u8], probes: &[u8]) -> Vec<u8> {
        [scheme, b":", k, b":", blocks, b":", probes].concat()
    }

    #[test]
    fn checks_scheme_k_and_blocks() {
        let s = SCHEME.as_bytes();
        let probes = encode([(2, 9)]);
        assert_eq!(
            check_batch(&batch(s, b"8", b"3", &probes)),
            Ok(Checked {
                k: 8,
                blocks: 3,
                probes: &probes
            })
        );
        // Older clients (binary probes under the bare pattern name; ASCII probes as
        // their own argument, the scheme alone before them) are refused.
        for other in [
            batch(b"linebloom-v1", b"8", b"3", &probes),
            batch(b"linebloom-v1/ascii-batch", b"8", b"3", &probes),
            b"linebloom-v2/ascii-probes".to_vec(),
            b"linebloom-v2".to_vec(),
            Vec::new(),
        ] {
            assert!(matches!(check_batch(&other), Err(BatchError::Scheme(_))));
        }
        // A long argument is quoted in part.
        let Err(BatchError::Scheme(quoted)) = check_batch(&[b'x'; 1000]) else {
            panic!("a batch without a head");
        };
        assert_eq!(quoted.len(), QUOTED);
        for bad in [&b"0"[..], b"-1", b"+8", b" 8", b"x", b"", b"99999999999"] {
            assert!(matches!(
                check_batch(&batch(s, bad, b"3", &probes)),
                Err(BatchError::K(_))
            ));
        }
        for bad in [
            &b"0"[..],
            b"-1",
            b"+3",
            b"x",
            b"",
            b"18446744073709551615",
            b"99999999999999999999999",
        ] {
            assert!(matches!(
                check_batch(&batch(s, b"8", bad, &probes)),
                Err(BatchError::Blocks(_))
            ));
        }
        let max = linebloom::pattern::MAX_K.to_string();
        assert!(check_batch(&batch(s, max.as_bytes(), b"1", b"")).is_ok());
        let over = (linebloom::pattern::MAX_K + 1).to_string();
        assert!(check_batch(&batch(s, over.as_bytes(), b"1", b"")).is_err());
        // Every error reads as a Redis error reply: a code, then the reason.
        let e = BatchError::Length {
            held: 100,
            needed: 128,
        }
        .to_string();
        assert_eq!(
            e,
            "LBLENGTH the shard holds 100 bytes where the filter's shape needs 128"
        );
        assert!(BatchError::Count.to_string().starts_with("LBCOUNT "));
        let mut count = 17i64.to_be_bytes();
        assert_eq!(add_count(&mut count, 5), Ok(()));
        assert_eq!(i64::from_be_bytes(count), 22);
        assert_eq!(add_count(&mut [0u8; 7], 1), Err(BatchError::Count));
    }

    #[test]
    fn options_are_count_and_meta_each_once() {
        let head: [&[u8]; 3] = [b"LINEBLOOM.MADD", b"s", b"<batch>"];
        let with = |rest: &[&'static [u8]]| {
            let mut argv = head.to_vec();
            argv.extend_from_slice(rest);
            argv
        };
        assert_eq!(options(&with(&[]), true), Ok(Options::default()));
        let (key, value) = (
            &b"f:meta"[..],
            &b"linebloom-v2 live 1 aa 64 8 0 1048576"[..],
        );
        let guard = Some(Guard {
            key: OptionKey { key, position: 4 },
            value,
        });
        assert_eq!(
            options(&with(&[b"meta", key, value]), false),
            Ok(Options { count: None, guard })
        );
        let both = options(&with(&[b"COUNT", b"c", b"META", key, value]), true).unwrap();
        assert_eq!(
            both.count,
            Some(OptionKey {
                key: b"c",
                position: 4
            })
        );
        assert_eq!(both.guard.unwrap().key.position, 6);
        let swapped = options(&with(&[b"META", key, value, b"count", b"c"]), true).unwrap();
        assert_eq!(swapped.count.unwrap().position, 7);
        for bad in [
            &[&b"META"[..]][..],
            &[b"META", key],
            &[b"METAX", key, value],
            &[b"META", key, value, b"x"],
            &[b"COUNT"],
            &[b"COUNT", b"c", b"COUNT", b"d"],
            &[b"META", key, value, b"META", key, value],
        ] {
            assert_eq!(
                options(&with(bad), true),
                Err(BatchError::Options),
                "{bad:?}"
            );
        }
        // COUNT on a read is refused.
        assert_eq!(
            options(&with(&[b"COUNT", b"c"]), false),
            Err(BatchError::Options)
        );
        assert!(meta_matches(Some(value), value));
        assert!(!meta_matches(Some(b"linebloom-v2 live 2"), value));
        assert!(!meta_matches(None, value));
        assert!(!meta_matches(Some(b""), value));
    }
}
