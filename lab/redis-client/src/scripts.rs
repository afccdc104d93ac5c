//! The Lua scripts of the protocol (`PROTOCOL.md`): the compare-and-set steps of the
//! meta (a rebuild's start, switch and cancel, a build's take-over, `delete`), and the writes of a server
//! without the module, which check the shard before they set a bit, so that no write
//! re-creates a missing shard. Each touches keys of one cluster slot only.
//!
//! A script is sent as `EVALSHA`; where the server does not know it yet (`NOSCRIPT`),
//! the command is sent again as `EVAL` ([`with_bodies`]), which also loads it.

use std::sync::OnceLock;

/// A Lua script and its SHA-1, computed once.
pub(crate) struct Script {
    body: &'static str,
    sha: OnceLock<String>,
}

impl Script {
    const fn new(body: &'static str) -> Script {
        Script {
            body,
            sha: OnceLock::new(),
        }
    }

    fn sha(&self) -> &str {
        self.sha
            .get_or_init(|| redis::Script::new(self.body).get_hash().to_string())
    }

    /// `EVALSHA <sha> <keys> <args>`.
    pub(crate) fn call<K: redis::ToRedisArgs>(&self, keys: &[K]) -> redis::Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(self.sha()).arg(keys.len()).arg(keys);
        cmd
    }
}

/// The scripts, for [`with_bodies`].
const ALL: [&Script; 6] = [
    &SWAP_META,
    &BEGIN_REBUILD,
    &SWAP_AFTER_LEASE,
    &DELETE_META,
    &INSERT,
    &FILL_SHARD,
];

/// `cmd` as `EVAL <body> …` if it is an `EVALSHA` of one of these scripts.
fn with_body(cmd: &redis::Cmd) -> Option<redis::Cmd> {
    let mut args = crate::command::words(cmd);
    if !args.next()?.eq_ignore_ascii_case(b"EVALSHA") {
        return None;
    }
    let sha = args.next()?;
    let script = ALL.iter().find(|s| s.sha().as_bytes() == sha)?;
    let mut eval = redis::cmd("EVAL");
    eval.arg(script.body);
    for a in args {
        eval.arg(a);
    }
    Some(eval)
}

/// Where replies say `NOSCRIPT` (a server that has not seen a script, or restarted),
/// the indices of those commands and their `EVAL` forms, to send again.
pub(crate) fn with_bodies(
    cmds: &[redis::Cmd],
    replies: &[redis::RedisResult<redis::Value>],
) -> Option<(Vec<usize>, Vec<redis::Cmd>)> {
    let (mut at, mut again) = (Vec::new(), Vec::new());
    for (i, reply) in replies.iter().enumerate() {
        if let Err(e) = reply
            && e.code() == Some("NOSCRIPT")
            && let Some(eval) = with_body(&cmds[i])
        {
            at.push(i);
            again.push(eval);
        }
    }
    (!at.is_empty()).then_some((at, again))
}

/// The start of a compare-and-set of the meta (`KEYS[1]`) from `ARGV[1]` to `ARGV[2]`:
/// replies 0 at once where the meta already holds `ARGV[2]` (the same step done before,
/// whose reply was lost), refuses with `LBSTALE` where it holds anything but `ARGV[1]`.
macro_rules! compare_and_set {
    () => {
        r#"
local held = redis.call('GET', KEYS[1])
if held == ARGV[2] then return 0 end
if held ~= ARGV[1] then
    return redis.error_reply('LBSTALE ' .. KEYS[1] .. ' (the filter meta changed)')
end
"#
    };
}

/// `server_ms()`: the server's clock in Unix milliseconds (leases are timed by the
/// server, never by a client's clock).
macro_rules! server_ms {
    () => {
        r#"
local function server_ms()
    local t = redis.call('TIME')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
"#
    };
}

/// Compare-and-set of the meta. `KEYS[1]` the meta; `ARGV[1]` the value expected,
/// `ARGV[2]` the new one. Replies 1 when it set it, 0 when the meta already holds the new
/// value (the same step done before, whose reply was lost), else refuses with
/// `LBSTALE`. Keeps the meta's TTL.
pub(crate) static SWAP_META: Script = Script::new(concat!(
    compare_and_set!(),
    r#"
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
"#
));

/// A rebuild's start: the meta with the next generation and a lease that ends
/// `ARGV[4]` ms after the server's clock. `KEYS[1]` the meta; `ARGV[1]` the value
/// expected; `ARGV[2]` and `ARGV[3]` the new value before and after the lease's end.
/// Replies the new meta, or refuses with `LBSTALE`.
pub(crate) static BEGIN_REBUILD: Script = Script::new(concat!(
    server_ms!(),
    r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return redis.error_reply('LBSTALE ' .. KEYS[1] .. ' (the filter meta changed)')
end
local meta = ARGV[2] .. string.format('%.0f', server_ms() + tonumber(ARGV[4])) .. ARGV[3]
redis.call('SET', KEYS[1], meta, 'KEEPTTL')
return meta
"#
));

/// A compare-and-set that takes a lease's place: as [`SWAP_META`], but unless `ARGV[4]`
/// is `1` (forced) only once the lease that ends at `ARGV[3]` (server ms) has run out,
/// else refuses with `LBLEASED <ms left>`. Cancels a rebuild, and takes over a first
/// build whose builder died.
pub(crate) static SWAP_AFTER_LEASE: Script = Script::new(concat!(
    server_ms!(),
    compare_and_set!(),
    r#"
if ARGV[4] ~= '1' then
    local left = tonumber(ARGV[3]) - server_ms()
    if left > 0 then
        return redis.error_reply('LBLEASED ' .. string.format('%.0f', left))
    end
end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
"#
));

/// Deletes the meta if it holds `ARGV[1]`, else refuses with `LBSTALE`.
pub(crate) static DELETE_META: Script = Script::new(
    r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return redis.error_reply('LBSTALE ' .. KEYS[1] .. ' (the filter meta changed)')
end
redis.call('DEL', KEYS[1])
return 1
"#,
);

/// The shard checks every script runs first: `KEYS[1]` must be a string of exactly
/// `ARGV[1]` bytes, else `LBMISSING`, `LBWRONGTYPE` or `LBLENGTH <key> <held> <needed>`.
/// `KEYS[last]`, where `ARGV[meta]` is given, is the meta guard: it must hold that
/// value, else `LBSTALE` (`LBWRONGTYPE` naming it where another type holds it).
macro_rules! shard_checks {
    () => {
        r#"
local function refuse(guard_at)
    if guard_at then
        local meta = redis.pcall('GET', KEYS[#KEYS])
        if type(meta) == 'table' and meta['err'] then
            return redis.error_reply('LBWRONGTYPE ' .. KEYS[#KEYS] .. ' (not a filter meta)')
        end
        if meta ~= ARGV[guard_at] then
            return redis.error_reply('LBSTALE ' .. KEYS[#KEYS] .. ' (the filter meta changed)')
        end
    end
    -- One call tells all three: STRLEN fails on another type, and answers 0 for a
    -- missing key (a shard is never empty).
    local held = redis.pcall('STRLEN', KEYS[1])
    if type(held) == 'table' then
        return redis.error_reply('LBWRONGTYPE ' .. KEYS[1] .. ' (not a filter shard)')
    end
    if held == 0 then
        return redis.error_reply('LBMISSING ' .. KEYS[1] .. ' (no such filter shard)')
    end
    if held ~= tonumber(ARGV[1]) then
        return redis.error_reply('LBLENGTH ' .. KEYS[1] .. ' ' .. held .. ' ' .. ARGV[1])
    end
    return nil
end
"#
    };
}

/// A batch's inserts into one shard, without the module. `KEYS[1]` the shard,
/// `KEYS[2]` its count key, and on one server `KEYS[3]` the meta (the guard);
/// `ARGV[1]` the shard's length in bytes, `ARGV[2]` `k`, `ARGV[3]` the meta expected
/// (with the guard), then `k` Redis bit offsets per key. After the checks, sets every
/// bit with `BITFIELD … SET u1` (64 keys a call, under Lua's `unpack` limit), whose
/// replies are the old bits: a key with one clear is new. Increases the count (`BITFIELD
/// … INCRBY i64 0`), while its key exists, and replies how many keys were new.
pub(crate) static INSERT: Script = Script::new(concat!(
    shard_checks!(),
    r#"
local first = 3
if #KEYS == 3 then first = 4 end
local refused = refuse(#KEYS == 3 and 3 or nil)
if refused then return refused end
local k = tonumber(ARGV[2])
local new = 0
local at = first
while at <= #ARGV do
    local last = math.min(at + 64 * k - 1, #ARGV)
    -- Strings only: a Lua number passed to Redis is formatted with snprintf first.
    local args, n = {}, 0
    for i = at, last do
        args[n + 1] = 'SET'
        args[n + 2] = 'u1'
        args[n + 3] = ARGV[i]
        args[n + 4] = '1'
        n = n + 4
    end
    local old = redis.call('BITFIELD', KEYS[1], unpack(args, 1, n))
    for j = 1, #old, k do
        for b = j, j + k - 1 do
            if old[b] == 0 then
                new = new + 1
                break
            end
        end
    end
    at = last + 1
end
if new > 0 and redis.call('EXISTS', KEYS[2]) == 1 then
    redis.pcall('BITFIELD', KEYS[2], 'INCRBY', 'i64', 0, new)
end
return new
"#
));

/// A rebuild's built bits ORed into one shard of the next generation, which keeps the
/// inserts made since the rebuild began. `KEYS[1]` the shard, `KEYS[2]` the scratch key
/// holding the built bits, `KEYS[3]` the shard's count key; `ARGV[1]` the shard's
/// length in bytes, `ARGV[2]` the count to add. After the checks (a shard a cancel
/// removed is not re-created): `BITOP OR` (keeping the shard's TTL), the scratch key
/// removed, the count increased while its key exists.
pub(crate) static FILL_SHARD: Script = Script::new(concat!(
    shard_checks!(),
    r#"
local refused = refuse(nil)
if refused then
    redis.call('UNLINK', KEYS[2])
    return refused
end
-- BITOP writes its destination anew, without the TTL it had: keep it.
local ttl = redis.call('PTTL', KEYS[1])
redis.call('BITOP', 'OR', KEYS[1], KEYS[1], KEYS[2])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
redis.call('UNLINK', KEYS[2])
if redis.call('EXISTS', KEYS[3]) == 1 then
    redis.pcall('BITFIELD', KEYS[3], 'INCRBY', 'i64', 0, ARGV[2])
end
return 1
"#
));
