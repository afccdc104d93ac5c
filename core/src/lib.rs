//! # linebloom
//!
//! Bloom filters that keep each key inside one 64-byte cache line: one cache miss per
//! insert or query, whatever `k` is. `#![no_std]` always; owned filters need the `alloc`
//! feature, filters over borrowed blocks (a `static` array) need nothing.
//!
//! ```
//! use linebloom::{BloomFilter, Params};
//!
//! // Sized with the blocked pattern's exact formula: ≤ 1% false positives at 1e5 keys.
//! let params = Params::for_fpr(100_000, 0.01)?;
//! let mut filter = BloomFilter::new(params);
//! for id in 0..100_000u64 {
//!     filter.insert(&id);
//! }
//! assert!(filter.contains(&123u64)); // no false negatives, ever
//!
//! // A stable, checksummed format: same bytes + key → same answer on every platform.
//! let bytes = filter.to_bytes();
//! let copy = BloomFilter::from_bytes(&bytes)?;
//! assert_eq!(copy, filter);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Filters
//!
//! * [`BloomFilter`]: the blocked filter, SIMD kernels, batch operations;
//! * [`CountingBloomFilter`]: 4-bit counters, `remove`, `to_bloom`;
//! * [`VectorQuotientFilter`]: 8- or 16-bit fingerprints in 64-byte blocks, `remove`,
//!   an exact `len`, a quarter of the counting filter's memory; its `insert` can
//!   refuse when full ([`FilterFull`]);
//! * `ScalableBloomFilter` (`alloc`): grows in layers, compounded rate ≤ target;
//! * `AtomicBloomFilter` (`alloc`, 64-bit atomics): concurrent inserts through `&self`;
//! * [`ClassicBloomFilter`]: the unblocked textbook baseline;
//! * `StaticAtomicBloomFilter` (32-bit atomics, no `alloc`): concurrent inserts into a
//!   filter in a `static`, for microcontrollers.
//!
//! Every kind implements [`Filter`] (lookups and the monitoring numbers) and
//! [`InsertFilter`] (whose error type says whether an insert can be refused); the
//! counting and vector quotient filters also [`RemoveFilter`]: code can be generic over
//! the kind. [`InsertFilter`] says what the answers mean for the filters that count
//! copies of a key.
//!
//! Each type's default storage is [`Blocks`]: owned blocks with `alloc`, or a
//! `&'static mut [Block]` (a `static` array) with or without it. It is one type in every
//! build, so enabling `alloc` anywhere never changes what `BloomFilter` means.
//! Every type also reports the same monitoring numbers: `fill_ratio`, `estimated_len`
//! and `estimated_fpr` (the rate as the filter is now), to compare with the target it
//! was sized for; [`Params::capacity_at`] gives the capacity to compare `estimated_len`
//! with.
//!
//! ## Guide
//!
//! ### Which filter for which job
//!
//! | job | filter | example (`cargo run --release -p linebloom --example NAME`) |
//! |---|---|---|
//! | dedup of crawled URLs, a known crawl size | [`BloomFilter`] | `url_dedup` |
//! | a blacklist in front of an exact store | [`BloomFilter`] + re-check on "maybe" | `blacklist` |
//! | keys that are also deleted (sessions) | [`VectorQuotientFilter`] | `quotient_delete` |
//! | deletes, and inserts that must never fail | [`CountingBloomFilter`] (4× the memory of a Bloom filter) | `counting_delete` |
//! | an unknown final count | `ScalableBloomFilter` | `scalable_growth` |
//! | many threads inserting into one filter | `AtomicBloomFilter` | `threads` |
//! | an interrupt handler and a main loop sharing one filter, no allocator | `StaticAtomicBloomFilter` | `core/firmware` |
//! | lookups in bulk (a filter larger than the cache) | `contains_batch` | `batch_lookups` |
//! | ship a filter to another process or machine | `to_bytes` / `from_bytes` | `save_reload` |
//! | watch a service's filter and rebuild it in time | `fill_ratio`, `estimated_len`, `estimated_fpr` | `monitoring` |
//! | a microcontroller, no allocator | any block filter over [`StaticBlocks`] (no `unsafe`) or a `&mut [Block]` | `static_array` |
//! | the textbook baseline for comparisons | [`ClassicBloomFilter`] | — |
//!
//! ### Sizing and what the promise means
//!
//! The promise, for a filter sized by [`Params::for_fpr`]`(n, p)` ([`BloomFilter`],
//! `AtomicBloomFilter` and the static filters share these params),
//! [`CountingParams::for_fpr`] ([`CountingBloomFilter`]) or [`ClassicParams::for_fpr`]
//! ([`ClassicBloomFilter`]), and holding at most `n` distinct keys:
//!
//! * **What holds for each filter:** its false-positive rate is at most `p` for at least
//!   99% of hash seeds (equivalently, key sets), at every `n` from 1 up.
//! * **What holds on average:** over hash seeds, its rate averages at most `0.95·p`.
//!
//! How: sizing picks the smallest filter whose *exact* average rate ([`fpr::blocked`],
//! the binomial mixture over block loads) is at most `0.95·p`
//! ([`params::SIZING_MARGIN`]), then grows it, where blocks are few, until a high
//! quantile of one filter's rate over key sets is at most `p`: the 3-sigma point ([`fpr::PER_FILTER_Z`]) of a log-normal with
//! the average and the spread ([`fpr::blocked_spread`]) as its moments
//! ([`fpr::per_filter_quantile`], [`Params::per_filter_fpr`]). The spread shrinks as
//! `1/√blocks`, so a large filter gets no extra memory (at 1%, from about 3·10⁴ keys
//! up), and a small one gets what its uneven block loads need (at 1e-4 and 1000 keys:
//! 26.6 bits per key instead of 23.0; at 1% and 1000 keys: 10.75 instead of 10.24).
//! `tests/per_filter.rs` checks 40 cells of `(n, p)` over 200 seeds each, for each of
//! the three types, reading each filter's rate from its bits, and the lab's
//! `sizing_per_filter` experiment measures the share per cell for every filter that
//! sizes from `p`.
//!
//! The counting filter gets the same headroom from its own spread
//! ([`fpr::counting_spread`]), and the classic filter from the spread of its fill, or,
//! up to 512 bits, from the exact distribution of its set bits
//! ([`fpr::classic_per_filter`]). The scalable filter's layers are sized by
//! [`Params::for_fpr`] at their own tightened rates; what it promises is its compounded
//! bound (`ScalableBloomFilter::fpr_bound`).
//!
//! `estimated_fpr` tells you the rate of *your* filter as it is now. Rates at or below
//! the 64-bit hash's floor (`n / 2⁶⁴`) are refused ([`ParamsError::FprBelowHashFloor`]).
//!
//! ### How keys are encoded
//!
//! Integers are keys **by value**, whatever their type: `insert(&5i32)` then
//! `contains(&5u64)` is `true`, and `-1i8` is the same key as `-1i64`. Strings and byte
//! slices are keys by their bytes, so `"5"` is another key than `5`. Any `Hash` type can
//! be a key through [`Hashed`] (not portable across platforms). [`Key`] lists every
//! encoding; [`hasher`] specifies them.
//!
//! ### `insert`'s return value, coming from other crates
//!
//! `insert` returns `true` when the key was new (some bit was clear), as
//! `HashSet::insert` does. fastbloom's `insert` returns the opposite (`true` when the
//! key was possibly present), and so does bloomfilter's `check_and_set`: port
//! `if !fastbloom.insert(&k)` as `if linebloom.insert(&k)`. bloomfilter's `set` returns
//! nothing; `insert` is its replacement, ignoring the result.
//!
//! ### What is stable
//!
//! * The binary format ([`format`], `FORMAT.md`): the same bytes and key give the same
//!   answer on every platform (x86_64, aarch64, 32-bit armv7 and big-endian s390x are
//!   tested in CI against bytes committed from x86_64). A format change bumps
//!   [`format::VERSION`], and older bytes are refused by name, never misread.
//! * The stable hashers ([`IntFold`], [`Xxh3`]) and the bit pattern ([`pattern`]) are pinned
//!   by golden vectors. [`StableHasher`] is sealed: no other hasher can claim their
//!   format ids, so bytes written with another hash can never decode as theirs. A
//!   custom hasher implements [`KeyHasher`] and its filters stay in memory.
//! * Which kernel probes a filter changes nothing in its bits or answers.
//! * Not stable: `AHash` (per-process keys), and `Hashed` keys (std's `Hash` output may
//!   differ between platforms and Rust versions).
//!
//! ## Modules
//!
//! How the crate is built (the family's shared code, the pattern, dispatch, sizing, the
//! format, and what is `unsafe` and why) is in `core/DESIGN.md`.
//!
//! * [`pattern`]: the key → (block, bit pattern) mapping, specified;
//! * [`fpr`]: theoretical false-positive rates (classic and blocked);
//! * [`Params`], [`CountingParams`], [`ClassicParams`], [`QuotientParams`]: each kind's
//!   shape, sized from a target rate, bits per key (tag width), or raw;
//! * [`quotient`]: the vector quotient filter, its promises, its scheme and its
//!   capacity tables;
//! * [`classic`]: the classic filter and its probe scheme;
//! * [`hasher`]: portable keys ([`Key`]) and hashers ([`IntFold`], the default; [`Xxh3`]; the optional `AHash`);
//! * [`format`]: the binary format and its errors;
//! * [`arch`]: the probing kernels and run-time selection.
//!
//! ## Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `std` | yes | implies `alloc`; run-time CPU detection through std; on Linux, filters of 2 MiB or more on transparent huge pages (`Blocks::zeroed`) |
//! | `alloc` | via `std` | owned filters, `to_bytes`/`from_bytes` |
//! | `serde` | no | implies `alloc`; `Serialize`/`Deserialize` for every kind with a format, through its bytes |
//! | `ahash` | no | the `AHash` in-memory hasher (never serializable) |
//! | `portable-atomic` | no | `StaticBlocks` and `StaticAtomicBloomFilter` on targets without compare-and-swap (Cortex-M0), through portable-atomic |
//! | `critical-section` | no | `portable-atomic` with its `critical-section` backend |

#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// The README's examples, compiled as doc tests (`build.rs` finds the README in the
/// packaged crate or the workspace).
#[cfg(doctest)]
#[doc = include_str!(env!("LINEBLOOM_README"))]
struct ReadmeDoctests;

pub mod arch;
#[cfg(all(feature = "alloc", target_has_atomic = "64"))]
mod atomic;
pub mod block;
mod bloom;
pub mod classic;
mod counting;
mod filter;
pub mod fpr;
pub mod hasher;
#[cfg(linebloom_huge_pages)]
mod huge_pages;
pub mod params;
pub mod pattern;
pub mod quotient;
#[cfg(feature = "alloc")]
pub mod scalable;
#[cfg(any(target_has_atomic = "32", feature = "portable-atomic"))]
mod static_atomic;
mod storage;
#[cfg(any(
    target_has_atomic = "8",
    target_has_atomic = "32",
    feature = "portable-atomic"
))]
mod sync;

// After the kinds: rustdoc lists a type's methods in the order their modules are
// declared, and each kind's page starts with its constructors, not its codec.
pub mod format;

#[doc(inline)]
pub use arch::active_kernel;
#[cfg(all(feature = "alloc", target_has_atomic = "64"))]
pub use atomic::{AtomicBlock, AtomicBloomFilter};
#[doc(inline)]
pub use block::Block;
pub use bloom::BloomFilter;
pub use classic::{ClassicBloomFilter, ClassicParams};
pub use counting::{CountingBloomFilter, CountingParams};
pub use filter::{Filter, FilterFull, IncompatibleError, InsertFilter, RemoveError, RemoveFilter};
#[doc(inline)]
pub use format::{DecodeError, EncodeError};
#[cfg(feature = "ahash")]
#[doc(inline)]
pub use hasher::AHash;
#[doc(inline)]
pub use hasher::{Hashed, IntFold, Key, KeyHasher, StableHasher, Xxh3};
#[doc(inline)]
pub use params::{MAX_BYTES, Params, ParamsError};
#[doc(inline)]
pub use quotient::{QuotientParams, Stored, VectorQuotientFilter};
#[cfg(feature = "alloc")]
#[doc(inline)]
pub use scalable::{ScalableBloomFilter, ScalableError, ScalableOptions};
#[cfg(any(target_has_atomic = "32", feature = "portable-atomic"))]
pub use static_atomic::StaticAtomicBloomFilter;
pub use storage::Blocks;
#[cfg(any(target_has_atomic = "8", feature = "portable-atomic"))]
pub use storage::StaticBlocks;
