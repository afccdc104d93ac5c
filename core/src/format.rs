//! The binary format: versioned, little-endian, checksummed (specified in `core/FORMAT.md`).
//!
//! Decoding takes untrusted bytes. It never panics, allocates only after the length has
//! been checked against the header (so at most the input's size), and reports each
//! defect with its own [`DecodeError`] variant.
//!
//! On little-endian targets [`BloomFilter::view`] reads a filter in place from 64-byte
//! aligned bytes (a memory map, a `static` blob) without copying or allocating.

use crate::block::Block;
use crate::bloom::BloomFilter;
use crate::hasher::StableHasher;
use crate::params::{Params, ParamsError};

/// `b"LBLM"`.
pub const MAGIC: [u8; 4] = *b"LBLM";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 2;
/// Bytes before the payload (a whole block, so the payload stays 64-byte aligned).
pub const HEADER_LEN: usize = 64;
/// Bytes of the trailing checksum.
pub const CHECKSUM_LEN: usize = 8;
/// Filter-kind tag of [`BloomFilter`].
pub const KIND_BLOOM: u16 = 1;
/// Filter-kind tag of [`crate::CountingBloomFilter`].
pub const KIND_COUNTING: u16 = 2;
/// Filter-kind tag of [`crate::ScalableBloomFilter`].
pub const KIND_SCALABLE: u16 = 3;
/// Filter-kind tag of [`crate::ClassicBloomFilter`].
pub const KIND_CLASSIC: u16 = 4;

/// Why bytes could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum DecodeError {
    /// Fewer bytes than the header, or than the header says the filter needs.
    Truncated {
        /// Bytes needed.
        needed: u64,
        /// Bytes given.
        got: u64,
    },
    /// The first four bytes are not `LBLM`.
    BadMagic([u8; 4]),
    /// A format version this crate does not read.
    UnsupportedVersion(u16),
    /// The bytes hold another kind of filter.
    WrongKind {
        /// The kind asked for.
        expected: u16,
        /// The kind stored.
        found: u16,
    },
    /// The filter was written with another hasher.
    HasherMismatch {
        /// The hasher id asked for.
        expected: u32,
        /// The hasher id stored.
        found: u32,
    },
    /// The stored parameters are not a valid filter (k out of range, zero or too many
    /// blocks).
    InvalidParams(ParamsError),
    /// The stored fields are each valid but contradict each other (a scalable filter's
    /// layer that its own options would not have produced, block counts that do not add
    /// up).
    Inconsistent,
    /// Reserved header bytes are not zero.
    ReservedNonZero,
    /// A classic filter's bits past its `m` bits (the padding of its last block) are not
    /// zero, as the format requires.
    PaddingNonZero,
    /// A classic filter whose probe scheme (bytes 40..48) this build does not read. `0`
    /// is the enhanced double hashing of the first version-2 builds, whose patterns
    /// repeat too often at small sizes (see the classic filter's docs): rebuild it.
    UnsupportedProbeScheme(u64),
    /// More bytes than the header says the filter has.
    TrailingBytes {
        /// Bytes expected.
        expected: u64,
        /// Bytes given.
        got: u64,
    },
    /// The checksum does not match: the bytes were corrupted.
    BadChecksum {
        /// Checksum stored in the bytes.
        stored: u64,
        /// Checksum computed over them.
        computed: u64,
    },
    /// [`BloomFilter::view`] needs the bytes to start at a 64-byte aligned address.
    Misaligned,
    /// The output buffer of `encode_into` is too small.
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
    },
}

/// The type name of a filter kind id, for error messages.
fn kind_name(kind: u16) -> &'static str {
    match kind {
        1 => "BloomFilter",
        2 => "CountingBloomFilter",
        3 => "ScalableBloomFilter",
        4 => "ClassicBloomFilter",
        _ => "unknown filter kind",
    }
}

/// The type name of a hasher id, for error messages.
fn hasher_name(id: u32) -> &'static str {
    match id {
        1 => "Xxh3",
        2 => "IntFold",
        _ => "an unknown hasher",
    }
}

impl core::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            DecodeError::Truncated { needed, got } => {
                write!(f, "truncated: need {needed} bytes, got {got}")
            }
            DecodeError::BadMagic(m) => write!(f, "bad magic {m:02x?}, expected \"LBLM\""),
            DecodeError::UnsupportedVersion(1) => write!(
                f,
                "format version 1 (the fmix64 bit pattern of linebloom before its lean probe) \
                 is no longer read; this build reads version {VERSION}: rebuild the filter \
                 from its keys"
            ),
            DecodeError::UnsupportedVersion(v) => write!(
                f,
                "format version {v} is not supported (this build reads {VERSION})"
            ),
            DecodeError::WrongKind { expected, found } => write!(
                f,
                "the bytes hold a {} (kind {found}), not a {} (kind {expected})",
                kind_name(*found),
                kind_name(*expected)
            ),
            DecodeError::HasherMismatch { expected, found } => write!(
                f,
                "the filter was written with hasher {} (id {found}), not {} (id {expected})",
                hasher_name(*found),
                hasher_name(*expected)
            ),
            DecodeError::InvalidParams(e) => write!(f, "invalid parameters: {e}"),
            DecodeError::ReservedNonZero => f.write_str("reserved header bytes are not zero"),
            DecodeError::PaddingNonZero => {
                f.write_str("bits past the classic filter's m bits are set (padding must be zero)")
            }
            DecodeError::UnsupportedProbeScheme(id) => write!(
                f,
                "classic filter with probe scheme {id}, which this build does not read \
                 (it reads scheme {}): rebuild the filter",
                crate::classic::PROBE_SCHEME
            ),
            DecodeError::Inconsistent => f.write_str("stored fields contradict each other"),
            DecodeError::TrailingBytes { expected, got } => {
                write!(f, "{got} bytes, expected {expected}")
            }
            DecodeError::BadChecksum { stored, computed } => {
                write!(
                    f,
                    "checksum mismatch: stored {stored:016x}, computed {computed:016x}"
                )
            }
            DecodeError::Misaligned => f.write_str("bytes are not 64-byte aligned"),
            DecodeError::BufferTooSmall { needed } => {
                write!(f, "output buffer too small: need {needed} bytes")
            }
        }
    }
}

impl core::error::Error for DecodeError {}

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

fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn le_u32(b: &[u8], at: usize) -> u32 {
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
) -> Result<usize, DecodeError> {
    let len = HEADER_LEN + payload_len + CHECKSUM_LEN;
    if out.len() < len {
        return Err(DecodeError::BufferTooSmall { needed: len });
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
    if bytes.len() < HEADER_LEN {
        return Err(DecodeError::Truncated {
            needed: (HEADER_LEN + CHECKSUM_LEN) as u64,
            got,
        });
    }
    let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
    if magic != MAGIC {
        return Err(DecodeError::BadMagic(magic));
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

/// `payload_len` for the block-array kinds (Bloom, counting): extra must be zero, the
/// shape valid, and the payload `64·blocks` bytes.
pub(crate) fn block_array_len(f: &Fields) -> Result<u64, DecodeError> {
    if f.extra != [0; 4] {
        return Err(DecodeError::ReservedNonZero);
    }
    let params = Params::new(f.blocks, f.k).map_err(DecodeError::InvalidParams)?;
    Ok(params.bytes() as u64)
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

/// Encodes a filter that is a plain block array (Bloom, counting) into `out`.
fn encode_block_array<H: StableHasher>(
    out: &mut [u8],
    kind: u16,
    params: Params,
    hasher: &H,
    blocks: &[Block],
) -> Result<usize, DecodeError> {
    let fields = Fields {
        kind,
        hasher_id: H::ID,
        k: params.k(),
        blocks: params.blocks() as u64,
        seed: hasher.seed(),
        extra: [0; 4],
    };
    seal(out, &fields, params.bytes(), |payload| {
        write_blocks(payload, blocks)
    })
}

/// A vector of `len` bytes filled by `encode` (which must write exactly `len`).
#[cfg(feature = "alloc")]
fn to_vec(
    len: usize,
    encode: impl FnOnce(&mut [u8]) -> Result<usize, DecodeError>,
) -> alloc::vec::Vec<u8> {
    let mut out = alloc::vec![0u8; len];
    let written = encode(&mut out).expect("buffer has encoded_len bytes");
    debug_assert_eq!(written, len);
    out
}

impl<S: AsRef<[Block]>, H: StableHasher> BloomFilter<S, H> {
    /// Length of this filter's encoding: header + 64 bytes per block + checksum.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.params().bytes() + CHECKSUM_LEN
    }

    /// Writes the encoding into `out` with no allocation; returns the bytes written.
    ///
    /// ```
    /// use linebloom::{Block, BloomFilter};
    /// let mut s = [Block::ZERO; 1];
    /// let f = BloomFilter::from_storage(&mut s[..], 8).unwrap();
    /// let mut buf = [0u8; 136];
    /// assert_eq!(f.encode_into(&mut buf), Ok(136));
    /// ```
    pub fn encode_into(&self, out: &mut [u8]) -> Result<usize, DecodeError> {
        encode_block_array(
            out,
            KIND_BLOOM,
            self.params(),
            self.hasher(),
            self.as_blocks(),
        )
    }

    /// The encoding as a new vector.
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params};
    /// let mut f = BloomFilter::new(Params::for_fpr(1000, 0.01).unwrap());
    /// f.insert("k");
    /// let g = BloomFilter::from_bytes(&f.to_bytes()).unwrap();
    /// assert_eq!(f, g);
    /// ```
    #[cfg(feature = "alloc")]
    pub fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        to_vec(self.encoded_len(), |out| self.encode_into(out))
    }
}

/// `from_bytes`: decoding for a kind's default type (hasher [`crate::IntFold`]), so that
/// `Kind::from_bytes(&bytes)?` needs no type annotation.
macro_rules! from_bytes_for_default_hasher {
    ($ty:ty, $name:literal) => {
        #[cfg(feature = "alloc")]
        impl $ty {
            #[doc = concat!("Decodes untrusted bytes of a `", $name, "` written with the default hasher, [`crate::IntFold`].")]
            ///
            /// Bytes written with another hasher are refused with
            /// [`DecodeError::HasherMismatch`]; decode those with `decode`, naming the
            /// hasher type.
            pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
                <$ty>::decode(bytes)
            }
        }
    };
}
from_bytes_for_default_hasher!(BloomFilter, "BloomFilter");
from_bytes_for_default_hasher!(crate::CountingBloomFilter, "CountingBloomFilter");
from_bytes_for_default_hasher!(crate::ClassicBloomFilter, "ClassicBloomFilter");
from_bytes_for_default_hasher!(crate::ScalableBloomFilter, "ScalableBloomFilter");

#[cfg(feature = "alloc")]
impl<H: StableHasher> BloomFilter<crate::Blocks, H> {
    /// Decodes untrusted bytes written with hasher `H` (name it:
    /// `BloomFilter::<Blocks, Xxh3>::decode(bytes)`; for the default hasher,
    /// [`from_bytes`](BloomFilter::from_bytes) needs no annotation). Allocates only the
    /// payload, whose size the input's own length has already justified.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (fields, payload) = open(bytes, KIND_BLOOM, H::ID, |f, _| block_array_len(f))?;
        BloomFilter::from_storage_with_hasher(
            read_blocks(payload),
            fields.k,
            H::from_seed(fields.seed),
        )
        .map_err(DecodeError::InvalidParams)
    }
}

/// Copies a checked payload into a caller's storage of exactly `blocks` blocks, word by
/// word from little-endian (any alignment, any endianness).
fn fill_storage<S: AsMut<[Block]>>(
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

/// `decode_into` for the two block-array kinds: the encoding is checked whole (checksum
/// included) before a single block of the caller's storage is written.
macro_rules! decode_into_block_array {
    ($ty:ident, $kind:expr, $name:literal) => {
        impl<S: AsRef<[Block]> + AsMut<[Block]>, H: StableHasher> $ty<S, H> {
            #[doc = concat!("Decodes untrusted bytes of a `", $name, "` into the caller's storage, with no")]
            /// allocation: `storage` must have exactly the encoded block count
            /// ([`ParamsError::StorageLength`] otherwise). The bytes may sit at any
            /// alignment and the target may be big-endian (unlike `view`).
            pub fn decode_into(bytes: &[u8], storage: S) -> Result<Self, DecodeError> {
                let (fields, payload) = open(bytes, $kind, H::ID, |f, _| block_array_len(f))?;
                let storage = fill_storage(payload, storage, fields.blocks)?;
                $ty::from_storage_with_hasher(storage, fields.k, H::from_seed(fields.seed))
                    .map_err(DecodeError::InvalidParams)
            }
        }
    };
}
use crate::CountingBloomFilter;

/// `from_bytes_into`: `decode_into` for a kind's default hasher, so that
/// `Kind::from_bytes_into(&bytes, storage)?` needs no type annotation.
macro_rules! from_bytes_into_for_default_hasher {
    ($ty:ident, $name:literal) => {
        impl<S: AsRef<[Block]> + AsMut<[Block]>> $ty<S, crate::IntFold> {
            #[doc = concat!("Decodes untrusted bytes of a `", $name, "` written with the default hasher into the caller's storage, with no allocation (see `decode_into`).")]
            pub fn from_bytes_into(bytes: &[u8], storage: S) -> Result<Self, DecodeError> {
                Self::decode_into(bytes, storage)
            }
        }
    };
}
from_bytes_into_for_default_hasher!(BloomFilter, "BloomFilter");
from_bytes_into_for_default_hasher!(CountingBloomFilter, "CountingBloomFilter");
use crate::ClassicBloomFilter;
from_bytes_into_for_default_hasher!(ClassicBloomFilter, "ClassicBloomFilter");

decode_into_block_array!(BloomFilter, KIND_BLOOM, "BloomFilter");
decode_into_block_array!(CountingBloomFilter, KIND_COUNTING, "CountingBloomFilter");

/// The payload of a checked encoding as blocks borrowed in place: `bytes` must start at
/// a 64-byte aligned address ([`DecodeError::Misaligned`] otherwise); `open` checks the
/// rest (header, kind, hasher, lengths, checksum) and returns what it read of the header
/// with the payload.
#[cfg(target_endian = "little")]
fn view_blocks<'a, T>(
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

#[cfg(target_endian = "little")]
impl<'a, H: StableHasher> BloomFilter<&'a [Block], H> {
    /// A read-only filter that borrows its blocks straight from an encoding, with no copy
    /// and no allocation (after checking the whole encoding, checksum included).
    ///
    /// `bytes` must start at a 64-byte aligned address, so that the payload (at offset
    /// 64) is aligned too. Only on little-endian targets, where the stored words are
    /// already in native order; elsewhere, and for unaligned bytes, `decode_into` copies
    /// into a caller's storage without allocating.
    ///
    /// ```
    /// use linebloom::{Block, BloomFilter, Params, block::blocks_as_bytes_mut};
    /// let mut f = BloomFilter::new(Params::new(2, 8).unwrap());
    /// f.insert("a");
    /// // Encode into 64-byte aligned memory, as a memory map would give it.
    /// let mut aligned = vec![Block::ZERO; f.encoded_len().div_ceil(64)];
    /// let bytes = blocks_as_bytes_mut(&mut aligned);
    /// let n = f.encode_into(bytes).unwrap();
    /// let view = BloomFilter::<&[Block]>::view(&bytes[..n]).unwrap();
    /// assert!(view.contains("a"));
    /// ```
    pub fn view(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let (fields, blocks) = view_blocks(bytes, |b| {
            open(b, KIND_BLOOM, H::ID, |f, _| block_array_len(f))
        })?;
        BloomFilter::from_storage_with_hasher(blocks, fields.k, H::from_seed(fields.seed))
            .map_err(DecodeError::InvalidParams)
    }
}

#[cfg(target_endian = "little")]
impl<'a, H: StableHasher> crate::CountingBloomFilter<&'a [Block], H> {
    /// A read-only counting filter borrowed straight from an encoding: no copy, no
    /// allocation (the checks and conditions of [`BloomFilter::view`]). It answers
    /// `contains` and `count_estimate`; removing needs owned or mutable storage
    /// (`decode_into`).
    ///
    /// ```
    /// use linebloom::{Block, CountingBloomFilter, Params, block::blocks_as_bytes_mut};
    /// let mut f = CountingBloomFilter::new(Params::new(2, 5).unwrap());
    /// f.insert("a");
    /// let mut aligned = vec![Block::ZERO; f.encoded_len().div_ceil(64)];
    /// let bytes = blocks_as_bytes_mut(&mut aligned);
    /// let n = f.encode_into(bytes).unwrap();
    /// let view = CountingBloomFilter::<&[Block]>::view(&bytes[..n]).unwrap();
    /// assert!(view.contains("a") && view.count_estimate("a") == 1);
    /// ```
    pub fn view(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let (fields, blocks) = view_blocks(bytes, |b| {
            open(b, KIND_COUNTING, H::ID, |f, _| block_array_len(f))
        })?;
        crate::CountingBloomFilter::from_storage_with_hasher(
            blocks,
            fields.k,
            H::from_seed(fields.seed),
        )
        .map_err(DecodeError::InvalidParams)
    }
}

#[cfg(target_endian = "little")]
impl<'a, H: StableHasher> crate::ClassicBloomFilter<&'a [Block], H> {
    /// A read-only classic filter borrowed straight from an encoding: no copy, no
    /// allocation (the checks and conditions of [`BloomFilter::view`], padding bits
    /// included).
    ///
    /// ```
    /// use linebloom::{Block, ClassicBloomFilter, ClassicParams, block::blocks_as_bytes_mut};
    /// let mut f = ClassicBloomFilter::new(ClassicParams::new(700, 4).unwrap());
    /// f.insert("a");
    /// let mut aligned = vec![Block::ZERO; f.encoded_len().div_ceil(64)];
    /// let bytes = blocks_as_bytes_mut(&mut aligned);
    /// let n = f.encode_into(bytes).unwrap();
    /// let view = ClassicBloomFilter::<&[Block]>::view(&bytes[..n]).unwrap();
    /// assert!(view.contains("a"));
    /// ```
    pub fn view(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let ((fields, params), blocks) = view_blocks(bytes, |b| {
            let (fields, params, payload) = open_classic::<H>(b)?;
            Ok(((fields, params), payload))
        })?;
        crate::ClassicBloomFilter::from_storage_with_hasher(
            blocks,
            params,
            H::from_seed(fields.seed),
        )
        .map_err(DecodeError::InvalidParams)
    }
}

#[cfg(all(feature = "serde", feature = "alloc"))]
mod serde_impls {
    use super::*;

    impl<S: AsRef<[Block]>, H: StableHasher> serde::Serialize for BloomFilter<S, H> {
        /// Serialized as the checksummed binary format, as one byte string.
        fn serialize<Ser: serde::Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
            s.serialize_bytes(&self.to_bytes())
        }
    }

    struct BytesVisitor<H>(core::marker::PhantomData<H>);

    impl<'de, H: StableHasher> serde::de::Visitor<'de> for BytesVisitor<H> {
        type Value = BloomFilter<crate::Blocks, H>;
        fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            f.write_str("a linebloom filter encoding")
        }
        fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
            BloomFilter::decode(v).map_err(E::custom)
        }
        /// Formats without a byte type (JSON) send a sequence of numbers. The vector
        /// grows as elements arrive, so it never holds more than the input gave.
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Self::Value, A::Error> {
            let mut bytes =
                alloc::vec::Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
            while let Some(b) = seq.next_element::<u8>()? {
                bytes.push(b);
            }
            BloomFilter::decode(&bytes).map_err(serde::de::Error::custom)
        }
    }

    impl<'de, H: StableHasher> serde::Deserialize<'de> for BloomFilter<crate::Blocks, H> {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_bytes(BytesVisitor(core::marker::PhantomData))
        }
    }
}

impl<S: AsRef<[Block]>, H: StableHasher> crate::CountingBloomFilter<S, H> {
    /// Length of the encoding (same layout as `BloomFilter`, kind tag 2).
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.params().bytes() + CHECKSUM_LEN
    }

    /// Writes the encoding into `out` with no allocation; returns the bytes written.
    pub fn encode_into(&self, out: &mut [u8]) -> Result<usize, DecodeError> {
        encode_block_array(
            out,
            KIND_COUNTING,
            self.params(),
            self.hasher(),
            self.as_blocks(),
        )
    }

    /// The encoding as a new vector.
    #[cfg(feature = "alloc")]
    pub fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        to_vec(self.encoded_len(), |out| self.encode_into(out))
    }
}

#[cfg(feature = "alloc")]
impl<H: StableHasher> crate::CountingBloomFilter<crate::Blocks, H> {
    /// Decodes untrusted bytes written with hasher `H` (see the module docs);
    /// [`from_bytes`](crate::CountingBloomFilter::from_bytes) for the default hasher.
    ///
    /// ```
    /// use linebloom::{CountingBloomFilter, Params};
    /// let mut f = CountingBloomFilter::new(Params::new(4, 5).unwrap());
    /// f.insert("a");
    /// assert_eq!(CountingBloomFilter::from_bytes(&f.to_bytes()).unwrap(), f);
    /// ```
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (fields, payload) = open(bytes, KIND_COUNTING, H::ID, |f, _| block_array_len(f))?;
        crate::CountingBloomFilter::from_storage_with_hasher(
            read_blocks(payload),
            fields.k,
            H::from_seed(fields.seed),
        )
        .map_err(DecodeError::InvalidParams)
    }
}

impl<S: AsRef<[Block]>, H: StableHasher> crate::ClassicBloomFilter<S, H> {
    /// Length of the encoding: header (bits in the first kind-specific word, kind tag 4),
    /// `64·⌈bits/512⌉` bytes of payload, checksum.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.params().blocks() * Block::BYTES + CHECKSUM_LEN
    }

    /// Writes the encoding into `out` with no allocation; returns the bytes written.
    pub fn encode_into(&self, out: &mut [u8]) -> Result<usize, DecodeError> {
        let p = self.params();
        let fields = Fields {
            kind: KIND_CLASSIC,
            hasher_id: H::ID,
            k: p.k(),
            blocks: p.blocks() as u64,
            seed: self.hasher().seed(),
            extra: [p.bits(), crate::classic::PROBE_SCHEME, 0, 0],
        };
        seal(out, &fields, p.blocks() * Block::BYTES, |payload| {
            write_blocks(payload, self.as_blocks())
        })
    }

    /// The encoding as a new vector.
    #[cfg(feature = "alloc")]
    pub fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        to_vec(self.encoded_len(), |out| self.encode_into(out))
    }
}

#[cfg(feature = "alloc")]
impl<H: StableHasher> crate::ClassicBloomFilter<crate::Blocks, H> {
    /// Decodes untrusted bytes.
    ///
    /// ```
    /// use linebloom::{ClassicBloomFilter, ClassicParams};
    /// let mut f = ClassicBloomFilter::new(ClassicParams::new(700, 4).unwrap());
    /// f.insert("a");
    /// assert_eq!(ClassicBloomFilter::from_bytes(&f.to_bytes()).unwrap(), f);
    /// ```
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (fields, params, payload) = open_classic::<H>(bytes)?;
        crate::ClassicBloomFilter::from_storage_with_hasher(
            read_blocks(payload),
            params,
            H::from_seed(fields.seed),
        )
        .map_err(DecodeError::InvalidParams)
    }
}

impl<S: AsRef<[Block]> + AsMut<[Block]>, H: StableHasher> crate::ClassicBloomFilter<S, H> {
    /// Decodes untrusted bytes of a `ClassicBloomFilter` into the caller's storage, with
    /// no allocation: `storage` must have exactly the encoded block count
    /// ([`ParamsError::StorageLength`] otherwise); any alignment, any endianness.
    pub fn decode_into(bytes: &[u8], storage: S) -> Result<Self, DecodeError> {
        let (fields, params, payload) = open_classic::<H>(bytes)?;
        let storage = fill_storage(payload, storage, fields.blocks)?;
        crate::ClassicBloomFilter::from_storage_with_hasher(
            storage,
            params,
            H::from_seed(fields.seed),
        )
        .map_err(DecodeError::InvalidParams)
    }
}

/// Every check of a classic encoding (see FORMAT.md), before anything is allocated or
/// written: its fields, shape, the payload.
fn open_classic<H: StableHasher>(
    bytes: &[u8],
) -> Result<(Fields, crate::ClassicParams, &[u8]), DecodeError> {
    let (fields, payload) = open(bytes, KIND_CLASSIC, H::ID, |f, _| {
        if f.extra[1] != crate::classic::PROBE_SCHEME {
            return Err(DecodeError::UnsupportedProbeScheme(f.extra[1]));
        }
        if f.extra[2..] != [0; 2] {
            return Err(DecodeError::ReservedNonZero);
        }
        let params =
            crate::ClassicParams::new(f.extra[0], f.k).map_err(DecodeError::InvalidParams)?;
        if params.blocks() as u64 != f.blocks {
            return Err(DecodeError::Inconsistent);
        }
        Ok(f.blocks * Block::BYTES as u64)
    })?;
    let params =
        crate::ClassicParams::new(fields.extra[0], fields.k).map_err(DecodeError::InvalidParams)?;
    // Bits m.. of the array are the last block's padding: bit j is bit j % 8 of
    // payload byte j / 8 (little-endian words). Checked before anything is allocated.
    let m = params.bits();
    let (first, partial) = ((m / 8) as usize, (m % 8) as u32);
    let tail_set = payload[first..].iter().enumerate().any(|(i, &byte)| {
        let padding = if i == 0 { !0u8 << partial } else { !0 };
        byte & padding != 0
    });
    if tail_set {
        return Err(DecodeError::PaddingNonZero);
    }
    Ok((fields, params, payload))
}

/// Scalable filter: bytes of the payload prefix (len, newest layer's len, mode, reserved).
#[cfg(feature = "alloc")]
const SCALABLE_PREFIX: usize = 32;
/// Scalable filter: bytes of each layer record (blocks u64, k u32, reserved u32).
#[cfg(feature = "alloc")]
const LAYER_RECORD: usize = 16;

#[cfg(feature = "alloc")]
impl<H: StableHasher + Clone> crate::ScalableBloomFilter<H> {
    /// Length of the encoding: header (layer count in `k`, total blocks, options in the
    /// kind-specific words, kind tag 3), a 32-byte prefix, one 16-byte record per layer,
    /// every layer's blocks, checksum.
    pub fn encoded_len(&self) -> usize {
        let blocks: usize = self
            .layer_filters()
            .iter()
            .map(|l| l.params().blocks())
            .sum();
        HEADER_LEN
            + SCALABLE_PREFIX
            + LAYER_RECORD * self.layers()
            + blocks * Block::BYTES
            + CHECKSUM_LEN
    }

    /// The encoding as a new vector.
    ///
    /// ```
    /// use linebloom::ScalableBloomFilter;
    /// let mut f = ScalableBloomFilter::new(100, 0.01).unwrap();
    /// for i in 0..1000u32 { f.insert(&i); }
    /// let g = ScalableBloomFilter::from_bytes(&f.to_bytes()).unwrap();
    /// assert_eq!(g, f);
    /// ```
    pub fn to_bytes(&self) -> alloc::vec::Vec<u8> {
        let options = self.options();
        let layers = self.layer_filters();
        let blocks: usize = layers.iter().map(|l| l.params().blocks()).sum();
        let fields = Fields {
            kind: KIND_SCALABLE,
            hasher_id: H::ID,
            k: layers.len() as u32,
            blocks: blocks as u64,
            seed: layers[0].hasher().seed(),
            extra: [
                options.initial_capacity(),
                options.fpr().to_bits(),
                options.growth_factor().to_bits(),
                options.tightening_ratio().to_bits(),
            ],
        };
        let mut out = alloc::vec![0u8; self.encoded_len()];
        let payload_len = out.len() - HEADER_LEN - CHECKSUM_LEN;
        seal(&mut out, &fields, payload_len, |p| {
            p[0..8].copy_from_slice(&self.len().to_le_bytes());
            p[8..16].copy_from_slice(&self.newest_len().to_le_bytes());
            let mode = match options.scaling_mode() {
                crate::Mode::Scaling => 0u64,
                crate::Mode::Fixed => 1,
            };
            p[16..24].copy_from_slice(&mode.to_le_bytes());
            let mut at = SCALABLE_PREFIX;
            for l in layers {
                p[at..at + 8].copy_from_slice(&(l.params().blocks() as u64).to_le_bytes());
                p[at + 8..at + 12].copy_from_slice(&l.params().k().to_le_bytes());
                at += LAYER_RECORD;
            }
            for l in layers {
                let len = l.params().bytes();
                write_blocks(&mut p[at..at + len], l.as_blocks());
                at += len;
            }
        })
        .expect("buffer has encoded_len bytes");
        out
    }

    /// Decodes untrusted bytes. Every layer's shape is checked against the shape the
    /// stored options give for that layer ([`DecodeError::Inconsistent`] otherwise).
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (fields, payload) = open(bytes, KIND_SCALABLE, H::ID, |f, _| {
            let layers = f.k as u64;
            if layers == 0 || layers > crate::MAX_LAYERS as u64 {
                return Err(DecodeError::Inconsistent);
            }
            if f.blocks > crate::MAX_BLOCKS {
                return Err(DecodeError::InvalidParams(ParamsError::TooLarge {
                    bytes: f.blocks.saturating_mul(64),
                }));
            }
            Ok(SCALABLE_PREFIX as u64
                + LAYER_RECORD as u64 * layers
                + f.blocks * Block::BYTES as u64)
        })?;
        let [initial, fpr, growth, tightening] = fields.extra;
        let (fpr, growth, tightening) = (
            f64::from_bits(fpr),
            f64::from_bits(growth),
            f64::from_bits(tightening),
        );
        let mode = match le_u64(payload, 16) {
            0 => crate::Mode::Scaling,
            1 => crate::Mode::Fixed,
            _ => return Err(DecodeError::Inconsistent),
        };
        let options = crate::ScalableOptions::new(initial, fpr)
            .growth(growth)
            .tightening(tightening)
            .mode(mode);
        options.check().map_err(DecodeError::InvalidParams)?;
        if le_u64(payload, 24) != 0 {
            return Err(DecodeError::ReservedNonZero);
        }
        // Check every layer record against the shape the options give, before
        // allocating anything: the records' block counts add up to the header's total,
        // which the input length has already justified.
        let layers = fields.k as usize;
        let mut shapes = alloc::vec::Vec::with_capacity(layers);
        let mut capacities = alloc::vec::Vec::with_capacity(layers);
        let mut total = 0u64;
        for i in 0..layers {
            let rec = SCALABLE_PREFIX + LAYER_RECORD * i;
            let (blocks, k) = (le_u64(payload, rec), le_u32(payload, rec + 8));
            if le_u32(payload, rec + 12) != 0 {
                return Err(DecodeError::ReservedNonZero);
            }
            let (cap, p) = options.layer_shape(i);
            let expected = Params::for_fpr(cap, p).map_err(DecodeError::InvalidParams)?;
            if expected.blocks() as u64 != blocks || expected.k() != k {
                return Err(DecodeError::Inconsistent);
            }
            total += blocks;
            shapes.push(expected);
            capacities.push(cap);
        }
        if total != fields.blocks {
            return Err(DecodeError::Inconsistent);
        }
        // Inserts fill each layer to exactly its capacity before the next one starts, so
        // `len` is the full layers' capacities plus the newest layer's count, which its
        // capacity bounds. Anything else (such as len = 2⁶⁴ − 1, whose next insert would
        // overflow) did not come from this library.
        let (len, newest_len) = (le_u64(payload, 0), le_u64(payload, 8));
        let (newest_cap, full) = capacities.split_last().expect("1..=MAX_LAYERS layers");
        let full_keys = full.iter().try_fold(0u64, |sum, &c| sum.checked_add(c));
        if newest_len > *newest_cap
            || full_keys.and_then(|f| f.checked_add(newest_len)) != Some(len)
        {
            return Err(DecodeError::Inconsistent);
        }
        let hasher = H::from_seed(fields.seed);
        let mut at = SCALABLE_PREFIX + LAYER_RECORD * layers;
        let mut filters = alloc::vec::Vec::with_capacity(layers);
        for params in shapes {
            let len = params.bytes();
            let layer = BloomFilter::from_storage_with_hasher(
                read_blocks(&payload[at..at + len]),
                params.k(),
                hasher.clone(),
            )
            .map_err(DecodeError::InvalidParams)?;
            filters.push(layer);
            at += len;
        }
        let filter =
            crate::ScalableBloomFilter::from_parts(options, hasher, filters, len, newest_len);
        Ok(filter)
    }
}
