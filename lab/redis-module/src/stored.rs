//! What a key of `BF.*` or `CF.*` holds, [`Stored`], and the bytes it persists as: a
//! whole filter, or the pieces of a dump that `LOADCHUNK` has received so far. Both
//! save as one string of bytes, the dump ([`crate::dump`]) or its received prefix, and
//! load through the dump's checks (frame and body checksums, then every field and block
//! of the filter).
//!
//! Nothing here calls Redis: the data types that keep these values in keys are in
//! `datatype.rs`, and the fuzz target (`fuzz/`) builds this without the server's API.

use crate::bf::BfFilter;
use crate::cf::CfFilter;
use crate::dump::{self, Kind, Partial, Received};
use std::ffi::CStr;

/// What a key of either type holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Stored<F> {
    /// A whole filter.
    Live(F),
    /// A dump that `LOADCHUNK` is still receiving: it answers no query.
    Loading(Partial),
}

/// A filter that lives in a key: its dump kind and body.
pub trait Body: Sized + Clone + 'static {
    /// Which dumps it reads.
    const KIND: Kind;
    /// The type's name for Redis (9 characters).
    const TYPE_NAME: &'static CStr;
    /// Its dump's body.
    fn to_body(&self) -> Vec<u8>;
    /// The filter a checked body holds.
    fn from_body(body: &[u8]) -> Result<Self, String>;
    /// Bytes it takes in memory.
    fn memory_bytes(&self) -> usize;
}

impl Body for BfFilter {
    const KIND: Kind = Kind::Bf;
    const TYPE_NAME: &'static CStr = c"linebl-bf";
    fn to_body(&self) -> Vec<u8> {
        BfFilter::to_body(self)
    }
    fn from_body(body: &[u8]) -> Result<Self, String> {
        BfFilter::from_body(body)
    }
    fn memory_bytes(&self) -> usize {
        BfFilter::memory_bytes(self)
    }
}

impl Body for CfFilter {
    const KIND: Kind = Kind::Cf;
    const TYPE_NAME: &'static CStr = c"linebl-cf";
    fn to_body(&self) -> Vec<u8> {
        CfFilter::to_body(self)
    }
    fn from_body(body: &[u8]) -> Result<Self, String> {
        CfFilter::from_body(body)
    }
    fn memory_bytes(&self) -> usize {
        CfFilter::memory_bytes(self)
    }
}

impl<F: Body> Stored<F> {
    /// The value a key's saved bytes hold: a whole dump decoded, or the prefix of one.
    pub fn from_saved(bytes: &[u8]) -> Result<Stored<F>, String> {
        match dump::resume(F::KIND, bytes).map_err(|e| e.to_string())? {
            Received::Whole(body) => F::from_body(&body).map(Stored::Live),
            Received::Partial(partial) => Ok(Stored::Loading(partial)),
        }
    }

    /// The bytes a key saves: the whole dump, or the pieces received.
    pub fn to_saved(&self) -> std::borrow::Cow<'_, [u8]> {
        match self {
            Stored::Live(f) => dump::seal(F::KIND, &f.to_body()).into(),
            Stored::Loading(partial) => partial.bytes().into(),
        }
    }

    /// Bytes it takes in memory (`MEMORY USAGE`).
    pub fn memory_bytes(&self) -> usize {
        match self {
            Stored::Live(f) => stored_bytes(f),
            Stored::Loading(partial) => std::mem::size_of::<Self>() + partial.memory_bytes(),
        }
    }
}

/// Bytes a key holding the filter `f` takes in memory: what `MEMORY USAGE` and the
/// `Size` field of `BF.INFO` and `CF.INFO` report.
pub fn stored_bytes<F: Body>(f: &F) -> usize {
    std::mem::size_of::<Stored<F>>() + f.memory_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bf::BfOptions;
    use crate::cf::CfOptions;

    #[test]
    fn live_and_partial_values_round_trip_through_their_saved_bytes() {
        let mut bf = BfFilter::new(BfOptions::default()).unwrap();
        for i in 0..500u32 {
            bf.add(&i.to_le_bytes()).unwrap();
        }
        let stored = Stored::Live(bf);
        assert_eq!(
            Stored::<BfFilter>::from_saved(&stored.to_saved()),
            Ok(stored)
        );

        let mut cf = CfFilter::new(CfOptions {
            capacity: 12_000_000,
            ..CfOptions::default()
        })
        .unwrap();
        cf.add(b"x").unwrap();
        let dump = dump::seal(Kind::Cf, &cf.to_body());
        assert!(dump.len() > dump::PIECE_LEN, "a dump of two pieces");
        let Ok(Received::Partial(p)) = dump::start(Kind::Cf, &dump[..dump::PIECE_LEN]) else {
            panic!("partial");
        };
        let stored = Stored::<CfFilter>::Loading(p);
        assert_eq!(
            Stored::<CfFilter>::from_saved(&stored.to_saved()),
            Ok(stored)
        );
        // A BF dump is not a CF value.
        assert!(Stored::<CfFilter>::from_saved(&dump::seal(Kind::Bf, b"")).is_err());
    }
}
