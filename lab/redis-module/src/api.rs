//! Safe wrappers over the few Redis module API calls the commands (`BF.*`, `CF.*` and
//! the guard's `LINEBLOOM.*`) and the data types make: a command's arguments and
//! replies ([`Call`]), a key opened for it ([`Key`]: a value of our types, or a plain
//! string read and written in place), and the persistence callbacks' input and output
//! ([`Io`]).
//!
//! The calls go to the raw API table (`redis_module::raw`) directly, without the
//! `redis-module` crate's `Context`: a command's arguments are read in place
//! (`RedisModule_StringPtrLen`), never copied into owned strings, and nothing is
//! registered for automatic freeing. A single `BF.EXISTS` is a few hundred nanoseconds
//! of work, so what the crate's wrappers add per call (a `Vec` of retained strings,
//! a `String` per reply) is a visible part of it.
//!
//! Every function here is called on Redis's main thread, inside the call Redis made
//! into the module (a command, or a data-type callback), with the context or I/O
//! handle Redis passed to that call: that is what makes the raw calls sound.

use redis_module::raw;
use std::ffi::{CStr, CString, c_char, c_int, c_long, c_void};

/// A raw API function, as `RedisModule_Init` filled the table in: always set after
/// `OnLoad` began, so a missing one means this module runs in a server too old for it.
///
/// # Panics
///
/// Where the server lacks the function (every one used here exists from Redis 7.0,
/// which the module requires).
pub fn table_fn<F: Copy>(f: Option<F>, name: &str) -> F {
    f.unwrap_or_else(|| panic!("the Redis module API lacks {name} (Redis 7.0 or later is needed)"))
}

/// One slot of the API table. Used only inside an `unsafe` block, whose `SAFETY` comment
/// covers this read too: a copy of a `static mut` that `RedisModule_Init` writes once in
/// `OnLoad`, before any command or callback runs, and that is only read after that.
macro_rules! raw_fn {
    ($name:ident) => {
        $crate::api::table_fn(redis_module::raw::$name, stringify!($name))
    };
}
pub(crate) use raw_fn;

/// The arguments of one command call and the way to answer it.
pub struct Call<'a> {
    ctx: *mut raw::RedisModuleCtx,
    argv: &'a [*mut raw::RedisModuleString],
    resp3: bool,
    /// A [`Key`] of this call is open: two at once could name the same Redis key and
    /// hand out two `&mut` to one value, so [`Call::key`] opens one at a time.
    key_open: std::cell::Cell<bool>,
}

impl<'a> Call<'a> {
    /// The call Redis made.
    ///
    /// # Safety
    ///
    /// `ctx`, `argv` and `argc` are the arguments Redis passed to a command function,
    /// and the returned value is used only during that call.
    pub unsafe fn new(
        ctx: *mut raw::RedisModuleCtx,
        argv: *mut *mut raw::RedisModuleString,
        argc: c_int,
    ) -> Call<'a> {
        let argv = match usize::try_from(argc) {
            // SAFETY: Redis passes `argc` valid string pointers at `argv` (the
            // contract), alive for the call.
            Ok(n) if n > 0 && !argv.is_null() => unsafe { std::slice::from_raw_parts(argv, n) },
            _ => &[],
        };
        // SAFETY: `ctx` is this call's context.
        let flags = unsafe { raw_fn!(RedisModule_GetContextFlags)(ctx) } as u32;
        Call {
            ctx,
            argv,
            resp3: flags & raw::REDISMODULE_CTX_FLAGS_RESP3 != 0,
            key_open: std::cell::Cell::new(false),
        }
    }

    /// Number of arguments, the command name included.
    pub fn argc(&self) -> usize {
        self.argv.len()
    }

    /// Argument `i` (0 is the command name) as bytes.
    ///
    /// # Panics
    ///
    /// If `i >= argc()`: callers check the arity first.
    pub fn arg(&self, i: usize) -> &'a [u8] {
        let mut len = 0usize;
        // SAFETY: `argv[i]` is a live argument string of this call; Redis returns a
        // pointer to its `len` bytes, valid for the call.
        unsafe {
            let ptr = raw_fn!(RedisModule_StringPtrLen)(self.argv[i], &mut len);
            if ptr.is_null() || len == 0 {
                &[]
            } else {
                std::slice::from_raw_parts(ptr.cast::<u8>(), len)
            }
        }
    }

    /// Arguments `from..` as byte slices.
    pub fn args_from(&self, from: usize) -> impl ExactSizeIterator<Item = &'a [u8]> + '_ {
        (from..self.argc()).map(move |i| self.arg(i))
    }

    /// Opens the key named by argument `i` for reading, or for writing too.
    ///
    /// # Panics
    ///
    /// If a key of this call is open already (every command opens one).
    pub fn key(&self, i: usize, write: bool) -> Key<'_> {
        assert!(!self.key_open.replace(true), "one key of a call at a time");
        let mode = if write {
            raw::REDISMODULE_READ | raw::REDISMODULE_WRITE
        } else {
            raw::REDISMODULE_READ
        };
        // SAFETY: this call's context and one of its arguments; the key is closed when
        // the returned `Key` drops, within the call.
        let ptr = unsafe { raw_fn!(RedisModule_OpenKey)(self.ctx, self.argv[i], mode as c_int) };
        Key {
            ptr,
            write,
            open: &self.key_open,
        }
    }

    /// Is the client on RESP3 (where RedisBloom answers with booleans and maps)?
    pub fn resp3(&self) -> bool {
        self.resp3
    }

    /// Replies Redis's own wrong-arity error.
    pub fn wrong_arity(&self) {
        // SAFETY: this call's context.
        unsafe { raw_fn!(RedisModule_WrongArity)(self.ctx) };
    }

    /// Replies an error. `message` starts with its code (`ERR …`, `WRONGTYPE …`); a
    /// message without one reaches the client as it is, as RedisBloom's do.
    pub fn error(&self, message: &str) {
        // An interior NUL cannot come from our messages; it would end the C string.
        let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
        self.error_c(&message);
    }

    /// [`error`](Self::error) for a constant message.
    pub fn error_c(&self, message: &CStr) {
        // SAFETY: this call's context and a NUL-terminated string, copied by Redis.
        unsafe { raw_fn!(RedisModule_ReplyWithError)(self.ctx, message.as_ptr()) };
    }

    /// Replies an integer.
    pub fn integer(&self, value: i64) {
        // SAFETY: this call's context.
        unsafe { raw_fn!(RedisModule_ReplyWithLongLong)(self.ctx, value) };
    }

    /// Replies a boolean as RedisBloom does: a RESP3 boolean, or 1 / 0.
    pub fn boolean(&self, value: bool) {
        if self.resp3 {
            // SAFETY: this call's context.
            unsafe { raw_fn!(RedisModule_ReplyWithBool)(self.ctx, c_int::from(value)) };
        } else {
            self.integer(i64::from(value));
        }
    }

    /// Replies a simple string (`OK`).
    pub fn simple(&self, text: &CStr) {
        // SAFETY: this call's context and a NUL-terminated string, copied by Redis.
        unsafe { raw_fn!(RedisModule_ReplyWithSimpleString)(self.ctx, text.as_ptr()) };
    }

    /// Replies `OK`.
    pub fn ok(&self) {
        self.simple(c"OK");
    }

    /// Replies a bulk string.
    pub fn bulk(&self, bytes: &[u8]) {
        // SAFETY: this call's context and `bytes.len()` readable bytes, copied by Redis.
        unsafe {
            raw_fn!(RedisModule_ReplyWithStringBuffer)(
                self.ctx,
                bytes.as_ptr().cast::<c_char>(),
                bytes.len(),
            )
        };
    }

    /// Replies a null.
    pub fn null(&self) {
        // SAFETY: this call's context.
        unsafe { raw_fn!(RedisModule_ReplyWithNull)(self.ctx) };
    }

    /// Opens an array of `len` elements: the next `len` replies fill it.
    pub fn array(&self, len: usize) {
        // SAFETY: this call's context.
        unsafe { raw_fn!(RedisModule_ReplyWithArray)(self.ctx, len as c_long) };
    }

    /// Opens an array whose length [`set_array_len`](Self::set_array_len) gives later.
    pub fn array_postponed(&self) {
        // SAFETY: this call's context; the length is set before the command returns.
        unsafe {
            raw_fn!(RedisModule_ReplyWithArray)(self.ctx, raw::REDISMODULE_POSTPONED_LEN as c_long)
        };
    }

    /// Closes the array [`array_postponed`](Self::array_postponed) opened.
    pub fn set_array_len(&self, len: usize) {
        // SAFETY: this call's context, with a postponed array open.
        unsafe { raw_fn!(RedisModule_ReplySetArrayLength)(self.ctx, len as c_long) };
    }

    /// Opens a map of `pairs` field-value pairs (an array of `2 · pairs` on RESP2).
    pub fn map(&self, pairs: usize) {
        // SAFETY: this call's context.
        unsafe { raw_fn!(RedisModule_ReplyWithMap)(self.ctx, pairs as c_long) };
    }

    /// Replicates the command as the client sent it, to replicas and the append-only
    /// file: every `BF.*` and `CF.*` write is deterministic, so a replica that runs it
    /// on the same filter ends with the same bits.
    pub fn replicate_verbatim(&self) {
        // SAFETY: this call's context.
        unsafe { raw_fn!(RedisModule_ReplicateVerbatim)(self.ctx) };
    }

    /// Is Redis asking for the command's keys (`COMMAND GETKEYS`, ACLs, cluster
    /// routing) rather than running it?
    pub fn is_keys_request(&self) -> bool {
        // SAFETY: this call's context.
        unsafe { raw_fn!(RedisModule_IsKeysPositionRequest)(self.ctx) != 0 }
    }

    /// Declares argument `i` a key, in a keys request.
    pub fn key_at(&self, i: usize) {
        // SAFETY: this call's context, in a keys request; `i` indexes an argument.
        unsafe { raw_fn!(RedisModule_KeyAtPos)(self.ctx, i as c_int) };
    }

    /// Declares argument `i` a key with its access `flags` (`REDISMODULE_CMD_KEY_*`),
    /// in a keys request, so that an ACL that lets a user read a key but not write it
    /// is applied as the command uses the key.
    ///
    /// # Panics
    ///
    /// If `i >= argc()`: Redis would read past the arguments.
    pub fn key_at_with_flags(&self, i: usize, flags: u32) {
        assert!(i < self.argc(), "argument {i} of {}", self.argc());
        // SAFETY: this call's context, in a keys request; `i` indexes an argument
        // (checked above).
        unsafe { raw_fn!(RedisModule_KeyAtPosWithFlags)(self.ctx, i as c_int, flags as c_int) };
    }

    /// This call's context and argument `i` as Redis passed them, for the one API call
    /// with a variadic C signature (`RedisModule_Replicate`, in `guard_commands`), which
    /// takes argument strings as they are.
    ///
    /// # Panics
    ///
    /// If `i >= argc()`.
    pub fn raw_arg(&self, i: usize) -> (*mut raw::RedisModuleCtx, *mut raw::RedisModuleString) {
        (self.ctx, self.argv[i])
    }

    /// Writes a line to the server's log at `level` (`"warning"`, `"notice"`, …).
    pub fn log(&self, level: &CStr, line: &str) {
        let line = CString::new(line.replace('\0', " ")).unwrap_or_default();
        // SAFETY: this call's context, and a NUL-terminated format "%s" with one
        // C-string argument, as `Log` reads them (printf-style).
        unsafe {
            raw_fn!(RedisModule_Log)(self.ctx, level.as_ptr(), c"%s".as_ptr(), line.as_ptr());
        }
    }
}

/// What a key holds, as the commands tell it apart.
pub enum Held<'k, T> {
    /// No such key.
    Empty,
    /// A value of the data type asked for.
    Ours(&'k mut T),
    /// Anything else: another type, another module's value.
    Other,
}

/// What a key holds, by Redis's types, for the guard's commands over plain strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// No such key.
    Empty,
    /// A string.
    String,
    /// Any other type.
    Other,
}

/// Redis refused to store a value at a key (not opened for writing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotStored;

/// A key opened for one command, closed when dropped. One at a time per call, and
/// [`get`](Key::get) borrows it mutably: the value it hands out is never aliased.
pub struct Key<'c> {
    ptr: *mut raw::RedisModuleKey,
    write: bool,
    open: &'c std::cell::Cell<bool>,
}

impl Key<'_> {
    /// Which of Redis's types the key holds.
    pub fn kind(&self) -> KeyKind {
        if self.ptr.is_null() {
            return KeyKind::Empty;
        }
        // SAFETY: `ptr` is an open key of this call.
        match unsafe { raw_fn!(RedisModule_KeyType)(self.ptr) } as isize {
            raw::REDISMODULE_KEYTYPE_EMPTY => KeyKind::Empty,
            raw::REDISMODULE_KEYTYPE_STRING => KeyKind::String,
            _ => KeyKind::Other,
        }
    }

    /// The bytes of the string the key holds, in place; `None` where it holds no
    /// string.
    pub fn bytes(&self) -> Option<&[u8]> {
        let (ptr, len) = self.string_dma(raw::REDISMODULE_READ)?;
        // SAFETY: `len` bytes at `ptr`, valid until the key is closed or changed, which
        // the borrow of `self` outlasts neither; read only.
        Some(unsafe { std::slice::from_raw_parts(ptr, len) })
    }

    /// The bytes of the string the key holds, writable in place (its length fixed);
    /// `None` where it holds no string.
    ///
    /// # Panics
    ///
    /// If the key was opened for reading only.
    pub fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        assert!(self.write, "a key opened for reading");
        let (ptr, len) = self.string_dma(raw::REDISMODULE_READ | raw::REDISMODULE_WRITE)?;
        // SAFETY: the key was opened for writing, so Redis handed out a string of its
        // own (unshared) for writing in place: `len` bytes at `ptr`, valid until the
        // key is closed or changed; `&mut self` keeps the slice unaliased.
        Some(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
    }

    /// `RedisModule_StringDMA` of the key's string in `mode`: its bytes' address (a
    /// dangling, aligned one where it is empty) and length, or `None` where the key
    /// holds no string.
    fn string_dma(&self, mode: u32) -> Option<(*mut u8, usize)> {
        if self.kind() != KeyKind::String {
            return None;
        }
        let mut len = 0usize;
        // SAFETY: an open key of this call that holds a string, and a mode this key was
        // opened with (callers ask for writing only on a key opened for writing).
        let ptr = unsafe { raw_fn!(RedisModule_StringDMA)(self.ptr, &mut len, mode as c_int) };
        if ptr.is_null() || len == 0 {
            Some((std::ptr::NonNull::<u8>::dangling().as_ptr(), 0))
        } else {
            Some((ptr.cast::<u8>(), len))
        }
    }

    /// What the key holds, with `ty`'s value borrowed where it is of that type.
    pub fn get<T>(&mut self, ty: &DataType<T>) -> Held<'_, T> {
        if self.ptr.is_null() {
            return Held::Empty;
        }
        // SAFETY: `ptr` is an open key of this call.
        let kind = unsafe { raw_fn!(RedisModule_KeyType)(self.ptr) } as isize;
        if kind == raw::REDISMODULE_KEYTYPE_EMPTY {
            return Held::Empty;
        }
        if kind != raw::REDISMODULE_KEYTYPE_MODULE {
            return Held::Other;
        }
        // SAFETY: as above.
        let held_type = unsafe { raw_fn!(RedisModule_ModuleTypeGetType)(self.ptr) };
        if held_type.is_null() || held_type != ty.raw() {
            return Held::Other;
        }
        // SAFETY: the key holds a value of `ty`, which only `set` below (and the type's
        // `rdb_load` and `copy` callbacks) store, as a `Box<T>` turned into a raw
        // pointer; it lives until Redis frees the key, after this command. The `&mut
        // self` borrow, and one open `Key` per call, keep it unaliased.
        match unsafe {
            raw_fn!(RedisModule_ModuleTypeGetValue)(self.ptr)
                .cast::<T>()
                .as_mut()
        } {
            Some(value) => Held::Ours(value),
            None => Held::Other,
        }
    }

    /// Stores `value` as the key's value of type `ty` (the key was opened for writing
    /// and is empty, or holds a value of `ty`, which Redis frees).
    pub fn set<T>(&mut self, ty: &DataType<T>, value: T) -> Result<(), NotStored> {
        if self.ptr.is_null() {
            return Err(NotStored);
        }
        let boxed = Box::into_raw(Box::new(value)).cast::<c_void>();
        // SAFETY: an open key of this call; the box's ownership passes to Redis, which
        // frees it with the type's `free` callback (`datatype.rs`).
        let status = unsafe { raw_fn!(RedisModule_ModuleTypeSetValue)(self.ptr, ty.raw(), boxed) };
        if status == raw::REDISMODULE_OK as c_int {
            Ok(())
        } else {
            // SAFETY: Redis refused the value, so the box is still ours.
            drop(unsafe { Box::from_raw(boxed.cast::<T>()) });
            Err(NotStored)
        }
    }

    /// Deletes the key (opened for writing).
    pub fn delete(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: an open key of this call.
            unsafe { raw_fn!(RedisModule_DeleteKey)(self.ptr) };
        }
    }
}

impl Drop for Key<'_> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: the key this value opened, closed once.
            unsafe { raw_fn!(RedisModule_CloseKey)(self.ptr) };
        }
        self.open.set(false);
    }
}

/// A data type registered with Redis, whose values are `T`s.
pub struct DataType<T> {
    raw: std::sync::atomic::AtomicPtr<raw::RedisModuleType>,
    _value: std::marker::PhantomData<fn() -> T>,
}

impl<T> Default for DataType<T> {
    fn default() -> Self {
        DataType::new()
    }
}

impl<T> DataType<T> {
    /// Not yet registered.
    pub const fn new() -> Self {
        DataType {
            raw: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
            _value: std::marker::PhantomData,
        }
    }

    /// The type Redis returned from `RedisModule_CreateDataType`.
    pub fn raw(&self) -> *mut raw::RedisModuleType {
        self.raw.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Registers the type as `name` (9 characters) with encoding version `version`.
    ///
    /// # Safety
    ///
    /// `ctx` is the context of `OnLoad`; `methods` hold callbacks that treat every
    /// value as a `Box<T>` turned into a raw pointer.
    pub unsafe fn register(
        &self,
        ctx: *mut raw::RedisModuleCtx,
        name: &CStr,
        version: i32,
        methods: &mut raw::RedisModuleTypeMethods,
    ) -> Result<(), String> {
        // SAFETY: `OnLoad`'s context; Redis copies the methods.
        let ty =
            unsafe { raw_fn!(RedisModule_CreateDataType)(ctx, name.as_ptr(), version, methods) };
        if ty.is_null() {
            return Err(format!("could not register the data type {name:?}"));
        }
        self.raw.store(ty, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

/// The RDB stream of a persistence callback: an RDB file, a `DUMP`/`RESTORE` payload,
/// or a replica's full sync.
pub struct Io {
    ptr: *mut raw::RedisModuleIO,
}

impl Io {
    /// The stream Redis passed to a callback.
    ///
    /// # Safety
    ///
    /// `ptr` is the I/O handle of the callback running now, used only during it.
    pub unsafe fn new(ptr: *mut raw::RedisModuleIO) -> Io {
        Io { ptr }
    }

    /// Saves one string of bytes.
    pub fn save(&self, bytes: &[u8]) {
        // SAFETY: this callback's stream; Redis copies the bytes.
        unsafe {
            raw_fn!(RedisModule_SaveStringBuffer)(
                self.ptr,
                bytes.as_ptr().cast::<c_char>(),
                bytes.len(),
            )
        };
    }

    /// Loads one string of bytes and hands it to `read`; `None` where the stream
    /// failed (short, corrupt), which the module's load option lets it report instead
    /// of Redis stopping.
    pub fn load<R>(&self, read: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let mut len = 0usize;
        // SAFETY: this callback's stream. The buffer is Redis's allocation of `len`
        // bytes, freed below with `RedisModule_Free` once `read` is done with it.
        unsafe {
            let ptr = raw_fn!(RedisModule_LoadStringBuffer)(self.ptr, &mut len);
            if raw_fn!(RedisModule_IsIOError)(self.ptr) != 0 {
                if !ptr.is_null() {
                    raw_fn!(RedisModule_Free)(ptr.cast::<c_void>());
                }
                return None;
            }
            let bytes: &[u8] = if ptr.is_null() || len == 0 {
                &[]
            } else {
                std::slice::from_raw_parts(ptr.cast::<u8>(), len)
            };
            let result = read(bytes);
            if !ptr.is_null() {
                raw_fn!(RedisModule_Free)(ptr.cast::<c_void>());
            }
            Some(result)
        }
    }

    /// Writes `<command> <key> <position> <bytes>` to the rewritten append-only file.
    ///
    /// # Safety
    ///
    /// `key` is the key Redis passed to the `aof_rewrite` callback running now.
    pub unsafe fn emit_chunk(
        &self,
        command: &CStr,
        key: *mut raw::RedisModuleString,
        position: i64,
        bytes: &[u8],
    ) {
        // SAFETY: this callback's stream and key (the function's contract); the
        // format's items match the arguments as `EmitAOF` reads them with `va_arg`: `s`
        // a `RedisModuleString *`, `l` a `long long`, `b` a pointer and a `size_t`.
        unsafe {
            raw_fn!(RedisModule_EmitAOF)(
                self.ptr,
                command.as_ptr(),
                c"slb".as_ptr(),
                key,
                position as std::ffi::c_longlong,
                bytes.as_ptr().cast::<c_char>(),
                bytes.len(),
            )
        };
    }

    /// Logs a line about this stream (a refused payload).
    pub fn log_warning(&self, line: &str) {
        let line = CString::new(line.replace('\0', " ")).unwrap_or_default();
        // SAFETY: this callback's stream, a level and a "%s" format with one C string.
        unsafe {
            raw_fn!(RedisModule_LogIOError)(
                self.ptr,
                c"warning".as_ptr(),
                c"%s".as_ptr(),
                line.as_ptr(),
            )
        };
    }
}

/// Adds `bytes` to `DEBUG DIGEST`'s digest of a value, as one sequence.
///
/// # Safety
///
/// `md` is the digest Redis passed to the `digest` callback running now.
pub unsafe fn digest(md: *mut raw::RedisModuleDigest, bytes: &[u8]) {
    // SAFETY: the callback's digest; Redis reads `bytes.len()` bytes.
    unsafe {
        raw_fn!(RedisModule_DigestAddStringBuffer)(
            md,
            bytes.as_ptr().cast::<c_char>(),
            bytes.len(),
        );
        raw_fn!(RedisModule_DigestEndSequence)(md);
    }
}
