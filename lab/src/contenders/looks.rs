//! How every contender the lab names looks (filters, kernels, footprint builds, the
//! penetration scenario's defences, reference series): its structure, colour and marker,
//! set here once, so a contender looks the same in every plot, and every table groups
//! it the same way.
//! The style sits below the plotting, which reads it (`crate::support::plot`).
//!
//! Neighbours that share plots get different markers, so two series of close colours
//! still differ at a glance.

use crate::contenders::style::look;
pub use crate::contenders::style::{Look, Marker};
use Marker::{Circle, Diamond, Square, Triangle};

/// linebloom's kernels (a series `linebloom-<kernel>` takes its kernel's look).
pub const KERNELS: &[Look] = &[
    look("scalar", "", (120, 120, 120), Circle),
    look("portable", "", (25, 25, 112), Square),
    look("avx2", "", (44, 160, 44), Triangle),
    look("avx512", "", (214, 39, 40), Diamond),
    look("neon", "", (148, 103, 189), Circle),
];

/// The footprint experiment's builds: linebloom's red, lighter with the format and orange-brown with
/// the sizing, and sbbf-rs (the crate, not its safe port).
pub const BUILDS: &[Look] = &[
    look("linebloom+format", "", (240, 150, 150), Triangle),
    look("linebloom+sizing", "", (170, 70, 0), Diamond),
    look("sbbf-rs", "", (23, 190, 207), Square),
];

// The penetration scenario's defences, by name.
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
/// The linebloom module's `BF.*` (the scaling blocked filter) in the scenario.
pub const LINEBLOOM_MODULE_BF: &str = "linebloom-module-bf";
/// RedisBloom's `CF.*` (its cuckoo filter, which deletes) in the scenario.
pub const REDISBLOOM_CUCKOO: &str = "redisbloom-cuckoo";
/// The linebloom module's `CF.*` (vector quotient filters, which delete) in the
/// scenario.
pub const LINEBLOOM_MODULE_CF: &str = "linebloom-module-cf";

/// The penetration scenario's defences.
pub const SCENARIO: &[Look] = &[
    look(NO_PROTECTION, "", (127, 127, 127), Square),
    look(NULL_CACHING, "", (255, 127, 14), Triangle),
    look(IN_PROCESS, "", (214, 39, 40), Diamond),
    look(IN_REDIS, "", (148, 103, 189), Circle),
    look(REDISBLOOM, "", (0, 0, 0), Square),
    look(CLASSIC_SETBIT, "", (31, 119, 180), Triangle),
    look(LINEBLOOM_MODULE_BF, "", (44, 160, 44), Circle),
    look(REDISBLOOM_CUCKOO, "", (140, 86, 75), Triangle),
    look(LINEBLOOM_MODULE_CF, "", (23, 190, 207), Diamond),
];

/// Reference series: an exact set and the memory limit lines.
pub const REFERENCES: &[Look] = &[
    look("hashset", "", (100, 100, 100), Triangle),
    look("limit-independent", "", (0, 0, 0), Diamond),
    look("limit-dependent", "", (190, 190, 190), Circle),
];

/// Every list above.
pub const ALL: [&[Look]; 4] = [KERNELS, BUILDS, SCENARIO, REFERENCES];

/// Every defence the lab knows: the filters of the contender table
/// ([`crate::contenders::CONTENDERS`]), then the lists above.
pub fn every() -> impl Iterator<Item = &'static Look> + Clone {
    crate::contenders::CONTENDERS
        .iter()
        .map(|c| &c.look)
        .chain(ALL.iter().flat_map(|list| list.iter()))
}

/// The defence called `name`, if the lab knows it.
pub fn find(name: &str) -> Option<&'static Look> {
    every().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name appears once, so its look is set once.
    #[test]
    fn every_name_is_unique() {
        let mut names: Vec<&str> = every().map(|s| s.name).collect();
        let len = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), len);
    }

    /// Every filter has a structure, and the looks of a structure's members differ.
    #[test]
    fn filters_have_a_structure_and_distinct_looks() {
        let filters: Vec<&Look> = crate::contenders::CONTENDERS
            .iter()
            .map(|c| &c.look)
            .collect();
        for a in &filters {
            assert!(!a.structure.is_empty(), "{}", a.name);
            for b in filters.iter().filter(|b| b.name != a.name) {
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
