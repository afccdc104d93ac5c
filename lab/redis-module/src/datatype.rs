//! The two Redis data types, `linebl-bf` (the values of `BF.*`) and `linebl-cf` (of
//! `CF.*`), and the callbacks that make them keys like any other: RDB save and load
//! (also `DUMP`/`RESTORE`, `DEBUG RELOAD` and a replica's full sync), the append-only
//! file's rewrite, `MEMORY USAGE`, `COPY`, `DEBUG DIGEST-VALUE`, and freeing.
//!
//! A key holds a [`Stored`] value ([`crate::stored`]), saved as its bytes at encoding
//! version [`ENCODING`]; loading checks them as `LOADCHUNK` does, so a corrupt file or
//! payload is refused ("Bad data format" from `RESTORE`, a failed load for an RDB file)
//! and never crashes the server.
//!
//! An append-only rewrite writes each key as its dump's pieces, one `LOADCHUNK` each,
//! under the names the module was loaded with, which a server replaying the file runs
//! like any client's.

use crate::api::{self, DataType, Io};
use crate::bf::BfFilter;
use crate::cf::CfFilter;
use crate::dump::{self, Kind};
use crate::stored::{Body, Stored};
use redis_module::raw;
use std::ffi::{CStr, CString, c_int, c_void};
use std::sync::OnceLock;

/// The encoding version of both types' RDB values: a change to what [`Io::save`] writes
/// (beyond the dump's own versioned frame) bumps it.
pub const ENCODING: i32 = 1;

/// A filter type registered with Redis: the data type its keys hold.
pub trait Registered: Body {
    /// The registered type.
    fn data_type() -> &'static DataType<Stored<Self>>;
}

/// The data type of `BF.*` values.
pub static BF: DataType<Stored<BfFilter>> = DataType::new();
/// The data type of `CF.*` values.
pub static CF: DataType<Stored<CfFilter>> = DataType::new();

impl Registered for BfFilter {
    fn data_type() -> &'static DataType<Stored<Self>> {
        &BF
    }
}

impl Registered for CfFilter {
    fn data_type() -> &'static DataType<Stored<Self>> {
        &CF
    }
}

/// The `LOADCHUNK` command names an append-only rewrite writes, per kind, set once when
/// the module loads (they carry its namespace).
static LOADCHUNK_NAMES: OnceLock<[CString; 2]> = OnceLock::new();

fn loadchunk_name(kind: Kind) -> &'static CStr {
    let names = LOADCHUNK_NAMES
        .get()
        .expect("set in OnLoad, before any rewrite");
    &names[kind as usize - 1]
}

/// Registers both types. `bf_loadchunk` and `cf_loadchunk` are the command names an
/// append-only rewrite writes.
///
/// # Safety
///
/// `ctx` is the context of `OnLoad`.
pub unsafe fn register(
    ctx: *mut raw::RedisModuleCtx,
    bf_loadchunk: &str,
    cf_loadchunk: &str,
) -> Result<(), String> {
    let names = [bf_loadchunk, cf_loadchunk].map(|n| CString::new(n).expect("no NUL in a name"));
    LOADCHUNK_NAMES
        .set(names)
        .map_err(|_| "the module is loaded once per process".to_string())?;
    // SAFETY: `OnLoad`'s context (this function's contract); the callbacks treat every
    // value as a `Box<Stored<F>>`, which is what `Key::set` stores.
    unsafe {
        BF.register(
            ctx,
            BfFilter::TYPE_NAME,
            ENCODING,
            &mut methods::<BfFilter>(),
        )?;
        CF.register(
            ctx,
            CfFilter::TYPE_NAME,
            ENCODING,
            &mut methods::<CfFilter>(),
        )?;
    }
    Ok(())
}

/// The callbacks of `F`'s type. Version 4 of the methods table: Redis 7.0 reads it.
fn methods<F: Body>() -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: 4,
        rdb_load: Some(rdb_load::<F>),
        rdb_save: Some(rdb_save::<F>),
        aof_rewrite: Some(aof_rewrite::<F>),
        mem_usage: Some(mem_usage::<F>),
        digest: Some(digest::<F>),
        free: Some(free::<F>),
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort: None,
        unlink: None,
        copy: Some(copy::<F>),
        defrag: None,
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    }
}

/// The value behind a callback's pointer.
///
/// # Safety
///
/// `value` is a value of `F`'s type: a `Box<Stored<F>>` turned into a raw pointer by
/// `Key::set` or [`rdb_load`], not yet freed.
unsafe fn value<'a, F: Body>(value: *const c_void) -> &'a Stored<F> {
    // SAFETY: the function's contract.
    unsafe { &*value.cast::<Stored<F>>() }
}

/// Loads a value of `F`'s type: refused (null) where the bytes fail any check.
///
/// # Safety
///
/// Called by Redis only, with the stream of an RDB load of this type.
unsafe extern "C" fn rdb_load<F: Body>(rdb: *mut raw::RedisModuleIO, encver: c_int) -> *mut c_void {
    // SAFETY: Redis passes this load's stream.
    let io = unsafe { Io::new(rdb) };
    if encver != ENCODING {
        io.log_warning(&format!(
            "a {:?} value of encoding version {encver}; this module reads {ENCODING}",
            F::TYPE_NAME
        ));
        return std::ptr::null_mut();
    }
    match io.load(Stored::<F>::from_saved) {
        Some(Ok(stored)) => Box::into_raw(Box::new(stored)).cast::<c_void>(),
        Some(Err(why)) => {
            io.log_warning(&format!("a {:?} value is refused: {why}", F::TYPE_NAME));
            std::ptr::null_mut()
        }
        None => std::ptr::null_mut(),
    }
}

/// Saves a value as its bytes.
///
/// # Safety
///
/// Called by Redis only, with the stream of an RDB save and a value of this type.
unsafe extern "C" fn rdb_save<F: Body>(rdb: *mut raw::RedisModuleIO, v: *mut c_void) {
    // SAFETY: Redis passes this save's stream and a value of this type.
    let (io, stored) = unsafe { (Io::new(rdb), value::<F>(v)) };
    io.save(&stored.to_saved());
}

/// Writes a value to a rewritten append-only file as `LOADCHUNK`s of its pieces.
///
/// # Safety
///
/// Called by Redis only, with the rewrite's stream, the key and its value of this type.
unsafe extern "C" fn aof_rewrite<F: Body>(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    v: *mut c_void,
) {
    // SAFETY: Redis passes the rewrite's stream, the key and its value of this type.
    let (io, stored) = unsafe { (Io::new(aof), value::<F>(v)) };
    let saved = stored.to_saved();
    let name = loadchunk_name(F::KIND);
    for (position, bytes) in (0..).map_while(|j| dump::piece(&saved, j)) {
        // SAFETY: the key Redis passed to this callback.
        unsafe { io.emit_chunk(name, key, position, bytes) };
    }
}

/// `MEMORY USAGE` of a value.
///
/// # Safety
///
/// Called by Redis only, with a value of this type.
unsafe extern "C" fn mem_usage<F: Body>(v: *const c_void) -> usize {
    // SAFETY: a value of this type.
    unsafe { value::<F>(v) }.memory_bytes()
}

/// `DEBUG DIGEST-VALUE` of a value: its bytes.
///
/// # Safety
///
/// Called by Redis only, with a digest and a value of this type.
unsafe extern "C" fn digest<F: Body>(md: *mut raw::RedisModuleDigest, v: *mut c_void) {
    // SAFETY: a value of this type, and the digest of this callback.
    unsafe { api::digest(md, &value::<F>(v).to_saved()) };
}

/// Frees a value.
///
/// # Safety
///
/// Called by Redis only, once, with a value of this type (or null).
unsafe extern "C" fn free<F: Body>(v: *mut c_void) {
    if !v.is_null() {
        // SAFETY: a value of this type, which Redis frees once, here.
        drop(unsafe { Box::from_raw(v.cast::<Stored<F>>()) });
    }
}

/// `COPY`: a clone of the value.
///
/// # Safety
///
/// Called by Redis only, with a value of this type.
unsafe extern "C" fn copy<F: Body>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    v: *const c_void,
) -> *mut c_void {
    // SAFETY: a value of this type.
    let stored = unsafe { value::<F>(v) }.clone();
    Box::into_raw(Box::new(stored)).cast::<c_void>()
}
