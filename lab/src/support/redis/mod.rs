//! The lab's Redis plumbing (feature `redis`): connections to one server or a cluster
//! with clear errors ([`connection`]), and the one key prefix a run claims and removes
//! ([`namespace`]). The penetration scenario, the live page, the Redis tests and the
//! Redis benchmarks share them.

pub mod connection;
pub mod namespace;
