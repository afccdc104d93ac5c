//! [`VectorQuotientFilter`]: the filter type over owned or borrowed blocks and its
//! operations (its monitoring numbers are in `monitoring.rs`). The scheme is in
//! [`crate::arch::quotient::scheme`], the sizing in [`QuotientParams`], the kernels in
//! [`crate::arch::quotient`].

use super::QuotientParams;
use super::well_formed::checked_len;
use crate::arch::quotient::{Insertion, QuotientKernel, QuotientProbe};
use crate::block::Block;
use crate::filter::{FilterFull, RemoveError};
use crate::hasher::{IntFold, Key, KeyHasher};
use crate::params::ParamsError;

/// Keys [`VectorQuotientFilter::contains_batch`] hashes at a time, onto the stack, before
/// the kernel looks them up. The kernel's prefetch ring starts again with every chunk;
/// hashing a whole batch of 2^20 keys first and looking it up in one ring measured no
/// faster beyond the noise (4 and 64 MiB filters at their capacity, 9 interleaved rounds
/// with a control copy: 10.7 / 11.5 ns a hit / miss against 10.7 / 11.3 chunked at
/// 4 MiB, 14.0 / 13.7 against 14.5 / 14.5 at 64 MiB, the control 14.1 / 14.5).
const HASH_CHUNK: usize = 256;

/// What [`VectorQuotientFilter::insert`] did. An insert always stores one more copy of
/// the key's fingerprint (the filter holds a multiset, and each copy takes its own
/// `remove`); this says whether a matching one was held before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stored {
    /// No matching fingerprint was held: the key was certainly absent before.
    New,
    /// A matching fingerprint was held already: the key inserted before and not yet
    /// removed, or another key's (a false positive). The filter now holds one more.
    Again,
}

/// A vector quotient filter: each 64-byte block a small quotient filter of 8- or 16-bit
/// tags, each key in one of two blocks (see the [module docs](crate::quotient)).
///
/// Deletes, unlike a Bloom filter, at a quarter of a counting filter's memory. A key
/// inserted twice is held twice; each [`remove`](Self::remove) undoes one insert.
/// **Remove only keys you inserted**: removing a key that was never inserted may delete
/// another key's matching fingerprint, and that key then answers `false`, as in every
/// quotient or cuckoo filter.
///
/// ```
/// use linebloom::VectorQuotientFilter;
/// // Sessions that come and go: at most 1% false positives up to 10,000 live keys.
/// let mut sessions = VectorQuotientFilter::for_fpr(10_000, 0.01)?;
/// sessions.insert("session-17")?; // Err(FilterFull) past its capacity
/// assert!(sessions.contains("session-17"));
/// sessions.remove("session-17")?;
/// assert!(!sessions.contains("session-17"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct VectorQuotientFilter<S = crate::Blocks, H = IntFold> {
    pub(super) blocks: S,
    pub(super) params: QuotientParams,
    hasher: H,
    pub(super) len: u64,
    kernel: &'static QuotientKernel,
    probe: QuotientProbe,
}

#[cfg(feature = "alloc")]
impl VectorQuotientFilter {
    /// An empty filter for `capacity` keys at false-positive rate `fpr`
    /// ([`QuotientParams::for_fpr`]), with the default stable hasher.
    ///
    /// # Errors
    ///
    /// As for [`QuotientParams::for_fpr`].
    ///
    /// ```
    /// use linebloom::{Stored, VectorQuotientFilter};
    /// let mut f = VectorQuotientFilter::for_fpr(10_000, 0.01)?;
    /// assert_eq!(f.insert("session-1"), Ok(Stored::New));
    /// assert!(f.contains("session-1"));
    /// f.remove("session-1")?;
    /// assert!(!f.contains("session-1"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        Ok(VectorQuotientFilter::new(QuotientParams::for_fpr(
            capacity, fpr,
        )?))
    }

    /// An empty filter of this shape with the default stable hasher.
    ///
    /// ```
    /// use linebloom::{QuotientParams, VectorQuotientFilter};
    /// let f = VectorQuotientFilter::new(QuotientParams::for_capacity(1000, 16)?);
    /// assert_eq!((f.len(), f.params().tag_bits()), (0, 16));
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn new(params: QuotientParams) -> Self {
        VectorQuotientFilter::with_hasher(params, IntFold::default())
    }
}

#[cfg(feature = "alloc")]
impl<H: KeyHasher> VectorQuotientFilter<crate::Blocks, H> {
    /// An empty filter with the given hasher.
    ///
    /// ```
    /// use linebloom::{QuotientParams, VectorQuotientFilter, Xxh3};
    /// let f = VectorQuotientFilter::with_hasher(QuotientParams::new(4, 8)?, Xxh3::with_seed(3));
    /// assert_eq!(f.params().blocks(), 4);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn with_hasher(params: QuotientParams, hasher: H) -> Self {
        VectorQuotientFilter::assemble(crate::Blocks::zeroed(params.blocks()), params, hasher, 0)
    }
}

impl<S: AsRef<[Block]>> VectorQuotientFilter<S, IntFold> {
    /// A filter over existing blocks (zeroed for an empty filter) with `tag_bits`-bit
    /// tags and the default hasher. Every block is checked: this is how firmware keeps
    /// a filter in a `static` without an allocator.
    ///
    /// # Errors
    ///
    /// As for [`QuotientParams::new`] with the storage's block count, and
    /// [`ParamsError::MalformedBlock`] for a block this filter could not have written.
    ///
    /// ```
    /// use linebloom::{Block, VectorQuotientFilter};
    /// let mut storage = [Block::ZERO; 8];
    /// let mut f = VectorQuotientFilter::from_storage(&mut storage[..], 8)?;
    /// f.insert(&7u32)?;
    /// assert!(f.contains(&7u32));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_storage(blocks: S, tag_bits: u32) -> Result<Self, ParamsError> {
        VectorQuotientFilter::from_storage_with_hasher(blocks, tag_bits, IntFold::default())
    }
}

impl<S: AsRef<[Block]>, H: KeyHasher> VectorQuotientFilter<S, H> {
    /// Like [`from_storage`](VectorQuotientFilter::from_storage), with the given hasher.
    ///
    /// # Errors
    ///
    /// As for [`from_storage`](VectorQuotientFilter::from_storage).
    pub fn from_storage_with_hasher(
        blocks: S,
        tag_bits: u32,
        hasher: H,
    ) -> Result<Self, ParamsError> {
        let params = QuotientParams::new(blocks.as_ref().len() as u64, tag_bits)?;
        let len = checked_len(blocks.as_ref(), tag_bits)?;
        Ok(VectorQuotientFilter::assemble(blocks, params, hasher, len))
    }

    fn assemble(blocks: S, params: QuotientParams, hasher: H, len: u64) -> Self {
        let kernel = crate::arch::quotient::detect();
        VectorQuotientFilter {
            blocks,
            params,
            hasher,
            len,
            kernel,
            probe: kernel.probe(params.tag_bits()),
        }
    }

    /// Use `kernel` for every operation (tests and benchmarks force kernels this way).
    ///
    /// Safe: a `&'static QuotientKernel` can only be obtained from
    /// [`crate::arch::quotient::available`], [`by_name`](crate::arch::quotient::by_name)
    /// or [`detect`](crate::arch::quotient::detect), which return only kernels this CPU
    /// runs.
    ///
    /// ```
    /// use linebloom::{QuotientParams, VectorQuotientFilter};
    /// let scalar = linebloom::arch::quotient::by_name("scalar").unwrap();
    /// let f = VectorQuotientFilter::new(QuotientParams::new(4, 8)?).with_kernel(scalar);
    /// assert_eq!(f.kernel_name(), "scalar");
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn with_kernel(mut self, kernel: &'static QuotientKernel) -> Self {
        self.kernel = kernel;
        self.probe = kernel.probe(self.params.tag_bits());
        self
    }

    /// Name of the kernel that runs this filter's operations (`scalar`, …).
    #[must_use]
    pub fn kernel_name(&self) -> &'static str {
        self.kernel.name
    }
}

impl<S: AsRef<[Block]> + AsMut<[Block]>, H: KeyHasher> VectorQuotientFilter<S, H> {
    /// Stores one more copy of `key`'s fingerprint, and says whether a matching one was
    /// held before ([`Stored::New`] or [`Stored::Again`]). A key inserted twice is held
    /// twice and needs two `remove`s.
    ///
    /// # Errors
    ///
    /// [`FilterFull`] when both of the key's blocks are full (the filter holds more
    /// than its [`capacity`](QuotientParams::capacity), or a rare crowd of keys in two
    /// blocks); nothing changes.
    ///
    /// ```
    /// use linebloom::{Stored, VectorQuotientFilter};
    /// let mut f = VectorQuotientFilter::for_fpr(1_000, 0.01)?;
    /// assert_eq!(f.insert("a")?, Stored::New);
    /// assert_eq!(f.insert("a")?, Stored::Again);
    /// assert_eq!(f.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<Stored, FilterFull> {
        self.insert_hash(self.hash(key))
    }

    /// [`insert`](Self::insert) for a caller's hash.
    ///
    /// # Errors
    ///
    /// As for [`insert`](Self::insert).
    pub fn insert_hash(&mut self, hash: u64) -> Result<Stored, FilterFull> {
        self.store(hash, true).map(|done| match done {
            Insertion::New => Stored::New,
            // `store` answers `Full` with the error.
            _ => Stored::Again,
        })
    }

    /// Stores `key`'s fingerprint without first looking for it: the form for loading a
    /// filter.
    ///
    /// # Errors
    ///
    /// As for [`insert`](Self::insert).
    pub fn add<K: Key + ?Sized>(&mut self, key: &K) -> Result<(), FilterFull> {
        self.add_hash(self.hash(key))
    }

    /// [`add`](Self::add) for a caller's hash.
    ///
    /// # Errors
    ///
    /// As for [`insert`](Self::insert).
    pub fn add_hash(&mut self, hash: u64) -> Result<(), FilterFull> {
        self.store(hash, false).map(|_| ())
    }

    fn store(&mut self, hash: u64, check: bool) -> Result<Insertion, FilterFull> {
        // SAFETY: as in `contains_hash`; every block is well formed (zeroed, checked by
        // `from_storage` or the decoder, and since changed only by the kernels).
        let done = unsafe { self.probe.insert(self.blocks.as_mut(), hash, check) };
        if done == Insertion::Full {
            return Err(FilterFull);
        }
        self.len += 1;
        Ok(done)
    }

    /// Removes one insertion of `key`: one fingerprint that matches it, from the first
    /// of its two blocks that holds one.
    ///
    /// Remove only keys you inserted. A key that was never inserted but matches a
    /// fingerprint (a false positive) removes that fingerprint, and the key that put it
    /// there then answers `false`.
    ///
    /// # Errors
    ///
    /// [`RemoveError::NotPresent`] when neither block holds a matching fingerprint (the
    /// key is certainly absent); nothing changes.
    ///
    /// ```
    /// use linebloom::{RemoveError, VectorQuotientFilter};
    /// let mut f = VectorQuotientFilter::for_fpr(1000, 0.01)?;
    /// f.insert("a")?;
    /// f.insert("a")?;
    /// f.remove("a")?;
    /// assert!(f.contains("a")); // inserted twice, removed once
    /// f.remove("a")?;
    /// assert_eq!(f.remove("a"), Err(RemoveError::NotPresent));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> Result<(), RemoveError> {
        self.remove_hash(self.hash(key))
    }

    /// [`remove`](Self::remove) for a caller's hash.
    ///
    /// # Errors
    ///
    /// As for [`remove`](Self::remove).
    pub fn remove_hash(&mut self, hash: u64) -> Result<(), RemoveError> {
        // SAFETY: as in `store`.
        if unsafe { self.probe.remove(self.blocks.as_mut(), hash) } {
            self.len -= 1;
            Ok(())
        } else {
            Err(RemoveError::NotPresent)
        }
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.blocks.as_mut().fill(Block::ZERO);
        self.len = 0;
    }
}

impl<S: AsRef<[Block]>, H: KeyHasher> VectorQuotientFilter<S, H> {
    /// Is `key` possibly in the set? `false` means certainly not (or removed as often
    /// as inserted).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) for a caller's hash.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        // SAFETY: the probe is of a kernel this CPU runs (it came from `detect` or a
        // caller's `&'static QuotientKernel`, which only `available` hands out); the
        // block count is even and at least 2 (`QuotientParams::new`).
        unsafe { self.probe.contains(self.blocks.as_ref(), hash) }
    }

    /// How many copies of `key`'s fingerprint the filter holds: the inserts of `key`
    /// not yet removed, plus any other key's that share its fingerprint and blocks (so
    /// at least the true count, never less). A count is a rare operation: it runs on the
    /// scalar backend, not the filter's kernel.
    ///
    /// ```
    /// use linebloom::VectorQuotientFilter;
    /// let mut f = VectorQuotientFilter::for_fpr(1000, 0.01)?;
    /// f.insert("a")?;
    /// f.insert("a")?;
    /// assert_eq!(f.count("a"), 2);
    /// f.remove("a")?;
    /// assert_eq!(f.count("a"), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn count<K: Key + ?Sized>(&self, key: &K) -> u32 {
        self.count_hash(self.hash(key))
    }

    /// [`count`](Self::count) for a caller's hash.
    #[must_use]
    pub fn count_hash(&self, hash: u64) -> u32 {
        crate::arch::quotient::count(self.blocks.as_ref(), hash, self.params.tag_bits())
    }

    /// [`contains`](Self::contains) for many keys at once: `out[i] = contains(keys[i])`.
    ///
    /// For filters larger than the cache this is faster than a loop: the keys are hashed
    /// in chunks, and in filters above 128 KiB the kernel prefetches both blocks of a key
    /// 16 keys ahead of its lookup, so that lookups overlap their cache misses (smaller
    /// filters, in cache, are looked up key by key).
    ///
    /// # Panics
    ///
    /// If `out.len() != keys.len()`.
    ///
    /// ```
    /// use linebloom::{QuotientParams, VectorQuotientFilter};
    /// let mut f = VectorQuotientFilter::new(QuotientParams::for_fpr(1000, 0.01)?);
    /// for key in [1u64, 2, 3] {
    ///     f.add(&key)?;
    /// }
    /// let mut out = [false; 4];
    /// f.contains_batch(&[1u64, 2, 3, 1_000_000], &mut out);
    /// assert_eq!(out[..3], [true; 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn contains_batch<K: Key>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(
            keys.len(),
            out.len(),
            "contains_batch: keys and out differ in length"
        );
        let mut hashes = [0u64; HASH_CHUNK];
        for (keys, out) in keys.chunks(HASH_CHUNK).zip(out.chunks_mut(HASH_CHUNK)) {
            let hashes = &mut hashes[..keys.len()];
            for (h, key) in hashes.iter_mut().zip(keys) {
                *h = self.hash(key);
            }
            self.contains_hash_batch(hashes, out);
        }
    }

    /// [`contains_batch`](Self::contains_batch) for hashes computed by the caller.
    ///
    /// # Panics
    ///
    /// If `out.len() != hashes.len()`.
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) {
        assert_eq!(
            hashes.len(),
            out.len(),
            "contains_hash_batch: hashes and out differ in length"
        );
        // SAFETY: as in `contains_hash`; the lengths are equal (checked above).
        unsafe { self.probe.contains_batch(self.blocks.as_ref(), hashes, out) }
    }
}

crate::filter::block_storage_accessors!(VectorQuotientFilter, QuotientParams);
/// The family's read side, with a multiset's numbers: `fill_ratio` is the
/// [`load_factor`](VectorQuotientFilter::load_factor) (tag slots in use) and
/// `estimated_len` the exact [`len`](VectorQuotientFilter::len), each copy of a key
/// inserted again counted.
impl<S: AsRef<[Block]>, H: KeyHasher> crate::Filter for VectorQuotientFilter<S, H> {
    type Hasher = H;
    #[inline]
    fn hasher(&self) -> &H {
        VectorQuotientFilter::hasher(self)
    }
    #[inline]
    fn contains_hash(&self, hash: u64) -> bool {
        VectorQuotientFilter::contains_hash(self, hash)
    }
    fn memory_bytes(&self) -> usize {
        self.params.bytes()
    }
    fn fill_ratio(&self) -> f64 {
        self.load_factor()
    }
    fn estimated_len(&self) -> f64 {
        self.len as f64
    }
    fn estimated_fpr(&self) -> f64 {
        VectorQuotientFilter::estimated_fpr(self)
    }
}

/// Inserts that can be refused ([`FilterFull`]); `insert` answers `true` for
/// [`Stored::New`].
impl<S: AsRef<[Block]> + AsMut<[Block]>, H: KeyHasher> crate::InsertFilter
    for VectorQuotientFilter<S, H>
{
    type InsertError = FilterFull;
    #[inline]
    fn insert_hash(&mut self, hash: u64) -> Result<bool, FilterFull> {
        VectorQuotientFilter::insert_hash(self, hash).map(|stored| stored == Stored::New)
    }
    #[inline]
    fn add_hash(&mut self, hash: u64) -> Result<(), FilterFull> {
        VectorQuotientFilter::add_hash(self, hash)
    }
    fn clear(&mut self) {
        VectorQuotientFilter::clear(self)
    }
}

impl<S: AsRef<[Block]> + AsMut<[Block]>, H: KeyHasher> crate::RemoveFilter
    for VectorQuotientFilter<S, H>
{
    fn remove_hash(&mut self, hash: u64) -> Result<(), RemoveError> {
        VectorQuotientFilter::remove_hash(self, hash)
    }
}

impl<S: AsRef<[Block]>, H: core::fmt::Debug> core::fmt::Debug for VectorQuotientFilter<S, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("VectorQuotientFilter")
            .field("blocks", &self.params.blocks())
            .field("tag_bits", &self.params.tag_bits())
            .field("len", &self.len)
            .field("kernel", &self.kernel.name)
            .field("hasher", &self.hasher)
            .finish()
    }
}
