//! The header every kind starts with, the checksum every kind ends with, and the
//! payload helpers the kinds share: seal an encoding, open one (every check before
//! anything is allocated), read and write blocks, fill a caller's storage, borrow
//! blocks in place.

use super::{CHECKSUM_LEN, DecodeError, EncodeError, HEADER_LEN, MAGIC, VERSION};
use crate::block::Block;
use crate::params::ParamsError;

/// The common header fields of every kind of filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fields {
    pub kind: u16,
    pub hasher_id: u32,
    pub k: u32,
    pub blocks: u64,
    pub seed: u64,
    /// Bytes 32..64: kind-specific; zero for `BloomFilter` and `CountingBloomFilter`.
    pub extra: [u64; 4],
}

pub(crate) fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
pub(crate) fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
pub(crate) fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// Writes header, payload (through `payload`, into exactly `payload_len` bytes) and
/// checksum into `out`; returns the bytes written.
pub(crate) fn seal(
    out: &mut [u8],
    fields: &Fields,
    payload_len: usize,
    payload: impl FnOnce(&mut [u8]),
) -> Result<usize, EncodeError> {
    let len = HEADER_LEN + payload_len + CHECKSUM_LEN;
    if out.len() < len {
        return Err(EncodeError::BufferTooSmall {
            needed: len,
            got: out.len(),
        });
    }
    let out = &mut out[..len];
    out[..HEADER_LEN].fill(0);
    out[0..4].copy_from_slice(&MAGIC);
    out[4..6].copy_from_slice(&VERSION.to_le_bytes());
    out[6..8].copy_from_slice(&fields.kind.to_le_bytes());
    out[8..12].copy_from_slice(&fields.hasher_id.to_le_bytes());
    out[12..16].copy_from_slice(&fields.k.to_le_bytes());
    out[16..24].copy_from_slice(&fields.blocks.to_le_bytes());
    out[24..32].copy_from_slice(&fields.seed.to_le_bytes());
    for (i, e) in fields.extra.iter().enumerate() {
        out[32 + 8 * i..40 + 8 * i].copy_from_slice(&e.to_le_bytes());
    }
    payload(&mut out[HEADER_LEN..len - CHECKSUM_LEN]);
    let sum = checksum(&out[..len - CHECKSUM_LEN]);
    out[len - CHECKSUM_LEN..].copy_from_slice(&sum.to_le_bytes());
    Ok(len)
}

/// Checks an encoding of `kind` written with hasher `hasher_id` and returns its header
/// fields and payload. `payload_len` validates the kind-specific fields and says how
/// long the payload must be; it sees the bytes after the header (possibly short) for
/// kinds whose length is stored there.
pub(crate) fn open(
    bytes: &[u8],
    kind: u16,
    hasher_id: u32,
    payload_len: impl FnOnce(&Fields, &[u8]) -> Result<u64, DecodeError>,
) -> Result<(Fields, &[u8]), DecodeError> {
    let got = bytes.len() as u64;
    // The magic first, where there are bytes for it: junk is "not an encoding", not a
    // short one.
    if let Some(&magic) = bytes.first_chunk::<4>()
        && magic != MAGIC
    {
        return Err(DecodeError::BadMagic(magic));
    }
    if bytes.len() < HEADER_LEN {
        return Err(DecodeError::Truncated {
            needed: (HEADER_LEN + CHECKSUM_LEN) as u64,
            got,
        });
    }
    let version = le_u16(bytes, 4);
    if version != VERSION {
        return Err(DecodeError::UnsupportedVersion(version));
    }
    let found_kind = le_u16(bytes, 6);
    if found_kind != kind {
        return Err(DecodeError::WrongKind {
            expected: kind,
            found: found_kind,
        });
    }
    let found_hasher = le_u32(bytes, 8);
    if found_hasher != hasher_id {
        return Err(DecodeError::HasherMismatch {
            expected: hasher_id,
            found: found_hasher,
        });
    }
    let fields = Fields {
        kind,
        hasher_id,
        k: le_u32(bytes, 12),
        blocks: le_u64(bytes, 16),
        seed: le_u64(bytes, 24),
        extra: [
            le_u64(bytes, 32),
            le_u64(bytes, 40),
            le_u64(bytes, 48),
            le_u64(bytes, 56),
        ],
    };
    let payload = payload_len(&fields, &bytes[HEADER_LEN..])?;
    let expected = (HEADER_LEN as u64 + CHECKSUM_LEN as u64).saturating_add(payload);
    if got < expected {
        return Err(DecodeError::Truncated {
            needed: expected,
            got,
        });
    }
    if got > expected {
        return Err(DecodeError::TrailingBytes { expected, got });
    }
    let body = bytes.len() - CHECKSUM_LEN;
    let stored = le_u64(bytes, body);
    let computed = checksum(&bytes[..body]);
    if stored != computed {
        return Err(DecodeError::BadChecksum { stored, computed });
    }
    Ok((fields, &bytes[HEADER_LEN..body]))
}

/// `payload_len` for the block-array kinds (Bloom, counting, quotient): the reserved
/// words must be zero, and `shape` (the kind's check of its block count and `k`) gives
/// the payload's length. The quotient filter's location scheme, in the first word, is
/// checked after the checksum ([`quotient_scheme`]).
pub(crate) fn block_array_len(
    f: &Fields,
    kind: u16,
    expected: [u64; 4],
    shape: impl FnOnce(u64, u32) -> Result<u64, ParamsError>,
) -> Result<u64, DecodeError> {
    let reserved = if kind == super::KIND_QUOTIENT { 1 } else { 0 };
    if f.extra[reserved..] != expected[reserved..] {
        return Err(DecodeError::ReservedNonZero);
    }
    shape(f.blocks, f.k).map_err(DecodeError::InvalidParams)
}

/// After the checksum: a quotient filter's location scheme must be the one this code
/// writes (`expected`) or the emptier-block scheme with the same locations, since the
/// same blocks answer differently under any other.
pub(crate) fn quotient_scheme(f: &Fields, expected: [u64; 4]) -> Result<(), DecodeError> {
    let readable = [expected[0], crate::quotient::SCHEME_ID_EMPTIER_BLOCK];
    if f.kind == super::KIND_QUOTIENT && !readable.contains(&f.extra[0]) {
        return Err(DecodeError::UnsupportedQuotientScheme(f.extra[0]));
    }
    Ok(())
}

/// Writes blocks as little-endian words.
pub(crate) fn write_blocks(out: &mut [u8], blocks: &[Block]) {
    for (chunk, block) in out.chunks_exact_mut(Block::BYTES).zip(blocks) {
        chunk.copy_from_slice(&block.to_le_bytes());
    }
}

/// Reads a payload of whole blocks (its length already checked) into storage of the kind
/// `Blocks::zeroed` picks for its size (huge pages for large filters, where it uses them).
#[cfg(feature = "alloc")]
pub(crate) fn read_blocks(payload: &[u8]) -> crate::Blocks {
    let mut blocks = crate::Blocks::zeroed(payload.len() / Block::BYTES);
    for (block, chunk) in blocks
        .as_mut()
        .iter_mut()
        .zip(payload.chunks_exact(Block::BYTES))
    {
        *block = Block::from_le_bytes(chunk.try_into().expect("64-byte chunk"));
    }
    blocks
}

/// A vector of `len` bytes filled by `encode` (which must write exactly `len`).
#[cfg(feature = "alloc")]
pub(crate) fn to_vec(
    len: usize,
    encode: impl FnOnce(&mut [u8]) -> Result<usize, EncodeError>,
) -> alloc::vec::Vec<u8> {
    let mut out = alloc::vec![0u8; len];
    let written = encode(&mut out).expect("buffer has encoded_len bytes");
    debug_assert_eq!(written, len);
    out
}

/// Copies a checked payload into a caller's storage of exactly `blocks` blocks, word by
/// word from little-endian (any alignment, any endianness).
pub(crate) fn fill_storage<S: AsMut<[Block]>>(
    payload: &[u8],
    mut storage: S,
    blocks: u64,
) -> Result<S, DecodeError> {
    let got = storage.as_mut().len() as u64;
    if got != blocks {
        return Err(DecodeError::InvalidParams(ParamsError::StorageLength {
            expected: blocks,
            got,
        }));
    }
    for (dst, chunk) in storage
        .as_mut()
        .iter_mut()
        .zip(payload.chunks_exact(Block::BYTES))
    {
        *dst = Block::from_le_bytes(chunk.try_into().expect("64-byte chunk"));
    }
    Ok(storage)
}

/// The payload of a checked encoding as blocks borrowed in place: `bytes` must start at
/// a 64-byte aligned address ([`DecodeError::Misaligned`] otherwise); `open` checks the
/// rest (header, kind, hasher, lengths, checksum) and returns what it read of the header
/// with the payload.
#[cfg(target_endian = "little")]
pub(crate) fn view_blocks<'a, T>(
    bytes: &'a [u8],
    open: impl FnOnce(&'a [u8]) -> Result<(T, &'a [u8]), DecodeError>,
) -> Result<(T, &'a [Block]), DecodeError> {
    if !(bytes.as_ptr() as usize).is_multiple_of(core::mem::align_of::<Block>()) {
        return Err(DecodeError::Misaligned);
    }
    let (header, payload) = open(bytes)?;
    let offset = payload.as_ptr() as usize - bytes.as_ptr() as usize;
    if !offset.is_multiple_of(Block::BYTES) || !payload.len().is_multiple_of(Block::BYTES) {
        return Err(DecodeError::Inconsistent);
    }
    // SAFETY: `payload` lies inside `bytes` at a multiple of 64 bytes from its 64-byte
    // aligned start, so it is aligned for `Block`, and its length is a whole number of
    // blocks (both checked just above); every bit pattern is a valid `Block` (plain
    // `[u64; 8]`); on a little-endian target the stored little-endian words are the
    // native words; and the slice borrows `bytes` for `'a`, so it cannot outlive or
    // alias a mutable borrow.
    let blocks = unsafe {
        core::slice::from_raw_parts(
            payload.as_ptr() as *const Block,
            payload.len() / Block::BYTES,
        )
    };
    Ok((header, blocks))
}
