//! The vector quotient filter: a filter that deletes, in the bits per key that
//! [`QuotientParams::for_fpr`](crate::QuotientParams::for_fpr) states for each rate,
//! about a quarter of what a counting Bloom filter needs (Pandey, Conway, Durie, Bender, Farach-Colton and
//! Johnson, "Vector Quotient Filters: Overcoming the Time/Space Trade-Off in Filter
//! Design", SIGMOD 2021).
//!
//! Each 64-byte block is a small quotient filter: up to 48 one-byte tags (or 28
//! two-byte tags) kept in bucket order, and a metadata bit string that says where each
//! of its 80 (or 36) buckets ends. A key hashes to two blocks, a bucket and a tag, and
//! goes into its first block until that holds 36 of its 48 tags (18 of 28), then into
//! the emptier of the two (in filters under 64 blocks, always into the emptier), so the
//! blocks fill evenly, to the loads of [`MAX_LOAD`], before
//! an insert may fail. A lookup finds the bucket's run with two selects on the metadata
//! and compares the tag with the whole block in one vector compare, in the first block
//! and, unless that found it, the second.
//!
//! ```
//! use linebloom::{FilterFull, RemoveError, VectorQuotientFilter};
//!
//! // Sized for 100 000 sessions at ≤ 1% false positives: 8-bit tags.
//! let mut sessions = VectorQuotientFilter::for_fpr(100_000, 0.01)?;
//! sessions.insert("s-1")?;
//! assert!(sessions.contains("s-1"));
//! sessions.remove("s-1")?;
//! assert!(!sessions.contains("s-1"));
//! assert_eq!(sessions.remove("s-1"), Err(RemoveError::NotPresent));
//! assert!(sessions.params().bits_per_key(100_000) < 12.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What it promises
//!
//! * **No false negatives** for a key inserted and not removed as often, whichever
//!   kernel runs, on every platform.
//! * **Counts**: a key inserted twice is held twice; each `remove` undoes one insert and
//!   never makes a key that is still held answer `false`.
//! * **A full filter refuses, and changes nothing** ([`FilterFull`](crate::FilterFull)): no key is dropped
//!   or evicted. Up to its [`capacity`](crate::QuotientParams::capacity) the chance of
//!   that is at most [`FULL_CHANCE`] (1e-9): exactly for 2 to 10
//!   blocks, proved for 12 to 62, measured for 64 to 8192, and estimated with a margin
//!   above (`QuotientParams` says how far each is known).
//! * **The rate**: at most [`fpr_bound`](crate::QuotientParams::fpr_bound) for every
//!   filter, and [`QuotientParams::for_fpr`](crate::QuotientParams::for_fpr) keeps that
//!   at or below 95% of the target up to the capacity asked for.
//!
//! # What it does not
//!
//! **Removing a key that was never inserted can remove another key.** A non-member that
//! matches a stored fingerprint (a false positive, 0.45% of them at full load with 8-bit
//! tags) deletes that fingerprint, and the member that put it there then answers
//! `false`. This holds for every quotient and cuckoo filter. The rule that avoids it:
//! remove only what you inserted, for example after checking the exact store that the
//! key was there.
//!
//! # Files
//!
//! | file | holds |
//! |---|---|
//! | `quotient/filter.rs` | [`VectorQuotientFilter`]: constructors, inserts, removes, lookups |
//! | `quotient/monitoring.rs` | its length, load factor, rates and block loads |
//! | `quotient/params.rs` | [`QuotientParams`]: its sizing, capacity tables and rate bounds |
//! | `quotient/well_formed.rs` | the checks of storage and of a decoded payload |
//!
//! Where a key goes and how a block holds tags ([`location`], [`SCHEME`]) sit with the
//! per-key algorithm and the kernels in [`crate::arch::quotient`] (`scheme.rs`), and
//! the format kind 5 is written and read by `format/blocks.rs`, as the Bloom filter's
//! blocks are.

mod filter;
mod monitoring;
mod params;
mod well_formed;

#[cfg(linebloom_placement_sweep)]
#[doc(hidden)]
pub use crate::arch::quotient::scheme::placement_sweep;
pub use crate::arch::quotient::scheme::{
    Location, SCHEME, SCHEME_ID, SCHEME_ID_EMPTIER_BLOCK, location,
};
pub use filter::{Stored, VectorQuotientFilter};
pub use params::{FULL_CHANCE, MAX_LOAD, QuotientParams, SMALL_CAPACITY, TAG_BITS};
pub(crate) use well_formed::check_payload;
