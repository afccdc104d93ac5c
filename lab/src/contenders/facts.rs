//! What a contender is and can do, as its library documents it: the facts each row of
//! the contender table carries. Experiments pick their contenders by these facts
//! ([`super::names_where`]), and the capability matrix runs each operation and checks
//! the facts against what it saw.

/// How a contender takes keys once it is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inserts {
    /// Any number of keys, its false-positive rate rising past the keys it was sized
    /// for (a Bloom filter).
    Unbounded,
    /// Keys up to a capacity fixed when it is built; then it refuses them (cuckoo and
    /// quotient filters).
    UpToCapacity,
    /// Any number of keys: it adds memory and keeps its rate (scalable filters). A
    /// contender that grows is built for a first estimate of `n / GROWS_FROM` keys
    /// (see [`super::GROWS_FROM`]), so that it grows.
    Grows,
    /// None: it is built once from all of its keys (xor and binary fuse filters).
    BuiltOnce,
}

/// How a contender is sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizedBy {
    /// For a key count at a rate, or at a number of bits per key.
    RateOrBits,
    /// For a key count at a rate only.
    Rate,
    /// From its key count alone: one size and one rate, whatever rate is asked.
    KeyCount,
}

/// Whether a contender runs without the standard library, and on whose word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoStd {
    /// Built or run without std by a CI step: which one, and how.
    CiChecked(&'static str),
    /// Its crate declares it; the lab does not build it so.
    Declared(&'static str),
    /// It needs std.
    Absent,
}

/// The facts of one contender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    /// It deletes keys.
    pub deletes: bool,
    /// How it takes keys after it is built.
    pub inserts: Inserts,
    /// It inserts through a shared reference, from several threads at once.
    pub concurrent: bool,
    /// Whether it runs without std.
    pub no_std: NoStd,
    /// How it is sized.
    pub sized_by: SizedBy,
    /// The contender it is the concurrent twin of (the same layout, memory and rate):
    /// measured where threads are, and left out where its twin already stands for it.
    pub twin_of: Option<&'static str>,
}

impl Facts {
    /// A Bloom filter of another crate: inserts any number of keys, deletes none, one
    /// thread, sized by rate or bits, needs std. Rows change what differs from it.
    pub const BLOOM: Facts = Facts {
        deletes: false,
        inserts: Inserts::Unbounded,
        concurrent: false,
        no_std: NoStd::Absent,
        sized_by: SizedBy::RateOrBits,
        twin_of: None,
    };

    /// Grows, whether or not it deletes.
    pub fn grows(&self) -> bool {
        self.inserts == Inserts::Grows
    }

    /// Not another contender's concurrent twin: the experiments without threads measure
    /// only these.
    pub fn stands_alone(&self) -> bool {
        self.twin_of.is_none()
    }

    /// Refuses keys at some point after it is built: full, or built once.
    pub fn refuses_inserts(&self) -> bool {
        matches!(self.inserts, Inserts::UpToCapacity | Inserts::BuiltOnce)
    }
}
