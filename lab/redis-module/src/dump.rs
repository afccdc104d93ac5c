//! The bytes a `BF.*` or `CF.*` filter leaves the server as: one *dump*, a 40-byte frame
//! then the filter's body, which `SCANDUMP` hands out and `LOADCHUNK` takes back in
//! pieces, the RDB file and `DUMP`/`RESTORE` hold whole, and an append-only file
//! rewrite replays as `LOADCHUNK`s.
//!
//! ```text
//! frame (40 bytes, little-endian)
//!   0   magic          b"LBRMDUMP"
//!   8   version        u16 = 1
//!   10  kind           u16: 1 = BF.* (bf.rs), 2 = CF.* (cf.rs)
//!   12  piece length   u32: every piece but the last is this long (16 MiB)
//!   16  total length   u64: frame and body
//!   24  body checksum  u64: XXH3-64 of the body
//!   32  frame checksum u64: XXH3-64 of bytes 0..32
//! body (the kind's own encoding, built on the core's checksummed format)
//! ```
//!
//! Piece `j` (from 0) is bytes `j · piece .. min((j + 1) · piece, total)` of the dump,
//! and travels with the position `j + 1`: `SCANDUMP key 0` answers `1` and piece 0,
//! `SCANDUMP key j` answers `j + 1` and piece `j`, and `0` once past the end, so the
//! loop RedisBloom's clients run (`SCANDUMP` from 0 until the position is 0, then each
//! `LOADCHUNK key position data`) moves a filter whatever its size.
//!
//! Loading takes the pieces in order. The first is checked at once: its frame must be
//! whole and its checksum right, which catches a corrupt or foreign first chunk (a
//! RedisBloom chunk among them) before anything is stored. A dump that fits in one
//! piece is then checked and decoded whole. A longer one is kept as a [`Partial`]
//! until its last piece arrives: memory grows only with the bytes received, never with
//! what the frame announces, and the filter answers nothing until it is whole (the
//! commands refuse a partial filter with an error, never an "absent"). The last piece
//! completes it: the body's checksum, then the kind's decoder, which checks every
//! field and block again (the core's format).

use std::fmt;

/// The frame's first 8 bytes.
pub const MAGIC: [u8; 8] = *b"LBRMDUMP";
/// The frame's version: a change to the frame or to a kind's body bumps it.
pub const VERSION: u16 = 1;
/// Bytes of the frame.
pub const FRAME_LEN: usize = 40;
/// The length of every piece but the last: RedisBloom's `SCANDUMP` chunk size.
pub const PIECE_LEN: usize = 16 << 20;
/// The smallest piece length a frame may announce (a first piece holds the frame).
const MIN_PIECE_LEN: u64 = 64;
/// The largest piece length a frame may announce: Redis's `proto-max-bulk-len` default.
const MAX_PIECE_LEN: u64 = 512 << 20;
/// The longest dump accepted: the core's largest filter and some room for the rest.
const MAX_TOTAL: u64 = linebloom::MAX_BYTES + (1 << 30);

/// Which commands' filter a dump holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `BF.*`: the scaling Bloom filter ([`crate::bf`]).
    Bf = 1,
    /// `CF.*`: the vector quotient filters ([`crate::cf`]).
    Cf = 2,
}

/// Why bytes are not a dump, or not the piece that comes next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DumpError {
    /// Fewer bytes than a frame.
    Short {
        /// Bytes given.
        got: usize,
    },
    /// The first 8 bytes are not [`MAGIC`]: not a linebloom dump (a RedisBloom chunk,
    /// say).
    Magic,
    /// A frame version this module does not read.
    Version(u16),
    /// A dump of the other kind (a `CF.*` dump given to `BF.LOADCHUNK`).
    Kind {
        /// The kind the command loads.
        expected: Kind,
        /// The kind number the frame holds.
        got: u16,
    },
    /// The frame's own checksum does not match: the frame is corrupt.
    FrameChecksum,
    /// The frame announces a piece length or total this module refuses.
    Frame(&'static str),
    /// A piece at another position than the next one.
    Position {
        /// The position that comes next.
        expected: u64,
        /// The position given.
        got: i64,
    },
    /// A piece of another length than its position's.
    PieceLength {
        /// The piece's length at that position.
        expected: u64,
        /// Bytes given.
        got: usize,
    },
    /// The body's checksum does not match: a piece was corrupt.
    BodyChecksum,
    /// The body's checksum matched, but the kind's decoder refused it.
    Body(String),
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DumpError::Short { got } => {
                write!(
                    f,
                    "{got} bytes are too few for a dump frame ({FRAME_LEN} bytes)"
                )
            }
            DumpError::Magic => write!(f, "not a linebloom dump: bad magic"),
            DumpError::Version(v) => write!(f, "dump version {v}; this module reads {VERSION}"),
            DumpError::Kind { expected, got } => {
                write!(
                    f,
                    "a dump of kind {got}, where {expected:?} (kind {}) loads",
                    *expected as u16
                )
            }
            DumpError::FrameChecksum => write!(f, "the dump's frame checksum does not match"),
            DumpError::Frame(what) => write!(f, "the dump's frame announces {what}"),
            DumpError::Position { expected, got } => {
                write!(f, "chunk position {got}, where {expected} comes next")
            }
            DumpError::PieceLength { expected, got } => {
                write!(
                    f,
                    "a chunk of {got} bytes, where this position takes {expected}"
                )
            }
            DumpError::BodyChecksum => write!(f, "the dump's body checksum does not match"),
            DumpError::Body(why) => write!(f, "the dump's body is refused: {why}"),
        }
    }
}

impl std::error::Error for DumpError {}

/// The frame's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    kind: Kind,
    piece_len: u64,
    total: u64,
    body_checksum: u64,
}

fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

impl Frame {
    /// Reads and checks the frame at the start of `bytes`, for a dump of `kind`.
    pub fn read(kind: Kind, bytes: &[u8]) -> Result<Frame, DumpError> {
        if bytes.len() < FRAME_LEN {
            return Err(DumpError::Short { got: bytes.len() });
        }
        if bytes[..8] != MAGIC {
            return Err(DumpError::Magic);
        }
        if checksum(&bytes[..32]) != le_u64(bytes, 32) {
            return Err(DumpError::FrameChecksum);
        }
        let version = le_u16(bytes, 8);
        if version != VERSION {
            return Err(DumpError::Version(version));
        }
        let got = le_u16(bytes, 10);
        if got != kind as u16 {
            return Err(DumpError::Kind {
                expected: kind,
                got,
            });
        }
        let piece_len = u64::from(le_u32(bytes, 12));
        if !(MIN_PIECE_LEN..=MAX_PIECE_LEN).contains(&piece_len) {
            return Err(DumpError::Frame("a piece length out of range"));
        }
        let total = le_u64(bytes, 16);
        if !(FRAME_LEN as u64..=MAX_TOTAL).contains(&total) {
            return Err(DumpError::Frame("a total length out of range"));
        }
        Ok(Frame {
            kind,
            piece_len,
            total,
            body_checksum: le_u64(bytes, 24),
        })
    }

    /// Number of pieces.
    pub fn pieces(&self) -> u64 {
        self.total.div_ceil(self.piece_len)
    }

    /// Length of piece `j` (from 0), 0 past the end.
    fn piece_len_at(&self, j: u64) -> u64 {
        let start = j.saturating_mul(self.piece_len);
        self.total.saturating_sub(start).min(self.piece_len)
    }
}

/// The dump of a `kind` filter whose body is `body`.
pub fn seal(kind: Kind, body: &[u8]) -> Vec<u8> {
    let total = (FRAME_LEN + body.len()) as u64;
    let mut out = Vec::with_capacity(FRAME_LEN + body.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(kind as u16).to_le_bytes());
    out.extend_from_slice(&(PIECE_LEN as u32).to_le_bytes());
    out.extend_from_slice(&total.to_le_bytes());
    out.extend_from_slice(&checksum(body).to_le_bytes());
    let frame_sum = checksum(&out);
    out.extend_from_slice(&frame_sum.to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// Piece `j` (from 0) of a sealed dump, with the position `SCANDUMP` answers with it
/// (`j + 1`); `None` past the last piece.
pub fn piece(dump: &[u8], j: u64) -> Option<(i64, &[u8])> {
    let start = usize::try_from(j).ok()?.checked_mul(PIECE_LEN)?;
    if start >= dump.len() {
        return None;
    }
    let end = dump.len().min(start + PIECE_LEN);
    Some((j as i64 + 1, &dump[start..end]))
}

/// Does `first`, a first chunk that is not a linebloom dump, have the shape of
/// RedisBloom's own first `SCANDUMP` chunk of a `kind` filter? RedisBloom 2.8's are a
/// fixed layout: for `BF.*` 20 bytes then 53 per sub-filter, the sub-filter count a
/// `u32` at byte 8; for `CF.*` 38 bytes. The commands then say that RedisBloom's chunks
/// cannot load here, instead of a bare "bad data".
pub fn looks_like_redisbloom(kind: Kind, first: &[u8]) -> bool {
    if first.get(..8) == Some(&MAGIC[..]) {
        return false;
    }
    match kind {
        Kind::Bf => {
            first.len() >= 20 && {
                let layers = le_u32(first, 8) as usize;
                (1..=4096).contains(&layers) && first.len() == 20 + 53 * layers
            }
        }
        Kind::Cf => first.len() == 38,
    }
}

/// The body of a whole dump, checked: frame, length and body checksum.
pub fn open(kind: Kind, dump: &[u8]) -> Result<&[u8], DumpError> {
    let frame = Frame::read(kind, dump)?;
    if dump.len() as u64 != frame.total {
        return Err(DumpError::PieceLength {
            expected: frame.total,
            got: dump.len(),
        });
    }
    let body = &dump[FRAME_LEN..];
    if checksum(body) != frame.body_checksum {
        return Err(DumpError::BodyChecksum);
    }
    Ok(body)
}

/// A dump whose first pieces have arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partial {
    frame: Frame,
    bytes: Vec<u8>,
    /// The last piece arrived and the body's checksum failed.
    spoiled: bool,
}

/// What the pieces so far make.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// The whole dump, checked: its body, for the kind's decoder.
    Whole(Vec<u8>),
    /// More pieces to come.
    Partial(Partial),
}

/// Starts loading a `kind` dump from its first piece (position 1): the frame is checked
/// now.
pub fn start(kind: Kind, first: &[u8]) -> Result<Received, DumpError> {
    let frame = Frame::read(kind, first)?;
    let expected = frame.piece_len_at(0);
    if first.len() as u64 != expected {
        return Err(DumpError::PieceLength {
            expected,
            got: first.len(),
        });
    }
    Partial {
        frame,
        bytes: first.to_vec(),
        spoiled: false,
    }
    .settle()
}

/// Resumes from the bytes a [`Partial`] had when it was saved (an RDB file or an
/// append-only rewrite holds them as they were): whole pieces from the first.
pub fn resume(kind: Kind, bytes: &[u8]) -> Result<Received, DumpError> {
    let frame = Frame::read(kind, bytes)?;
    let len = bytes.len() as u64;
    if len > frame.total || (len < frame.total && !len.is_multiple_of(frame.piece_len)) {
        return Err(DumpError::PieceLength {
            expected: frame.piece_len_at(len / frame.piece_len),
            got: bytes.len(),
        });
    }
    Partial {
        frame,
        bytes: bytes.to_vec(),
        spoiled: false,
    }
    .settle()
}

impl Partial {
    /// The position `LOADCHUNK` must give next.
    pub fn next_position(&self) -> u64 {
        self.bytes.len() as u64 / self.frame.piece_len + 1
    }

    /// Pieces received, and pieces in all.
    pub fn progress(&self) -> (u64, u64) {
        (self.next_position() - 1, self.frame.pieces())
    }

    /// The bytes received: whole pieces from the first.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Adds the piece at `position`: `Ok(None)` while pieces are missing, the checked
    /// body once the last one is in. A piece at the wrong position or of the wrong
    /// length changes nothing; a last piece that leaves the body's checksum wrong
    /// spoils the dump ([`Partial::is_spoiled`]), which the caller then drops.
    pub fn feed(&mut self, position: i64, piece: &[u8]) -> Result<Option<Vec<u8>>, DumpError> {
        let expected = self.next_position();
        if u64::try_from(position).ok() != Some(expected) || self.is_spoiled() {
            return Err(DumpError::Position {
                expected,
                got: position,
            });
        }
        let len = self.frame.piece_len_at(expected - 1);
        if piece.len() as u64 != len {
            return Err(DumpError::PieceLength {
                expected: len,
                got: piece.len(),
            });
        }
        self.bytes.extend_from_slice(piece);
        if (self.bytes.len() as u64) < self.frame.total {
            return Ok(None);
        }
        let body = self.bytes.split_off(FRAME_LEN);
        if checksum(&body) != self.frame.body_checksum {
            self.spoiled = true;
            return Err(DumpError::BodyChecksum);
        }
        Ok(Some(body))
    }

    /// Did the last piece arrive and fail the body's checksum?
    pub fn is_spoiled(&self) -> bool {
        self.spoiled
    }

    /// A whole dump becomes its checked body; anything shorter stays partial.
    fn settle(mut self) -> Result<Received, DumpError> {
        if (self.bytes.len() as u64) < self.frame.total {
            return Ok(Received::Partial(self));
        }
        let body = self.bytes.split_off(FRAME_LEN);
        if checksum(&body) != self.frame.body_checksum {
            return Err(DumpError::BodyChecksum);
        }
        Ok(Received::Whole(body))
    }

    /// Heap bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    /// The kind being loaded.
    pub fn kind(&self) -> Kind {
        self.frame.kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + 3) as u8).collect()
    }

    #[test]
    fn a_small_dump_loads_from_its_one_piece() {
        let dump = seal(Kind::Bf, &body(1000));
        let (position, first) = piece(&dump, 0).unwrap();
        assert_eq!((position, first.len()), (1, dump.len()));
        assert!(piece(&dump, 1).is_none());
        assert_eq!(start(Kind::Bf, first), Ok(Received::Whole(body(1000))));
        assert_eq!(open(Kind::Bf, &dump), Ok(&body(1000)[..]));
    }

    #[test]
    fn a_large_dump_loads_piece_by_piece_in_order_only() {
        let dump = seal(Kind::Cf, &body(2 * PIECE_LEN + 5));
        let pieces: Vec<(i64, &[u8])> = (0..).map_while(|j| piece(&dump, j)).collect();
        assert_eq!(pieces.len(), 3);
        let Ok(Received::Partial(mut partial)) = start(Kind::Cf, pieces[0].1) else {
            panic!("the first of three pieces leaves a partial dump");
        };
        // A piece out of order, or of the wrong length, is refused and changes nothing.
        let before = partial.clone();
        let e = partial.feed(3, pieces[2].1).unwrap_err();
        assert_eq!(
            e,
            DumpError::Position {
                expected: 2,
                got: 3
            }
        );
        assert_eq!(partial, before);
        let e = partial.feed(2, &pieces[1].1[1..]).unwrap_err();
        assert!(matches!(e, DumpError::PieceLength { .. }));
        assert_eq!(partial, before);
        assert_eq!(partial.feed(2, pieces[1].1), Ok(None));
        assert_eq!(partial.progress(), (2, 3));
        assert_eq!(
            partial.feed(3, pieces[2].1),
            Ok(Some(body(2 * PIECE_LEN + 5)))
        );
        // A corrupt last piece spoils the dump.
        let mut bad = before.clone();
        bad.feed(2, pieces[1].1).unwrap();
        let mut last = pieces[2].1.to_vec();
        last[0] ^= 1;
        assert_eq!(bad.feed(3, &last), Err(DumpError::BodyChecksum));
        assert!(bad.is_spoiled());
        assert!(!before.is_spoiled());
    }

    #[test]
    fn a_partial_dump_resumes_from_its_bytes() {
        let dump = seal(Kind::Bf, &body(PIECE_LEN + 10));
        let Ok(Received::Partial(partial)) = start(Kind::Bf, &dump[..PIECE_LEN]) else {
            panic!("partial");
        };
        let Ok(Received::Partial(again)) = resume(Kind::Bf, partial.bytes()) else {
            panic!("resumes as partial");
        };
        assert_eq!(again, partial);
        assert_eq!(again.progress(), (1, 2));
        assert!(resume(Kind::Bf, &dump[..PIECE_LEN - 1]).is_err());
        assert_eq!(
            resume(Kind::Bf, &dump),
            Ok(Received::Whole(body(PIECE_LEN + 10)))
        );
    }

    #[test]
    fn redisblooms_first_chunks_are_told_apart() {
        // The shapes of RedisBloom's first chunks: a BF header of one sub-filter, a CF
        // header.
        let mut bf = vec![0u8; 73];
        bf[8] = 1;
        assert!(looks_like_redisbloom(Kind::Bf, &bf));
        assert!(!looks_like_redisbloom(Kind::Bf, &bf[..72]));
        assert!(looks_like_redisbloom(Kind::Cf, &[7u8; 38]));
        // Never a linebloom dump, whatever its length.
        let ours = seal(Kind::Cf, &[0u8; 0]);
        assert!(!looks_like_redisbloom(Kind::Cf, &ours[..38]));
    }

    #[test]
    fn every_corrupt_byte_of_a_small_dump_is_refused() {
        let dump = seal(Kind::Bf, &body(300));
        for at in 0..dump.len() {
            let mut bad = dump.clone();
            bad[at] ^= 0x40;
            assert!(start(Kind::Bf, &bad).is_err(), "byte {at}");
        }
        assert_eq!(
            start(Kind::Cf, &dump),
            Err(DumpError::Kind {
                expected: Kind::Cf,
                got: 1
            })
        );
        assert_eq!(start(Kind::Bf, b"abcd"), Err(DumpError::Short { got: 4 }));
    }
}
