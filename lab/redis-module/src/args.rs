//! RedisBloom's argument grammar for the commands that take options: `BF.RESERVE`,
//! `BF.INSERT`, `CF.RESERVE` and `CF.INSERT`/`CF.INSERTNX`, with RedisBloom's error
//! texts (its clients and its tests read them). Numbers parse as Redis parses them:
//! integers strictly (no sign `+`, no spaces, no overflow), rates as finite decimals.
//!
//! Where RedisBloom ignores what it does not know (a stray word after `BF.RESERVE`'s
//! capacity, say), this parser refuses it: a typo should not pass for an option.

use crate::bf::{self, BfOptions};
use crate::cf::{self, CfOptions};

/// Why the arguments were refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgError {
    /// Redis's own wrong-arity error.
    Arity,
    /// An error reply with this text.
    Message(String),
}

fn message(text: impl Into<String>) -> ArgError {
    ArgError::Message(text.into())
}

/// An integer as Redis reads one (`string2ll`): an optional `-`, then digits, no
/// leading zero, within `i64`.
pub fn integer(bytes: &[u8]) -> Option<i64> {
    let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
    if digits.is_empty()
        || !digits.iter().all(u8::is_ascii_digit)
        || (digits.len() > 1 && digits[0] == b'0')
        || (digits == b"0" && bytes.len() > 1)
    {
        return None;
    }
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

/// A finite decimal, as `RedisModule_StringToDouble` reads one.
pub fn decimal(bytes: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(bytes).ok()?;
    if text.is_empty()
        || text.starts_with(char::is_whitespace)
        || text.ends_with(char::is_whitespace)
    {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

fn keyword(arg: &[u8], word: &str) -> bool {
    arg.eq_ignore_ascii_case(word.as_bytes())
}

/// `BF.RESERVE key error_rate capacity [EXPANSION e] [NONSCALING]`: the options.
pub fn bf_reserve(args: &[&[u8]]) -> Result<BfOptions, ArgError> {
    if !(4..=7).contains(&args.len()) {
        return Err(ArgError::Arity);
    }
    let error_rate = decimal(args[2]).ok_or_else(|| message("ERR bad error rate"))?;
    if !(error_rate > 0.0 && error_rate < 1.0) {
        return Err(message(
            "ERR error rate must be in the range (0.000000, 1.000000)",
        ));
    }
    let capacity = integer(args[3]).ok_or_else(|| message("ERR bad capacity"))?;
    if !(1..=bf::MAX_CAPACITY as i64).contains(&capacity) {
        return Err(message(format!(
            "ERR capacity must be in the range [1, {}]",
            bf::MAX_CAPACITY
        )));
    }
    let (mut nonscaling, mut expansion) = (false, None);
    let mut i = 4;
    while i < args.len() {
        if keyword(args[i], "NONSCALING") {
            nonscaling = true;
            i += 1;
        } else if keyword(args[i], "EXPANSION") {
            let value = args.get(i + 1).ok_or_else(|| message("ERR no expansion"))?;
            let e = integer(value).ok_or_else(|| message("ERR bad expansion"))?;
            if !(0..=bf::MAX_EXPANSION as i64).contains(&e) {
                return Err(message(format!(
                    "ERR expansion must be in the range [0, {}]",
                    bf::MAX_EXPANSION
                )));
            }
            expansion = Some(e as u64);
            i += 2;
        } else {
            return Err(message("ERR unknown argument received"));
        }
    }
    if nonscaling && expansion.is_some_and(|e| e > 0) {
        return Err(message("Nonscaling filters cannot expand"));
    }
    Ok(BfOptions {
        error_rate,
        capacity: capacity as u64,
        expansion: if nonscaling {
            0
        } else {
            expansion.unwrap_or(bf::DEFAULT_EXPANSION)
        },
    })
}

/// What `BF.INSERT` and `CF.INSERT` read before their items: the options of a filter
/// they create (`BfOptions`, or `CF.INSERT`'s capacity), whether they may create one,
/// and where the items start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Insert<O> {
    /// The options of a filter it creates.
    pub options: O,
    /// `false` with `NOCREATE`.
    pub create: bool,
    /// The first item's argument.
    pub items: usize,
}

/// `BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] ITEMS
/// item…`.
pub fn bf_insert(args: &[&[u8]]) -> Result<Insert<BfOptions>, ArgError> {
    if args.len() < 4 {
        return Err(ArgError::Arity);
    }
    let mut options = BfOptions::default();
    let (mut create, mut nonscaling) = (true, false);
    let mut i = 2;
    loop {
        let Some(arg) = args.get(i) else {
            return Err(ArgError::Arity);
        };
        if keyword(arg, "ITEMS") {
            i += 1;
            break;
        }
        let value = || args.get(i + 1).copied().ok_or(ArgError::Arity);
        if keyword(arg, "ERROR") {
            options.error_rate = decimal(value()?)
                .filter(|&e| e > 0.0 && e < 1.0)
                .ok_or_else(|| message("Bad error rate"))?;
            i += 2;
        } else if keyword(arg, "EXPANSION") {
            options.expansion = integer(value()?)
                .filter(|e| (0..=bf::MAX_EXPANSION as i64).contains(e))
                .ok_or_else(|| message("Bad expansion"))? as u64;
            i += 2;
        } else if keyword(arg, "CAPACITY") {
            options.capacity = integer(value()?)
                .filter(|c| (1..=bf::MAX_CAPACITY as i64).contains(c))
                .ok_or_else(|| message("Bad capacity"))? as u64;
            i += 2;
        } else if keyword(arg, "NOCREATE") {
            create = false;
            i += 1;
        } else if keyword(arg, "NONSCALING") {
            nonscaling = true;
            i += 1;
        } else {
            return Err(message("Unknown argument received"));
        }
    }
    if i >= args.len() {
        return Err(ArgError::Arity);
    }
    if nonscaling {
        options.expansion = 0;
    }
    Ok(Insert {
        options,
        create,
        items: i,
    })
}

/// An option of `CF.RESERVE` in RedisBloom's range, or its error texts.
fn cf_option(
    value: &[u8],
    name: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<u64, ArgError> {
    let v = integer(value).ok_or_else(|| message(format!("Couldn't parse {name}")))?;
    u64::try_from(v)
        .ok()
        .filter(|v| range.contains(v))
        .ok_or_else(|| {
            message(format!(
                "{name}: value must be in the range [{}, {}]",
                range.start(),
                range.end()
            ))
        })
}

/// `CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]`.
pub fn cf_reserve(args: &[&[u8]]) -> Result<CfOptions, ArgError> {
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Err(ArgError::Arity);
    }
    let capacity = integer(args[2]).ok_or_else(|| message("Bad capacity"))?;
    let mut options = CfOptions::default();
    for pair in args[3..].chunks(2) {
        let (name, value) = (pair[0], pair[1]);
        if keyword(name, "BUCKETSIZE") {
            options.bucket_size = cf_option(value, "BUCKETSIZE", cf::BUCKET_SIZE)?;
        } else if keyword(name, "MAXITERATIONS") {
            options.max_iterations = cf_option(value, "MAXITERATIONS", cf::MAX_ITERATIONS)?;
        } else if keyword(name, "EXPANSION") {
            options.expansion = cf_option(value, "EXPANSION", cf::EXPANSION)?;
        } else {
            return Err(message("Unknown argument received"));
        }
    }
    if capacity < 2 * options.bucket_size as i64 || capacity > cf::MAX_CAPACITY as i64 {
        return Err(message(format!(
            "Capacity must be in the range [2 * BUCKETSIZE, {}]",
            cf::MAX_CAPACITY
        )));
    }
    options.capacity = capacity as u64;
    Ok(options)
}

/// `CF.INSERT key [CAPACITY c] [NOCREATE] ITEMS item…` (and `CF.INSERTNX`).
pub fn cf_insert(args: &[&[u8]]) -> Result<Insert<u64>, ArgError> {
    if args.len() < 4 {
        return Err(ArgError::Arity);
    }
    let mut out = Insert {
        options: cf::DEFAULT_CAPACITY,
        create: true,
        items: 0,
    };
    let mut i = 2;
    loop {
        let Some(arg) = args.get(i) else {
            return Err(ArgError::Arity);
        };
        if keyword(arg, "ITEMS") {
            i += 1;
            break;
        } else if keyword(arg, "CAPACITY") {
            let value = args.get(i + 1).ok_or(ArgError::Arity)?;
            let c = integer(value).ok_or_else(|| message("Bad capacity"))?;
            if !(2 * cf::DEFAULT_BUCKET_SIZE as i64..=cf::MAX_CAPACITY as i64).contains(&c) {
                return Err(message(format!(
                    "Capacity must be in the range [cf-bucket-size * 2, {}]",
                    cf::MAX_CAPACITY
                )));
            }
            out.options = c as u64;
            i += 2;
        } else if keyword(arg, "NOCREATE") {
            out.create = false;
            i += 1;
        } else {
            return Err(message("Unknown argument received"));
        }
    }
    if i >= args.len() {
        return Err(ArgError::Arity);
    }
    out.items = i;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<&[u8]> {
        line.split(' ').map(str::as_bytes).collect()
    }

    #[test]
    fn integers_parse_as_redis_parses_them() {
        for (text, value) in [
            ("0", Some(0)),
            ("-7", Some(-7)),
            ("1073741824", Some(1 << 30)),
        ] {
            assert_eq!(integer(text.as_bytes()), value, "{text}");
        }
        for text in [
            "",
            "+1",
            " 1",
            "1 ",
            "01",
            "-0",
            "1.0",
            "9223372036854775808",
            "x",
        ] {
            assert_eq!(integer(text.as_bytes()), None, "{text}");
        }
        assert_eq!(decimal(b"0.01"), Some(0.01));
        assert_eq!(decimal(b"1e-3"), Some(0.001));
        for text in ["", "nan", "inf", " 0.1", "big"] {
            assert_eq!(decimal(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn bf_reserve_takes_redisbloom_syntax_and_refuses_the_rest() {
        let o = bf_reserve(&split("BF.RESERVE k 0.001 1000 EXPANSION 4")).unwrap();
        assert_eq!((o.error_rate, o.capacity, o.expansion), (0.001, 1000, 4));
        let o = bf_reserve(&split("BF.RESERVE k 0.01 10 nonscaling")).unwrap();
        assert_eq!(o.expansion, 0);
        assert_eq!(
            bf_reserve(&split("BF.RESERVE k 0.01 10 EXPANSION 0"))
                .unwrap()
                .expansion,
            0
        );
        for (line, error) in [
            ("BF.RESERVE k 0.01", ArgError::Arity),
            (
                "BF.RESERVE k 7.7 1000",
                message("ERR error rate must be in the range (0.000000, 1.000000)"),
            ),
            ("BF.RESERVE k blah 1000", message("ERR bad error rate")),
            (
                "BF.RESERVE k 0.01 0",
                message("ERR capacity must be in the range [1, 1073741824]"),
            ),
            ("BF.RESERVE k 0.01 1.5", message("ERR bad capacity")),
            (
                "BF.RESERVE k 0.01 10 EXPANSION",
                message("ERR no expansion"),
            ),
            (
                "BF.RESERVE k 0.01 10 EXPANSION -1",
                message("ERR expansion must be in the range [0, 32768]"),
            ),
            (
                "BF.RESERVE k 0.01 10 NONSCALING EXPANSION 2",
                message("Nonscaling filters cannot expand"),
            ),
            (
                "BF.RESERVE k 0.01 10 blah",
                message("ERR unknown argument received"),
            ),
        ] {
            assert_eq!(bf_reserve(&split(line)), Err(error), "{line}");
        }
    }

    #[test]
    fn bf_insert_reads_its_options_until_items() {
        let i = bf_insert(&split(
            "BF.INSERT k ERROR 0.001 CAPACITY 50000 EXPANSION 2 ITEMS a b",
        ))
        .unwrap();
        assert_eq!(
            (i.options.error_rate, i.options.capacity, i.create, i.items),
            (0.001, 50000, true, 9)
        );
        let i = bf_insert(&split("BF.INSERT k NOCREATE NONSCALING ITEMS a")).unwrap();
        assert_eq!((i.create, i.options.expansion), (false, 0));
        for line in [
            "BF.INSERT k",
            "BF.INSERT k NOCREATE ITEMS",
            "BF.INSERT k NOCREATE CAPACITY",
            "BF.INSERT k ERROR",
            "BF.INSERT k DONTEXIST NOCREATE",
            "BF.INSERT k CAPACITY 0.3",
            "BF.INSERT k ERROR big",
            "BF.INSERT k EXPANSION -1 ITEMS foo",
        ] {
            assert!(bf_insert(&split(line)).is_err(), "{line}");
        }
    }

    #[test]
    fn cf_reserve_and_insert_check_redisbloom_ranges() {
        let o = cf_reserve(&split(
            "CF.RESERVE k 1000 BUCKETSIZE 4 MAXITERATIONS 500 EXPANSION 2",
        ))
        .unwrap();
        assert_eq!(
            (o.capacity, o.bucket_size, o.max_iterations, o.expansion),
            (1000, 4, 500, 2)
        );
        for line in [
            "CF.RESERVE k",
            "CF.RESERVE k str",
            "CF.RESERVE k 1",
            "CF.RESERVE k 10 BUCKETSIZE",
            "CF.RESERVE k 10 BUCKETSIZE 0",
            "CF.RESERVE k 10 MAXITERATIONS 0",
            "CF.RESERVE k 10 EXPANSION -1",
            "CF.RESERVE k 100 BUCKETSIZE 33554432",
            "CF.RESERVE k 100 MAXITERATIONS 165536",
            "CF.RESERVE k 100 EXPANSION 327695",
        ] {
            assert!(cf_reserve(&split(line)).is_err(), "{line}");
        }
        let i = cf_insert(&split("CF.INSERT k CAPACITY 10000 NOCREATE ITEMS a")).unwrap();
        assert_eq!((i.options, i.create, i.items), (10000, false, 6));
        for line in [
            "CF.INSERT k element",
            "CF.INSERT k CAPACITY 3 ITEMS a",
            "CF.INSERT k CAPACITY -1 ITEMS a",
            "CF.INSERT k NOCREATE ITEMS",
        ] {
            assert!(cf_insert(&split(line)).is_err(), "{line}");
        }
    }
}
