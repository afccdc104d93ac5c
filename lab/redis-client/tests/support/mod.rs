//! What the tests of the guard's rule share: a server with the module and one without,
//! the check that every acknowledged key answers "present" or an error, and a shape.

// Each test file uses some of these.
#![allow(dead_code)]

use linebloom::Params;
use linebloom_redis_client::RedisFilter;
use linebloom_redis_testing::{Modules, Server};

/// One server without the module and one with it, each in its own folder.
pub fn both_servers(dir: &std::path::Path, extra: &[&str]) -> Option<Vec<(&'static str, Server)>> {
    let plain = Server::start_with(&dir.join("plain"), Modules::NONE, extra)?;
    let module = Server::start_with(&dir.join("module"), Modules::LINEBLOOM, extra)?;
    Some(vec![
        ("without the module", plain),
        ("with the module", module),
    ])
}

/// Every key of `keys` answers present or an error through `filter`; returns how many
/// errors. Panics on any "absent".
pub fn never_absent(
    filter: &RedisFilter,
    con: &mut redis::Connection,
    keys: &[u64],
    what: &str,
) -> usize {
    let mut errors = 0;
    for chunk in keys.chunks(500) {
        match filter.contains_many(con, chunk) {
            Ok(answers) => {
                let absent = answers.iter().filter(|&&a| !a).count();
                assert_eq!(
                    absent, 0,
                    "{what}: {absent} acknowledged keys answered absent"
                );
            }
            Err(_) => {
                // Check each key alone: a shard that is gone errors only its keys.
                for key in chunk {
                    match filter.contains(con, key) {
                        Ok(present) => assert!(present, "{what}: key {key} answered absent"),
                        Err(_) => errors += 1,
                    }
                }
            }
        }
    }
    errors
}

/// A filter's shape for `n` keys at 1%.
pub fn params(n: u64) -> Params {
    Params::for_fpr(n, 0.01).unwrap()
}
