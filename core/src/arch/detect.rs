//! Run-time selection: the kernels this CPU runs, the best of them (detected once and
//! cached), and lookup by name. The CPU feature tests themselves sit with each ISA
//! (`x86_64/mod.rs`); `aarch64` needs none (NEON is baseline).

#[cfg(all(target_arch = "aarch64", not(miri)))]
use super::aarch64;
#[cfg(linebloom_portable)]
use super::portable;
#[cfg(all(target_arch = "x86_64", not(miri)))]
use super::x86_64;
use super::{Backend, Kernel, scalar};
use core::sync::atomic::{AtomicPtr, Ordering};

/// Every kernel this CPU runs, scalar first and the preferred one last.
pub fn available() -> impl Iterator<Item = &'static Kernel> {
    let simd: [Option<&'static Kernel>; 3] = {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        {
            [x86_64::avx2::kernel(), x86_64::avx512::kernel(), None]
        }
        #[cfg(all(target_arch = "aarch64", not(miri)))]
        {
            [aarch64::neon::kernel(), None, None]
        }
        #[cfg(not(any(
            all(target_arch = "x86_64", not(miri)),
            all(target_arch = "aarch64", not(miri))
        )))]
        {
            [None, None, None]
        }
    };
    #[cfg(linebloom_portable)]
    let portable = Some(&portable::KERNEL);
    #[cfg(not(linebloom_portable))]
    let portable = None;
    [Some(&scalar::KERNEL), portable]
        .into_iter()
        .chain(simd)
        .flatten()
}

/// Names of every kernel compiled into this build for this architecture (whether or
/// not this CPU runs it), for tests that must say which were skipped.
#[must_use]
pub fn compiled() -> &'static [&'static str] {
    const NAMES: [&str; Backend::ALL.len()] = {
        let mut names = [""; Backend::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = Backend::ALL[i].name();
            i += 1;
        }
        names
    };
    &NAMES
}

static ACTIVE: AtomicPtr<Kernel> = AtomicPtr::new(core::ptr::null_mut());

/// The best kernel this CPU runs (detected once, then cached).
pub fn detect() -> &'static Kernel {
    cached(&ACTIVE, || {
        if cfg!(miri) {
            &scalar::KERNEL
        } else {
            available().last().unwrap_or(&scalar::KERNEL)
        }
    })
}

/// The kernel stored in `slot`, or `best()`, stored there for the next call.
pub(crate) fn cached<T>(slot: &AtomicPtr<T>, best: impl FnOnce() -> &'static T) -> &'static T {
    let stored = slot.load(Ordering::Relaxed);
    if !stored.is_null() {
        // SAFETY: a slot only ever holds null or a pointer made from a `&'static T`
        // below, so a non-null value is a valid shared reference for 'static.
        return unsafe { &*stored };
    }
    let best = best();
    slot.store(best as *const T as *mut T, Ordering::Relaxed);
    best
}

/// The kernel called `name`, if this CPU runs it.
#[must_use]
pub fn by_name(name: &str) -> Option<&'static Kernel> {
    available().find(|k| k.name == name)
}

/// Name of the kernel [`detect`] picks on this CPU; the lab records it with every result.
#[must_use]
pub fn active_kernel() -> &'static str {
    detect().name
}
