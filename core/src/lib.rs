//! # linebloom
//!
//! Bloom filters that keep each key inside one 64-byte cache line: one cache miss per
//! insert or query, whatever `k` is. `#![no_std]` always; owned filters need the `alloc`
//! feature, filters over borrowed blocks (a `static` array) need nothing.
//!
//! ```
//! use linebloom::{BloomFilter, Params};
//!
//! // Sized with the blocked scheme's exact formula: ≤ 1% false positives at 1e5 keys.
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
//! * `ScalableBloomFilter` (`alloc`): grows in layers, compounded rate ≤ target;
//! * `AtomicBloomFilter` (`alloc`, 64-bit atomics): concurrent inserts through `&self`;
//! * [`ClassicBloomFilter`]: the unblocked textbook baseline.
//!
//! Each type's default storage is [`Blocks`]: owned blocks with `alloc`, or a
//! `&'static mut [Block]` (a `static` array) with or without it. It is one type in every
//! build, so enabling `alloc` anywhere never changes what `BloomFilter` means.
//! Every type also reports the same monitoring numbers: `fill_ratio`, `estimated_len`
//! and `estimated_fpr` (the rate as the filter is now), to compare with the target it
//! was sized for.
//!
//! ## Modules
//!
//! * [`hash`]: the key → (block, bit pattern) scheme, specified;
//! * [`fpr`]: theoretical false-positive rates (classic and blocked);
//! * [`Params`]: sizing from a target rate, bits per key, or raw shape;
//! * [`hasher`]: portable keys ([`Key`]) and hashers ([`IntFold`], the default; [`Xxh3`]; the optional `AHash`);
//! * [`format`]: the binary format and its errors;
//! * [`arch`]: the probing kernels and run-time selection.
//!
//! ## Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `std` | yes | implies `alloc`; run-time CPU detection through std |
//! | `alloc` | via `std` | owned filters, `to_bytes`/`from_bytes` |
//! | `serde` | no | `Serialize`/`Deserialize` through the binary format |
//! | `ahash` | no | the `AHash` in-memory hasher (never serializable) |

#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

/// The workspace README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

pub mod arch;
#[cfg(all(feature = "alloc", target_has_atomic = "64"))]
mod atomic;
pub mod block;
mod bloom;
mod classic;
mod counting;
pub mod format;
pub mod fpr;
pub mod hash;
pub mod hasher;
mod params;
#[cfg(feature = "alloc")]
mod scalable;
mod storage;

pub use arch::active_kernel;
#[cfg(all(feature = "alloc", target_has_atomic = "64"))]
pub use atomic::{AtomicBlock, AtomicBloomFilter};
pub use block::Block;
pub use bloom::{BloomFilter, IncompatibleError};
pub use classic::{ClassicBloomFilter, ClassicParams, MAX_CLASSIC_K};
pub use counting::{CountingBloomFilter, RemoveError};
pub use format::DecodeError;
#[cfg(feature = "ahash")]
pub use hasher::AHash;
pub use hasher::{Hashed, IntFold, Key, KeyHasher, StableHasher, Xxh3};
pub use params::{
    FAST_K, FAST_SHAPE_ALLOWANCE, MAX_BLOCKS, MAX_BYTES, Params, ParamsError, SIZING_MARGIN,
};
#[cfg(feature = "alloc")]
pub use scalable::{MAX_LAYERS, Mode, ScalableBloomFilter, ScalableError, ScalableOptions};
pub use storage::Blocks;
