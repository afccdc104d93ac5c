//! The server's own count of its work: per command (`INFO commandstats`, zeroed by
//! `CONFIG RESETSTAT`) and in all (`INFO cpu`, its network I/O included): the Redis
//! benchmarks' server-side profile, beside their wall times.

use linebloom_redis_client::BatchPath;

/// Calls of some commands, and the server's microseconds in them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Calls counted.
    pub calls: u64,
    /// Microseconds the server spent in them (a script's include the commands it calls).
    pub usec: u64,
}

/// The commands the guard's batches and single calls send on each path, as `INFO`
/// names them: `[lookups, inserts]`.
#[must_use]
pub fn guard_commands(path: BatchPath) -> [&'static [&'static str]; 2] {
    if path == BatchPath::Module {
        [&["linebloom.mtest"], &["linebloom.madd"]]
    } else {
        [&["strlen", "getrange", "get"], &["evalsha", "eval"]]
    }
}

/// Zeroes the server's counters (`CONFIG RESETSTAT`).
///
/// # Errors
///
/// The connection's.
pub fn reset(con: &mut redis::Connection) -> redis::RedisResult<()> {
    redis::cmd("CONFIG").arg("RESETSTAT").query(con)
}

/// The totals of the named commands since the last [`reset`].
///
/// # Errors
///
/// The connection's.
pub fn read(con: &mut redis::Connection, names: &[&str]) -> redis::RedisResult<Totals> {
    let stats: String = redis::cmd("INFO").arg("commandstats").query(con)?;
    Ok(totals(&stats, names))
}

/// The totals of the named commands (as `INFO` names them, case ignored) in an `INFO
/// commandstats` reply.
#[must_use]
pub fn totals(stats: &str, names: &[&str]) -> Totals {
    let mut sum = Totals::default();
    for line in stats.lines() {
        let Some((name, fields)) = line
            .strip_prefix("cmdstat_")
            .and_then(|l| l.split_once(':'))
        else {
            continue;
        };
        if !names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            continue;
        }
        for field in fields.split(',') {
            match field.split_once('=') {
                Some(("calls", n)) => sum.calls += n.parse::<u64>().unwrap_or(0),
                Some(("usec", n)) => sum.usec += n.parse::<u64>().unwrap_or(0),
                _ => {}
            }
        }
    }
    sum
}

/// The server's CPU seconds since it started, user and system time of all its threads
/// (`used_cpu_user` + `used_cpu_sys` of `INFO cpu`).
///
/// # Errors
///
/// The connection's, or a reply without the two fields.
pub fn server_cpu_seconds<C: redis::ConnectionLike>(con: &mut C) -> redis::RedisResult<f64> {
    let info: String = redis::cmd("INFO").arg("cpu").query(con)?;
    cpu_seconds(&info).ok_or_else(|| {
        redis::RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "INFO cpu without used_cpu_user and used_cpu_sys",
        ))
    })
}

/// `used_cpu_user` + `used_cpu_sys` of an `INFO cpu` reply.
fn cpu_seconds(info: &str) -> Option<f64> {
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse::<f64>().ok())
    };
    Some(field("used_cpu_user")? + field("used_cpu_sys")?)
}

#[cfg(test)]
mod tests {
    use super::{Totals, cpu_seconds, totals};

    #[test]
    fn cpu_seconds_adds_user_and_system_time() {
        let info = "# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:2.250000\r\n\
            used_cpu_sys_children:9.000000\r\nused_cpu_user_children:9.000000\r\n";
        assert_eq!(cpu_seconds(info), Some(3.75));
        assert_eq!(cpu_seconds("# CPU\r\nused_cpu_sys:1.0\r\n"), None);
    }

    #[test]
    fn sums_the_named_commands_only() {
        let stats = "# Commandstats\r\n\
            cmdstat_get:calls=10,usec=20,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_LINEBLOOM.MTEST:calls=3,usec=9,usec_per_call=3.00\r\n\
            cmdstat_set:calls=100,usec=1000,usec_per_call=10.00\r\n";
        assert_eq!(
            totals(stats, &["get", "linebloom.mtest"]),
            Totals {
                calls: 13,
                usec: 29
            }
        );
        assert_eq!(totals(stats, &["del"]), Totals::default());
    }
}
