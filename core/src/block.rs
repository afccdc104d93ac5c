//! [`Block`]: one 64-byte cache line, the unit every key touches.
//!
//! A key's bits all live in one block, so an insert or a query costs one cache miss
//! whatever `k` is. The block is eight little-endian `u64` words; bit `j` of the block
//! (0..512) is bit `j % 64` of word `j / 64`. That layout is what the binary format
//! stores (see `core/FORMAT.md`) and what the Redis-held filter addresses.

/// One 64-byte, 64-byte-aligned line of filter bits.
///
/// Any bit pattern is a valid block, so blocks can be zero-initialised and viewed
/// straight from aligned bytes on little-endian targets.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(C, align(64))]
pub struct Block(pub [u64; 8]);

impl Block {
    /// The empty block.
    pub const ZERO: Block = Block([0; 8]);
    /// Bytes in a block.
    pub const BYTES: usize = 64;
    /// Bits in a block.
    pub const BITS: usize = 512;

    /// Is every bit of `mask` also set in `self`?
    ///
    /// This is the scalar reference of the block test that every SIMD kernel must
    /// match; it is public so that a caller holding one block (for example one fetched
    /// from Redis with `GETRANGE`) can check a key's mask itself.
    ///
    /// ```
    /// use linebloom::Block;
    /// let mut b = Block::ZERO;
    /// b.0[3] = 0b1010;
    /// assert!(b.contains_mask(&Block([0, 0, 0, 0b10, 0, 0, 0, 0])));
    /// assert!(!b.contains_mask(&Block([1, 0, 0, 0, 0, 0, 0, 0])));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_mask(&self, mask: &Block) -> bool {
        let mut missing = 0;
        for w in 0..8 {
            missing |= mask.0[w] & !self.0[w];
        }
        missing == 0
    }

    /// Number of set bits.
    #[inline]
    #[must_use]
    pub fn count_ones(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// The block as 64 little-endian bytes (the on-disk and in-Redis layout).
    #[must_use]
    pub fn to_le_bytes(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        for (chunk, word) in out.chunks_exact_mut(8).zip(self.0) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        out
    }

    /// The block from 64 little-endian bytes.
    #[must_use]
    pub fn from_le_bytes(bytes: &[u8; 64]) -> Block {
        let mut b = Block::ZERO;
        for (word, chunk) in b.0.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            *word = u64::from_le_bytes(w);
        }
        b
    }
}

/// Set bits over a slice of blocks.
pub(crate) fn count_ones(blocks: &[Block]) -> u64 {
    blocks.iter().map(|b| b.count_ones() as u64).sum()
}

/// The bytes of a slice of blocks, in memory order (little-endian words on little-endian
/// targets). Safe because `Block` has no padding and every byte is initialised.
///
/// ```
/// use linebloom::block::{Block, blocks_as_bytes};
/// assert_eq!(blocks_as_bytes(&[Block::ZERO; 2]).len(), 128);
/// ```
#[must_use]
pub fn blocks_as_bytes(blocks: &[Block]) -> &[u8] {
    // SAFETY: `Block` is `repr(C)` over `[u64; 8]` with size 64 and no padding, so the
    // slice covers `len × 64` initialised bytes; `u8` has alignment 1; the borrow ties
    // the byte slice's lifetime to `blocks`.
    unsafe {
        core::slice::from_raw_parts(blocks.as_ptr() as *const u8, core::mem::size_of_val(blocks))
    }
}

/// Mutable bytes of a slice of blocks: 64-byte aligned memory to encode a filter into,
/// for [`crate::BloomFilter::view`]. Safe because every byte pattern is a valid `Block`.
///
/// ```
/// use linebloom::block::{Block, blocks_as_bytes_mut};
/// let mut b = [Block::ZERO; 1];
/// blocks_as_bytes_mut(&mut b)[0] = 1;
/// assert_eq!(b[0].count_ones(), 1);
/// ```
pub fn blocks_as_bytes_mut(blocks: &mut [Block]) -> &mut [u8] {
    // SAFETY: as in `blocks_as_bytes`, and any byte written leaves a valid `[u64; 8]`;
    // the exclusive borrow of `blocks` is held for the byte slice's lifetime.
    unsafe {
        core::slice::from_raw_parts_mut(
            blocks.as_mut_ptr() as *mut u8,
            core::mem::size_of_val(blocks),
        )
    }
}

impl core::fmt::Debug for Block {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Block[")?;
        for (i, w) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{w:016x}")?;
        }
        f.write_str("]")
    }
}

const _: () = assert!(core::mem::size_of::<Block>() == 64);
const _: () = assert!(core::mem::align_of::<Block>() == 64);
