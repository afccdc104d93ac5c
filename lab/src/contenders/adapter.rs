//! The `adapter!` macro: a [`LabFilter`](super::LabFilter) adapter written as a newtype and
//! the few expressions that insert, query, size and (where the library can) remove,
//! merge, insert concurrently and round-trip it.

/// Runs `f`: a block in which `?` returns its error (inside a method that returns an
/// `Option`).
pub(super) fn attempt<T>(f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    f()
}

/// A [`LabFilter`] adapter: a newtype over a filter with how to insert, query and size it.
macro_rules! adapter {
    ($(#[$doc:meta])* $name:ident($inner:ty), $label:literal,
     insert: |$fi:ident, $ki:ident| $insert:expr,
     $(reporting: |$fn:ident, $kn:ident| $reporting:expr,)?
     contains: |$fc:ident, $kc:ident| $contains:expr,
     bytes: |$fb:ident| $bytes:expr
     $(, exact: |$fe:ident| $exact:expr)?
     $(, remove: |$fr:ident, $kr:ident| $remove:expr)?
     $(, merge: |$fm:ident, $om:ident| $merge:expr)?
     $(, concurrent: |$fcc:ident, $kcc:ident| $concurrent:expr)?
     $(, round_trip: |$ft:ident| $round_trip:expr)? $(,)?) => {
        $(#[$doc])*
        pub struct $name(pub $inner);
        impl LabFilter for $name {
            fn name(&self) -> String {
                $label.into()
            }
            #[inline]
            fn insert(&mut self, $ki: u64) {
                let $fi = &mut self.0;
                $insert;
            }
            $(
                #[inline]
                fn insert_reporting(&mut self, $kn: u64) -> bool {
                    let $fn = &mut self.0;
                    $reporting
                }
            )?
            #[inline]
            fn contains(&self, $kc: u64) -> bool {
                let $fc = &self.0;
                $contains
            }
            fn bytes(&self) -> usize {
                let $fb = &self.0;
                $bytes
            }
            $(
                fn exact_fpr(&self) -> Option<f64> {
                    let $fe = &self.0;
                    Some($exact)
                }
            )?
            $(
                fn remove(&mut self, $kr: u64) -> Option<bool> {
                    let $fr = &mut self.0;
                    Some($remove)
                }
            )?
            $(
                fn merge(&mut self, other: &dyn LabFilter) -> Option<anyhow::Result<()>> {
                    let other = match same_kind(self, other) {
                        Ok(o) => o,
                        Err(e) => return Some(Err(e)),
                    };
                    let ($fm, $om) = (&mut self.0, &other.0);
                    Some(attempt(|| -> anyhow::Result<()> { $merge }))
                }
            )?
            $(
                fn insert_concurrently(&self, keys: &[u64], threads: usize) -> Option<()> {
                    let $fcc = &self.0;
                    spawn_inserts(keys, threads, |$kcc| {
                        $concurrent;
                    });
                    Some(())
                }
            )?
            $(
                fn round_trip(&self) -> Option<anyhow::Result<(Box<dyn LabFilter>, usize)>> {
                    let $ft = &self.0;
                    let decoded = attempt(|| -> anyhow::Result<(_, usize)> { $round_trip });
                    Some(decoded.map(|(f, len)| (Box::new($name(f)) as Box<dyn LabFilter>, len)))
                }
            )?
        }
    };
}

pub(super) use adapter;
