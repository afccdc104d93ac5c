//! The blocked-probe algorithm, written once over a [`Lanes`] vector of `u64` words and
//! instantiated by every SIMD backend (AVX2: 4 lanes × 2 registers, AVX-512: 8 × 1,
//! NEON: 2 × 4), plus the batch pipeline that every kernel shares.
//!
//! Mask generation follows [`crate::hash::pattern`] word for word, with no branch on key
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
use crate::hash::{MAX_K, SALTS, block_index, rotation};
use crate::hasher::IntFold;

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
/// [`crate::hash::pattern`].
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

/// A vector of `u64` lanes that can run [`IntFold::fold`] on every lane at once (the
/// vertical hash of the batch operations): the 32×32→64-bit multiply of the low halves
/// that every x86 vector ISA has (`vpmuludq`), 64-bit shifts, adds and xors.
///
/// # Safety
///
/// As for [`Lanes`]; `loadu` and `storeu` need pointers valid for `LANES` words, with no
/// alignment.
pub(crate) unsafe trait Wide: Lanes {
    /// Unaligned load of `LANES` words.
    unsafe fn loadu(p: *const u64) -> Self;
    /// Unaligned store of `LANES` words.
    unsafe fn storeu(self, p: *mut u64);
    /// Per lane: `(self mod 2³²) · (other mod 2³²)`, the full 64-bit product.
    unsafe fn mul_lo32(self, other: Self) -> Self;
    /// Per lane: `self >> 32`.
    unsafe fn shr32(self) -> Self;
    /// Per lane: `self << 32`.
    unsafe fn shl32(self) -> Self;
    /// Per lane: `self.rotate_left(32)` (the two halves swapped).
    unsafe fn swap_halves(self) -> Self;
    /// Per lane: `self + other` modulo 2⁶⁴.
    unsafe fn add(self, other: Self) -> Self;
    /// Bitwise xor.
    unsafe fn xor(self, other: Self) -> Self;
}

/// [`IntFold::fold`]`(x, seed)` in every lane, from 32-bit products: with `a = a₁·2³² +
/// a₀` and `b = b₁·2³² + b₀`,
///
/// ```text
/// t    = (a₀b₀ >> 32) + (a₀b₁ mod 2³²) + (a₁b₀ mod 2³²)       // < 3·2³², no carry lost
/// low  = a₀b₀ + (a₀b₁ + a₁b₀)·2³²            mod 2⁶⁴
/// high = a₁b₁ + (a₀b₁ >> 32) + (a₁b₀ >> 32) + (t >> 32)
/// f    = high ^ low
/// fold = f₀K3₀ + (f₁K3₀ + f₀K3₁)·2³²           mod 2⁶⁴
/// ```
///
/// # Safety
///
/// Only on a CPU with `V`'s features.
#[inline(always)]
unsafe fn fold<V: Wide>(x: V, seed: u64) -> V {
    // SAFETY: the caller runs on a CPU with V's features (this function's contract).
    unsafe {
        let lo32 = V::splat(u32::MAX as u64);
        let a = x.swap_halves().xor(V::splat(IntFold::K1 ^ seed));
        let b = x.xor(V::splat(IntFold::K2));
        let (a1, b1) = (a.shr32(), b.shr32());
        let ll = a.mul_lo32(b);
        let lh = a.mul_lo32(b1);
        let hl = a1.mul_lo32(b);
        let hh = a1.mul_lo32(b1);
        let t = ll.shr32().add(lh.and(lo32)).add(hl.and(lo32));
        let low = ll.add(lh.add(hl).shl32());
        let high = hh.add(lh.shr32()).add(hl.shr32()).add(t.shr32());
        let f = high.xor(low);
        let k3 = V::splat(IntFold::K3);
        let cross = f
            .shr32()
            .mul_lo32(k3)
            .add(f.mul_lo32(V::splat(IntFold::K3 >> 32)));
        f.mul_lo32(k3).add(cross.shl32())
    }
}

/// [`block_index`]`(h, n)` in every lane, for `n < 2³²`: `⌊h·n / 2⁶⁴⌋ = (h₁n +
/// (h₀n >> 32)) >> 32`, exactly (the sum is below 2⁶⁴).
///
/// # Safety
///
/// Only on a CPU with `V`'s features; `n < 2³²`.
#[inline(always)]
unsafe fn block_index_lanes<V: Wide>(h: V, n: u64) -> V {
    debug_assert!(n <= u32::MAX as u64);
    // SAFETY: V's features (this function's contract).
    unsafe {
        let n = V::splat(n);
        h.shr32().mul_lo32(n).add(h.mul_lo32(n).shr32()).shr32()
    }
}

/// How a batch hashes its keys: one at a time, or `G` at a time where a kernel hashes a
/// vector of keys at once. Every method is `#[inline(always)]`, so it inlines into the
/// kernel's `#[target_feature]` loop at each of its call sites (a closure called from
/// two places was left out of line, where every intrinsic is a call: 130 ns a key).
pub(crate) trait BatchHash<K, const G: usize> {
    /// One key's hash.
    fn one(&self, key: &K) -> u64;
    /// `G` keys' hashes and their block indices in a filter of `n` blocks.
    ///
    /// # Safety
    ///
    /// Only on a CPU with the features of the kernel whose loop calls it; `n` within
    /// the implementation's range (see [`Vertical`]).
    unsafe fn group(&self, keys: &[K; G], n: usize) -> ([u64; G], [u64; G]);
}

/// Hashes one key at a time with the caller's function.
pub(crate) struct OneByOne<F>(pub F);

impl<K, F: Fn(&K) -> u64> BatchHash<K, 1> for OneByOne<F> {
    #[inline(always)]
    fn one(&self, key: &K) -> u64 {
        (self.0)(key)
    }
    #[inline(always)]
    unsafe fn group(&self, [key]: &[K; 1], n: usize) -> ([u64; 1], [u64; 1]) {
        let h = (self.0)(key);
        ([h], [block_index(h, n) as u64])
    }
}

/// [`IntFold`] with `seed` over `u64` keys, `V::LANES` keys per vector: the hashes by
/// [`fold`], the block indices by [`block_index_lanes`]. Only for filters of fewer
/// than 2³² blocks (256 GiB).
pub(crate) struct Vertical<V> {
    seed: u64,
    lanes: core::marker::PhantomData<V>,
}

impl<V> Vertical<V> {
    /// The vertical form of `IntFold::with_seed(seed)`.
    #[inline(always)]
    pub(crate) fn new(seed: u64) -> Self {
        Vertical {
            seed,
            lanes: core::marker::PhantomData,
        }
    }
}

impl<V: Wide, const G: usize> BatchHash<u64, G> for Vertical<V> {
    #[inline(always)]
    fn one(&self, &key: &u64) -> u64 {
        IntFold::fold(key, self.seed)
    }
    #[inline(always)]
    unsafe fn group(&self, keys: &[u64; G], n: usize) -> ([u64; G], [u64; G]) {
        const { assert!(G == V::LANES) };
        let (mut hashes, mut indices) = ([0u64; G], [0u64; G]);
        // SAFETY: V's features and n < 2³² are this method's contract; each pointer is
        // valid for G = LANES words (the arrays), and loadu/storeu need no alignment.
        unsafe {
            let h = fold(V::loadu(keys.as_ptr()), self.seed);
            h.storeu(hashes.as_mut_ptr());
            block_index_lanes(h, n as u64).storeu(indices.as_mut_ptr());
        }
        (hashes, indices)
    }
}

/// What a batch does with each key, given its hash and its block (a trait, not a
/// closure, for the reason given at [`BatchHash`]).
trait PerKey {
    /// Prefetches a block the loop will reach.
    fn prefetch(block: *const Block);
    /// Key `i`, of hash `h`, whose block is `base + index`.
    ///
    /// # Safety
    ///
    /// `index` is below the length of the blocks the implementation holds; only on a
    /// CPU with the kernel's features.
    unsafe fn each(&mut self, i: usize, h: u64, index: u64);
    /// The first block, for prefetches.
    fn base(&self) -> *const Block;
}

/// Lookups: `out[i]` = is key `i` in `blocks`?; `k = 8` as a constant when `K8`.
struct Lookup<'a, O, const K8: bool> {
    blocks: &'a [Block],
    out: &'a mut [bool],
    k: u32,
    ops: core::marker::PhantomData<O>,
}

impl<O: BlockOps, const K8: bool> PerKey for Lookup<'_, O, K8> {
    #[inline(always)]
    fn prefetch(block: *const Block) {
        super::prefetch_read(block)
    }
    #[inline(always)]
    unsafe fn each(&mut self, i: usize, h: u64, index: u64) {
        let k = if K8 { 8 } else { self.k };
        // SAFETY: index < blocks.len() and the CPU's features are this method's
        // contract; k ≤ MAX_K is `contains_keys`'s; `out[i]` is checked.
        self.out[i] = unsafe { O::contains(self.blocks.get_unchecked(index as usize), h, k) };
    }
    #[inline(always)]
    fn base(&self) -> *const Block {
        self.blocks.as_ptr()
    }
}

/// Inserts; `k = 8` as a constant when `K8`.
struct Insert<'a, O, const K8: bool> {
    blocks: &'a mut [Block],
    k: u32,
    ops: core::marker::PhantomData<O>,
}

impl<O: BlockOps, const K8: bool> PerKey for Insert<'_, O, K8> {
    #[inline(always)]
    fn prefetch(block: *const Block) {
        super::prefetch_write(block)
    }
    #[inline(always)]
    unsafe fn each(&mut self, _: usize, h: u64, index: u64) {
        let k = if K8 { 8 } else { self.k };
        // SAFETY: as in `Lookup::each`.
        unsafe { O::insert(self.blocks.get_unchecked_mut(index as usize), h, k) };
    }
    #[inline(always)]
    fn base(&self) -> *const Block {
        self.blocks.as_ptr()
    }
}

/// Hashes `keys` (at most `G`, with `G` at once when there are `G`) into `slots` (as
/// many), each a hash and its block index, and prefetches each block.
///
/// # Safety
///
/// Only on a CPU with the kernel's features; `n ≥ 1` and within `hashes`' range;
/// `slots.len() == keys.len() ≤ G`.
#[inline(always)]
unsafe fn hash_ahead<K, B: BatchHash<K, G>, P: PerKey, const G: usize>(
    hashes: &B,
    n: usize,
    base: *const Block,
    keys: &[K],
    slots: &mut [(u64, u64)],
) {
    if let Ok(group) = <&[K; G]>::try_from(keys) {
        // SAFETY: forwarded contract.
        let (h, i) = unsafe { hashes.group(group, n) };
        for (j, slot) in slots.iter_mut().enumerate() {
            *slot = (h[j], i[j]);
        }
    } else {
        for (slot, key) in slots.iter_mut().zip(keys) {
            let h = hashes.one(key);
            *slot = (h, block_index(h, n) as u64);
        }
    }
    for &(_, i) in slots.iter() {
        // Only an address: `wrapping_add` keeps it defined even though i < n anyway.
        P::prefetch(base.wrapping_add(i as usize));
    }
}

/// The batch loop, written once for lookups and inserts: calls `per.each(i, h, index)`
/// for every key in order, `h` its hash and `index` its block.
///
/// A filter of at most [`SMALL_BATCH_BLOCKS`](super::SMALL_BATCH_BLOCKS) blocks runs the
/// single-key loop: hash `G` keys, probe them. A larger one runs a pipeline: by the time
/// a key is probed, the key [`PREFETCH_DISTANCE`](super::PREFETCH_DISTANCE) places
/// ahead has been hashed and its block prefetched, so the memory system always has
/// that many lines in flight, and the hashing, which needs no memory, overlaps their
/// wait. The hashes and block indices wait in a ring of `PREFETCH_DISTANCE` pairs on the
/// stack: no buffer of the batch's length, and no pause at the end of a chunk (an
/// earlier design hashed 256 keys into a buffer, then probed them: the memory system
/// idled while it hashed, and the first keys of every chunk went unprefetched).
///
/// # Safety
///
/// Only on a CPU with the kernel's features; `n` is the length of `per`'s blocks, at
/// least 1 and within `hashes`' range.
#[inline(always)]
unsafe fn run<K, B: BatchHash<K, G>, P: PerKey, const G: usize>(
    n: usize,
    keys: &[K],
    hashes: &B,
    per: &mut P,
) {
    const D: usize = super::PREFETCH_DISTANCE;
    const { assert!(D.is_power_of_two() && D % G == 0) };
    let base = per.base();
    if n <= super::SMALL_BATCH_BLOCKS {
        let (groups, rest) = keys.as_chunks::<G>();
        for (g, group) in groups.iter().enumerate() {
            // SAFETY: forwarded contract; each index is below n (multiply-shift).
            unsafe {
                let (h, i) = hashes.group(group, n);
                for j in 0..G {
                    per.each(g * G + j, h[j], i[j]);
                }
            }
        }
        for (j, key) in rest.iter().enumerate() {
            let h = hashes.one(key);
            // SAFETY: as above.
            unsafe { per.each(groups.len() * G + j, h, block_index(h, n) as u64) };
        }
        return;
    }
    let mut ring = [(0u64, 0u64); D];
    let head = keys.len().min(D);
    for (slots, group) in ring[..head].chunks_mut(G).zip(keys[..head].chunks(G)) {
        // SAFETY: forwarded contract; `chunks` gives equal lengths ≤ G.
        unsafe { hash_ahead::<K, B, P, G>(hashes, n, base, group, slots) };
    }
    let mut i = 0;
    while i < keys.len() {
        // i is a multiple of G, and so is D: the group's G slots are inside the ring.
        let start = i % D;
        let slots = &mut ring[start..start + G];
        let mut current = [(0u64, 0u64); G];
        current.copy_from_slice(slots);
        if let Some(ahead) = keys.get(i + D..) {
            let ahead = &ahead[..ahead.len().min(G)];
            // SAFETY: forwarded contract; as many slots as keys, at most G.
            unsafe { hash_ahead::<K, B, P, G>(hashes, n, base, ahead, &mut slots[..ahead.len()]) };
        }
        for (j, &(h, index)) in current.iter().enumerate().take(keys.len() - i) {
            // SAFETY: forwarded contract; every index came from a block index below n.
            unsafe { per.each(i + j, h, index) };
        }
        i += G;
    }
}

/// `out[i]` = is `keys[i]` (hashed by `hashes`) in `blocks`?, through [`run`].
///
/// # Safety
///
/// Only on a CPU with `O`'s features; `blocks` non-empty and within `hashes`' range;
/// `k ≤ MAX_K`; `out.len() == keys.len()`.
#[inline(always)]
pub(crate) unsafe fn contains_keys<O: BlockOps, K, B: BatchHash<K, G>, const G: usize>(
    blocks: &[Block],
    keys: &[K],
    hashes: &B,
    k: u32,
    out: &mut [bool],
) {
    // As long as `keys` (the caller's contract), and now LLVM knows it: `out[i]` needs
    // no bounds check.
    let out = &mut out[..keys.len()];
    let n = blocks.len();
    // k = 8, the shape sizing picks near 1%, gets its own loop with a constant k, so its
    // probe has no test of k (with k from the filter, LLVM compiled the three cases of
    // `pattern` into every probe).
    // SAFETY: forwarded contract; n is the blocks' length.
    unsafe {
        if k == 8 {
            let mut per = Lookup::<O, true> {
                blocks,
                out,
                k,
                ops: core::marker::PhantomData,
            };
            run(n, keys, hashes, &mut per)
        } else {
            let mut per = Lookup::<O, false> {
                blocks,
                out,
                k,
                ops: core::marker::PhantomData,
            };
            run(n, keys, hashes, &mut per)
        }
    }
}

/// Inserts every key of `keys` (hashed by `hashes`) into `blocks`, through [`run`].
///
/// # Safety
///
/// Only on a CPU with `O`'s features; `blocks` non-empty and within `hashes`' range;
/// `k ≤ MAX_K`.
#[inline(always)]
pub(crate) unsafe fn insert_keys<O: BlockOps, K, B: BatchHash<K, G>, const G: usize>(
    blocks: &mut [Block],
    keys: &[K],
    hashes: &B,
    k: u32,
) {
    let n = blocks.len();
    // SAFETY: forwarded contract; k = 8 as in `contains_keys`.
    unsafe {
        if k == 8 {
            let mut per = Insert::<O, true> {
                blocks,
                k,
                ops: core::marker::PhantomData,
            };
            run(n, keys, hashes, &mut per)
        } else {
            let mut per = Insert::<O, false> {
                blocks,
                k,
                ops: core::marker::PhantomData,
            };
            run(n, keys, hashes, &mut per)
        }
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
