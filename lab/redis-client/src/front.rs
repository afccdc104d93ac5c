//! The operations both fronts offer, written once: [`filter_methods!`] expands them
//! for the sync [`RedisFilter`](crate::RedisFilter) and the async
//! [`AsyncRedisFilter`](crate::AsyncRedisFilter), each with its own connection trait
//! and its own function that runs an exchange (`blocking::run`, or `aio::run_async`,
//! awaited). The handle's accessors, which do no I/O, are [`filter_accessors!`].

use crate::protocol::state::Shared;
use linebloom::{BloomFilter, Key};

/// Fills a rebuild's filter with the source's keys; how many it gave.
pub(crate) fn fill<K: Key>(
    mut filter: BloomFilter,
    keys: impl IntoIterator<Item = K>,
) -> (BloomFilter, u64) {
    let mut n = 0u64;
    for key in keys {
        filter.add(&key);
        n += 1;
    }
    (filter, n)
}

/// The error of a fill step in an operation that reads no source.
pub(crate) fn no_source() -> Box<dyn std::error::Error + Send + Sync> {
    "this operation reads no source".into()
}

/// `Debug` of a handle: the prefix, the live generation and the batch path.
pub(crate) fn debug(
    shared: &Shared,
    name: &str,
    f: &mut std::fmt::Formatter<'_>,
) -> std::fmt::Result {
    let state = shared.state();
    f.debug_struct(name)
        .field("prefix", &shared.prefix)
        .field("generation", &state.meta.live.number)
        .field("params", &state.meta.live.params)
        .field("batch_path", &state.path)
        .finish()
}

/// The accessors of a handle (no I/O).
macro_rules! filter_accessors {
    () => {
        /// The prefix the filter's keys live under.
        #[must_use]
        pub fn prefix(&self) -> &str {
            &self.shared.prefix
        }

        /// The live generation, as this handle last read it.
        #[must_use]
        pub fn generation(&self) -> $crate::Generation {
            self.shared.state().meta.live
        }

        /// The live generation's shape.
        #[must_use]
        pub fn params(&self) -> linebloom::Params {
            self.generation().params
        }

        /// Bytes of filter payload in Redis (live generation).
        #[must_use]
        pub fn bytes(&self) -> usize {
            self.params().bytes()
        }

        /// How this handle sends batches: chosen when it was opened or created, and
        /// switched to [`BatchPath::Commands`]($crate::BatchPath::Commands) when the
        /// server no longer knows the module's commands (a failover to a server
        /// without it).
        #[must_use]
        pub fn batch_path(&self) -> $crate::BatchPath {
            self.shared.state().path
        }

        /// Sends batches by `path` from now on (for comparisons on one server).
        /// [`BatchPath::Module`]($crate::BatchPath::Module) on a server without the
        /// module falls back to plain commands at the first call.
        pub fn set_batch_path(&self, path: $crate::BatchPath) {
            self.shared.update(|s| s.with_path(path));
        }

        /// Whether the server may evict the filter's keys, as found when the handle
        /// was opened or created ([`info`](Self::info) reads it again).
        #[must_use]
        pub fn eviction_risk(&self) -> Option<$crate::EvictionRisk> {
            self.shared.state().eviction.clone()
        }
    };
}
pub(crate) use filter_accessors;

/// The operations of a handle. `$($async $await)?` makes them `async fn`s that await
/// the runner; `$Conn` is the connection trait; `$run(con, exchange)` is the front's
/// function that runs an exchange to its result.
macro_rules! filter_methods {
    ($($async:ident $await:ident)?; $Conn:ident; $run:ident) => {
        /// Opens the filter stored under `prefix`: reads its meta and checks that every
        /// shard of the live generation is there with exactly its shape's bytes. Also
        /// detects the module (the [`BatchPath`]($crate::BatchPath)) and reads the
        /// server's eviction policy ([`eviction_risk`](Self::eviction_risk)).
        ///
        /// # Errors
        ///
        /// [`NotFound`]($crate::RedisFilterError::NotFound) if there is no filter;
        /// [`BadMeta`]($crate::RedisFilterError::BadMeta),
        /// [`Missing`]($crate::RedisFilterError::Missing),
        /// [`ShardLength`]($crate::RedisFilterError::ShardLength) or
        /// [`WrongType`]($crate::RedisFilterError::WrongType) if its keys are not a
        /// whole filter; [`Redis`]($crate::RedisFilterError::Redis) for the connection.
        pub $($async)? fn open<C: $Conn + ?Sized>(
            con: &mut C,
            prefix: &str,
        ) -> Result<Self, $crate::RedisFilterError> {
            let state = $run(con, $crate::protocol::open::Open::new(prefix))$(.$await)??;
            Ok(Self::from_state(prefix, state, false))
        }

        /// Creates an empty filter of shape `params` under `prefix`, with the default
        /// [`FilterOptions`]($crate::FilterOptions).
        ///
        /// # Errors
        ///
        /// As [`create_with`](Self::create_with).
        pub $($async)? fn create<C: $Conn + ?Sized>(
            con: &mut C,
            prefix: &str,
            params: linebloom::Params,
        ) -> Result<Self, $crate::RedisFilterError> {
            use $crate::protocol::open::{Content, Create};
            let create = Create::new(prefix, Content::Empty(params), $crate::FilterOptions::default())?;
            let state = $run(con, create)$(.$await)??;
            Ok(Self::from_state(prefix, state, true))
        }

        /// Creates an empty filter of shape `params` under `prefix`: its shards first,
        /// under key names no other filter uses, then its meta with `SET … NX`. If a
        /// filter is there already nothing of it is touched, the shards this call wrote
        /// are removed, and the call fails: a live filter is replaced only by
        /// [`rebuild`](Self::rebuild).
        ///
        /// # Errors
        ///
        /// [`AlreadyExists`]($crate::RedisFilterError::AlreadyExists) if `prefix`
        /// holds a filter; [`InvalidArgument`]($crate::RedisFilterError::InvalidArgument)
        /// for options that cannot describe one; [`Redis`]($crate::RedisFilterError::Redis)
        /// for the connection.
        pub $($async)? fn create_with<C: $Conn + ?Sized>(
            con: &mut C,
            prefix: &str,
            params: linebloom::Params,
            options: $crate::FilterOptions,
        ) -> Result<Self, $crate::RedisFilterError> {
            use $crate::protocol::open::{Content, Create};
            let create = Create::new(prefix, Content::Empty(params), options)?;
            let state = $run(con, create)$(.$await)??;
            Ok(Self::from_state(prefix, state, true))
        }

        /// Opens the filter under `prefix`, or creates an empty one of shape `params`
        /// if there is none: a service's start-up. When several start together, each
        /// either creates the filter or opens the one another created; none writes over
        /// another's. An existing filter keeps its own shape (see [`info`](Self::info)).
        ///
        /// # Errors
        ///
        /// As [`open`](Self::open) and [`create_with`](Self::create_with), except
        /// `NotFound` and `AlreadyExists`.
        pub $($async)? fn open_or_create<C: $Conn + ?Sized>(
            con: &mut C,
            prefix: &str,
            params: linebloom::Params,
            options: $crate::FilterOptions,
        ) -> Result<Self, $crate::RedisFilterError> {
            let exchange = $crate::protocol::open::OpenOrCreate::new(prefix, params, options)?;
            let (state, created) = $run(con, exchange)$(.$await)??;
            Ok(Self::from_state(prefix, state, created))
        }

        /// Did the call that made this handle create the filter? `true` after
        /// [`create`](Self::create), [`store`](Self::store), and an
        /// [`open_or_create`](Self::open_or_create) that found none; `false` after
        /// [`open`](Self::open) and an `open_or_create` that opened another service's.
        /// Clones answer as the handle they came from.
        pub fn created(&self) -> bool {
            self.shared.created
        }

        /// Stores an in-process filter under `prefix` as a new filter (its bits, shape
        /// and hasher seed; `options`' seed is not used), with `create`'s rules: a
        /// prefix that holds a filter is refused.
        ///
        /// # Errors
        ///
        /// As [`create_with`](Self::create_with).
        pub $($async)? fn store<C: $Conn + ?Sized>(
            con: &mut C,
            prefix: &str,
            filter: &linebloom::BloomFilter,
            options: $crate::FilterOptions,
        ) -> Result<Self, $crate::RedisFilterError> {
            use $crate::protocol::open::{Content, Create};
            let create = Create::new(prefix, Content::Filter(filter), options)?;
            let state = $run(con, create)$(.$await)??;
            Ok(Self::from_state(prefix, state, true))
        }

        /// Inserts one key into the live generation (and during a rebuild the next
        /// one too) in one round trip. Returns whether it was new: `false` when its
        /// bits were all set already (it was inserted before, or is a false positive),
        /// as `HashSet::insert` and `BF.ADD` answer.
        ///
        /// # Errors
        ///
        /// [`Missing`]($crate::RedisFilterError::Missing),
        /// [`ShardLength`]($crate::RedisFilterError::ShardLength) or
        /// [`WrongType`]($crate::RedisFilterError::WrongType) if its shard is not
        /// whole (a write never re-creates one); [`NotFound`]($crate::RedisFilterError::NotFound)
        /// if the filter is gone; [`Stale`]($crate::RedisFilterError::Stale) or
        /// [`Redis`]($crate::RedisFilterError::Redis) otherwise; with a
        /// [`Durability`]($crate::Durability), [`NotDurable`]($crate::RedisFilterError::NotDurable)
        /// when too few replicas acknowledged it in time. After an error the key may or
        /// may not be in the filter: insert it again before relying on it.
        pub $($async)? fn insert<K: linebloom::Key + Sync + ?Sized, C: $Conn + ?Sized>(
            &self,
            con: &mut C,
            key: &K,
        ) -> Result<bool, $crate::RedisFilterError> {
            let batch = std::slice::from_ref(&key);
            let attempt = $crate::protocol::batch::Insert::new(batch);
            let exchange = $crate::protocol::batch::Retrying::new(&self.shared, con.ordered(), attempt);
            let exchange = $crate::protocol::durability::Durable::new(exchange, self.shared.durability(), con.ordered());
            Ok($run(con, exchange)$(.$await)?? > 0)
        }

        /// Inserts a batch of keys: with the module one command per shard, without it
        /// one script call per shard, pipelined in one round trip. Returns how many
        /// were new (keys with a bit clear in the live generation; a key that appears
        /// twice counts once).
        ///
        /// # Errors
        ///
        /// As [`insert`](Self::insert).
        pub $($async)? fn insert_many<K: linebloom::Key + Sync, C: $Conn + ?Sized>(
            &self,
            con: &mut C,
            keys: &[K],
        ) -> Result<u64, $crate::RedisFilterError> {
            if keys.is_empty() {
                return Ok(0);
            }
            let attempt = $crate::protocol::batch::Insert::new(keys);
            let exchange = $crate::protocol::batch::Retrying::new(&self.shared, con.ordered(), attempt);
            let exchange = $crate::protocol::durability::Durable::new(exchange, self.shared.durability(), con.ordered());
            $run(con, exchange)$(.$await)?
        }

        /// Makes every later insert through this handle and its clones wait until
        /// `durability`'s replicas acknowledged it (see [`Durability`]($crate::Durability)):
        /// one `WAIT` after each insert call, on one server. On a cluster the inserts
        /// are refused with [`InvalidArgument`]($crate::RedisFilterError::InvalidArgument).
        pub fn set_durability(&self, durability: $crate::Durability) {
            self.shared.set_durability(durability);
        }

        /// Sets what lookups through this handle and its clones answer while the filter
        /// is still being filled from its source ([`open_or_build`](Self::open_or_build)):
        /// by default [`Building`]($crate::RedisFilterError::Building).
        pub fn set_while_building(&self, answer: $crate::WhileBuilding) {
            self.shared.set_while_building(answer);
        }

        /// Tests one key in one round trip: `false` means certainly never inserted.
        ///
        /// # Errors
        ///
        /// As [`insert`](Self::insert): a key whose block could not be read whole is an
        /// error, never "absent"; while the filter is being built,
        /// [`Building`]($crate::RedisFilterError::Building) (see
        /// [`set_while_building`](Self::set_while_building)).
        pub $($async)? fn contains<K: linebloom::Key + Sync + ?Sized, C: $Conn + ?Sized>(
            &self,
            con: &mut C,
            key: &K,
        ) -> Result<bool, $crate::RedisFilterError> {
            let batch = std::slice::from_ref(&key);
            let attempt = $crate::protocol::batch::Contains::new(batch);
            let exchange = $crate::protocol::batch::Retrying::new(&self.shared, con.ordered(), attempt);
            Ok($run(con, exchange)$(.$await)??[0])
        }

        /// Tests a batch of keys in one round trip (with the module one command per
        /// shard; without it a `GETRANGE` per run of nearby blocks), one answer per
        /// key, in order.
        ///
        /// # Errors
        ///
        /// As [`contains`](Self::contains).
        pub $($async)? fn contains_many<K: linebloom::Key + Sync, C: $Conn + ?Sized>(
            &self,
            con: &mut C,
            keys: &[K],
        ) -> Result<Vec<bool>, $crate::RedisFilterError> {
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            let attempt = $crate::protocol::batch::Contains::new(keys);
            let exchange = $crate::protocol::batch::Retrying::new(&self.shared, con.ordered(), attempt);
            Ok($run(con, exchange)$(.$await)??.into_vec())
        }

        /// The approximate count of distinct keys inserted, kept by the inserts (one
        /// `GET` per shard, no scan of the bits); see [`Info::count`]($crate::Info::count).
        ///
        /// # Errors
        ///
        /// [`NotFound`]($crate::RedisFilterError::NotFound) if the filter is gone;
        /// [`Redis`]($crate::RedisFilterError::Redis) for the connection.
        pub $($async)? fn count<C: $Conn + ?Sized>(
            &self,
            con: &mut C,
        ) -> Result<u64, $crate::RedisFilterError> {
            let exchange = $crate::protocol::batch::Retrying::new(&self.shared, con.ordered(), $crate::protocol::read::Count);
            $run(con, exchange)$(.$await)?
        }

        /// The filter's shape, generation, count, expected fill and rate at that
        /// count, TTL, batch path and eviction risk ([`Info`]($crate::Info)), without
        /// reading its bits.
        ///
        /// # Errors
        ///
        /// As [`count`](Self::count).
        pub $($async)? fn info<C: $Conn + ?Sized>(
            &self,
            con: &mut C,
        ) -> Result<$crate::Info, $crate::RedisFilterError> {
            let exchange = $crate::protocol::batch::Retrying::new(&self.shared, con.ordered(), $crate::protocol::read::InfoRead);
            $run(con, exchange)$(.$await)?
        }

        /// The live generation's load read from its bits (one `BITCOUNT` per shard:
        /// the server reads every byte, about 1 ms per 10 MB): the fill, the estimated
        /// key count and the rate the shape predicts at it, against `target`.
        ///
        /// # Errors
        ///
        /// As [`contains`](Self::contains).
        pub $($async)? fn measure<C: $Conn + ?Sized>(
            &self,
            con: &mut C,
            target: f64,
        ) -> Result<$crate::Capacity, $crate::RedisFilterError> {
            let exchange = $crate::protocol::batch::Retrying::new(&self.shared, con.ordered(), $crate::protocol::read::Measure { target });
            $run(con, exchange)$(.$await)?
        }

        /// Reads the live generation back into process memory: the same bits, shape
        /// and hasher as in Redis.
        ///
        /// # Errors
        ///
        /// As [`contains`](Self::contains).
        pub $($async)? fn load<C: $Conn + ?Sized>(
            &self,
            con: &mut C,
        ) -> Result<linebloom::BloomFilter, $crate::RedisFilterError> {
            let exchange = $crate::protocol::batch::Retrying::new(&self.shared, con.ordered(), $crate::protocol::read::Load::default());
            $run(con, exchange)$(.$await)?
        }

        /// Re-reads the meta: after [`SwitchUnconfirmed`]($crate::RedisFilterError::SwitchUnconfirmed),
        /// [`generation`](Self::generation) then tells which generation is live.
        ///
        /// # Errors
        ///
        /// [`NotFound`]($crate::RedisFilterError::NotFound),
        /// [`BadMeta`]($crate::RedisFilterError::BadMeta) or
        /// [`Redis`]($crate::RedisFilterError::Redis).
        pub $($async)? fn refresh<C: $Conn + ?Sized>(
            &self,
            con: &mut C,
        ) -> Result<(), $crate::RedisFilterError> {
            $run(con, $crate::protocol::state::Refresh(&self.shared))$(.$await)?
        }

        /// Cancels a rebuild in progress whose lease has run out (its process died),
        /// or, with `force`, any rebuild: its generation is removed and the live one
        /// stays. A rebuild that is still running then fails at its switch, without
        /// harm. Returns the generation it was building, or `None` if there was no
        /// rebuild.
        ///
        /// # Errors
        ///
        /// [`RebuildInProgress`]($crate::RedisFilterError::RebuildInProgress) if its
        /// lease still runs and not `force`; [`Redis`]($crate::RedisFilterError::Redis)
        /// for the connection.
        pub $($async)? fn cancel_rebuild<C: $Conn + ?Sized>(
            &self,
            con: &mut C,
            force: bool,
        ) -> Result<Option<$crate::Generation>, $crate::RedisFilterError> {
            $run(con, $crate::protocol::rebuild::CancelRebuild::new(&self.shared, force))$(.$await)?
        }

        /// Deletes the filter: its meta first (only if it is still the one read here,
        /// so a filter created meanwhile is left alone), then every key of every
        /// generation it named. Handles then answer
        /// [`NotFound`]($crate::RedisFilterError::NotFound). Returns whether there was
        /// a filter.
        ///
        /// # Errors
        ///
        /// [`Redis`]($crate::RedisFilterError::Redis) for the connection; the keys not
        /// yet removed then stay.
        pub $($async)? fn delete<C: $Conn + ?Sized>(
            &self,
            con: &mut C,
        ) -> Result<bool, $crate::RedisFilterError> {
            $run(con, $crate::protocol::lifecycle::Delete::new(&self.shared))$(.$await)?
        }

        /// Gives the whole filter (meta, shards, counts) a time to live of `ttl`;
        /// after it the filter is gone. Keys that may expire may also be evicted under
        /// a `volatile-*` policy ([`EvictionRisk`]($crate::EvictionRisk)).
        ///
        /// # Errors
        ///
        /// As [`count`](Self::count).
        pub $($async)? fn expire<C: $Conn + ?Sized>(
            &self,
            con: &mut C,
            ttl: std::time::Duration,
        ) -> Result<(), $crate::RedisFilterError> {
            if ttl.as_millis() == 0 {
                return Err($crate::RedisFilterError::InvalidArgument("a TTL of less than a millisecond".into()));
            }
            let exchange = $crate::protocol::batch::Retrying::new(&self.shared, con.ordered(), $crate::protocol::lifecycle::Ttl(Some(ttl)));
            $run(con, exchange)$(.$await)?
        }

        /// Removes the filter's time to live.
        ///
        /// # Errors
        ///
        /// As [`count`](Self::count).
        pub $($async)? fn persist<C: $Conn + ?Sized>(
            &self,
            con: &mut C,
        ) -> Result<(), $crate::RedisFilterError> {
            let exchange = $crate::protocol::batch::Retrying::new(&self.shared, con.ordered(), $crate::protocol::lifecycle::Ttl(None));
            $run(con, exchange)$(.$await)?
        }

        fn from_state(prefix: &str, state: $crate::protocol::state::State, created: bool) -> Self {
            Self {
                shared: std::sync::Arc::new($crate::protocol::state::Shared::new(prefix, state, created)),
            }
        }
    };
}
pub(crate) use filter_methods;
