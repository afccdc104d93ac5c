//! Rebuild and rotation without a gap ([`RedisFilter::rebuild`]): a new generation built
//! from the source of truth and switched to atomically (`PROTOCOL.md`, "Rebuild and
//! rotation").

use crate::error::{classify, is_stale};
use crate::meta::Meta;
use crate::{FilterConnection, Generation, RedisFilter, RedisFilterError};
use linebloom::{BloomFilter, IntFold, Params};
use std::time::Duration;

/// Compare-and-set of the meta: `KEYS[1]` the meta, `ARGV[1]` the expected value,
/// `ARGV[2]` the new one. Refuses with `STALE` if the meta is not the expected one.
pub const SWAP_META: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return redis.error_reply('STALE the filter meta changed during the rebuild')
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"#;

/// What a rebuild did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rebuilt {
    /// The generation now live.
    pub generation: Generation,
    /// Keys read from the source.
    pub keys: u64,
    /// Time from the start of the rebuild to the switch.
    pub took: Duration,
}

impl RedisFilter {
    /// Swaps the meta from this handle's to `new`, if nobody changed it meanwhile.
    pub(crate) fn swap_meta<C: FilterConnection + ?Sized>(
        &mut self,
        con: &mut C,
        new: Meta,
    ) -> Result<(), RedisFilterError> {
        let text = new.encode();
        redis::Script::new(SWAP_META)
            .key(self.meta_key())
            .arg(&self.meta_text)
            .arg(&text)
            .invoke::<()>(con.single())
            .map_err(|e| {
                if is_stale(&e) {
                    RedisFilterError::Stale(self.prefix.clone())
                } else {
                    classify(e, &self.prefix)
                }
            })?;
        self.meta = new;
        self.meta_text = text;
        Ok(())
    }

    /// Rebuilds the filter from `source` into a new generation of shape `params` (the
    /// same shape to clear deleted keys, a larger one to rotate a filter that filled up),
    /// and switches every reader to it with no gap; see the module docs for the steps
    /// and what `grace` means. `source` is called after inserts start going to both
    /// generations; it returns every key that must be in the filter (read it from the
    /// database). On error the rebuild is abandoned and the live generation stays.
    pub fn rebuild<C: FilterConnection + ?Sized, I, E>(
        &mut self,
        con: &mut C,
        params: Params,
        grace: Duration,
        source: impl FnOnce() -> Result<I, E>,
    ) -> Result<Rebuilt, RedisFilterError>
    where
        I: IntoIterator<Item = u64>,
        E: std::fmt::Display,
    {
        let start = std::time::Instant::now();
        self.refresh(con)?;
        if let Some(next) = self.meta.next {
            return Err(RedisFilterError::BadMeta(format!(
                "{}: generation {} is already being built by another rebuild",
                self.meta_text, next.number
            )));
        }
        let live = self.meta.live;
        let next = Generation {
            number: live.number + 1,
            params,
            seed: live.seed,
            shard_blocks: live.shard_blocks,
        };
        // 1. Zeroed shards (SETRANGE of the last byte allocates the string as zeros),
        //    then the meta that sends every insert to both generations.
        let mut cmds = Vec::new();
        for shard in 0..next.shards() {
            let key = self.shard_key(&next, shard);
            let (mut unlink, mut zeros) = (redis::cmd("UNLINK"), redis::cmd("SETRANGE"));
            unlink.arg(&key);
            zeros
                .arg(&key)
                .arg(next.shard_len(shard) * 64 - 1)
                .arg(&[0u8][..]);
            cmds.extend([unlink, zeros]);
        }
        con.run(cmds).map_err(|e| classify(e, &self.prefix))?;
        self.swap_meta(
            con,
            Meta {
                live,
                next: Some(next),
            },
        )?;
        let result = self.fill_and_switch(con, next, grace, source);
        if result.is_err() {
            // Abandon: back to the live generation alone, and free the next one.
            let _ = self.swap_meta(con, Meta { live, next: None });
            let _ = self.unlink_generation(con, &next);
        }
        let keys = result?;
        // 5. The old generation is no longer read by anyone who checks the meta.
        self.unlink_generation(con, &live)?;
        Ok(Rebuilt {
            generation: next,
            keys,
            took: start.elapsed(),
        })
    }

    /// Steps 2–4 of [`rebuild`](Self::rebuild); returns the number of source keys.
    fn fill_and_switch<C: FilterConnection + ?Sized, I, E>(
        &mut self,
        con: &mut C,
        next: Generation,
        grace: Duration,
        source: impl FnOnce() -> Result<I, E>,
    ) -> Result<u64, RedisFilterError>
    where
        I: IntoIterator<Item = u64>,
        E: std::fmt::Display,
    {
        std::thread::sleep(grace);
        let mut built = BloomFilter::with_hasher(next.params, IntFold::with_seed(next.seed));
        let mut keys = 0u64;
        for key in source().map_err(|e| RedisFilterError::Source(e.to_string()))? {
            built.insert(&key);
            keys += 1;
        }
        // 3. OR the built bits into the next shards, which hold the inserts made since
        //    step 1, through a scratch key in the shard's slot (BITOP needs both keys
        //    on one node).
        for (shard, blocks) in built
            .as_blocks()
            .chunks(next.shard_blocks as usize)
            .enumerate()
        {
            let key = self.shard_key(&next, shard as u64);
            let scratch = format!("{key}:load");
            let fail = |e| classify(e, &key);
            let mut set = redis::cmd("SET");
            set.arg(&scratch)
                .arg(linebloom::block::blocks_as_bytes(blocks));
            con.run(vec![set]).map_err(fail)?;
            // A single command: a cluster pipeline refuses BITOP (it routes it alone).
            redis::cmd("BITOP")
                .arg("OR")
                .arg(&key)
                .arg(&key)
                .arg(&scratch)
                .query::<()>(con.single())
                .map_err(fail)?;
            let mut unlink = redis::cmd("UNLINK");
            unlink.arg(&scratch);
            con.run(vec![unlink]).map_err(fail)?;
        }
        // 4. The switch.
        self.swap_meta(
            con,
            Meta {
                live: next,
                next: None,
            },
        )?;
        Ok(keys)
    }

    /// Removes generation `g`'s shards (one `UNLINK` each: a cluster refuses one
    /// command over keys of several slots).
    pub(crate) fn unlink_generation<C: FilterConnection + ?Sized>(
        &self,
        con: &mut C,
        g: &Generation,
    ) -> Result<(), RedisFilterError> {
        let unlinks = (0..g.shards()).map(|shard| {
            let mut unlink = redis::cmd("UNLINK");
            unlink.arg(self.shard_key(g, shard));
            unlink
        });
        con.run(unlinks.collect())
            .map(|_| ())
            .map_err(|e| classify(e, &self.prefix))
    }
}
