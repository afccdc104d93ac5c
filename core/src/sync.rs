//! The atomics of the filters that live in a `static` (`StaticBlocks`,
//! `StaticAtomicBloomFilter`): the standard library's, or with the `portable-atomic`
//! feature portable-atomic's, which also work where the target has no compare-and-swap
//! (Cortex-M0) and are the native instructions everywhere else.

#[cfg(not(feature = "portable-atomic"))]
pub(crate) use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
#[cfg(feature = "portable-atomic")]
pub(crate) use portable_atomic::{AtomicBool, AtomicU32, Ordering};
