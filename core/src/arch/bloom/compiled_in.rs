//! The compiled-in Bloom kernel: the best one whose features the build itself enables
//! (as `-C target-cpu=native` may; NEON on aarch64), so that every CPU the binary runs
//! on has them (`linebloom_compiled_in`, set by `build.rs`). Its backend, which a
//! kernel's probes compare with their own, and its block operations, which then inline
//! into code compiled without `#[target_feature]` (`arch::dispatch`'s single-key
//! probes), are chosen together, once per target, here.

use crate::arch::registry::Backend;

/// AVX-512 where the build enables it.
#[cfg(all(
    linebloom_compiled_in,
    target_arch = "x86_64",
    target_feature = "avx512f"
))]
mod choice {
    use super::Backend;
    pub(super) const BACKEND: Backend = Backend::Avx512;
    pub(crate) type Ops = crate::arch::bloom::generic::Simd<core::arch::x86_64::__m512i, 1>;
}

/// AVX2 where the build enables it and not AVX-512.
#[cfg(all(
    linebloom_compiled_in,
    target_arch = "x86_64",
    not(target_feature = "avx512f")
))]
mod choice {
    use super::Backend;
    pub(super) const BACKEND: Backend = Backend::Avx2;
    pub(crate) type Ops = crate::arch::bloom::generic::Simd<core::arch::x86_64::__m256i, 2>;
}

/// NEON, baseline on aarch64.
#[cfg(all(linebloom_compiled_in, target_arch = "aarch64"))]
mod choice {
    use super::Backend;
    pub(super) const BACKEND: Backend = Backend::Neon;
    pub(crate) type Ops = crate::arch::bloom::generic::Simd<core::arch::aarch64::uint64x2_t, 4>;
}

/// The compiled-in kernel's block operations.
#[cfg(linebloom_compiled_in)]
pub(crate) use choice::Ops;

/// The compiled-in kernel's backend.
#[cfg(linebloom_compiled_in)]
pub(crate) const BACKEND: Option<Backend> = Some(choice::BACKEND);

/// As above: none. (Only a kernel table asks: without one, nothing is compiled in.)
#[cfg(not(linebloom_compiled_in))]
pub(crate) const BACKEND: Option<Backend> = None;
