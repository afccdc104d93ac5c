//! The aarch64 kernel, serving both kernel sets (see `arch`'s module docs).

pub(crate) mod neon;
