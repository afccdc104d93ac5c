//! Opening a command's filter key, with the replies RedisBloom gives for what the key
//! holds: no key, a filter of the command's type, or anything else (`WRONGTYPE`). A
//! key still being loaded by `LOADCHUNK` answers every query and insert with an
//! error, never an "absent".

use crate::api::{Call, Held, Key};
use crate::args::ArgError;
use crate::datatype::Registered;
use crate::dump::Partial;
use crate::stored::Stored;

/// What a command found at its key.
pub enum Found<'k, F> {
    /// No such key.
    Missing,
    /// A whole filter.
    Live(&'k mut F),
}

/// RedisBloom's error for a missing filter where one is needed.
pub const NOT_FOUND: &std::ffi::CStr = c"ERR not found";
/// RedisBloom's error for a filter that already exists where a new one is asked for.
pub const EXISTS: &std::ffi::CStr = c"ERR item exists";
/// Redis's error for a key of another type.
pub const WRONG_TYPE: &std::ffi::CStr =
    c"WRONGTYPE Operation against a key holding the wrong kind of value";

/// The error for a filter that `LOADCHUNK` has not finished.
pub fn still_loading(partial: &Partial) -> String {
    let (have, all) = partial.progress();
    format!(
        "ERR the filter is being loaded by LOADCHUNK: {have} of {all} chunks received; \
         it answers once the last one is in"
    )
}

/// `F`'s filter at the key, or `None` after replying the error for a key of another
/// type or one still loading.
pub fn live<'k, F: Registered>(call: &Call, key: &'k mut Key) -> Option<Found<'k, F>> {
    match key.get(F::data_type()) {
        Held::Empty => Some(Found::Missing),
        Held::Ours(Stored::Live(f)) => Some(Found::Live(f)),
        Held::Ours(Stored::Loading(partial)) => {
            call.error(&still_loading(partial));
            None
        }
        Held::Other => {
            call.error_c(WRONG_TYPE);
            None
        }
    }
}

/// `F`'s filter at the key, created by `create` where there is none; `None` after
/// replying an error (another type, loading, or `create`'s own).
pub fn live_or_create<'k, F: Registered>(
    call: &Call,
    key: &'k mut Key,
    create: impl FnOnce() -> Result<F, String>,
) -> Option<(&'k mut F, bool)> {
    let created = matches!(key.get(F::data_type()), Held::Empty);
    if created {
        let made = create().and_then(|f| {
            key.set(F::data_type(), Stored::Live(f))
                .map_err(|_| "ERR could not store the filter".to_string())
        });
        if let Err(message) = made {
            call.error(&message);
            return None;
        }
    }
    match live::<F>(call, key)? {
        Found::Live(f) => Some((f, created)),
        Found::Missing => {
            call.error("ERR the filter vanished while it was created");
            None
        }
    }
}

/// Replies the error for refused arguments.
pub fn refuse(call: &Call, e: ArgError) {
    match e {
        ArgError::Arity => call.wrong_arity(),
        ArgError::Message(m) => call.error(&m),
    }
}

/// `BF.RESERVE` and `CF.RESERVE`: a new filter from `build` at argument 1, where no key
/// is; `parsed` is the arguments' verdict, checked first.
pub fn reserve<F: Registered, O>(
    call: &Call,
    parsed: Result<O, ArgError>,
    build: impl FnOnce(O) -> Result<F, String>,
) {
    let options = match parsed {
        Ok(o) => o,
        Err(e) => return refuse(call, e),
    };
    let mut key = call.key(1, true);
    match key.get(F::data_type()) {
        Held::Empty => {}
        Held::Ours(_) => return call.error_c(EXISTS),
        Held::Other => return call.error_c(WRONG_TYPE),
    }
    match build(options) {
        Ok(f) => {
            if key.set(F::data_type(), Stored::Live(f)).is_err() {
                return call.error("ERR could not store the filter");
            }
            call.ok();
            call.replicate_verbatim();
        }
        Err(message) => call.error(&message),
    }
}
