//! The filter's metadata, the `<prefix>:meta` key (`PROTOCOL.md`, "Metadata"): the
//! live [`Generation`] (while it is first filled from the source, its builder's
//! lease), during a rebuild the next one with its owner and lease, the generations whose
//! keys are still to be removed, and the filter's identity.

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

/// A first build in progress (`open_or_build`): the live generation is being filled
/// from the source, and answers no lookup until it is whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Building {
    /// A random token of the call that builds it.
    pub(crate) owner: u64,
    /// The builder's lease ends at this server time (Unix milliseconds); after it,
    /// another caller may take the build over.
    pub(crate) until_ms: u64,
}

/// What the meta says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    pub(crate) live: Generation,
    /// Set while the live generation is first filled from the source.
    pub(crate) building: Option<Building>,
    pub(crate) rebuilding: Option<Rebuilding>,
    /// Generations no reader or writer uses any more, whose keys are still to be
    /// removed (after a switch or a cancelled rebuild whose clean-up did not finish).
    pub(crate) retired: Vec<Generation>,
    /// The filter's identity: drawn when it is created and kept by every rebuild, so a
    /// handle can tell its own filter's next generations from a filter created again
    /// under the prefix (`None` in metas written before it existed).
    pub(crate) filter: Option<u64>,
}

impl Meta {
    /// A new filter's meta: only a live generation, and the filter's identity.
    pub(crate) fn live(live: Generation, filter: u64) -> Meta {
        Meta {
            live,
            building: None,
            rebuilding: None,
            retired: Vec::new(),
            filter: Some(filter),
        }
    }

    /// Is `next` (a meta just read) this filter as it moved on: the same identity, or
    /// for metas without one, a generation no older, the same where the number is the
    /// same? A filter created again under the prefix is another filter, whatever its
    /// number.
    pub(crate) fn is_succeeded_by(&self, next: &Meta) -> bool {
        match (self.filter, next.filter) {
            (Some(a), Some(b)) => a == b,
            (None, None) => {
                next.live.number > self.live.number
                    || (next.live.number == self.live.number && next.live.tag == self.live.tag)
            }
            _ => false,
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
        if let Some(b) = &self.building {
            head.push_str(&format!(
                " building owner {:016x} until {}",
                b.owner, b.until_ms
            ));
        }
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
        if let Some(id) = self.filter {
            tail.push_str(&format!(" filter {id:016x}"));
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
        let mut building = None;
        if let ["building", "owner", owner, "until", until, tail @ ..] = rest {
            if owner.len() != 16 {
                return Err(bad());
            }
            building = Some(Building {
                owner: u64::from_str_radix(owner, 16).map_err(|_| bad())?,
                until_ms: until.parse().map_err(|_| bad())?,
            });
            rest = tail;
        }
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
        let mut filter = None;
        if let ["filter", id] = rest {
            if id.len() != 16 {
                return Err(bad());
            }
            filter = Some(u64::from_str_radix(id, 16).map_err(|_| bad())?);
            rest = &[];
        }
        // A filter still being built is not rebuilt.
        if !rest.is_empty() || (building.is_some() && rebuilding.is_some()) {
            return Err(bad());
        }
        let meta = Meta {
            live,
            building,
            rebuilding,
            retired,
            filter,
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
            Meta::live(g(1, 10), 0xabc),
            Meta {
                live: g(4, 10),
                building: None,
                rebuilding: Some(Rebuilding {
                    next: g(5, 40),
                    owner: 0x1234,
                    until_ms: 1_700_000_000_000,
                }),
                retired: vec![g(3, 10)],
                filter: Some(7),
            },
            Meta {
                live: g(6, 10),
                building: None,
                rebuilding: None,
                retired: vec![g(4, 10), g(5, 40)],
                filter: None,
            },
            Meta {
                building: Some(Building {
                    owner: 0x99,
                    until_ms: 1_700_000_000_000,
                }),
                ..Meta::live(g(1, 10), 0xabc)
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
            format!("{live} filter 12"),
            format!("{live} building owner 0000000000001234"),
            format!("{live} building owner 1234 until 5"),
            format!("{live} building owner 0000000000001234 until -5"),
            format!(
                "{live} building owner 0000000000001234 until 5 \
                 next 2 feed000000000002 10 8 3 100 owner 0000000000001234 until 5"
            ),
            format!("{live} filter 0000000000000012 retired 2 feed000000000002 10 8 3 100"),
        ] {
            assert!(Meta::decode("m", bad.as_bytes()).is_err(), "{bad:?}");
        }
        assert!(Meta::decode("m", &[0xff, 0xfe]).is_err());
    }

    #[test]
    fn a_filter_is_succeeded_only_by_its_own_generations() {
        let ours = Meta::live(g(2, 10), 1);
        let rebuilt = Meta {
            live: g(3, 40),
            ..Meta::live(g(3, 40), 1)
        };
        assert!(ours.is_succeeded_by(&rebuilt));
        assert!(ours.is_succeeded_by(&ours));
        // Created again under the prefix: another identity, whatever its generations.
        assert!(!ours.is_succeeded_by(&Meta::live(g(1, 10), 2)));
        assert!(!ours.is_succeeded_by(&Meta::live(g(9, 10), 2)));
        // Metas from before the identity: generations only move forward.
        let old = Meta {
            filter: None,
            ..Meta::live(g(2, 10), 0)
        };
        let older_rebuilt = Meta {
            filter: None,
            ..Meta::live(g(3, 10), 0)
        };
        assert!(old.is_succeeded_by(&older_rebuilt));
        let recreated = Meta {
            filter: None,
            ..Meta::live(Generation { tag: 1, ..g(1, 10) }, 0)
        };
        assert!(!old.is_succeeded_by(&recreated));
        assert!(!old.is_succeeded_by(&ours));
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
