//! Every contender the lab names (filters, kernels, footprint builds, the penetration
//! scenario's schemes, reference series) with its family, colour and marker, set here
//! once: a scheme looks the same in every plot, and every table groups it the same way.
//!
//! Neighbours that share plots get different markers, so two series of close colours
//! still differ at a glance.

use crate::plot::Marker::{self, Circle, Diamond, Square, Triangle};
use plotters::style::RGBColor;

/// One named contender.
#[derive(Clone, Copy, Debug)]
pub struct Scheme {
    /// The name in every CSV, legend and table.
    pub name: &'static str,
    /// The filter family, for the filters [`crate::rivals::build`] makes (`""` for
    /// the rest).
    pub family: &'static str,
    /// Its colour in every plot.
    pub colour: RGBColor,
    /// Its marker in every plot.
    pub marker: Marker,
}

const fn scheme(
    name: &'static str,
    family: &'static str,
    rgb: (u8, u8, u8),
    marker: Marker,
) -> Scheme {
    Scheme {
        name,
        family,
        colour: RGBColor(rgb.0, rgb.1, rgb.2),
        marker,
    }
}

/// Every filter [`crate::rivals::build`] makes, in the order the tables list them.
pub const FILTERS: &[Scheme] = &[
    scheme("linebloom", "blocked Bloom", (214, 39, 40), Square),
    scheme("linebloom-classic", "classic Bloom", (255, 127, 14), Circle),
    scheme(
        "linebloom-counting",
        "counting Bloom",
        (140, 86, 75),
        Square,
    ),
    scheme(
        "linebloom-scalable",
        "scalable Bloom",
        (227, 119, 194),
        Triangle,
    ),
    scheme("linebloom-atomic", "blocked Bloom", (188, 189, 34), Diamond),
    scheme("sbbf-rs-safe", "blocked Bloom", (23, 190, 207), Circle),
    scheme("split-block-256", "blocked Bloom", (0, 110, 110), Diamond),
    scheme("fastbloom", "blocked Bloom", (31, 119, 180), Triangle),
    scheme(
        "fastbloom-atomic",
        "blocked Bloom",
        (120, 170, 215),
        Diamond,
    ),
    scheme("bloomfilter", "classic Bloom", (200, 0, 200), Circle),
    scheme(
        "growable-bloom-filter",
        "scalable Bloom",
        (148, 103, 189),
        Square,
    ),
    scheme("xorf-binaryfuse8", "xor / binary fuse", (0, 0, 0), Triangle),
    scheme(
        "xorf-binaryfuse16",
        "xor / binary fuse",
        (90, 90, 90),
        Diamond,
    ),
    scheme("xorf-xor8", "xor / binary fuse", (0, 100, 0), Circle),
    scheme("xorf-xor16", "xor / binary fuse", (128, 128, 0), Square),
    scheme("cuckoofilter", "cuckoo", (230, 159, 0), Triangle),
    scheme("scalable-cuckoo-filter", "cuckoo", (0, 158, 115), Diamond),
    scheme("qfilter", "quotient", (153, 0, 76), Circle),
    scheme(
        "fastbloom-rs-counting",
        "counting Bloom",
        (86, 180, 233),
        Square,
    ),
];

/// linebloom's kernels (a series `linebloom-<kernel>` takes its kernel's look).
pub const KERNELS: &[Scheme] = &[
    scheme("scalar", "", (120, 120, 120), Circle),
    scheme("portable", "", (25, 25, 112), Square),
    scheme("avx2", "", (44, 160, 44), Triangle),
    scheme("avx512", "", (214, 39, 40), Diamond),
    scheme("neon", "", (148, 103, 189), Circle),
];

/// The footprint experiment's builds: linebloom's red, lighter and darker, and sbbf-rs (the crate, not its safe port).
pub const BUILDS: &[Scheme] = &[
    scheme("linebloom+format", "", (240, 150, 150), Triangle),
    scheme("linebloom+sizing", "", (120, 20, 20), Diamond),
    scheme("sbbf-rs", "", (23, 190, 207), Square),
];

// The penetration scenario's schemes, by name.
/// No filter in front of cache and database.
pub const NO_PROTECTION: &str = "no-protection";
/// No filter; empty results cached with the TTL.
pub const NULL_CACHING: &str = "null-caching";
/// linebloom's counting filter in the service's process.
pub const IN_PROCESS: &str = "linebloom-in-process";
/// linebloom's blocked filter held in Redis.
pub const IN_REDIS: &str = "linebloom-in-redis";
/// RedisBloom's `BF.*` filter.
pub const REDISBLOOM: &str = "redisbloom";
/// The classic filter over Redis `SETBIT`/`GETBIT`.
pub const CLASSIC_SETBIT: &str = "classic-setbit-redis";

/// The penetration scenario's schemes.
pub const SCENARIO: &[Scheme] = &[
    scheme(NO_PROTECTION, "", (127, 127, 127), Square),
    scheme(NULL_CACHING, "", (255, 127, 14), Triangle),
    scheme(IN_PROCESS, "", (214, 39, 40), Diamond),
    scheme(IN_REDIS, "", (148, 103, 189), Circle),
    scheme(REDISBLOOM, "", (0, 0, 0), Square),
    scheme(CLASSIC_SETBIT, "", (31, 119, 180), Triangle),
];

/// Reference series: an exact set and the memory limit lines.
pub const REFERENCES: &[Scheme] = &[
    scheme("hashset", "", (100, 100, 100), Triangle),
    scheme("limit-independent", "", (0, 0, 0), Diamond),
    scheme("limit-dependent", "", (190, 190, 190), Circle),
];

/// Every list above.
pub const ALL: [&[Scheme]; 5] = [FILTERS, KERNELS, BUILDS, SCENARIO, REFERENCES];

/// The scheme called `name`, if the lab knows it.
pub fn find(name: &str) -> Option<&'static Scheme> {
    ALL.iter()
        .flat_map(|list| list.iter())
        .find(|s| s.name == name)
}

/// The names of [`FILTERS`], in order.
pub fn filter_names() -> impl Iterator<Item = &'static str> + Clone {
    FILTERS.iter().map(|s| s.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name appears once, so its look is set once.
    #[test]
    fn every_name_is_unique() {
        let mut names: Vec<&str> = ALL.iter().flat_map(|l| l.iter()).map(|s| s.name).collect();
        let len = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), len);
    }

    /// Every filter has a family, and the look of each family's members differs.
    #[test]
    fn filters_have_a_family_and_distinct_looks() {
        for a in FILTERS {
            assert!(!a.family.is_empty(), "{}", a.name);
            for b in FILTERS.iter().filter(|b| b.name != a.name) {
                assert!(
                    a.colour != b.colour || a.marker != b.marker,
                    "{} and {} look the same",
                    a.name,
                    b.name
                );
            }
        }
    }
}
