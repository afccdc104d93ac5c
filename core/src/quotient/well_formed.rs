//! Checks that blocks are ones a vector quotient filter could have written: storage
//! handed to `from_storage` (which also counts its tags), and a decoder's payload.

use crate::arch::quotient::scheme::{Eight, Sixteen, is_well_formed, load};
use crate::block::Block;
use crate::params::ParamsError;

/// The tags in `blocks`, after checking that each is well formed.
pub(super) fn checked_len(blocks: &[Block], tag_bits: u32) -> Result<u64, ParamsError> {
    let check: fn(&Block) -> bool = if tag_bits == 8 {
        is_well_formed::<Eight>
    } else {
        is_well_formed::<Sixteen>
    };
    let load: fn(&Block) -> u32 = if tag_bits == 8 {
        load::<Eight>
    } else {
        load::<Sixteen>
    };
    let mut len = 0;
    for (index, block) in blocks.iter().enumerate() {
        if !check(block) {
            return Err(ParamsError::MalformedBlock {
                index: index as u64,
            });
        }
        len += load(block) as u64;
    }
    Ok(len)
}

/// The decoder's check of an encoded payload (blocks as little-endian bytes, its length
/// already checked): [`ParamsError::MalformedBlock`] for the first block this filter
/// could not have written.
pub(crate) fn check_payload(payload: &[u8], tag_bits: u32) -> Result<(), ParamsError> {
    let check: fn(&Block) -> bool = if tag_bits == 8 {
        is_well_formed::<Eight>
    } else {
        is_well_formed::<Sixteen>
    };
    for (index, chunk) in payload.chunks_exact(Block::BYTES).enumerate() {
        let block = Block::from_le_bytes(chunk.try_into().expect("64-byte chunk"));
        if !check(&block) {
            return Err(ParamsError::MalformedBlock {
                index: index as u64,
            });
        }
    }
    Ok(())
}
