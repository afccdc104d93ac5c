//! The wire format that `linebloom-redis-client` and the linebloom Redis module share
//! for the guard's batch commands, defined once:
//!
//! ```text
//! LINEBLOOM.MTEST <shard> <batch> [META <meta key> <meta value>]
//! LINEBLOOM.MADD  <shard> <batch> [COUNT <count key>] [META <meta key> <meta value>]
//! ```
//!
//! * `<batch>` is one argument: its head `<scheme>:<k>:<blocks>:` ([`Head`]), then one
//!   probe of [`PROBE_BYTES`] per key ([`probe`]). A batch carries its shape in the same
//!   argument as its keys because Redis makes and frees an object per argument: a
//!   guarded single-key lookup is six arguments with the command's name, where it was
//!   nine;
//! * `<scheme>` is [`SCHEME`], the core's bit-pattern name: a module of another pattern
//!   refuses instead of answering with other bits. The head itself marks this encoding:
//!   an older client sent the scheme as an argument of its own, with no head the module
//!   reads, and is refused; a later encoding names a scheme of its own. A single key's
//!   batch is at most 44 bytes (for `k` under 100 and shards under 10⁷ blocks), the
//!   longest argument Redis keeps in one allocation with its object;
//! * `<k>` and `<blocks>` are decimal (the pattern's bit count, the shard's length in
//!   64-byte blocks);
//! * a probe is the key's block within the shard (the low 64 bits) and its 64-bit hash
//!   (the high 64) as one 128-bit number, seven bits a byte, low bits first. Every byte
//!   is ASCII (below 0x80), so a server that does not know the command, and quotes its
//!   first arguments in its "unknown command" error, quotes text: a client whose parser
//!   requires error replies to be UTF-8 (the `redis` crate's does) reads the error and
//!   falls back to plain commands instead of dropping the connection;
//! * a count key holds [`COUNT_BYTES`]: a big-endian `i64`, what `BITFIELD … INCRBY i64
//!   0` adds to, so the module, the client's scripts and a replica keep it alike
//!   ([`count_bytes`], [`read_count`], [`add_count`]);
//! * a shard's bit `i` of block `b` is Redis's bit [`redis_bit_offset`]`(b, i)`;
//! * a refusal is an error reply whose first word is one of [`errors`].
//!
//! The client's `PROTOCOL.md` specifies the rest of the protocol around these.
//!
//! ```
//! use linebloom_redis_wire::{Head, PROBE_BYTES, batch, probe, probes};
//! let mut arg = Head { k: 8, blocks: 4 }.to_string().into_bytes();
//! arg.extend_from_slice(&probe(3, 0xdead_beef));
//! arg.extend_from_slice(&probe(0, 7));
//! assert!(arg.is_ascii());
//! let parts = batch(&arg).unwrap();
//! assert_eq!((parts.k, parts.blocks), (&b"8"[..], &b"4"[..]));
//! assert_eq!(parts.probes.len(), 2 * PROBE_BYTES);
//! let back: Vec<Option<(u64, u64)>> = probes(parts.probes).unwrap().collect();
//! assert_eq!(back, [Some((3, 0xdead_beef)), Some((0, 7))]);
//! ```

#![no_std]

/// Tests a batch of keys in one shard.
pub const MTEST: &str = "LINEBLOOM.MTEST";
/// Sets a batch of keys in one shard.
pub const MADD: &str = "LINEBLOOM.MADD";

/// The bit pattern's scheme (the core's [`linebloom::pattern::NAME`]), sent at the head
/// of every batch and checked by the module.
pub const SCHEME: &str = "linebloom-v2";

/// Argument positions of both commands (the command name is 0).
pub mod position {
    /// The shard key.
    pub const SHARD: usize = 1;
    /// The batch: its [`Head`](crate::Head), then its probes.
    pub const BATCH: usize = 2;
    /// Where the options start.
    pub const OPTIONS: usize = 3;
}

/// A batch's head, `<scheme>:<k>:<blocks>:` (its [`Display`](core::fmt::Display)): the
/// filter's `k` and the shard's length in blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    /// The pattern's bit count.
    pub k: u32,
    /// The shard's length in 64-byte blocks.
    pub blocks: u64,
}

impl core::fmt::Display for Head {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{SCHEME}:{}:{}:", self.k, self.blocks)
    }
}

/// A batch argument's parts, as sent: the module checks each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch<'a> {
    /// The scheme the client speaks.
    pub scheme: &'a [u8],
    /// `k`, in decimal.
    pub k: &'a [u8],
    /// The shard's length in blocks, in decimal.
    pub blocks: &'a [u8],
    /// The probes ([`probes`] reads them).
    pub probes: &'a [u8],
}

/// Splits a batch argument at the first three colons (no scheme holds one; a probe may,
/// after them). `None` where it has fewer than three.
#[must_use]
pub fn batch(arg: &[u8]) -> Option<Batch<'_>> {
    let mut parts = arg.splitn(4, |&b| b == b':');
    Some(Batch {
        scheme: parts.next()?,
        k: parts.next()?,
        blocks: parts.next()?,
        probes: parts.next()?,
    })
}

/// The option that names the count key (`MADD` only), then the key.
pub const COUNT: &str = "COUNT";
/// The option that guards the batch with the filter's meta: then the meta key and the
/// value it must hold.
pub const META: &str = "META";

/// Bytes per probe: 128 bits, seven to a byte.
pub const PROBE_BYTES: usize = 19;

/// One key's probe: `block | hash << 64`, seven bits a byte, low first, each byte
/// below 0x80.
#[must_use]
pub fn probe(block: u64, hash: u64) -> [u8; PROBE_BYTES] {
    let mut value = u128::from(block) | u128::from(hash) << 64;
    let mut p = [0u8; PROBE_BYTES];
    for byte in &mut p {
        *byte = (value & 0x7f) as u8;
        value >>= 7;
    }
    p
}

/// A payload's probes as `(block, hash)`; `None` for a probe that is not one this
/// encoding writes (a byte from 0x80, or bits past the 128th).
///
/// # Errors
///
/// The payload's length where it is not a whole number of probes.
pub fn probes(
    payload: &[u8],
) -> Result<impl ExactSizeIterator<Item = Option<(u64, u64)>> + '_, usize> {
    if !payload.len().is_multiple_of(PROBE_BYTES) {
        return Err(payload.len());
    }
    Ok(payload.chunks_exact(PROBE_BYTES).map(|p| {
        // The last byte holds bits 126 and 127 only.
        if p.iter().any(|&b| b >= 0x80) || p[PROBE_BYTES - 1] >= 4 {
            return None;
        }
        let value = p
            .iter()
            .rev()
            .fold(0u128, |value, &byte| value << 7 | u128::from(byte));
        Some((value as u64, (value >> 64) as u64))
    }))
}

/// Bytes of a count key's value.
pub const COUNT_BYTES: usize = 8;

/// A count key's value for `n` (saturating at `i64::MAX`).
#[must_use]
pub fn count_bytes(n: u64) -> [u8; COUNT_BYTES] {
    (n.min(i64::MAX as u64) as i64).to_be_bytes()
}

/// The count a count key's value holds (a negative one, which only a foreign write
/// makes, reads as 0).
#[must_use]
pub fn read_count(bytes: [u8; COUNT_BYTES]) -> u64 {
    i64::from_be_bytes(bytes).max(0) as u64
}

/// Adds `n` to a count key's value, wrapping as `BITFIELD`'s default overflow does.
pub fn add_count(held: &mut [u8; COUNT_BYTES], n: u64) {
    *held = i64::from_be_bytes(*held)
        .wrapping_add(n as i64)
        .to_be_bytes();
}

/// The Redis bit offset (`BITFIELD`/`SETBIT` addressing, most significant bit of each
/// byte first) of bit `bit` (0..512) of block `block`, for a shard stored as its blocks'
/// little-endian payload: `512·block + (bit ^ 7)` (the client's `PROTOCOL.md`, the
/// layout in Redis). The client's inserts without the module address bits so.
#[inline]
#[must_use]
pub const fn redis_bit_offset(block: u64, bit: u32) -> u64 {
    512 * block + (bit ^ 7) as u64
}

/// The first word of the module's error replies.
pub mod errors {
    /// The shard is missing: `LBMISSING <shard> …`.
    pub const MISSING: &str = "LBMISSING";
    /// The shard has another length than the shape's: `LBLENGTH <shard> <bytes held>
    /// <bytes needed> …`.
    pub const LENGTH: &str = "LBLENGTH";
    /// The meta no longer holds the value the client sent: `LBSTALE <meta key> …`.
    pub const STALE: &str = "LBSTALE";
    /// The batch's probes are not a whole number of [`crate::PROBE_BYTES`] (a batch
    /// without a head is another scheme, [`SCHEME`]).
    pub const PAYLOAD: &str = "LBPAYLOAD";
    /// `k` is out of the pattern's range.
    pub const K: &str = "LBK";
    /// The block count is not a positive number.
    pub const BLOCKS: &str = "LBBLOCKS";
    /// The client speaks another [`crate::SCHEME`].
    pub const SCHEME: &str = "LBSCHEME";
    /// A probe names a block past the shard's end.
    pub const PROBE: &str = "LBPROBE";
    /// The options are not `[COUNT <key>] [META <key> <value>]`.
    pub const OPTIONS: &str = "LBOPTIONS";
    /// The count key holds something other than a count.
    pub const COUNT: &str = "LBCOUNT";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_numbers_bits_from_the_top_of_each_byte() {
        assert_eq!(redis_bit_offset(0, 0), 7);
        assert_eq!(redis_bit_offset(0, 7), 0);
        assert_eq!(redis_bit_offset(0, 8), 15);
        assert_eq!(redis_bit_offset(2, 9), 1024 + 14);
    }

    #[test]
    fn counts_round_trip_and_wrap_as_bitfield_does() {
        assert_eq!(read_count(count_bytes(41)), 41);
        assert_eq!(read_count(count_bytes(u64::MAX)), i64::MAX as u64);
        let mut held = count_bytes(i64::MAX as u64);
        add_count(&mut held, 1);
        assert_eq!(i64::from_be_bytes(held), i64::MIN, "wraps");
        assert_eq!(read_count(held), 0, "a negative count reads as 0");
    }

    #[test]
    fn a_payload_not_of_whole_probes_is_refused() {
        assert_eq!(probes(&[0u8; 17]).err(), Some(17));
        assert_eq!(probes(&[]).unwrap().len(), 0);
    }

    #[test]
    fn probes_round_trip_in_ascii_and_others_are_refused() {
        for (block, hash) in [
            (0, 0),
            (u64::MAX, u64::MAX),
            (1 << 40, 0x8080_8080_8080_8080),
        ] {
            let p = probe(block, hash);
            assert!(p.is_ascii());
            assert_eq!(probes(&p).unwrap().next(), Some(Some((block, hash))));
        }
        let mut high = probe(1, 2);
        high[3] = 0x80;
        assert_eq!(probes(&high).unwrap().next(), Some(None));
        let mut past = probe(1, 2);
        past[PROBE_BYTES - 1] = 4;
        assert_eq!(probes(&past).unwrap().next(), Some(None));
    }

    #[test]
    fn the_scheme_names_the_cores_pattern() {
        assert_eq!(SCHEME, linebloom::pattern::NAME);
        assert!(!SCHEME.contains(':'), "the head's separator");
    }

    #[test]
    fn a_single_keys_batch_fits_one_redis_allocation() {
        extern crate std;
        use std::string::ToString;
        // OBJ_ENCODING_EMBSTR_SIZE_LIMIT in Redis's object.c: a longer argument costs
        // the server a second allocation and its free.
        const EMBEDDED: usize = 44;
        let head = Head {
            k: 99,
            blocks: 9_999_999,
        };
        assert!(head.to_string().len() + PROBE_BYTES <= EMBEDDED);
    }

    #[test]
    fn a_batch_splits_at_its_heads_colons_only() {
        extern crate std;
        use std::string::ToString;
        let mut arg = Head { k: 7, blocks: 1994 }.to_string().into_bytes();
        assert_eq!(arg, std::format!("{SCHEME}:7:1994:").into_bytes());
        // A probe may hold a colon (58): it stays in the probes.
        let p = probe(58, 58 << 57);
        assert!(p.contains(&b':'));
        arg.extend_from_slice(&p);
        let parts = batch(&arg).unwrap();
        assert_eq!(parts.scheme, SCHEME.as_bytes());
        assert_eq!((parts.k, parts.blocks), (&b"7"[..], &b"1994"[..]));
        assert_eq!(parts.probes, p);
        assert_eq!(
            batch(b"a:1:2:"),
            Some(Batch {
                scheme: b"a",
                k: b"1",
                blocks: b"2",
                probes: b""
            })
        );
        assert_eq!(batch(b"a:1:2"), None);
        assert_eq!(batch(b""), None);
    }
}
