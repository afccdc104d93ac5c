//! What a call waits for and answers beyond the master's reply: [`Durability`] (an
//! insert waits until replicas hold it), [`Durable`] (the exchange that sends the
//! `WAIT`), and [`WhileBuilding`] (what a lookup answers before the first build is
//! done).

use super::exchange::{Exchange, Flow, Input, replies};
use super::reply::integer;
use crate::RedisFilterError;
use smallvec::smallvec;
use std::time::Duration;

/// What an insert waits for before it returns: by default nothing beyond the master's
/// reply. Redis replicates asynchronously, so an insert the master acknowledged can be
/// lost by a failover that promotes a replica it had not reached yet; with
/// [`replicas`](Durability::replicas) an insert returns only once that many replicas
/// acknowledged it (`WAIT`), and answers [`NotDurable`](RedisFilterError::NotDurable)
/// when they did not within the timeout.
///
/// ```
/// use linebloom_redis_client::Durability;
/// use std::time::Duration;
/// let d = Durability::replicas(1, Duration::from_millis(500));
/// assert_eq!((d.wanted(), d.timeout()), (1, Duration::from_millis(500)));
/// assert_eq!(Durability::default().wanted(), 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Durability {
    replicas: u32,
    timeout: Duration,
}

impl Durability {
    /// Every insert waits until `replicas` replicas acknowledged it, at most `timeout`
    /// (`WAIT replicas timeout`; a zero timeout would wait forever, so it is taken as
    /// 1 ms).
    #[must_use]
    pub fn replicas(replicas: u32, timeout: Duration) -> Durability {
        Durability {
            replicas,
            timeout: timeout.max(Duration::from_millis(1)),
        }
    }

    /// Replicas an insert waits for (0: none).
    #[must_use]
    pub fn wanted(&self) -> u32 {
        self.replicas
    }

    /// The longest an insert waits for them.
    #[must_use]
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
}

/// What lookups answer while the filter is still being built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WhileBuilding {
    /// [`RedisFilterError::Building`]: the caller asks the database.
    #[default]
    Error,
    /// "Maybe present" for every key, as a full filter would: the database is asked
    /// for each key until the build is done.
    MaybePresent,
}

/// An exchange whose writes must reach `durability`'s replicas before it answers: after
/// the inner exchange is done, one `WAIT` on the same connection (it waits for every
/// write this connection sent so far).
pub(crate) struct Durable<E: Exchange> {
    inner: E,
    durability: Durability,
    ordered: bool,
    done: Option<E::Output>,
}

impl<E: Exchange> Durable<E> {
    pub(crate) fn new(inner: E, durability: Durability, ordered: bool) -> Self {
        Durable {
            inner,
            durability,
            ordered,
            done: None,
        }
    }
}

impl<E: Exchange> Exchange for Durable<E> {
    type Output = E::Output;

    fn resume(&mut self, input: Input) -> Result<Flow<E::Output>, RedisFilterError> {
        if let Some(output) = self.done.take() {
            let acked = integer(replies(input, 1)?.pop().expect("one reply"))? as u64;
            let wanted = u64::from(self.durability.replicas);
            if acked < wanted {
                return Err(RedisFilterError::NotDurable { acked, wanted });
            }
            return Ok(Flow::Done(output));
        }
        match self.inner.resume(input)? {
            Flow::Done(output) if self.durability.replicas > 0 => {
                if !self.ordered {
                    return Err(RedisFilterError::InvalidArgument(
                        "durable inserts need one server: on a cluster WAIT waits only on \
                         the node it reaches"
                            .into(),
                    ));
                }
                self.done = Some(output);
                let mut wait = redis::cmd("WAIT");
                wait.arg(self.durability.replicas)
                    .arg(self.durability.timeout.as_millis().min(u64::MAX as u128) as u64);
                Ok(Flow::Send(smallvec![wait]))
            }
            flow => Ok(flow),
        }
    }
}
