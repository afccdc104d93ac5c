//! The module's one memory rule: no filter layer larger than [`MAX_LAYER_BYTES`]. An
//! allocation Redis cannot make ends the server, so a layer past the limit is refused
//! (`ERR Insufficient memory to create filter`, or the item that would have built it)
//! before anything is allocated.

use std::fmt;

/// The most bytes one layer of a `BF.*` or `CF.*` filter may take.
pub const MAX_LAYER_BYTES: u64 = 4 << 30;

/// Why a filter could not be made.
#[derive(Clone, Debug, PartialEq)]
pub enum CreateError {
    /// It would take more than [`MAX_LAYER_BYTES`].
    TooLarge {
        /// Bytes it would take.
        bytes: u64,
    },
    /// The core refused the shape.
    Params(linebloom::ParamsError),
}

impl fmt::Display for CreateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CreateError::TooLarge { bytes } => write!(
                f,
                "the filter would take {bytes} bytes, more than the module's {MAX_LAYER_BYTES}"
            ),
            CreateError::Params(e) => write!(f, "{e}"),
        }
    }
}

impl CreateError {
    /// The error reply, with RedisBloom's text first: `could` is its "could not create
    /// filter" as the command family spells it.
    pub fn reply(&self, could: &str) -> String {
        match self {
            CreateError::TooLarge { .. } => {
                format!("ERR Insufficient memory to create filter: {self}")
            }
            CreateError::Params(_) => format!("ERR {could} create filter: {self}"),
        }
    }
}

/// `bytes`, or the error for a layer past the limit.
pub fn check(bytes: usize) -> Result<(), CreateError> {
    if bytes as u64 > MAX_LAYER_BYTES {
        return Err(CreateError::TooLarge {
            bytes: bytes as u64,
        });
    }
    Ok(())
}
