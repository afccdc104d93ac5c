//! The contender table: every filter the lab builds, each entry with its name and look
//! (family, colour, marker) and its recipe, the one place either is written.
//! [`build`] and [`build_sized`] look a contender up by name; the order is the order
//! of the report's tables.

use super::families::{Cuckoo, FastbloomRsCounting, Qfilter, ScalableCuckoo, Xorf, holding};
use super::filter::Filter;
use super::split_block::SplitBlock256;
use super::vector_quotient::LinebloomQuotient;
use super::{
    BLOOMFILTER_SEED, Bloomfilter, Fastbloom, FastbloomAtomic, Fuse8, Growable, Linebloom, Sbbf,
    blocked,
};
use crate::style::{
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
    fn(Sizing, u64, &[u64], &'static Kernel) -> anyhow::Result<Option<Box<dyn Filter>>>;

/// One filter the lab builds.
pub struct Contender {
    /// Its name (in every CSV, legend and table), family, colour and marker.
    pub look: Look,
    /// How it is built.
    pub make: Recipe,
}

/// Every filter the lab builds, in the order the tables list them.
pub const CONTENDERS: &[Contender] = &[
    Contender {
        look: look("linebloom", "blocked Bloom", (214, 39, 40), Square),
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
        make: |sizing, n, members, _| {
            let params = match sizing {
                Sizing::Fpr(p) => ClassicParams::for_fpr(n, p)?,
                Sizing::BitsPerKey(b) => {
                    let k = ((b * std::f64::consts::LN_2).round() as u32)
                        .clamp(1, linebloom::params::MAX_CLASSIC_K);
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
        look: look(
            super::vector_quotient::NAME,
            "quotient",
            (120, 20, 20),
            Triangle,
        ),
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
                super::vector_quotient::NAME,
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
        make: |sizing, n, members, _| {
            // Start at a hundredth of the keys: the filter grows about 7 layers.
            fpr_only(sizing, |p| {
                filled(
                    Box::new(Linebloom(ScalableBloomFilter::for_fpr(
                        (n / 100).max(1),
                        p,
                    )?)),
                    members,
                )
            })
        },
    },
    Contender {
        look: look("linebloom-atomic", "blocked Bloom", (188, 189, 34), Diamond),
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
        make: |sizing, n, members, _| {
            // Sized for a hundredth of the keys, so it grows, as the scalable filter does.
            fpr_only(sizing, |p| {
                filled(
                    Box::new(Growable(growable_bloom_filter::GrowableBloom::new(
                        p,
                        (n as usize / 100).max(1),
                    ))),
                    members,
                )
            })
        },
    },
    Contender {
        look: look("xorf-binaryfuse8", "xor / binary fuse", (0, 0, 0), Triangle),
        make: |_, _, members, _| Ok(Some(Box::new(Fuse8::build(members)?))),
    },
    Contender {
        look: look(
            "xorf-binaryfuse16",
            "xor / binary fuse",
            (90, 90, 90),
            Diamond,
        ),
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
        make: |sizing, n, members, _| {
            fpr_only(sizing, |p| {
                holding(
                    "scalable-cuckoo-filter",
                    Box::new(ScalableCuckoo(
                        scalable_cuckoo_filter::ScalableCuckooFilter::new(
                            (n as usize / 100).max(1),
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
            "fastbloom-rs-counting",
            "counting Bloom",
            (86, 180, 233),
            Square,
        ),
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
    make: impl FnOnce(f64) -> anyhow::Result<Option<Box<dyn Filter>>>,
) -> anyhow::Result<Option<Box<dyn Filter>>> {
    match sizing {
        Sizing::Fpr(p) => make(p),
        Sizing::BitsPerKey(_) => Ok(None),
    }
}

/// `f` holding `members` (`insert_batch`).
fn filled(mut f: Box<dyn Filter>, members: &[u64]) -> anyhow::Result<Option<Box<dyn Filter>>> {
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

/// The contender called `name`, or an error listing the names.
///
/// # Errors
///
/// An unknown name.
pub fn contender(name: &str) -> anyhow::Result<&'static Contender> {
    CONTENDERS
        .iter()
        .find(|c| c.look.name == name)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "no contender called {name:?}; the contenders are: {}",
                names().collect::<Vec<_>>().join(", ")
            )
        })
}

/// The contenders' names, in order.
pub fn names() -> impl Iterator<Item = &'static str> + Clone {
    CONTENDERS.iter().map(|c| c.look.name)
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
) -> anyhow::Result<Option<Box<dyn Filter>>> {
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
) -> anyhow::Result<Option<Box<dyn Filter>>> {
    (contender(name)?.make)(sizing, n, members, kernel)
}

#[cfg(test)]
mod tests {
    use super::{Sizing, build};

    /// Every family beyond the Bloom filters holds its keys; those that delete keep the
    /// rest after deleting half; an unknown name is refused with the list of names.
    #[test]
    fn every_family_holds_its_keys_and_deletes_where_it_can() {
        let keys: Vec<u64> = (0..2_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) & !1)
            .collect();
        for name in [
            "cuckoofilter",
            "scalable-cuckoo-filter",
            "qfilter",
            "linebloom-quotient",
            "fastbloom-rs-counting",
            "xorf-xor8",
            "xorf-xor16",
            "xorf-binaryfuse16",
        ] {
            let mut f = build(name, Sizing::Fpr(0.01), &keys, linebloom::arch::detect())
                .unwrap()
                .unwrap();
            assert_eq!(f.name(), name);
            assert!(
                keys.iter().all(|&k| f.contains(k)),
                "{name}: a key is missing"
            );
            assert!(f.bytes() > 0);
            let deletes = name.contains("cuckoo")
                || name.contains("quotient")
                || name == "qfilter"
                || name.contains("counting");
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
}
