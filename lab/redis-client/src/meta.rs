//! The filter's metadata, the `<prefix>:meta` key: the live [`Generation`] and, during a
//! rebuild, the next one (`PROTOCOL.md`, "Metadata").

use crate::RedisFilterError;
use linebloom::Params;
use linebloom::hash::SCHEME;

/// One generation: its number and shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generation {
    /// Generation number (1 for a filter just stored; +1 per rebuild).
    pub number: u64,
    /// Its shape.
    pub params: Params,
    /// Its hasher's seed (`IntFold`).
    pub seed: u64,
    /// Blocks per shard key.
    pub shard_blocks: u64,
}

impl Generation {
    pub(crate) fn shards(&self) -> u64 {
        (self.params.blocks() as u64).div_ceil(self.shard_blocks)
    }

    pub(crate) fn shard_len(&self, shard: u64) -> u64 {
        (self.params.blocks() as u64 - shard * self.shard_blocks).min(self.shard_blocks)
    }

    fn fields(&self) -> String {
        format!(
            "{} {} {} {} {}",
            self.number,
            self.params.blocks(),
            self.params.k(),
            self.seed,
            self.shard_blocks
        )
    }

    fn parse(f: &[&str], meta: &str) -> Result<Generation, RedisFilterError> {
        let bad = || RedisFilterError::BadMeta(meta.to_string());
        let num = |s: &str| s.parse::<u64>().map_err(|_| bad());
        let (number, blocks, k, seed, shard_blocks) =
            (num(f[0])?, num(f[1])?, num(f[2])?, num(f[3])?, num(f[4])?);
        if shard_blocks == 0 || k > u32::MAX as u64 {
            return Err(bad());
        }
        let params = Params::new(blocks, k as u32)
            .map_err(|e| RedisFilterError::BadMeta(format!("{meta}: {e}")))?;
        Ok(Generation {
            number,
            params,
            seed,
            shard_blocks,
        })
    }
}

/// What the meta says: the live generation, and the one being built, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    pub(crate) live: Generation,
    pub(crate) next: Option<Generation>,
}

impl Meta {
    pub(crate) fn encode(&self) -> String {
        match &self.next {
            None => format!("{SCHEME} {}", self.live.fields()),
            Some(n) => format!("{SCHEME} {} next {}", self.live.fields(), n.fields()),
        }
    }

    pub(crate) fn decode(meta: &str) -> Result<Meta, RedisFilterError> {
        let f: Vec<&str> = meta.split(' ').collect();
        match f.as_slice() {
            [SCHEME, live @ ..] if live.len() == 5 => Ok(Meta {
                live: Generation::parse(live, meta)?,
                next: None,
            }),
            [SCHEME, rest @ ..] if rest.len() == 11 && rest[5] == "next" => {
                let (live, next) = (Generation::parse(&rest[..5], meta)?, &rest[6..]);
                let next = Generation::parse(next, meta)?;
                if next.number <= live.number {
                    return Err(RedisFilterError::BadMeta(meta.to_string()));
                }
                Ok(Meta {
                    live,
                    next: Some(next),
                })
            }
            _ => Err(RedisFilterError::BadMeta(meta.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_round_trips_and_refuses_garbage() {
        let g = |number, blocks| Generation {
            number,
            params: Params::new(blocks, 8).unwrap(),
            seed: 3,
            shard_blocks: 100,
        };
        for m in [
            Meta {
                live: g(1, 10),
                next: None,
            },
            Meta {
                live: g(4, 10),
                next: Some(g(5, 40)),
            },
        ] {
            assert_eq!(Meta::decode(&m.encode()).unwrap(), m);
        }
        for bad in [
            "",
            "linebloom-v1 10 8 3 100",
            "linebloom-v2 1 10 8 3",
            "linebloom-v2 1 10 8 3 0",
            "linebloom-v2 1 0 8 3 100",
            "linebloom-v2 1 10 8 3 100 next 1 10 8 3 100",
            "linebloom-v2 2 10 8 3 100 later 3 10 8 3 100",
            "linebloom-v2 x 10 8 3 100",
        ] {
            assert!(Meta::decode(bad).is_err(), "{bad:?}");
        }
    }
}
