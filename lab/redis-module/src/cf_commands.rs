//! The `CF.*` commands: each parses its arguments, runs [`CfFilter`] and replies as
//! RedisBloom replies (integers on RESP2, booleans on RESP3 where RedisBloom gives
//! them, its error texts).
//!
//! | command | reply |
//! |---|---|
//! | `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]` | `OK` |
//! | `CF.ADD key item` | 1 (a copy is stored even if one was) |
//! | `CF.ADDNX key item` | 1 stored, 0 possibly present (nothing stored) |
//! | `CF.INSERT` / `CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item…` | per item: as `CF.ADD` / `CF.ADDNX`, -1 where the filter is full |
//! | `CF.EXISTS key item` / `CF.MEXISTS key item…` | 1 possibly present, 0 certainly absent |
//! | `CF.COUNT key item` | copies of the item's fingerprint held |
//! | `CF.DEL key item` | 1 a copy was removed, 0 none was held |
//! | `CF.INFO key` | size, buckets, layers, items, deletes, and the options as given |
//! | `CF.COMPACT key` | `OK`: a quotient filter has no kicked items to move back |
//! | `CF.SCANDUMP key position` / `CF.LOADCHUNK key position data` | a dump's pieces ([`crate::dump`]) |
//! | `CF.DEBUG key` | RedisBloom's line, with this filter's numbers |
//!
//! As in RedisBloom, a query of a key that does not exist answers 0. `CF.SCANDUMP` of a
//! filter with no items answers `0` and a null, as RedisBloom's does. `LOADCHUNK`
//! refuses RedisBloom's own `SCANDUMP` output with an error that says so, and anything
//! else with RedisBloom's texts: `Couldn't create filter!` for a first chunk that is not
//! a piece of a linebloom dump, `Couldn't load chunk!` for any later one that does not
//! fit, `Invalid position` for position 0; the server's log says which check failed.

use crate::api::{Call, Held};
use crate::args;
use crate::cf::{CfFilter, CfOptions, Refused};
use crate::datatype::CF;
use crate::dump::{self, Kind, Received};
use crate::lookup::{self, Found};
use crate::stored::{self, Stored};

fn create(options: CfOptions) -> impl FnOnce() -> Result<CfFilter, String> {
    move || CfFilter::new(options).map_err(|e| e.reply("Could not"))
}

fn refused_text(r: Refused) -> &'static std::ffi::CStr {
    match r {
        Refused::Full => c"Filter is full",
        Refused::MaxLayers => c"Maximum expansions reached",
        Refused::TooLarge => c"ERR Insufficient memory",
    }
}

/// `CF.RESERVE`.
pub fn reserve(call: &Call) {
    let args: Vec<&[u8]> = call.args_from(0).collect();
    lookup::reserve(call, args::cf_reserve(&args), |o| create(o)());
}

/// Stores `item` (unless `nx` and it is possibly present): `Ok(true)` stored.
fn store(f: &mut CfFilter, item: &[u8], nx: bool) -> Result<bool, Refused> {
    if nx {
        f.add_new(item)
    } else {
        f.add(item).map(|()| true)
    }
}

/// `CF.ADD` and `CF.ADDNX`.
fn add(call: &Call, nx: bool) {
    if call.argc() != 3 {
        return call.wrong_arity();
    }
    let mut key = call.key(1, true);
    let Some((f, created)) = lookup::live_or_create(call, &mut key, create(CfOptions::default()))
    else {
        return;
    };
    match store(f, call.arg(2), nx) {
        Ok(stored) => {
            call.boolean(stored);
            if stored || created {
                call.replicate_verbatim();
            }
        }
        Err(r) => {
            call.error_c(refused_text(r));
            if created {
                call.replicate_verbatim();
            }
        }
    }
}

/// `CF.ADD`.
pub fn add_one(call: &Call) {
    add(call, false);
}

/// `CF.ADDNX`.
pub fn add_new(call: &Call) {
    add(call, true);
}

/// `CF.INSERT` and `CF.INSERTNX`.
fn insert(call: &Call, nx: bool) {
    let args: Vec<&[u8]> = call.args_from(0).collect();
    let parsed = match args::cf_insert(&args) {
        Ok(p) => p,
        Err(e) => return lookup::refuse(call, e),
    };
    let mut key = call.key(1, true);
    if !parsed.create && matches!(key.get(&CF), Held::Empty) {
        return call.error_c(lookup::NOT_FOUND);
    }
    let options = CfOptions {
        capacity: parsed.options,
        ..CfOptions::default()
    };
    let Some((f, created)) = lookup::live_or_create(call, &mut key, create(options)) else {
        return;
    };
    let mut changed = created;
    call.array(call.argc() - parsed.items);
    for item in call.args_from(parsed.items) {
        match store(f, item, nx) {
            Ok(stored) => {
                changed |= stored;
                // RedisBloom: booleans on RESP3 for CF.INSERT, integers for CF.INSERTNX.
                if nx {
                    call.integer(i64::from(stored))
                } else {
                    call.boolean(stored)
                }
            }
            Err(_) if call.resp3() && !nx => call.boolean(false),
            Err(_) => call.integer(-1),
        }
    }
    if changed {
        call.replicate_verbatim();
    }
}

/// `CF.INSERT`.
pub fn insert_all(call: &Call) {
    insert(call, false);
}

/// `CF.INSERTNX`.
pub fn insert_new(call: &Call) {
    insert(call, true);
}

/// What a lookup command answers per item.
#[derive(Clone, Copy)]
enum Query {
    Exists,
    Count,
}

fn query(call: &Call, what: Query, multi: bool) {
    if (multi && call.argc() < 3) || (!multi && call.argc() != 3) {
        return call.wrong_arity();
    }
    let mut key = call.key(1, false);
    let Some(found) = lookup::live::<CfFilter>(call, &mut key) else {
        return;
    };
    if let (Found::Live(f), Query::Exists, true) = (&found, what, multi) {
        let items: Vec<&[u8]> = call.args_from(2).collect();
        let mut answers = vec![false; items.len()];
        f.exists_many(&items, &mut answers);
        call.array(answers.len());
        for a in answers {
            call.boolean(a);
        }
        return;
    }
    if multi {
        call.array(call.argc() - 2);
    }
    for item in call.args_from(2) {
        match (&found, what) {
            (Found::Missing, Query::Exists) => call.boolean(false),
            (Found::Missing, Query::Count) => call.integer(0),
            (Found::Live(f), Query::Exists) => call.boolean(f.exists(item)),
            (Found::Live(f), Query::Count) => call.integer(f.count(item) as i64),
        }
    }
}

/// `CF.EXISTS`.
pub fn exists_one(call: &Call) {
    query(call, Query::Exists, false);
}

/// `CF.MEXISTS`.
pub fn exists_many(call: &Call) {
    query(call, Query::Exists, true);
}

/// `CF.COUNT`.
pub fn count(call: &Call) {
    query(call, Query::Count, false);
}

/// `CF.DEL`.
pub fn delete(call: &Call) {
    if call.argc() != 3 {
        return call.wrong_arity();
    }
    let mut key = call.key(1, true);
    match lookup::live::<CfFilter>(call, &mut key) {
        None => {}
        Some(Found::Missing) => call.error_c(c"Not found"),
        Some(Found::Live(f)) => {
            let removed = f.delete(call.arg(2));
            call.boolean(removed);
            if removed {
                call.replicate_verbatim();
            }
        }
    }
}

/// The filter at argument 1 for the commands that need one.
fn existing<'k>(
    call: &Call,
    key: &'k mut crate::api::Key,
    missing: &std::ffi::CStr,
) -> Option<&'k mut CfFilter> {
    match lookup::live::<CfFilter>(call, key)? {
        Found::Live(f) => Some(f),
        Found::Missing => {
            call.error_c(missing);
            None
        }
    }
}

/// `CF.COMPACT`: nothing to do (see the module docs).
pub fn compact(call: &Call) {
    if call.argc() != 2 {
        return call.wrong_arity();
    }
    let mut key = call.key(1, true);
    if existing(call, &mut key, c"Cuckoo filter was not found").is_some() {
        call.ok();
    }
}

/// `CF.INFO`.
pub fn info(call: &Call) {
    if call.argc() != 2 {
        return call.wrong_arity();
    }
    let mut key = call.key(1, false);
    let Some(f) = existing(call, &mut key, lookup::NOT_FOUND) else {
        return;
    };
    let o = f.options();
    let fields: [(&std::ffi::CStr, u64); 8] = [
        (c"Size", stored::stored_bytes(&*f) as u64),
        (c"Number of buckets", f.buckets()),
        (c"Number of filters", f.layers() as u64),
        (c"Number of items inserted", f.items()),
        (c"Number of items deleted", f.deletes()),
        (c"Bucket size", o.bucket_size),
        (c"Expansion rate", o.expansion),
        (c"Max iterations", o.max_iterations),
    ];
    call.map(fields.len());
    for (name, value) in fields {
        call.simple(name);
        call.integer(value as i64);
    }
}

/// `CF.DEBUG`: RedisBloom's line, with this filter's numbers.
pub fn debug(call: &Call) {
    if call.argc() != 2 {
        return call.wrong_arity();
    }
    let mut key = call.key(1, false);
    let Some(f) = existing(call, &mut key, lookup::NOT_FOUND) else {
        return;
    };
    let o = f.options();
    let line = format!(
        "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
        o.bucket_size,
        f.buckets(),
        f.items(),
        f.deletes(),
        f.layers(),
        o.max_iterations,
        o.expansion
    );
    call.bulk(line.as_bytes());
}

/// `CF.SCANDUMP`.
pub fn scandump(call: &Call) {
    if call.argc() != 3 {
        return call.wrong_arity();
    }
    let Some(Ok(j)) = args::integer(call.arg(2)).map(u64::try_from) else {
        return call.error_c(c"Invalid position");
    };
    let mut key = call.key(1, false);
    let Some(f) = existing(call, &mut key, lookup::NOT_FOUND) else {
        return;
    };
    call.array(2);
    let dump = (f.items() > 0).then(|| dump::seal(Kind::Cf, &f.to_body()));
    match dump.as_deref().and_then(|d| dump::piece(d, j)) {
        Some((next, bytes)) => {
            call.integer(next);
            call.bulk(bytes);
        }
        None => {
            call.integer(0);
            call.null();
        }
    }
}

/// The refusal of RedisBloom's own first `SCANDUMP` chunk.
const FOREIGN: &std::ffi::CStr = c"ERR not a linebloom dump: this is RedisBloom's CF.SCANDUMP \
    output, a cuckoo table that is not a vector quotient filter, so it cannot load here (add \
    the items again with CF.INSERT)";

/// `CF.LOADCHUNK`.
pub fn loadchunk(call: &Call) {
    if call.argc() != 4 {
        return call.wrong_arity();
    }
    let position = match args::integer(call.arg(2)) {
        Some(p) if p != 0 => p,
        _ => return call.error_c(c"Invalid position"),
    };
    let data = call.arg(3);
    let mut key = call.key(1, true);
    let log = |what: &str, why: &dyn std::fmt::Display| {
        call.log(c"notice", &format!("CF.LOADCHUNK refused {what}: {why}"));
    };
    match key.get(&CF) {
        Held::Empty if position == 1 => {
            let stored = match dump::start(Kind::Cf, data) {
                Ok(Received::Whole(body)) => match CfFilter::from_body(&body) {
                    Ok(f) => Stored::Live(f),
                    Err(why) => {
                        log("a dump", &why);
                        return call.error_c(c"Couldn't create filter!");
                    }
                },
                Ok(Received::Partial(p)) => Stored::Loading(p),
                Err(_) if dump::looks_like_redisbloom(Kind::Cf, data) => {
                    return call.error_c(FOREIGN);
                }
                Err(e) => {
                    log("a first chunk", &e);
                    return call.error_c(c"Couldn't create filter!");
                }
            };
            if key.set(&CF, stored).is_err() {
                return call.error("ERR could not store the filter");
            }
        }
        Held::Empty => return call.error_c(lookup::NOT_FOUND),
        Held::Ours(_) if position == 1 => return call.error_c(lookup::EXISTS),
        Held::Ours(stored) => {
            let Stored::Loading(partial) = stored else {
                log("a chunk", &"the filter is whole already");
                return call.error_c(c"Couldn't load chunk!");
            };
            match partial.feed(position, data) {
                Ok(None) => {}
                Ok(Some(body)) => match CfFilter::from_body(&body) {
                    Ok(f) => *stored = Stored::Live(f),
                    Err(why) => {
                        log("a dump", &why);
                        key.delete();
                        return call.error_c(c"Couldn't load chunk!");
                    }
                },
                Err(e) => {
                    log("a chunk", &e);
                    if partial.is_spoiled() {
                        key.delete();
                    }
                    return call.error_c(c"Couldn't load chunk!");
                }
            }
        }
        Held::Other => return call.error_c(lookup::WRONG_TYPE),
    }
    call.ok();
    call.replicate_verbatim();
}
