//! [`BloomFilter`]: the cache-line-blocked filter, over owned or borrowed blocks.
//!
//! One implementation serves every storage: anything that is `AsRef<[Block]>` can be
//! queried, anything that is also `AsMut<[Block]>` can be written. The default storage
//! is [`Blocks`]: owned blocks (feature `alloc`) or a `&'static mut [Block]`, one type in
//! every build. Embedded code can also pass any `&mut [Block]`, for example a `static`
//! array, and needs no allocator at all:
//!
//! ```
//! use linebloom::{Block, BloomFilter};
//! let mut storage = [Block::ZERO; 16]; // 1 KiB, could be a `static`
//! let mut f = BloomFilter::from_storage(&mut storage[..], 7)?;
//! f.insert("sensor-17");
//! assert!(f.contains("sensor-17"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod set_ops;

#[cfg(doc)]
use crate::IncompatibleError;
use crate::arch::{self, Kernel, Probe};
use crate::block::Block;
use crate::hasher::{IntFold, Key, KeyHasher};
use crate::params::{Params, ParamsError};
use crate::storage::Blocks;

/// Keys `Extend` hashes per kernel call: a 2 KiB stack buffer, long enough that the
/// batch pipeline restarts rarely.
const HASH_CHUNK: usize = 256;

/// A blocked Bloom filter: every key sets and tests `k` bits inside one 64-byte block.
///
/// `S` is the storage (see the module docs), `H` the [`KeyHasher`]. No false negatives:
/// a key once inserted is always found, until [`clear`](Self::clear).
///
/// ```
/// use linebloom::{BloomFilter, Params};
/// // At most 1% false positives while it holds up to 10,000 keys.
/// let mut seen = BloomFilter::new(Params::for_fpr(10_000, 0.01)?);
/// assert!(seen.insert("https://example.com/a")); // new
/// assert!(!seen.insert("https://example.com/a")); // seen before
/// assert!(seen.contains("https://example.com/a"));
/// assert!(!seen.contains("https://example.com/b")); // false: certainly never inserted
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct BloomFilter<S = Blocks, H = IntFold> {
    blocks: S,
    params: Params,
    hasher: H,
    kernel: &'static Kernel,
    /// `kernel.probe(params.k())`, chosen once, and copied in: its flag is then a field
    /// of the filter, which a lookup loop can keep in a register (through a
    /// `&'static Probe` it was loaded again after every opaque call in the loop).
    probe: Probe,
}

/// A filter's storage returned a slice of another length than at construction (an
/// `AsRef`/`AsMut` impl that changes its answer): refuse to probe it.
#[cold]
#[inline(never)]
#[track_caller]
fn storage_changed() -> ! {
    panic!("the filter's storage changed length since the filter was built")
}

#[cfg(feature = "alloc")]
impl BloomFilter {
    /// An empty filter of this shape with the default stable hasher ([`IntFold`], seed 0).
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params};
    /// let mut f = BloomFilter::new(Params::for_fpr(10_000, 0.01)?);
    /// assert!(f.insert(&42u64));
    /// assert!(f.contains(&42u64));
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn new(params: Params) -> Self {
        BloomFilter::with_hasher(params, IntFold::default())
    }

    /// An empty filter for `capacity` keys at false-positive rate `fpr`
    /// ([`Params::for_fpr`]), with the default hasher.
    ///
    /// # Errors
    ///
    /// As for [`Params::for_fpr`].
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params};
    /// let f = BloomFilter::for_fpr(10_000, 0.01)?;
    /// assert_eq!(f.params(), Params::for_fpr(10_000, 0.01)?);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn for_fpr(capacity: u64, fpr: f64) -> Result<Self, ParamsError> {
        Ok(BloomFilter::new(Params::for_fpr(capacity, fpr)?))
    }
}

#[cfg(feature = "alloc")]
impl<H: KeyHasher> BloomFilter<Blocks, H> {
    /// An empty filter of this shape with the given hasher.
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params, Xxh3};
    /// let f = BloomFilter::with_hasher(Params::new(4, 8)?, Xxh3::with_seed(7));
    /// assert_eq!(f.params().bytes(), 256);
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    pub fn with_hasher(params: Params, hasher: H) -> Self {
        let kernel = arch::detect();
        BloomFilter {
            blocks: Blocks::zeroed(params.blocks()),
            params,
            hasher,
            kernel,
            probe: kernel.probe(params.k()),
        }
    }
}

impl<S: AsRef<[Block]>> BloomFilter<S, IntFold> {
    /// A filter over existing blocks (for example a `static` array), with `k` bits per
    /// key and the default hasher. The blocks' current bits are the filter's content:
    /// pass zeroed blocks for an empty filter.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidK`] unless `k` is in `1..=16`, [`ParamsError::ZeroBlocks`]
    /// for empty storage, [`ParamsError::TooLarge`] past [`crate::MAX_BYTES`].
    ///
    /// ```
    /// use linebloom::{Block, BloomFilter, ParamsError};
    /// let mut s = [Block::ZERO; 2];
    /// assert!(BloomFilter::from_storage(&mut s[..], 8).is_ok());
    /// assert_eq!(BloomFilter::from_storage(&mut [][..], 8).err(), Some(ParamsError::ZeroBlocks));
    /// ```
    pub fn from_storage(blocks: S, k: u32) -> Result<Self, ParamsError> {
        BloomFilter::from_storage_with_hasher(blocks, k, IntFold::default())
    }
}

impl<S: AsRef<[Block]>, H: KeyHasher> BloomFilter<S, H> {
    /// Like [`from_storage`](BloomFilter::from_storage), with the given hasher.
    ///
    /// # Errors
    ///
    /// As for [`from_storage`](BloomFilter::from_storage).
    ///
    /// ```
    /// use linebloom::{Block, BloomFilter, Xxh3};
    /// let mut s = [Block::ZERO; 2];
    /// let f = BloomFilter::from_storage_with_hasher(&mut s[..], 4, Xxh3::with_seed(9))?;
    /// assert_eq!(f.params().k(), 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_storage_with_hasher(blocks: S, k: u32, hasher: H) -> Result<Self, ParamsError> {
        let params = Params::new(blocks.as_ref().len() as u64, k)?;
        let kernel = arch::detect();
        Ok(BloomFilter {
            blocks,
            params,
            hasher,
            kernel,
            probe: kernel.probe(params.k()),
        })
    }

    /// Use `kernel` for every probe (tests and benchmarks force kernels this way).
    ///
    /// Safe: a `&'static Kernel` can only be obtained from [`crate::arch::available`],
    /// [`crate::arch::by_name`] or [`crate::arch::detect`], which return only kernels
    /// this CPU runs.
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params};
    /// let scalar = linebloom::arch::by_name("scalar").unwrap();
    /// let f = BloomFilter::new(Params::new(4, 8)?).with_kernel(scalar);
    /// assert_eq!(f.kernel_name(), "scalar");
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[must_use]
    pub fn with_kernel(mut self, kernel: &'static Kernel) -> Self {
        self.kernel = kernel;
        self.probe = kernel.probe(self.params.k());
        self
    }

    /// Name of the kernel that probes this filter (`scalar`, …).
    #[must_use]
    pub fn kernel_name(&self) -> &'static str {
        self.kernel.name
    }

    /// The blocks, mutably (crate-internal: conversions write whole payloads).
    #[cfg(feature = "alloc")]
    pub(crate) fn blocks_mut(&mut self) -> &mut [Block]
    where
        S: AsMut<[Block]>,
    {
        self.blocks.as_mut()
    }

    /// Is `key` possibly in the set? `false` means certainly not.
    ///
    /// Integers are keys by value, whatever their type: `contains(&5u64)` finds a key
    /// inserted as `&5i32` or `&5u8`, and `&-1i8` equals `&-1i64`. A string `"5"` or the
    /// bytes `[5]` are other keys. See [`Key`] for every encoding.
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params};
    /// let mut f = BloomFilter::new(Params::new(4, 8)?);
    /// f.insert(&5i32);
    /// assert!(f.contains(&5u64) && f.contains(&5u8));
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_hash(self.hash(key))
    }

    /// [`contains`](Self::contains) for a hash computed by the caller.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let blocks = self.checked_blocks();
        // SAFETY: the kernel came from `arch::detect`, `arch::available` or a checked
        // `kernel()`, the only ways to obtain one, which return kernels this CPU runs, and
        // the probe is its entry for k; the storage is non-empty (it has the shape's
        // block count, and Params forbids zero); k ≤ MAX_K (Params).
        unsafe { arch::contains(self.kernel, &self.probe, blocks, hash, self.params.k()) }
    }

    /// The storage, checked to still have the shape's block count (it is user code:
    /// an `AsRef` may return a different slice each call).
    #[inline(always)]
    fn checked_blocks(&self) -> &[Block] {
        let blocks = self.blocks.as_ref();
        if blocks.len() != self.params.blocks() {
            storage_changed();
        }
        blocks
    }

    /// [`contains`](Self::contains) for many keys at once: `out[i] = contains(keys[i])`.
    ///
    /// For filters larger than the cache this is much faster than a loop: it hashes
    /// each key 64 keys ahead of its probe and prefetches its block then, so it probes
    /// keys while later lines are still arriving, all in the kernel's own code.
    ///
    /// # Panics
    ///
    /// If `out.len() != keys.len()`.
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params};
    /// let mut f = BloomFilter::new(Params::for_fpr(1000, 0.01)?);
    /// f.insert_batch(&[1u64, 2, 3]);
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
        let hasher = &self.hasher;
        self.probe_batch(keys, |key| key.hash_key(hasher), out)
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
        self.probe_batch(hashes, |&h| h, out)
    }

    /// The batch lookup behind both public ones: one dispatch, then the kernel hashes,
    /// prefetches and probes every key in its own code. `out.len() == keys.len()`.
    #[inline]
    fn probe_batch<K>(&self, keys: &[K], hash: impl Fn(&K) -> u64, out: &mut [bool]) {
        debug_assert_eq!(keys.len(), out.len());
        let blocks = self.checked_blocks();
        // SAFETY: the kernel runs on this CPU (see `contains_hash`); the storage is
        // non-empty (it has the shape's block count, and Params forbids zero); k ≤ MAX_K
        // (Params); both callers checked that the lengths are equal.
        unsafe { arch::contains_keys(self.kernel, blocks, keys, hash, self.params.k(), out) }
    }

    /// The false-positive rate of this filter as it is now, for a random non-member.
    ///
    /// Exact for the scheme given the current bits: per block, the chance that the
    /// query's `k` uniform bits all land on set bits, from each word's popcount `f_w/64`
    /// (`k ≥ 8`: `Π f_w^{c_w}`; `k < 8`: the average over the 8 rotations of the product
    /// over the window), averaged over blocks. Compare it with the target the filter was
    /// sized for to decide when to rebuild.
    pub fn estimated_fpr(&self) -> f64 {
        let k = self.params.k();
        let blocks = self.blocks.as_ref();
        let total: f64 = blocks
            .iter()
            .map(|b| crate::fpr::block_hit_rate(b.0.map(|w| w.count_ones() as f64 / 64.0), k))
            .sum();
        total / blocks.len() as f64
    }
}

impl<S: AsRef<[Block]> + AsMut<[Block]>, H: KeyHasher> BloomFilter<S, H> {
    /// Adds `key`. Returns `true` if it was not already present (some bit was clear),
    /// `false` if it was possibly present before: the convention of `HashSet::insert`.
    ///
    /// Coming from other crates: fastbloom's `insert` returns the opposite (`true` when
    /// the key was possibly present already), and so does bloomfilter's
    /// `check_and_set`. Negate their result to port code: `!fastbloom.insert(&k)` is
    /// `linebloom.insert(&k)`.
    ///
    /// A loop that only fills the filter and ignores the answer is faster with
    /// [`add`](Self::add), which leaves the test out.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        self.insert_hash(self.hash(key))
    }

    /// [`insert`](Self::insert) for a hash computed by the caller.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let (k, kernel, probe) = (self.params.k(), self.kernel, self.probe);
        let blocks = self.checked_blocks_mut();
        // SAFETY: as in `contains_hash`.
        unsafe { arch::insert(kernel, &probe, blocks, hash, k) }
    }

    /// Adds `key` without saying whether it was new: the form for loading a filter.
    ///
    /// [`insert`](Self::insert) tests the key's bits before it sets them, which a
    /// deduplicating loop needs and a loop that only fills the filter does not. `add`
    /// leaves the test out where the kernel can (the inline `k = 8` probe of the AVX2
    /// and AVX-512 kernels; elsewhere it is `insert` with the answer dropped). Use
    /// `insert` when the answer decides something, `add` or
    /// [`insert_batch`](Self::insert_batch) when it does not.
    ///
    /// ```
    /// use linebloom::{BloomFilter, Params};
    /// let mut f = BloomFilter::new(Params::for_fpr(1000, 0.01)?);
    /// for id in 0..1000u64 {
    ///     f.add(&id);
    /// }
    /// assert!(f.contains(&999u64));
    /// assert!(!f.insert(&999u64)); // already present
    /// # Ok::<(), linebloom::ParamsError>(())
    /// ```
    #[inline]
    pub fn add<K: Key + ?Sized>(&mut self, key: &K) {
        self.add_hash(self.hash(key));
    }

    /// [`add`](Self::add) for a hash computed by the caller.
    #[inline]
    pub fn add_hash(&mut self, hash: u64) {
        let (k, kernel, probe) = (self.params.k(), self.kernel, self.probe);
        let blocks = self.checked_blocks_mut();
        // SAFETY: as in `contains_hash`.
        unsafe { arch::add(kernel, &probe, blocks, hash, k) }
    }

    /// The storage, mutably, checked like `checked_blocks`.
    #[inline(always)]
    fn checked_blocks_mut(&mut self) -> &mut [Block] {
        self.batch_parts().0
    }

    /// [`insert`](Self::insert) for many keys at once, hashing and prefetching ahead
    /// like [`contains_batch`](Self::contains_batch).
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        let (blocks, hasher, k, kernel) = self.batch_parts();
        // SAFETY: as in `probe_batch` (no `out`).
        unsafe { arch::insert_keys(kernel, blocks, keys, |key| key.hash_key(hasher), k) }
    }

    /// [`insert_batch`](Self::insert_batch) for hashes computed by the caller.
    pub fn insert_hash_batch(&mut self, hashes: &[u64]) {
        let (blocks, _, k, kernel) = self.batch_parts();
        // SAFETY: as in `probe_batch` (no `out`).
        unsafe { arch::insert_keys(kernel, blocks, hashes, |&h| h, k) }
    }

    /// The storage, checked like `checked_blocks`, beside the hasher, `k` and the
    /// kernel: what a batch insert needs, borrowed apart.
    #[inline(always)]
    fn batch_parts(&mut self) -> (&mut [Block], &H, u32, &'static Kernel) {
        let expected = self.params.blocks();
        let blocks = self.blocks.as_mut();
        if blocks.len() != expected {
            storage_changed();
        }
        (blocks, &self.hasher, self.params.k(), self.kernel)
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.blocks.as_mut().fill(Block::ZERO);
    }
}

/// `Extend` hashes a chunk of keys, then inserts the chunk in one kernel call.
impl<S: AsRef<[Block]> + AsMut<[Block]>, H: KeyHasher, K: Key> Extend<K> for BloomFilter<S, H> {
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        let mut hashes = [0u64; HASH_CHUNK];
        let mut filled = 0;
        for key in keys {
            hashes[filled] = self.hash(&key);
            filled += 1;
            if filled == HASH_CHUNK {
                self.insert_hash_batch(&hashes);
                filled = 0;
            }
        }
        self.insert_hash_batch(&hashes[..filled]);
    }
}

crate::filter::block_storage_accessors!(BloomFilter, Params, bit_array);
crate::filter::family_traits!(
    BloomFilter<S, H>, [S, H: KeyHasher], hasher: H,
    read: [S: AsRef<[Block]>], write: [S: AsRef<[Block]> + AsMut<[Block]>],
    memory: |f| f.params.bytes(),
    insert_and_add,
);

impl<S: AsRef<[Block]>, H: core::fmt::Debug> core::fmt::Debug for BloomFilter<S, H> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BloomFilter")
            .field("blocks", &self.params.blocks())
            .field("k", &self.params.k())
            .field("bytes", &self.params.bytes())
            .field("hasher", &self.hasher)
            .field("kernel", &self.kernel.name)
            .finish()
    }
}
