//! The blocked-probe algorithm, written once over a [`Lanes`] vector of `u64` words and
//! instantiated by every SIMD backend (AVX2: 4 lanes × 2 registers, AVX-512: 8 × 1,
//! NEON: 2 × 4), plus the batch pipeline that every kernel shares.
//!
//! Mask generation follows [`crate::pattern::pattern`] word for word, with no branch on key
//! data and no per-word loop in general-purpose registers:
//!
//! ```text
//! x      = splat(h)                                   // the low 32 bits are used
//! pos_w  = (x ·₃₂ SALT_w) >> 26                       // Lanes::positions
//! mask_w = 1 << pos_w                                 // vpsllvq
//! k < 8:  mask_w &= EN[k][r][w]                       // rotation window, one table load
//! k > 8:  mask_w |= (1 << pos2_w) & EN2[k][w]         // round 2
//! contains = ((mask & !block) == 0)                   // one OR-reduction, one test
//! insert   = block |= mask; return (mask & !block_before) != 0
//! ```
//!
//! `·₃₂` is the product of the low 32 bits of `x` and of the salt, modulo 2³²; its top
//! six bits are the position. Each backend computes `pos_w` its shortest way
//! ([`Lanes::positions`]): AVX2 and NEON multiply the 32-bit lanes (`vpmulld`, `mul`)
//! and shift them (the salt rows' zero high halves leave each word's high half zero, so
//! no mask is needed); AVX-512 keeps `vpmuludq`, a 64-bit shift and `& 63`, which lets
//! LLVM see that every shift count is below 64 (it emits a bare `vpsllvq`, no range
//! fix-up). `k = 8` (the shape sizing picks near 1%) skips both the enable table and
//! round 2.
//!
//! Every function here is `#[inline(always)]` with no `target_feature` of its own, so it
//! inlines into the `#[target_feature]` entry points of each backend (the pattern memchr
//! documents in `vector.rs`).

// Targets without a SIMD backend use only the batch pipeline and the merge at the bottom.
#![cfg_attr(
    not(any(target_arch = "x86_64", target_arch = "aarch64")),
    allow(dead_code)
)]

use super::BlockOps;
use crate::block::Block;
use crate::pattern::{MAX_K, SALTS, block_index, rotation};

/// A vector of `LANES` `u64` words and the handful of operations the probe needs.
///
/// # Safety
///
/// Implementations call ISA intrinsics: every method may only run on a CPU with the
/// backend's features, and `load`/`store` need pointers valid for `LANES` words and
/// aligned to the vector size (all callers pass offsets into a 64-byte aligned `Block`
/// or table).
pub(crate) unsafe trait Lanes: Copy {
    /// Words per vector.
    const LANES: usize;
    /// All lanes `x`.
    unsafe fn splat(x: u64) -> Self;
    /// Aligned load of `LANES` words.
    unsafe fn load(p: *const u64) -> Self;
    /// Aligned store of `LANES` words.
    unsafe fn store(self, p: *mut u64);
    /// Per lane: the position `(self ·₃₂ salts) >> 26` (in `0..64`), the product of
    /// the two low 32-bit halves modulo 2³². `salts` is a row of [`SALT_ROWS`], whose
    /// high halves are zero, so a backend may multiply all 32-bit lanes at once.
    unsafe fn positions(self, salts: Self) -> Self;
    /// Per lane: `1 << pos` (each `pos` < 64).
    unsafe fn one_shl(pos: Self) -> Self;
    /// Bitwise and.
    unsafe fn and(self, other: Self) -> Self;
    /// Bitwise or.
    unsafe fn or(self, other: Self) -> Self;
    /// `self & !other`.
    unsafe fn and_not(self, other: Self) -> Self;
    /// Are all bits zero?
    unsafe fn is_zero(self) -> bool;
}

/// [`SALTS`] widened to `u64` lanes, one aligned row per round, so a vector of salts
/// is one aligned load.
pub(crate) const SALT_ROWS: [Block; 2] = {
    let mut t = [Block::ZERO; 2];
    let mut i = 0;
    while i < 16 {
        t[i / 8].0[i % 8] = SALTS[i] as u64;
        i += 1;
    }
    t
};

/// Round-1 enable table for `k < 8`, indexed `[k][r]`: lane `w` is all ones when
/// `(w − r) mod 8 < k` (the bit is set), else 0.
pub(crate) static EN1: [[Block; 8]; 8] = {
    let mut t = [[Block::ZERO; 8]; 8];
    let mut k = 0;
    while k < 8 {
        let mut r = 0;
        while r < 8 {
            let mut w = 0;
            while w < 8 {
                t[k][r].0[w] = if (w + 8 - r) % 8 < k { u64::MAX } else { 0 };
                w += 1;
            }
            r += 1;
        }
        k += 1;
    }
    t
};

/// Round-2 enable table, indexed `[k]`: lane `w` is all ones when `w + 8 < k`, else 0.
pub(crate) static EN2: [Block; MAX_K as usize + 1] = {
    let mut t = [Block::ZERO; MAX_K as usize + 1];
    let mut k = 0;
    while k <= MAX_K as usize {
        let mut w = 0;
        while w < 8 {
            t[k].0[w] = if w + 8 < k { u64::MAX } else { 0 };
            w += 1;
        }
        k += 1;
    }
    t
};

/// One round: `1 << ((x ·₃₂ salt_w) >> 26)` for the `N` vectors of a block.
#[inline(always)]
unsafe fn round<V: Lanes, const N: usize>(x: V, salts: &Block) -> [V; N] {
    // SAFETY: the caller runs on a CPU with V's features (the contract of `Lanes`), and
    // every load reads LANES words at offset i·LANES < 8 of a 64-byte aligned Block, so
    // it is in bounds and aligned to the vector size.
    unsafe {
        // A plain loop, not `core::array::from_fn`: a closure passed to a library
        // function need not inline into this `#[target_feature]` context, and outside it
        // every intrinsic becomes a call (measured: AVX2 went from ~3 to ~70 ns a probe).
        let mut m = [V::splat(0); N];
        for (i, slot) in m.iter_mut().enumerate() {
            let salt = V::load(salts.0.as_ptr().add(i * V::LANES));
            *slot = V::one_shl(x.positions(salt));
        }
        m
    }
}

/// `m &= enable`, vector by vector.
#[inline(always)]
unsafe fn mask_with<V: Lanes, const N: usize>(m: &mut [V; N], enable: &Block) {
    // SAFETY: as in `round`: aligned in-bounds loads of a Block, V's features present.
    unsafe {
        for (i, v) in m.iter_mut().enumerate() {
            *v = v.and(V::load(enable.0.as_ptr().add(i * V::LANES)));
        }
    }
}

/// The key's in-block mask as `N` vectors (`N · LANES = 8`), identical to
/// [`crate::pattern::pattern`].
///
/// # Safety
///
/// Only on a CPU with `V`'s features; `k ≤ MAX_K`.
#[inline(always)]
pub(crate) unsafe fn pattern<V: Lanes, const N: usize>(h: u64, k: u32) -> [V; N] {
    debug_assert_eq!(N * V::LANES, 8);
    // SAFETY: the caller guarantees V's CPU features and k ≤ MAX_K (this function's
    // contract), so every table index is in bounds (k < 8 and r < 8 for EN1).
    unsafe {
        let x = V::splat(h);
        let mut m = round::<V, N>(x, &SALT_ROWS[0]);
        if k < 8 {
            let r = rotation(h) as usize;
            mask_with(&mut m, EN1.get_unchecked(k as usize).get_unchecked(r));
        } else if k > 8 {
            let mut m2 = round::<V, N>(x, &SALT_ROWS[1]);
            if k < MAX_K {
                mask_with(&mut m2, EN2.get_unchecked(k as usize));
            }
            for (a, b) in m.iter_mut().zip(m2) {
                *a = a.or(b);
            }
        }
        m
    }
}

/// Is every bit of `h`'s pattern set in `block`?
///
/// # Safety
///
/// Only on a CPU with `V`'s features; `k ≤ MAX_K`.
#[inline(always)]
pub(crate) unsafe fn contains<V: Lanes, const N: usize>(block: &Block, h: u64, k: u32) -> bool {
    // SAFETY: the caller guarantees V's features; loads read LANES words at offset
    // i·LANES < 8 of the 64-byte aligned block.
    unsafe {
        let m = pattern::<V, N>(h, k);
        let p = block.0.as_ptr();
        let mut missing = V::splat(0);
        for (i, mi) in m.iter().enumerate() {
            missing = missing.or(mi.and_not(V::load(p.add(i * V::LANES))));
        }
        missing.is_zero()
    }
}

/// Sets `h`'s pattern in `block`; true if any of its bits was clear.
///
/// # Safety
///
/// Only on a CPU with `V`'s features; `k ≤ MAX_K`.
#[inline(always)]
pub(crate) unsafe fn insert<V: Lanes, const N: usize>(block: &mut Block, h: u64, k: u32) -> bool {
    // SAFETY: as in `contains`; stores write the same in-bounds, aligned words.
    unsafe {
        let m = pattern::<V, N>(h, k);
        let p = block.0.as_mut_ptr();
        let mut fresh = V::splat(0);
        for (i, mi) in m.iter().enumerate() {
            let b = V::load(p.add(i * V::LANES));
            fresh = fresh.or(mi.and_not(b));
            b.or(*mi).store(p.add(i * V::LANES));
        }
        !fresh.is_zero()
    }
}

/// The [`BlockOps`] of a `Lanes` backend with `N` vectors per block.
pub(crate) struct Simd<V, const N: usize>(core::marker::PhantomData<V>);

impl<V: Lanes, const N: usize> BlockOps for Simd<V, N> {
    #[inline(always)]
    unsafe fn contains(block: &Block, h: u64, k: u32) -> bool {
        // SAFETY: forwarded contract (V's features, k ≤ MAX_K).
        unsafe { contains::<V, N>(block, h, k) }
    }
    #[inline(always)]
    unsafe fn insert(block: &mut Block, h: u64, k: u32) -> bool {
        // SAFETY: forwarded contract (V's features, k ≤ MAX_K).
        unsafe { insert::<V, N>(block, h, k) }
    }
}

/// The batch pipeline, written once for lookups and inserts: calls `each(i, h, block)`
/// for every key in order, where `h` is `keys[i]`'s hash and `block` points at its
/// block. By then the key [`PREFETCH_DISTANCE`](super::PREFETCH_DISTANCE) places ahead
/// has been hashed and its block prefetched, so the memory system always has that many
/// lines in flight, and the hashing, which needs no memory, overlaps their wait.
///
/// The hashes wait in a ring of `PREFETCH_DISTANCE` words on the stack: no buffer of the
/// batch's length, and no pause at the end of a chunk (hashing a chunk of keys into a
/// buffer before probing them would idle the memory system while it hashed, and leave
/// the first keys of every chunk unprefetched). A ring of hashes and block pointers,
/// which saves the second block index, measured no different beside the machine's
/// noise at 1e6 and 1e7 keys.
///
/// Filters of at most [`SMALL_BATCH_BLOCKS`](super::SMALL_BATCH_BLOCKS) blocks do not
/// come here: their batches run the single-key loop.
///
/// # Safety
///
/// `base` is valid for `n ≥ 1` blocks; `each` is given pointers into them.
#[inline(always)]
unsafe fn pipelined<K, F: Fn(&K) -> u64>(
    base: *const Block,
    n: usize,
    keys: &[K],
    hash: F,
    prefetch: impl Fn(*const Block),
    mut each: impl FnMut(usize, u64, *const Block),
) {
    const D: usize = super::PREFETCH_DISTANCE;
    const { assert!(D.is_power_of_two()) };
    let block = |h: u64| {
        // SAFETY: block_index(h, n) < n, and `base` is valid for n blocks (this
        // function's contract), so the pointer stays inside them.
        unsafe { base.add(block_index(h, n)) }
    };
    let mut ring = [0u64; D];
    for (slot, key) in ring.iter_mut().zip(keys) {
        *slot = hash(key);
        prefetch(block(*slot));
    }
    for i in 0..keys.len() {
        // `i % D` is a mask (D is a power of two), so this index is never out of bounds.
        let slot = &mut ring[i % D];
        let h = *slot;
        if let Some(ahead) = keys.get(i + D) {
            *slot = hash(ahead);
            prefetch(block(*slot));
        }
        each(i, h, block(h));
    }
}

/// `out[i]` = is `keys[i]` (hashed by `hash`) in `blocks`?, through [`pipelined`].
///
/// # Safety
///
/// Only on a CPU with `O`'s features; `blocks` non-empty; `k ≤ MAX_K`;
/// `out.len() == keys.len()`.
#[inline(always)]
pub(crate) unsafe fn contains_keys<O: BlockOps, K, F: Fn(&K) -> u64>(
    blocks: &[Block],
    keys: &[K],
    hash: F,
    k: u32,
    out: &mut [bool],
) {
    // k = 8, the shape sizing picks near 1%, gets its own loop with a constant k, so
    // its probe has no test of k (with k from the filter, LLVM compiled the three cases
    // of `pattern` into every probe). Two instances of the helper, not one called twice:
    // its closure is then called once in each and inlines into this `#[target_feature]`
    // context; one closure called from two loops was left out of line, where every
    // intrinsic is a call (measured: 130 ns a key).
    // SAFETY: forwarded contract.
    unsafe {
        if k == 8 {
            contains_loop::<O, K, F, true>(blocks, keys, hash, k, out)
        } else {
            contains_loop::<O, K, F, false>(blocks, keys, hash, k, out)
        }
    }
}

/// [`contains_keys`], for `k = 8` as a constant when `K8`.
///
/// # Safety
///
/// As for [`contains_keys`]; `k == 8` when `K8`.
#[inline(always)]
unsafe fn contains_loop<O: BlockOps, K, F: Fn(&K) -> u64, const K8: bool>(
    blocks: &[Block],
    keys: &[K],
    hash: F,
    k: u32,
    out: &mut [bool],
) {
    let k = if K8 { 8 } else { k };
    // As long as `keys` (the caller's contract), and now LLVM knows it: `out[i]` below
    // needs no bounds check.
    let out = &mut out[..keys.len()];
    if blocks.len() <= super::SMALL_BATCH_BLOCKS {
        // The probe is called here, not through a closure shared with the pipeline: a
        // closure called from two loops was left out of line (see `contains_keys`).
        for (o, key) in out.iter_mut().zip(keys) {
            let h = hash(key);
            // SAFETY: block_index(h, len) < len for len ≥ 1 (the caller's contract);
            // O's features and k ≤ MAX_K are the caller's contract.
            *o = unsafe { O::contains(blocks.get_unchecked(block_index(h, blocks.len())), h, k) };
        }
        return;
    }
    // SAFETY: `blocks` is valid for its length (≥ 1, the caller's contract), and each
    // `block` pointer is into it, read only; O's features and k ≤ MAX_K are the caller's
    // contract.
    unsafe {
        pipelined(
            blocks.as_ptr(),
            blocks.len(),
            keys,
            hash,
            crate::arch::prefetch_read,
            |i, h, block| out[i] = O::contains(&*block, h, k),
        )
    }
}

/// Inserts every key of `keys` (hashed by `hash`) into `blocks`, through [`pipelined`].
///
/// # Safety
///
/// Only on a CPU with `O`'s features; `blocks` non-empty; `k ≤ MAX_K`.
#[inline(always)]
pub(crate) unsafe fn insert_keys<O: BlockOps, K, F: Fn(&K) -> u64>(
    blocks: &mut [Block],
    keys: &[K],
    hash: F,
    k: u32,
) {
    // SAFETY: forwarded contract; k = 8 as in `contains_keys`.
    unsafe {
        if k == 8 {
            insert_loop::<O, K, F, true>(blocks, keys, hash, k)
        } else {
            insert_loop::<O, K, F, false>(blocks, keys, hash, k)
        }
    }
}

/// [`insert_keys`], for `k = 8` as a constant when `K8`.
///
/// # Safety
///
/// As for [`insert_keys`]; `k == 8` when `K8`.
#[inline(always)]
unsafe fn insert_loop<O: BlockOps, K, F: Fn(&K) -> u64, const K8: bool>(
    blocks: &mut [Block],
    keys: &[K],
    hash: F,
    k: u32,
) {
    let k = if K8 { 8 } else { k };
    if blocks.len() <= super::SMALL_BATCH_BLOCKS {
        // As in `contains_loop`: the probe called here, no prefetch.
        for key in keys {
            let h = hash(key);
            let i = block_index(h, blocks.len());
            // SAFETY: i < len for len ≥ 1 (the caller's contract); O's features and
            // k ≤ MAX_K are the caller's contract.
            unsafe { O::insert(blocks.get_unchecked_mut(i), h, k) };
        }
        return;
    }
    // Every access goes through this one pointer, taken from the exclusive borrow, so
    // the writes are through a pointer allowed to write and nothing else aliases them.
    let n = blocks.len();
    let base = blocks.as_mut_ptr();
    // SAFETY: `base` is valid for `n` (≥ 1) blocks and exclusively ours for
    // this call; each `block` pointer is derived from it and is the only live access to
    // its block while `O::insert` runs; O's features and k ≤ MAX_K are the caller's
    // contract.
    unsafe {
        pipelined(
            base,
            n,
            keys,
            hash,
            crate::arch::prefetch_write,
            |_, h, block| {
                O::insert(&mut *block.cast_mut(), h, k);
            },
        )
    }
}

/// `ours[i] |= theirs[i]` (`&=` when `and`) over equal-length slices.
///
/// Plain loops: inlined into a backend's `#[target_feature]` entry point, LLVM
/// vectorises them with its full vector width.
#[inline(always)]
pub(crate) fn merge(ours: &mut [Block], theirs: &[Block], and: bool) {
    for (a, b) in ours.iter_mut().zip(theirs) {
        for (x, y) in a.0.iter_mut().zip(b.0) {
            *x = if and { *x & y } else { *x | y };
        }
    }
}
