//! The contenders: every filter the lab measures, behind one trait, [`LabFilter`], on `u64`
//! keys, and the contender table, [`CONTENDERS`], the one place each is written: its
//! name and look (structure, colour, marker), its [`Facts`] and its recipe. Experiments
//! pick contenders by their facts ([`names_where`]); [`build`] and [`build_sized`] look
//! one up by name. The table's order is the order of the report's tables.
//!
//! Adding a contender takes three files: the crate in `lab/Cargo.toml`, its adapter
//! (a module of this folder, declared below), and its row in [`CONTENDERS`].
//!
//! linebloom's five types and the rivals are all real crates. Hashing: linebloom hashes
//! `u64` keys with its default [`IntFold`](linebloom::IntFold) (a folded multiply;
//! XXH3-64 for byte strings), and `linebloom-xxh3-*` contenders with XXH3-64 of the key's 8 bytes;
//! sbbf-rs-safe and fastbloom get XXH3-64 through their `*_hash` entry points;
//! `bloomfilter` and `growable-bloom-filter` only accept `Hash` values and hash with
//! their own SipHash; xorf's BinaryFuse8 takes the XXH3 hash as its key. The rivals
//! that are not Bloom filters (cuckoo, quotient, xor, and another counting filter) are
//! in [`non_bloom_rivals`]; the other crates' Bloom filters in [`bloom_rivals`];
//! what only linebloom's vector quotient filter needs (its sizing by bits per key) in
//! [`vector_quotient`]; [`split_block`] is a 256-bit split-block filter on linebloom's
//! own hash, the reference for linebloom's single-key probe.

pub mod adapter;
pub mod bloom_rivals;
pub mod exact;
pub mod facts;
pub mod lab_filter;
pub mod linebloom_kinds;
pub mod looks;
pub mod non_bloom_rivals;
pub mod probabilistic_collections;
pub mod renamed;
pub mod sizing;
pub mod split_block;
pub mod style;
pub mod vector_quotient;

pub use bloom_rivals::{
    BLOOMFILTER_SEED, Bloomfilter, Fastbloom, FastbloomAtomic, Growable, Sbbf, parquet_bits_per_key,
};
pub use exact::Exact;
pub use facts::{Facts, Inserts, NoStd, SizedBy};
pub use lab_filter::{
    LabFilter, same_kind, serde_round_trip, serde_round_trip_into, spawn_inserts, xxh3,
};
pub use linebloom_kinds::{
    Atomic, Blocked, Classic, Counting, HasherLabel, Linebloom, LinebloomKind, Scalable, blocked,
    blocked_xxh3,
};
pub use non_bloom_rivals::{
    Cuckoo, FastbloomRsCounting, Fuse8, Qfilter, ScalableCuckoo, Xorf, holding,
};
pub use renamed::Renamed;
pub use sizing::keys_for_bytes;
pub use split_block::SplitBlock256;
pub use vector_quotient::LinebloomQuotient;

use crate::contenders::style::{
    Look,
    Marker::{Circle, Diamond, Square, Triangle},
    look,
};
use linebloom::arch::Kernel;
use linebloom::{
    AtomicBloomFilter, ClassicBloomFilter, ClassicParams, CountingBloomFilter, CountingParams,
    Params, QuotientParams, ScalableBloomFilter,
};

/// Which filter, sized how: the lab's single factory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sizing {
    /// For `n` keys at rate `p`, by the library's own recipe.
    Fpr(f64),
    /// For `n` keys at this many bits per key (where the library takes a size).
    BitsPerKey(f64),
}

/// A contender's recipe: for `n` keys sized by the [`Sizing`], holding `members` (the
/// static filters are built from them alone, the others filled with them); `None`
/// where the library cannot be sized that way (growable by bits, sbbf by fractional
/// bits…).
pub type Recipe =
    fn(Sizing, u64, &[u64], &'static Kernel) -> anyhow::Result<Option<Box<dyn LabFilter>>>;

/// One filter the lab builds.
pub struct Contender {
    /// Its name (in every CSV, legend and table), structure, colour and marker.
    pub look: Look,
    /// What it is and can do.
    pub facts: Facts,
    /// How it is built.
    pub make: Recipe,
}

impl Contender {
    /// Its name.
    pub fn name(&self) -> &'static str {
        self.look.name
    }
}

/// A contender that grows ([`Inserts::Grows`]) is built for a first estimate of
/// `n / GROWS_FROM` keys, so that `n` keys make it grow (about 7 layers at 100).
pub const GROWS_FROM: u64 = 100;

/// fastbloom's `no_std` (both of its filters).
const FASTBLOOM_NO_STD: NoStd =
    NoStd::Declared("no_std without its default `std` feature (crate docs; not built here)");

/// The xor and binary fuse filters: built once, from the key count alone.
const XOR_FACTS: Facts = Facts {
    inserts: Inserts::BuiltOnce,
    sized_by: SizedBy::KeyCount,
    no_std: NoStd::Declared("no_std with an allocator (crate docs; not built here)"),
    ..Facts::BLOOM
};

/// Every filter the lab builds, in the order the tables list them.
pub const CONTENDERS: &[Contender] = &[
    Contender {
        look: look("linebloom", "blocked Bloom", (214, 39, 40), Square),
        facts: Facts {
            no_std: NoStd::CiChecked(
                "runs over a static array on Cortex-M4, M3 and M0 under QEMU (core/firmware, .ci/run)",
            ),
            ..Facts::BLOOM
        },
        make: |sizing, n, members, kernel| {
            let params = match sizing {
                Sizing::Fpr(p) => Params::for_fpr(n, p)?,
                Sizing::BitsPerKey(b) => Params::for_bits_per_key(n, b)?,
            };
            filled(Box::new(blocked(params, kernel)), members)
        },
    },
    Contender {
        look: look("linebloom-classic", "classic Bloom", (255, 127, 14), Circle),
        facts: Facts {
            no_std: NoStd::CiChecked(
                "over caller storage, no allocator: built for thumbv7em, thumbv6m and riscv32 by .ci/run",
            ),
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            let params = match sizing {
                Sizing::Fpr(p) => ClassicParams::for_fpr(n, p)?,
                Sizing::BitsPerKey(b) => {
                    let k = ((b * std::f64::consts::LN_2).round() as u32)
                        .clamp(1, linebloom::classic::MAX_CLASSIC_K);
                    ClassicParams::new(bits(b, n), k)?
                }
            };
            filled(
                Box::new(Linebloom(ClassicBloomFilter::new(params))),
                members,
            )
        },
    },
    Contender {
        look: look(
            "linebloom-counting",
            "counting Bloom",
            (140, 86, 75),
            Square,
        ),
        facts: Facts {
            deletes: true,
            no_std: NoStd::CiChecked(
                "over caller storage, no allocator: built for thumbv7em, thumbv6m and riscv32 by .ci/run",
            ),
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            let params = match sizing {
                Sizing::Fpr(p) => CountingParams::for_fpr(n, p)?,
                Sizing::BitsPerKey(b) => {
                    let blocks = bits(b, n).div_ceil(512);
                    CountingParams::new(blocks, counting_best_k(blocks, n))?
                }
            };
            filled(
                Box::new(Linebloom(CountingBloomFilter::new(params))),
                members,
            )
        },
    },
    Contender {
        look: look(vector_quotient::NAME, "quotient", (120, 20, 20), Triangle),
        facts: Facts {
            deletes: true,
            inserts: Inserts::UpToCapacity,
            no_std: NoStd::CiChecked(
                "over a static array on Cortex-M4 and M0 under QEMU (core/firmware, .ci/run)",
            ),
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            let params = match sizing {
                Sizing::Fpr(p) => QuotientParams::for_fpr(n, p)?,
                Sizing::BitsPerKey(b) => match LinebloomQuotient::params_for_bits(n, b) {
                    Some(params) => params,
                    None => return Ok(None),
                },
            };
            let kernel = linebloom::arch::quotient::detect();
            holding(
                vector_quotient::NAME,
                Box::new(LinebloomQuotient::new(params, kernel)),
                members,
            )
        },
    },
    Contender {
        look: look(
            "linebloom-scalable",
            "scalable Bloom",
            (227, 119, 194),
            Triangle,
        ),
        facts: Facts {
            inserts: Inserts::Grows,
            sized_by: SizedBy::Rate,
            no_std: NoStd::CiChecked(
                "no_std with alloc (it allocates its layers): built for x86_64-unknown-none by .ci/run",
            ),
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            fpr_only(sizing, |p| {
                filled(
                    Box::new(Linebloom(ScalableBloomFilter::for_fpr(
                        (n / GROWS_FROM).max(1),
                        p,
                    )?)),
                    members,
                )
            })
        },
    },
    Contender {
        look: look("linebloom-atomic", "blocked Bloom", (188, 189, 34), Diamond),
        facts: Facts {
            concurrent: true,
            twin_of: Some("linebloom"),
            no_std: NoStd::CiChecked(
                "this type needs alloc and 64-bit atomics; its no-alloc twin StaticAtomicBloomFilter runs on Cortex-M4, M3 and M0 (core/firmware)",
            ),
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            let params = match sizing {
                Sizing::Fpr(p) => Params::for_fpr(n, p)?,
                Sizing::BitsPerKey(b) => Params::for_bits_per_key(n, b)?,
            };
            filled(Box::new(Linebloom(AtomicBloomFilter::new(params))), members)
        },
    },
    Contender {
        look: look("sbbf-rs-safe", "blocked Bloom", (23, 190, 207), Circle),
        facts: Facts::BLOOM,
        make: |sizing, n, members, _| match sizing {
            Sizing::Fpr(p) => filled(Box::new(Sbbf::for_fpr(n, p)), members),
            // It takes whole bits per key only.
            Sizing::BitsPerKey(b) if b.fract() == 0.0 => filled(
                Box::new(Sbbf(sbbf_rs_safe::Filter::new(b as usize, n as usize))),
                members,
            ),
            Sizing::BitsPerKey(_) => Ok(None),
        },
    },
    Contender {
        look: look("split-block-256", "blocked Bloom", (0, 110, 110), Diamond),
        facts: Facts::BLOOM,
        make: |sizing, n, members, _| {
            let f = match sizing {
                Sizing::Fpr(p) => SplitBlock256::for_fpr(n, p)?,
                Sizing::BitsPerKey(b) => SplitBlock256::with_bits_per_key(n, b),
            };
            filled(Box::new(f), members)
        },
    },
    Contender {
        look: look("fastbloom", "blocked Bloom", (31, 119, 180), Triangle),
        facts: Facts {
            no_std: FASTBLOOM_NO_STD,
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            let f = match sizing {
                Sizing::Fpr(p) => Fastbloom::for_fpr(n, p),
                Sizing::BitsPerKey(b) => Fastbloom(
                    fastbloom::BloomFilter::with_num_bits(bits(b, n) as usize)
                        .expected_items(n as usize),
                ),
            };
            filled(Box::new(f), members)
        },
    },
    Contender {
        look: look(
            "fastbloom-atomic",
            "blocked Bloom",
            (120, 170, 215),
            Diamond,
        ),
        facts: Facts {
            concurrent: true,
            twin_of: Some("fastbloom"),
            no_std: FASTBLOOM_NO_STD,
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            let f = match sizing {
                Sizing::Fpr(p) => FastbloomAtomic::for_fpr(n, p),
                Sizing::BitsPerKey(b) => FastbloomAtomic(
                    fastbloom::AtomicBloomFilter::with_num_bits(bits(b, n) as usize)
                        .expected_items(n as usize),
                ),
            };
            filled(Box::new(f), members)
        },
    },
    Contender {
        look: look("bloomfilter", "classic Bloom", (200, 0, 200), Circle),
        facts: Facts::BLOOM,
        make: |sizing, n, members, _| {
            let f = match sizing {
                Sizing::Fpr(p) => {
                    bloomfilter::Bloom::new_for_fp_rate_with_seed(n as usize, p, &BLOOMFILTER_SEED)
                }
                Sizing::BitsPerKey(b) => bloomfilter::Bloom::new_with_seed(
                    bits(b, n).div_ceil(8) as usize,
                    n as usize,
                    &BLOOMFILTER_SEED,
                ),
            };
            filled(
                Box::new(Bloomfilter(f.map_err(anyhow::Error::msg)?)),
                members,
            )
        },
    },
    Contender {
        look: look(
            "growable-bloom-filter",
            "scalable Bloom",
            (148, 103, 189),
            Square,
        ),
        facts: Facts {
            inserts: Inserts::Grows,
            sized_by: SizedBy::Rate,
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            fpr_only(sizing, |p| {
                filled(
                    Box::new(Growable(growable_bloom_filter::GrowableBloom::new(
                        p,
                        (n / GROWS_FROM).max(1) as usize,
                    ))),
                    members,
                )
            })
        },
    },
    Contender {
        look: look("xorf-binaryfuse8", "xor / binary fuse", (0, 0, 0), Triangle),
        facts: XOR_FACTS,
        make: |_, _, members, _| Ok(Some(Box::new(Fuse8::build(members)?))),
    },
    Contender {
        look: look(
            "xorf-binaryfuse16",
            "xor / binary fuse",
            (90, 90, 90),
            Diamond,
        ),
        facts: XOR_FACTS,
        make: |_, _, members, _| {
            let f = Xorf::build(
                "xorf-binaryfuse16",
                members,
                |h| {
                    xorf::BinaryFuse16::try_from(h)
                        .map_err(|e| anyhow::anyhow!("BinaryFuse16: {e}"))
                },
                |f| 2 * f.fingerprints.len(),
            )?;
            Ok(Some(Box::new(f)))
        },
    },
    Contender {
        look: look("xorf-xor8", "xor / binary fuse", (0, 100, 0), Circle),
        facts: XOR_FACTS,
        make: |_, _, members, _| {
            let f = Xorf::build(
                "xorf-xor8",
                members,
                |h| Ok(xorf::Xor8::from(h)),
                |f| f.fingerprints.len(),
            )?;
            Ok(Some(Box::new(f)))
        },
    },
    Contender {
        look: look("xorf-xor16", "xor / binary fuse", (128, 128, 0), Square),
        facts: XOR_FACTS,
        make: |_, _, members, _| {
            let f = Xorf::build(
                "xorf-xor16",
                members,
                |h| Ok(xorf::Xor16::from(h)),
                |f| 2 * f.fingerprints.len(),
            )?;
            Ok(Some(Box::new(f)))
        },
    },
    Contender {
        look: look("cuckoofilter", "cuckoo", (230, 159, 0), Triangle),
        facts: Facts {
            deletes: true,
            inserts: Inserts::UpToCapacity,
            sized_by: SizedBy::KeyCount,
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            // Its only recipe is a capacity; see `Cuckoo`.
            fpr_only(sizing, |_| {
                holding(
                    "cuckoofilter",
                    Box::new(Cuckoo(cuckoofilter::CuckooFilter::with_capacity(
                        n.max(1) as usize * 10 / 9 + 1,
                    ))),
                    members,
                )
            })
        },
    },
    Contender {
        look: look("scalable-cuckoo-filter", "cuckoo", (0, 158, 115), Diamond),
        facts: Facts {
            deletes: true,
            inserts: Inserts::Grows,
            sized_by: SizedBy::Rate,
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            fpr_only(sizing, |p| {
                holding(
                    "scalable-cuckoo-filter",
                    Box::new(ScalableCuckoo(
                        scalable_cuckoo_filter::ScalableCuckooFilter::new(
                            (n / GROWS_FROM).max(1) as usize,
                            p,
                        ),
                    )),
                    members,
                )
            })
        },
    },
    Contender {
        look: look("qfilter", "quotient", (153, 0, 76), Circle),
        facts: Facts {
            deletes: true,
            inserts: Inserts::UpToCapacity,
            sized_by: SizedBy::Rate,
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            fpr_only(sizing, |p| {
                holding(
                    "qfilter",
                    Box::new(Qfilter(
                        qfilter::Filter::new(n.max(1), p)
                            .map_err(|e| anyhow::anyhow!("qfilter: {e:?}"))?,
                    )),
                    members,
                )
            })
        },
    },
    Contender {
        look: look(
            probabilistic_collections::NAME,
            "quotient",
            (255, 187, 120),
            Diamond,
        ),
        facts: Facts {
            deletes: true,
            inserts: Inserts::UpToCapacity,
            sized_by: SizedBy::Rate,
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            fpr_only(sizing, |p| {
                let f = probabilistic_collections::ClassicQuotient::for_fpr(n, p);
                holding(probabilistic_collections::NAME, Box::new(f), members)
            })
        },
    },
    Contender {
        look: look(
            "fastbloom-rs-counting",
            "counting Bloom",
            (86, 180, 233),
            Square,
        ),
        facts: Facts {
            deletes: true,
            sized_by: SizedBy::Rate,
            ..Facts::BLOOM
        },
        make: |sizing, n, members, _| {
            fpr_only(sizing, |p| {
                holding(
                    "fastbloom-rs-counting",
                    Box::new(FastbloomRsCounting(
                        fastbloom_rs::FilterBuilder::new(n.max(1), p).build_counting_bloom_filter(),
                    )),
                    members,
                )
            })
        },
    },
];

/// `b` bits per key for `n` keys, rounded up.
fn bits(b: f64, n: u64) -> u64 {
    (b * n as f64).ceil() as u64
}

/// `make`'s filter for the rate of a [`Sizing::Fpr`]; `None` for a size in bits, which
/// the library does not take.
fn fpr_only(
    sizing: Sizing,
    make: impl FnOnce(f64) -> anyhow::Result<Option<Box<dyn LabFilter>>>,
) -> anyhow::Result<Option<Box<dyn LabFilter>>> {
    match sizing {
        Sizing::Fpr(p) => make(p),
        Sizing::BitsPerKey(_) => Ok(None),
    }
}

/// `f` holding `members` (`insert_batch`).
fn filled(
    mut f: Box<dyn LabFilter>,
    members: &[u64],
) -> anyhow::Result<Option<Box<dyn LabFilter>>> {
    f.insert_batch(members);
    Ok(Some(f))
}

/// Best k for the counting filter at this block count.
fn counting_best_k(blocks: u64, n: u64) -> u32 {
    (1..=16)
        .min_by(|&a, &b| {
            linebloom::fpr::counting(blocks, a, n)
                .total_cmp(&linebloom::fpr::counting(blocks, b, n))
        })
        .unwrap_or(1)
}

/// The contender called `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Contender> {
    CONTENDERS.iter().find(|c| c.name() == name)
}

/// The contender called `name`, or an error listing the names.
///
/// # Errors
///
/// An unknown name.
pub fn contender(name: &str) -> anyhow::Result<&'static Contender> {
    find(name).ok_or_else(|| {
        anyhow::anyhow!(
            "no contender called {name:?}; the contenders are: {}",
            names().collect::<Vec<_>>().join(", ")
        )
    })
}

/// The contenders' names, in order.
pub fn names() -> impl Iterator<Item = &'static str> + Clone {
    CONTENDERS.iter().map(Contender::name)
}

/// The names of the contenders whose row satisfies `pick`, in the table's order: how an
/// experiment says which contenders it measures.
pub fn names_where(pick: impl Fn(&Contender) -> bool) -> Vec<&'static str> {
    CONTENDERS
        .iter()
        .filter(|c| pick(c))
        .map(Contender::name)
        .collect()
}

/// Builds `name` for the `members` keys (inserting them), sized by `sizing`. `None`
/// when the contender cannot be sized that way.
///
/// # Errors
///
/// An unknown name, or the library's refusal of the sizing or the keys.
pub fn build(
    name: &str,
    sizing: Sizing,
    members: &[u64],
    kernel: &'static Kernel,
) -> anyhow::Result<Option<Box<dyn LabFilter>>> {
    build_sized(name, sizing, members.len() as u64, members, kernel)
}

/// Like [`build`], sized for `n` keys whatever the number of `members` inserted (two
/// filters of one recipe to merge, a filter to fill from several threads). The static
/// xor filters are built from `members` alone.
///
/// # Errors
///
/// As for [`build`].
pub fn build_sized(
    name: &str,
    sizing: Sizing,
    n: u64,
    members: &[u64],
    kernel: &'static Kernel,
) -> anyhow::Result<Option<Box<dyn LabFilter>>> {
    (contender(name)?.make)(sizing, n, members, kernel)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every contender holds its keys; those whose facts say they delete keep the rest
    /// after deleting half and lose most of the deleted ones, the others refuse to
    /// delete; an unknown name is refused with the list of names.
    #[test]
    fn every_contender_holds_its_keys_and_deletes_as_its_facts_say() {
        let keys: Vec<u64> = (0..2_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) & !1)
            .collect();
        for contender in CONTENDERS {
            let name = contender.name();
            let mut f = build(name, Sizing::Fpr(0.01), &keys, linebloom::arch::detect())
                .unwrap()
                .unwrap();
            // linebloom's blocked filter names its kernel too: `linebloom-avx2`.
            assert!(f.name().starts_with(name), "{} for {name}", f.name());
            assert!(
                keys.iter().all(|&k| f.contains(k)),
                "{name}: a key is missing"
            );
            assert!(f.bytes() > 0);
            let deletes = contender.facts.deletes;
            let (gone, kept) = keys.split_at(keys.len() / 2);
            for &k in gone {
                assert_eq!(f.remove(k).is_some(), deletes, "{name}");
            }
            assert!(
                kept.iter().all(|&k| f.contains(k)),
                "{name}: a kept key is missing"
            );
            if deletes {
                let still = gone.iter().filter(|&&k| f.contains(k)).count();
                assert!(
                    still < gone.len() / 10,
                    "{name}: {still} deleted keys still present"
                );
            }
        }
        let err = build(
            "no-such-filter",
            Sizing::Fpr(0.01),
            &keys,
            linebloom::arch::detect(),
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("qfilter"), "{err}");
    }

    /// The pass-level loops the timing experiments call answer exactly as a loop of
    /// per-key calls does, through `dyn LabFilter`; `insert_each` leaves no member out;
    /// `dedup_each` counts every key of a fresh filter new but for the few its own
    /// earlier keys cover, and none the second time.
    #[test]
    fn count_each_and_insert_each_agree_with_the_per_key_calls() {
        let members: Vec<u64> = (0..2_000u64).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let probes: Vec<u64> = (0..20_000u64).map(|i| (i << 1) | 1).collect();
        let params = Params::for_fpr(2_000, 0.01).unwrap();
        let mut filters: Vec<Box<dyn LabFilter>> = linebloom::arch::available()
            .map(|kernel| Box::new(blocked(params, kernel)) as Box<dyn LabFilter>)
            .collect();
        filters.push(Box::new(Sbbf::for_fpr(2_000, 0.01)));
        filters.push(Box::new(Renamed("control", Sbbf::for_fpr(2_000, 0.01))));
        filters.push(Box::new(Fastbloom::for_fpr(2_000, 0.01)));
        filters.push(Box::new(SplitBlock256::for_fpr(2_000, 0.01).unwrap()));
        for f in filters.iter_mut() {
            let fresh = f.dedup_each(&members[..1_000]);
            // A key already covered by earlier keys' bits is reported as seen: at 1%
            // and 1 000 keys, a few; 30 is beyond 6σ of a 1% binomial over 1 000.
            assert!((970..=1_000).contains(&fresh), "{}: {fresh} new", f.name());
            assert_eq!(f.dedup_each(&members[..1_000]), 0, "{}", f.name());
            f.insert_each(&members);
            assert_eq!(f.count_each(&members), members.len() as u64, "{}", f.name());
            let one_by_one = probes.iter().filter(|&&k| f.contains(k)).count() as u64;
            assert_eq!(f.count_each(&probes), one_by_one, "{}", f.name());
            // About 200 positives expected (1%), so the comparison is not of two zeros.
            assert!(
                one_by_one > 0,
                "{}: no positive among 20 000 probes",
                f.name()
            );
        }
    }
}
