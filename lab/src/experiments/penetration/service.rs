//! The service under test: one request served through guard, cache and database, and
//! how it was answered.

use super::cache::{Cache, Cached};
use super::db::Db;
use super::guard::Guard;

/// What answered one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The filter said "certainly absent": answered empty at once.
    Rejected,
    /// The cache.
    CacheHit,
    /// The database, with a product.
    Found,
    /// The database, with nothing.
    Empty,
}

/// How one request was answered, and whether the guard or the cache could not be
/// checked on the way (a *degraded* request, which goes on as "maybe").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// What answered it.
    pub answer: Answer,
    /// The guard or the cache failed and was passed over.
    pub degraded: bool,
}

/// Serves one request for `key`: guard, then cache, then database. A guard or cache that
/// cannot be checked makes the request *degraded* and it goes on as "maybe": the answer
/// is never "absent" for a key nobody could check. Only a database failure is an error.
pub fn serve(
    guard: &mut dyn Guard,
    cache: &mut dyn Cache,
    db: &Db,
    key: u64,
    null_caching: bool,
) -> anyhow::Result<Outcome> {
    let mut degraded = false;
    match guard.might_contain(key) {
        Ok(false) => {
            return Ok(Outcome {
                answer: Answer::Rejected,
                degraded,
            });
        }
        Ok(true) => {}
        Err(_) => degraded = true,
    }
    match cache.get(key) {
        Ok(Some(_)) => {
            return Ok(Outcome {
                answer: Answer::CacheHit,
                degraded,
            });
        }
        Ok(None) => {}
        Err(_) => degraded = true,
    }
    let found = db.get(key)?;
    // Cache writes are best effort: a failed write only costs a later miss.
    let _ = match &found {
        Some(name) => cache.set(key, &Cached::Value(name.clone())),
        None if null_caching => cache.set(key, &Cached::Empty),
        None => Ok(()),
    };
    Ok(Outcome {
        answer: if found.is_some() {
            Answer::Found
        } else {
            Answer::Empty
        },
        degraded,
    })
}
