//! The filter's metadata, the `<prefix>:meta` key (`PROTOCOL.md`, "Metadata"): the
//! live [`Generation`], during a rebuild the next one with its owner and lease, and the
//! generations whose keys are still to be removed.

use crate::RedisFilterError;
use linebloom::Params;
use linebloom::pattern::NAME as SCHEME;

/// One generation of a filter: the keys of one complete set of shards and their shape.
///
/// A generation's keys are named by its number and a random tag chosen when it was
/// made (`<prefix>:{<number>.<tag>:<shard>}`), so two services that create or rebuild
/// at once never write each other's shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Generation {
    /// Generation number: 1 for a filter just created, one more per rebuild.
    pub number: u64,
    /// The random tag in its key names.
    pub tag: u64,
    /// Its shape.
    pub params: Params,
    /// Its hasher's seed (`IntFold`).
    pub seed: u64,
    /// Blocks per shard key.
    pub shard_blocks: u64,
}

impl Generation {
    /// How many shard keys it has.
    #[must_use]
    pub fn shards(&self) -> u64 {
        (self.params.blocks() as u64).div_ceil(self.shard_blocks)
    }

    /// Blocks in shard `shard`: `shard_blocks`, but fewer in the last.
    #[must_use]
    pub fn shard_len(&self, shard: u64) -> u64 {
        (self.params.blocks() as u64 - shard * self.shard_blocks).min(self.shard_blocks)
    }

    /// The name of shard `shard` under `prefix`: `<prefix>:{<number>.<tag>:<shard>}`. The
    /// braces are a cluster hash tag: shards spread over the slots, and a shard's count
    /// and scratch keys share its slot.
    #[must_use]
    pub fn shard_key(&self, prefix: &str, shard: u64) -> String {
        format!("{prefix}:{{{}.{:016x}:{shard}}}", self.number, self.tag)
    }

    fn write(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(
            out,
            " {} {:016x} {} {} {} {}",
            self.number,
            self.tag,
            self.params.blocks(),
            self.params.k(),
            self.seed,
            self.shard_blocks
        );
    }

    /// Parses the six fields of a generation.
    fn parse(
        f: &[&str],
        bad: &impl Fn() -> RedisFilterError,
    ) -> Result<Generation, RedisFilterError> {
        let num = |s: &str| s.parse::<u64>().map_err(|_| bad());
        let [number, tag, blocks, k, seed, shard_blocks] = f else {
            return Err(bad());
        };
        if tag.len() != 16 {
            return Err(bad());
        }
        let tag = u64::from_str_radix(tag, 16).map_err(|_| bad())?;
        let (number, blocks, k, seed, shard_blocks) = (
            num(number)?,
            num(blocks)?,
            num(k)?,
            num(seed)?,
            num(shard_blocks)?,
        );
        if shard_blocks == 0 || number == 0 {
            return Err(bad());
        }
        let k = u32::try_from(k).map_err(|_| bad())?;
        let params = Params::new(blocks, k).map_err(|_| bad())?;
        Ok(Generation {
            number,
            tag,
            params,
            seed,
            shard_blocks,
        })
    }
}

/// A rebuild in progress: the generation it builds, who builds it and until when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rebuilding {
    pub(crate) next: Generation,
    /// A random token of the rebuild that owns `next`.
    pub(crate) owner: u64,
    /// The owner's lease ends at this server time (Unix milliseconds); after it,
    /// another client may cancel the rebuild and start its own.
    pub(crate) until_ms: u64,
}

/// What the meta says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    pub(crate) live: Generation,
    pub(crate) rebuilding: Option<Rebuilding>,
    /// Generations no reader or writer uses any more, whose keys are still to be
    /// removed (after a switch or a cancelled rebuild whose clean-up did not finish).
    pub(crate) retired: Vec<Generation>,
}

impl Meta {
    /// A meta with only a live generation.
    pub(crate) fn live(live: Generation) -> Meta {
        Meta {
            live,
            rebuilding: None,
            retired: Vec::new(),
        }
    }

    /// The generations a write must reach: the live one, and during a rebuild the next.
    pub(crate) fn written(&self) -> impl Iterator<Item = &Generation> {
        std::iter::once(&self.live).chain(self.rebuilding.as_ref().map(|r| &r.next))
    }

    /// Every generation the meta names, live, next and retired: what `delete` removes.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Generation> {
        self.written().chain(&self.retired)
    }

    /// The meta text, split where a rebuild's lease is written: `(head, tail)` such
    /// that `head + until_ms + tail` is [`encode`](Self::encode)'s text. For the script
    /// that starts a rebuild, which writes the lease from the server's clock.
    pub(crate) fn encode_split(&self) -> (String, String) {
        let mut head = String::from(SCHEME);
        head.push_str(" live");
        self.live.write(&mut head);
        let mut tail = String::new();
        if let Some(r) = &self.rebuilding {
            head.push_str(" next");
            r.next.write(&mut head);
            head.push_str(&format!(" owner {:016x} until ", r.owner));
        }
        for g in &self.retired {
            tail.push_str(" retired");
            g.write(&mut tail);
        }
        (head, tail)
    }

    /// The meta as stored.
    pub(crate) fn encode(&self) -> String {
        let (head, tail) = self.encode_split();
        match &self.rebuilding {
            Some(r) => format!("{head}{}{tail}", r.until_ms),
            None => head + &tail,
        }
    }

    /// Parses a stored meta; anything else than [`encode`](Self::encode)'s grammar is
    /// refused.
    pub(crate) fn decode(key: &str, text: &[u8]) -> Result<Meta, RedisFilterError> {
        let bad = || RedisFilterError::BadMeta {
            key: key.to_string(),
            meta: String::from_utf8_lossy(text).into_owned(),
        };
        let text = std::str::from_utf8(text).map_err(|_| bad())?;
        let words: Vec<&str> = text.split(' ').collect();
        let [SCHEME, "live", rest @ ..] = words.as_slice() else {
            return Err(bad());
        };
        let live = Generation::parse(rest.get(..6).ok_or_else(bad)?, &bad)?;
        let mut rest = &rest[6..];
        let mut rebuilding = None;
        if let ["next", next @ ..] = rest {
            let next = Generation::parse(next.get(..6).ok_or_else(bad)?, &bad)?;
            let ["owner", owner, "until", until, tail @ ..] = &rest[7..] else {
                return Err(bad());
            };
            if next.number <= live.number || owner.len() != 16 {
                return Err(bad());
            }
            rebuilding = Some(Rebuilding {
                next,
                owner: u64::from_str_radix(owner, 16).map_err(|_| bad())?,
                until_ms: until.parse().map_err(|_| bad())?,
            });
            rest = tail;
        }
        let mut retired = Vec::new();
        while let ["retired", g @ ..] = rest {
            retired.push(Generation::parse(g.get(..6).ok_or_else(bad)?, &bad)?);
            rest = &rest[7..];
        }
        if !rest.is_empty() {
            return Err(bad());
        }
        let meta = Meta {
            live,
            rebuilding,
            retired,
        };
        // The grammar admits other spellings of the same numbers ("+1", "01"): only the
        // canonical text is a meta, so that equal metas are equal strings (the guards
        // compare text).
        if meta.encode() != text {
            return Err(bad());
        }
        Ok(meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(number: u64, blocks: u64) -> Generation {
        Generation {
            number,
            tag: 0xfeed_0000_0000_0000 | number,
            params: Params::new(blocks, 8).unwrap(),
            seed: 3,
            shard_blocks: 100,
        }
    }

    #[test]
    fn meta_round_trips_and_refuses_garbage() {
        let metas = [
            Meta::live(g(1, 10)),
            Meta {
                live: g(4, 10),
                rebuilding: Some(Rebuilding {
                    next: g(5, 40),
                    owner: 0x1234,
                    until_ms: 1_700_000_000_000,
                }),
                retired: vec![g(3, 10)],
            },
            Meta {
                live: g(6, 10),
                rebuilding: None,
                retired: vec![g(4, 10), g(5, 40)],
            },
        ];
        for m in metas {
            let text = m.encode();
            assert_eq!(Meta::decode("m", text.as_bytes()).unwrap(), m, "{text}");
            let (head, tail) = m.encode_split();
            if let Some(r) = &m.rebuilding {
                assert_eq!(format!("{head}{}{tail}", r.until_ms), text);
            }
        }
        let live = "linebloom-v2 live 1 feed000000000001 10 8 3 100";
        assert!(Meta::decode("m", live.as_bytes()).is_ok());
        for bad in [
            "".to_string(),
            // The first protocol's meta: no tag.
            "linebloom-v2 1 10 8 3 100".to_string(),
            "linebloom-v1 live 1 feed000000000001 10 8 3 100".to_string(),
            "linebloom-v2 live 1 feed000000000001 10 8 3".to_string(),
            "linebloom-v2 live 1 feed000000000001 10 8 3 0".to_string(),
            "linebloom-v2 live 0 feed000000000001 10 8 3 100".to_string(),
            "linebloom-v2 live 1 feed000000000001 0 8 3 100".to_string(),
            "linebloom-v2 live 1 feed000000000001 10 99 3 100".to_string(),
            "linebloom-v2 live 1 feed00000001 10 8 3 100".to_string(),
            "linebloom-v2 live 1 FEED000000000001 10 8 3 100".to_string(),
            "linebloom-v2 live 01 feed000000000001 10 8 3 100".to_string(),
            "linebloom-v2 live +1 feed000000000001 10 8 3 100".to_string(),
            format!("{live} "),
            format!("{live} next 1 feed000000000001 10 8 3 100 owner 0000000000001234 until 5"),
            format!("{live} next 2 feed000000000002 10 8 3 100 until 5"),
            format!("{live} next 2 feed000000000002 10 8 3 100 owner 0000000000001234 until x"),
            format!("{live} later 3 feed000000000003 10 8 3 100"),
            format!("{live} retired 2 feed000000000002 10 8 3"),
        ] {
            assert!(Meta::decode("m", bad.as_bytes()).is_err(), "{bad:?}");
        }
        assert!(Meta::decode("m", &[0xff, 0xfe]).is_err());
    }

    #[test]
    fn shards_cover_the_blocks() {
        let generation = Generation {
            shard_blocks: 4,
            ..g(2, 10)
        };
        assert_eq!(generation.shards(), 3);
        assert_eq!(
            (0..3).map(|s| generation.shard_len(s)).collect::<Vec<_>>(),
            [4, 4, 2]
        );
        assert_eq!(generation.shard_key("p", 1), "p:{2.feed000000000002:1}");
    }
}
