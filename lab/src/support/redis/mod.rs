//! The lab's Redis plumbing (feature `redis`): connections to one server or a cluster
//! with clear errors ([`connection`]), the one key prefix a run claims and removes
//! ([`namespace`]), and the server's count of its work per command ([`commandstats`]).
//! The penetration scenario, the live page, the Redis tests and the Redis benchmarks
//! share them.

pub mod commandstats;
pub mod connection;
pub mod namespace;
