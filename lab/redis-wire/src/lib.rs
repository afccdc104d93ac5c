//! The wire format that `linebloom-redis-client` and the linebloom Redis module share
//! for the guard's batch commands, defined once:
//!
//! ```text
//! LINEBLOOM.MTEST <shard> <scheme> <k> <blocks> <probes> [META <meta key> <meta value>]
//! LINEBLOOM.MADD  <shard> <scheme> <k> <blocks> <probes> [COUNT <count key>] [META <meta key> <meta value>]
//! ```
//!
//! * `<scheme>` is [`SCHEME`], the core's bit-pattern name: a module of another
//!   scheme refuses instead of answering with other bits;
//! * `<k>` and `<blocks>` are decimal (the pattern's bit count, the shard's length in
//!   64-byte blocks);
//! * `<probes>` is one binary argument of [`PROBE_BYTES`] per key ([`probe`]): the key's
//!   block within the shard, then its 64-bit hash, both little-endian;
//! * a count key holds [`COUNT_BYTES`]: a big-endian `i64`, what `BITFIELD … INCRBY i64
//!   0` adds to, so the module, the client's scripts and a replica keep it alike
//!   ([`count_bytes`], [`read_count`], [`add_count`]);
//! * a refusal is an error reply whose first word is one of [`errors`].
//!
//! The client's `PROTOCOL.md` specifies the rest of the protocol around these.
//!
//! ```
//! use linebloom_redis_wire::{PROBE_BYTES, probe, probes};
//! let mut payload = Vec::new();
//! payload.extend_from_slice(&probe(3, 0xdead_beef));
//! payload.extend_from_slice(&probe(0, 7));
//! assert_eq!(payload.len(), 2 * PROBE_BYTES);
//! let back: Vec<(u64, u64)> = probes(&payload).unwrap().collect();
//! assert_eq!(back, [(3, 0xdead_beef), (0, 7)]);
//! ```

#![no_std]

/// Tests a batch of keys in one shard.
pub const MTEST: &str = "LINEBLOOM.MTEST";
/// Sets a batch of keys in one shard.
pub const MADD: &str = "LINEBLOOM.MADD";

/// The bit pattern's scheme, sent with every command and checked by the module.
pub const SCHEME: &str = linebloom::pattern::NAME;

/// Argument positions of both commands (the command name is 0).
pub mod position {
    /// The shard key.
    pub const SHARD: usize = 1;
    /// The scheme ([`crate::SCHEME`]).
    pub const SCHEME: usize = 2;
    /// `k`.
    pub const K: usize = 3;
    /// The shard's length in blocks.
    pub const BLOCKS: usize = 4;
    /// The probes.
    pub const PROBES: usize = 5;
    /// Where the options start.
    pub const OPTIONS: usize = 6;
}

/// The option that names the count key (`MADD` only), then the key.
pub const COUNT: &str = "COUNT";
/// The option that guards the batch with the filter's meta: then the meta key and the
/// value it must hold.
pub const META: &str = "META";

/// Bytes per probe: the block within the shard, then the hash, both `u64`
/// little-endian.
pub const PROBE_BYTES: usize = 16;

/// One key's probe.
#[must_use]
pub fn probe(block: u64, hash: u64) -> [u8; PROBE_BYTES] {
    let mut p = [0u8; PROBE_BYTES];
    p[..8].copy_from_slice(&block.to_le_bytes());
    p[8..].copy_from_slice(&hash.to_le_bytes());
    p
}

/// A payload's probes as `(block, hash)`.
///
/// # Errors
///
/// The payload's length where it is not a whole number of probes.
pub fn probes(payload: &[u8]) -> Result<impl ExactSizeIterator<Item = (u64, u64)> + '_, usize> {
    if !payload.len().is_multiple_of(PROBE_BYTES) {
        return Err(payload.len());
    }
    Ok(payload.chunks_exact(PROBE_BYTES).map(|p| {
        let word = |at: usize| u64::from_le_bytes(p[at..at + 8].try_into().expect("8 bytes"));
        (word(0), word(8))
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

/// The first word of the module's error replies.
pub mod errors {
    /// The shard is missing: `LBMISSING <shard> …`.
    pub const MISSING: &str = "LBMISSING";
    /// The shard has another length than the shape's: `LBLENGTH <shard> <bytes held>
    /// <bytes needed> …`.
    pub const LENGTH: &str = "LBLENGTH";
    /// The meta no longer holds the value the client sent: `LBSTALE <meta key> …`.
    pub const STALE: &str = "LBSTALE";
    /// The probes are not a whole number of [`crate::PROBE_BYTES`].
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
}
