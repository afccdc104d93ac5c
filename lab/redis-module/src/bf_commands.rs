//! The `BF.*` commands: each parses its arguments, runs [`BfFilter`] and replies as
//! RedisBloom replies (integers on RESP2, booleans and maps on RESP3, its error texts).
//!
//! | command | reply |
//! |---|---|
//! | `BF.RESERVE key error_rate capacity [EXPANSION e] [NONSCALING]` | `OK` |
//! | `BF.ADD key item` | 1 new, 0 possibly present before |
//! | `BF.MADD key item…` | one such answer per item |
//! | `BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS item…` | as `BF.MADD` |
//! | `BF.EXISTS key item` / `BF.MEXISTS key item…` | 1 possibly present, 0 certainly absent |
//! | `BF.INFO key [CAPACITY\|SIZE\|FILTERS\|ITEMS\|EXPANSION]` | the fields, or one |
//! | `BF.CARD key` | items added (0 for no key) |
//! | `BF.SCANDUMP key position` / `BF.LOADCHUNK key position data` | a dump's pieces ([`crate::dump`]) |
//! | `BF.DEBUG key` | RedisBloom's lines, with this filter's numbers |
//!
//! As in RedisBloom, a query of a key that does not exist answers 0: a filter that was
//! deleted, expired or evicted answers "absent" for everything. (The guard of
//! `linebloom-redis-client` answers an error instead.) A filter still being loaded
//! answers an error.
//!
//! Writes replicate as the command itself, only where they changed something.
//!
//! `LOADCHUNK` refuses RedisBloom's own `SCANDUMP` output with an error that says so
//! (its bit layout and hash are not this filter's: add the items again), and anything
//! else with RedisBloom's texts, which its clients test for: `received bad data` for a
//! chunk that is not a piece of a linebloom dump, `invalid offset - no link found` for
//! a piece out of order or a filter already whole, `invalid chunk - Too big for current
//! filter` for a piece longer than its position takes. The server's log says which
//! check failed.

use crate::api::{Call, Held};
use crate::args;
use crate::bf::{AddError, BfFilter, BfOptions};
use crate::datatype::BF;
use crate::dump::{self, DumpError, Kind, Received};
use crate::lookup::{self, Found};
use crate::stored::{self, Stored};

fn create(options: BfOptions) -> impl FnOnce() -> Result<BfFilter, String> {
    move || BfFilter::new(options).map_err(|e| e.reply("could not"))
}

/// `BF.RESERVE`.
pub fn reserve(call: &Call) {
    let args: Vec<&[u8]> = call.args_from(0).collect();
    lookup::reserve(call, args::bf_reserve(&args), |o| create(o)());
}

/// Adds each item, replying one answer each; stops after a non-scaling filter's
/// "full", as RedisBloom does. Says whether anything changed.
fn add_items(call: &Call, f: &mut BfFilter, from: usize, multi: bool) -> bool {
    let mut changed = false;
    let mut replies = 0;
    let mut answer = |result| {
        replies += 1;
        match result {
            Ok(new) => {
                changed |= new;
                call.boolean(new);
                true
            }
            Err(AddError::Full) => {
                call.error_c(c"ERR non scaling filter is full");
                false
            }
            Err(AddError::Layer) => {
                call.error_c(c"ERR problem inserting into filter");
                true
            }
        }
    };
    if !multi {
        answer(f.add(call.arg(from)));
        return changed;
    }
    call.array_postponed();
    let items: Vec<&[u8]> = call.args_from(from).collect();
    f.add_many(&items, &mut answer);
    call.set_array_len(replies);
    changed
}

/// `BF.ADD` and `BF.MADD`.
fn add(call: &Call, multi: bool) {
    if (multi && call.argc() < 3) || (!multi && call.argc() != 3) {
        return call.wrong_arity();
    }
    let mut key = call.key(1, true);
    let Some((f, created)) = lookup::live_or_create(call, &mut key, create(BfOptions::default()))
    else {
        return;
    };
    if add_items(call, f, 2, multi) || created {
        call.replicate_verbatim();
    }
}

/// `BF.ADD`.
pub fn add_one(call: &Call) {
    add(call, false);
}

/// `BF.MADD`.
pub fn add_many(call: &Call) {
    add(call, true);
}

/// `BF.INSERT`.
pub fn insert(call: &Call) {
    let args: Vec<&[u8]> = call.args_from(0).collect();
    let parsed = match args::bf_insert(&args) {
        Ok(p) => p,
        Err(e) => return lookup::refuse(call, e),
    };
    let mut key = call.key(1, true);
    if !parsed.create && matches!(key.get(&BF), Held::Empty) {
        return call.error_c(lookup::NOT_FOUND);
    }
    let Some((f, created)) = lookup::live_or_create(call, &mut key, create(parsed.options)) else {
        return;
    };
    if add_items(call, f, parsed.items, true) || created {
        call.replicate_verbatim();
    }
}

/// `BF.EXISTS` and `BF.MEXISTS`.
fn exists(call: &Call, multi: bool) {
    if (multi && call.argc() < 3) || (!multi && call.argc() != 3) {
        return call.wrong_arity();
    }
    let mut key = call.key(1, false);
    let Some(found) = lookup::live::<BfFilter>(call, &mut key) else {
        return;
    };
    let Found::Live(f) = found else {
        if multi {
            call.array(call.argc() - 2);
        }
        (2..call.argc()).for_each(|_| call.boolean(false));
        return;
    };
    if !multi {
        return call.boolean(f.exists(call.arg(2)));
    }
    let items: Vec<&[u8]> = call.args_from(2).collect();
    let mut answers = vec![false; items.len()];
    f.exists_many(&items, &mut answers);
    call.array(answers.len());
    for a in answers {
        call.boolean(a);
    }
}

/// `BF.EXISTS`.
pub fn exists_one(call: &Call) {
    exists(call, false);
}

/// `BF.MEXISTS`.
pub fn exists_many(call: &Call) {
    exists(call, true);
}

/// The filter at argument 1 for `BF.INFO`, `BF.DEBUG` and `BF.SCANDUMP`, which need
/// one: a missing key is `not found`.
fn existing<'k>(call: &Call, key: &'k mut crate::api::Key) -> Option<&'k mut BfFilter> {
    match lookup::live::<BfFilter>(call, key)? {
        Found::Live(f) => Some(f),
        Found::Missing => {
            call.error_c(lookup::NOT_FOUND);
            None
        }
    }
}

/// `BF.INFO`.
pub fn info(call: &Call) {
    if !(2..=3).contains(&call.argc()) {
        return call.wrong_arity();
    }
    let mut key = call.key(1, false);
    let Some(f) = existing(call, &mut key) else {
        return;
    };
    let expansion = |call: &Call| match f.expansion() {
        Some(e) => call.integer(e as i64),
        None => call.null(),
    };
    let fields: [(&std::ffi::CStr, &str); 5] = [
        (c"Capacity", "CAPACITY"),
        (c"Size", "SIZE"),
        (c"Number of filters", "FILTERS"),
        (c"Number of items inserted", "ITEMS"),
        (c"Expansion rate", "EXPANSION"),
    ];
    let value = |call: &Call, i: usize| match i {
        0 => call.integer(f.capacity() as i64),
        1 => call.integer(stored::stored_bytes(&*f) as i64),
        2 => call.integer(f.layers() as i64),
        3 => call.integer(f.len() as i64),
        _ => expansion(call),
    };
    if call.argc() == 3 {
        let asked = call.arg(2);
        let Some(i) = fields
            .iter()
            .position(|(_, w)| asked.eq_ignore_ascii_case(w.as_bytes()))
        else {
            return call.error_c(c"Invalid information value");
        };
        // RedisBloom: a one-element array on RESP2, a one-field map on RESP3.
        if call.resp3() {
            call.map(1);
            call.simple(fields[i].0);
        } else {
            call.array(1);
        }
        return value(call, i);
    }
    call.map(fields.len());
    for (i, (name, _)) in fields.iter().enumerate() {
        call.simple(name);
        value(call, i);
    }
}

/// `BF.CARD`.
pub fn card(call: &Call) {
    if call.argc() != 2 {
        return call.wrong_arity();
    }
    let mut key = call.key(1, false);
    match lookup::live::<BfFilter>(call, &mut key) {
        Some(Found::Missing) => call.integer(0),
        Some(Found::Live(f)) => call.integer(f.len() as i64),
        None => {}
    }
}

/// `BF.DEBUG`: RedisBloom's lines (`size:…`, then one per layer), with this filter's
/// numbers: its blocks' bytes and bits, its `k`, the layer's capacity and items, and
/// the layer's target rate.
pub fn debug(call: &Call) {
    if call.argc() != 2 {
        return call.wrong_arity();
    }
    let mut key = call.key(1, false);
    let Some(f) = existing(call, &mut key) else {
        return;
    };
    let lines = f.debug_lines();
    call.array(lines.len());
    for line in lines {
        call.bulk(line.as_bytes());
    }
}

/// `BF.SCANDUMP`.
pub fn scandump(call: &Call) {
    if call.argc() != 3 {
        return call.wrong_arity();
    }
    let mut key = call.key(1, false);
    let Some(f) = existing(call, &mut key) else {
        return;
    };
    let Some(position) = args::integer(call.arg(2)) else {
        return call.error_c(c"ERR Second argument must be numeric");
    };
    let Ok(j) = u64::try_from(position) else {
        return call.error_c(c"ERR Invalid position");
    };
    let dump = dump::seal(Kind::Bf, &f.to_body());
    call.array(2);
    match dump::piece(&dump, j) {
        Some((next, bytes)) => {
            call.integer(next);
            call.bulk(bytes);
        }
        None => {
            call.integer(0);
            call.bulk(b"");
        }
    }
}

/// The refusal of RedisBloom's own first `SCANDUMP` chunk.
const FOREIGN: &std::ffi::CStr = c"ERR not a linebloom dump: this is RedisBloom's BF.SCANDUMP \
    output, whose bit layout and hash are not linebloom's, so it cannot load here (add the \
    items again with BF.MADD)";

/// `BF.LOADCHUNK`.
pub fn loadchunk(call: &Call) {
    if call.argc() != 4 {
        return call.wrong_arity();
    }
    let Some(position) = args::integer(call.arg(2)) else {
        return call.error_c(c"ERR Second argument must be numeric");
    };
    let data = call.arg(3);
    let mut key = call.key(1, true);
    let refused = |e: &DumpError| {
        call.log(c"notice", &format!("BF.LOADCHUNK refused a chunk: {e}"));
        match e {
            DumpError::Position { .. } => c"invalid offset - no link found",
            DumpError::PieceLength { expected, got } if *got as u64 > *expected => {
                c"invalid chunk - Too big for current filter"
            }
            _ => c"received bad data",
        }
    };
    let decoded = |body: &[u8]| {
        BfFilter::from_body(body).map_err(|why| {
            call.log(c"notice", &format!("BF.LOADCHUNK refused a dump: {why}"));
        })
    };
    match key.get(&BF) {
        Held::Empty if position == 1 => {
            let stored = match dump::start(Kind::Bf, data) {
                Ok(Received::Whole(body)) => match decoded(&body) {
                    Ok(f) => Stored::Live(f),
                    Err(()) => return call.error_c(c"received bad data"),
                },
                Ok(Received::Partial(p)) => Stored::Loading(p),
                Err(_) if dump::looks_like_redisbloom(Kind::Bf, data) => {
                    return call.error_c(FOREIGN);
                }
                Err(e) => return call.error_c(refused(&e)),
            };
            if key.set(&BF, stored).is_err() {
                return call.error("ERR could not store the filter");
            }
        }
        Held::Empty => return call.error_c(lookup::NOT_FOUND),
        Held::Ours(stored) => {
            let Stored::Loading(partial) = stored else {
                let e = DumpError::Position {
                    expected: 0,
                    got: position,
                };
                return call.error_c(refused(&e));
            };
            match partial.feed(position, data) {
                Ok(None) => {}
                Ok(Some(body)) => match decoded(&body) {
                    Ok(f) => *stored = Stored::Live(f),
                    Err(()) => {
                        key.delete();
                        return call.error_c(c"received bad data");
                    }
                },
                Err(e) => {
                    let message = refused(&e);
                    if partial.is_spoiled() {
                        key.delete();
                    }
                    return call.error_c(message);
                }
            }
        }
        Held::Other => return call.error_c(lookup::WRONG_TYPE),
    }
    call.ok();
    call.replicate_verbatim();
}
