//! Run-time selection, written once for both kernel sets (the Bloom filters' and the
//! quotient filter's): the kernels this CPU runs, the best of them (detected once and
//! cached), lookup by name, and the names compiled in, over a [`KernelSet`]
//! (`arch/mod.rs` and `arch/quotient.rs` list their kernels in one); and the
//! [`Backend`] every kernel names, with the kernel's name, written here once. The CPU
//! checks are in `cpu.rs`.

use core::sync::atomic::{AtomicPtr, Ordering};

/// An instruction set's backend, for both kernel sets: which file's code a kernel runs.
/// The batch operations and, where the build fixes the kernels, every probe match on
/// it (`arch::dispatch`); its name is every kernel's name (module, CSV column, plot
/// legend). A Bloom kernel and a quotient kernel of one backend share its file and its
/// main instruction set, not necessarily every feature they need (each set's module
/// docs list those).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(miri, allow(dead_code))] // the SIMD kernels are never selected under Miri
pub(crate) enum Backend {
    /// The reference, on every target (`scalar.rs`).
    Scalar,
    /// `wide`'s vectors, where `wide` has them (`portable.rs`).
    #[cfg(linebloom_portable)]
    Portable,
    /// x86_64 AVX2 (`x86_64/avx2.rs`).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// x86_64 AVX2 with BMI2's `pdep`, quotient filter only (`x86_64/avx2_bmi2.rs`).
    #[cfg(target_arch = "x86_64")]
    Avx2Bmi2,
    /// x86_64 AVX-512 (`x86_64/avx512.rs`).
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// aarch64 NEON (`aarch64/neon.rs`).
    #[cfg(target_arch = "aarch64")]
    Neon,
}

impl Backend {
    /// The kernel's name: module, CSV column and plot legend.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            #[cfg(linebloom_portable)]
            Backend::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2Bmi2 => "avx2-bmi2",
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => "avx512",
            #[cfg(target_arch = "aarch64")]
            Backend::Neon => "neon",
        }
    }
}

/// A kernel of either set, by name.
pub(crate) trait Named {
    /// The kernel's name, its [`Backend`]'s.
    fn name(&self) -> &'static str;
}

/// One compiled kernel, and the check whether this CPU (and OS) runs it: a `cpu.rs`
/// check, or [`always`].
pub(crate) struct Compiled<K: 'static>(pub(crate) &'static K, pub(crate) fn() -> bool);

/// The check of a kernel that runs wherever it is compiled.
pub(crate) fn always() -> bool {
    true
}

/// One kernel set (the Bloom filters', or the quotient filter's): every kernel compiled
/// for this target, the reference kernel (scalar) first and the preferred one last, and
/// the cache of the one detected.
pub(crate) struct KernelSet<K: 'static> {
    compiled: &'static [Compiled<K>],
    active: AtomicPtr<K>,
}

impl<K: Named> KernelSet<K> {
    /// The set of `compiled`, which must not be empty (checked when the constant is
    /// evaluated).
    pub(crate) const fn new(compiled: &'static [Compiled<K>]) -> Self {
        assert!(
            !compiled.is_empty(),
            "a kernel set holds the reference kernel"
        );
        KernelSet {
            compiled,
            active: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Every kernel this CPU runs, the reference first and the preferred one last.
    pub(crate) fn available(&'static self) -> impl Iterator<Item = &'static K> {
        self.compiled.iter().filter(|c| (c.1)()).map(|c| c.0)
    }

    /// The best kernel this CPU runs (the reference under Miri), detected once, then
    /// cached.
    pub(crate) fn detect(&'static self) -> &'static K {
        let stored = self.active.load(Ordering::Relaxed);
        if !stored.is_null() {
            // SAFETY: `active` only ever holds null or a pointer made from a
            // `&'static K` below, so a non-null value is a valid shared reference for
            // 'static.
            return unsafe { &*stored };
        }
        let reference = self.compiled[0].0;
        let best = if cfg!(miri) {
            reference
        } else {
            self.available().last().unwrap_or(reference)
        };
        self.active
            .store(best as *const K as *mut K, Ordering::Relaxed);
        best
    }

    /// The kernel called `name`, if this CPU runs it.
    pub(crate) fn by_name(&'static self, name: &str) -> Option<&'static K> {
        self.available().find(|k| k.name() == name)
    }

    /// Names of every kernel compiled into this build for this target, whether or not
    /// this CPU runs it.
    pub(crate) fn names(&'static self) -> impl Iterator<Item = &'static str> {
        self.compiled.iter().map(|c| c.0.name())
    }
}

/// Defines a kernel set's public selection functions over its `static KERNELS` set:
/// `available`, `detect`, `by_name` and `compiled`, with `$what` naming the kernels in
/// their docs.
macro_rules! selection {
    ($kernel:ty, $what:literal) => {
        #[doc = concat!("Every ", $what, " this CPU runs, scalar first and the preferred one last.")]
        pub fn available() -> impl Iterator<Item = &'static $kernel> {
            KERNELS.available()
        }

        #[doc = concat!("The best ", $what, " this CPU runs (detected once, then cached).")]
        pub fn detect() -> &'static $kernel {
            KERNELS.detect()
        }

        #[doc = concat!("The ", $what, " called `name`, if this CPU runs it.")]
        #[must_use]
        pub fn by_name(name: &str) -> Option<&'static $kernel> {
            KERNELS.by_name(name)
        }

        #[doc = concat!(
                    "Names of every ", $what, " compiled into this build for this target (whether ",
                    "or not this CPU runs it), for tests that must say which were skipped."
                )]
        pub fn compiled() -> impl Iterator<Item = &'static str> {
            KERNELS.names()
        }
    };
}
pub(crate) use selection;
