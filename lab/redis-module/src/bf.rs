//! The filter behind `BF.*`: linebloom's blocked Bloom filter with RedisBloom's
//! options, and its body in a dump ([`crate::dump`]). It knows nothing of Redis.
//!
//! * **Scaling** (the default, `EXPANSION e`): a [`ScalableBloomFilter`] whose first
//!   layer holds the reserved capacity and each next one `e` times the last, as
//!   RedisBloom's do. Layer `i`'s rate is `p · (1 − r) · rⁱ` with `r` =
//!   [`TIGHTENING`], so the compounded rate stays at or below the `error_rate` however
//!   far the filter grows (the core's `scalable` module).
//! * **Non-scaling** (`NONSCALING`, or `EXPANSION 0`): one [`BloomFilter`] sized for
//!   the capacity at the whole `error_rate`, which refuses a new item once it holds
//!   `capacity` of them.
//!
//! An item is its bytes (the core's byte-string key, hashed with XXH3). As in
//! RedisBloom, an item that every layer already answers "maybe present" for is not
//! added and counts nowhere: `BF.ADD` answers 0, `BF.CARD` stays.
//!
//! The tightening ratio is RedisBloom's 0.5 rather than the core's default 0.8: the
//! first layer then gets half the target rate, as RedisBloom's does, and a filter
//! reserved for the capacity it ends with (the common case) is as close in memory to
//! RedisBloom's as the blocked layout allows (`benches/README.md`, "BF.* and CF.*
//! against RedisBloom", has both filters' bits per item). The core's 0.8 measured
//! better for sets grown 100 times past their reservation.

use crate::memory::{self, CreateError};
use linebloom::scalable::Mode;
use linebloom::{BloomFilter, Params, ScalableBloomFilter, ScalableError, ScalableOptions};

/// The tightening ratio of each next layer's rate (RedisBloom's).
pub const TIGHTENING: f64 = 0.5;
/// RedisBloom's cap on the error rate: a larger one is taken as this.
pub const ERROR_RATE_CAP: f64 = 0.25;
/// The largest capacity `BF.RESERVE` takes (RedisBloom's `bf-initial-size` maximum).
pub const MAX_CAPACITY: u64 = 1 << 30;
/// The largest expansion (RedisBloom's `bf-expansion-factor` maximum).
pub const MAX_EXPANSION: u64 = 32768;
/// Items a batch hashes and looks up at a time, on the stack.
const BATCH: usize = 128;

/// RedisBloom's defaults for a filter `BF.ADD` creates.
pub const DEFAULT_ERROR_RATE: f64 = 0.01;
/// See [`DEFAULT_ERROR_RATE`].
pub const DEFAULT_CAPACITY: u64 = 100;
/// See [`DEFAULT_ERROR_RATE`].
pub const DEFAULT_EXPANSION: u64 = 2;

/// What `BF.RESERVE` or `BF.INSERT` asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BfOptions {
    /// The target rate, in (0, 1); above [`ERROR_RATE_CAP`] it is capped.
    pub error_rate: f64,
    /// Items of the first layer.
    pub capacity: u64,
    /// Each next layer's capacity over the last one's; 0 for a non-scaling filter.
    pub expansion: u64,
}

impl Default for BfOptions {
    fn default() -> Self {
        BfOptions {
            error_rate: DEFAULT_ERROR_RATE,
            capacity: DEFAULT_CAPACITY,
            expansion: DEFAULT_EXPANSION,
        }
    }
}

/// Why an item was not added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    /// A non-scaling filter holds its capacity.
    Full,
    /// The next layer would take more than [`memory::MAX_LAYER_BYTES`], or cannot be
    /// sized.
    Layer,
}

/// The filter behind `BF.*` (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct BfFilter {
    shape: Shape,
}

#[derive(Clone, Debug, PartialEq)]
enum Shape {
    Scaling(ScalableBloomFilter),
    Fixed {
        filter: BloomFilter,
        capacity: u64,
        error_rate: f64,
        len: u64,
    },
}

/// The core's sizing, refused past the module's memory limit.
fn sized(capacity: u64, rate: f64) -> Result<Params, CreateError> {
    let params = Params::for_fpr(capacity, rate).map_err(CreateError::Params)?;
    memory::check(params.bytes())?;
    Ok(params)
}

fn scalable_options(o: &BfOptions) -> ScalableOptions {
    ScalableOptions::new(o.capacity, o.error_rate.min(ERROR_RATE_CAP))
        .with_growth(o.expansion as f64)
        .with_tightening(TIGHTENING)
}

impl BfFilter {
    /// An empty filter with these options (checked by the caller's parser: a rate in
    /// (0, 1), a capacity in 1..=[`MAX_CAPACITY`], an expansion up to
    /// [`MAX_EXPANSION`]).
    pub fn new(options: BfOptions) -> Result<BfFilter, CreateError> {
        let rate = options.error_rate.min(ERROR_RATE_CAP);
        let shape = if options.expansion == 0 {
            Shape::Fixed {
                filter: BloomFilter::new(sized(options.capacity, rate)?),
                capacity: options.capacity,
                error_rate: rate,
                len: 0,
            }
        } else {
            let o = scalable_options(&options);
            // The first layer's shape, checked against the limit before it is built.
            let (capacity, rate) = o.layer_shape(0);
            sized(capacity, rate)?;
            Shape::Scaling(ScalableBloomFilter::new(o).map_err(CreateError::Params)?)
        };
        Ok(BfFilter { shape })
    }

    /// The hash of `item` (every layer shares the hasher).
    fn hash(&self, item: &[u8]) -> u64 {
        match &self.shape {
            Shape::Scaling(f) => f.layer_filters()[0].hash(item),
            Shape::Fixed { filter, .. } => filter.hash(item),
        }
    }

    /// Is `item` possibly in the filter?
    pub fn exists(&self, item: &[u8]) -> bool {
        let h = self.hash(item);
        match &self.shape {
            Shape::Scaling(f) => f.contains_hash(h),
            Shape::Fixed { filter, .. } => filter.contains_hash(h),
        }
    }

    /// `out[i] = exists(items[i])`, as a batch: the hashes first, then each layer's
    /// batch lookup, which fetches the blocks of later items while it tests earlier
    /// ones (at 10⁶ items one item's block is a cache miss, and a command of 100 items
    /// waited for 100 of them in turn).
    ///
    /// # Panics
    ///
    /// If the lengths differ.
    pub fn exists_many(&self, items: &[&[u8]], out: &mut [bool]) {
        assert_eq!(
            items.len(),
            out.len(),
            "exists_many: items and out differ in length"
        );
        let mut hashes = [0u64; BATCH];
        let mut found = [false; BATCH];
        for (items, out) in items.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let hashes = &mut hashes[..items.len()];
            for (h, item) in hashes.iter_mut().zip(items) {
                *h = self.hash(item);
            }
            out.fill(false);
            let found = &mut found[..items.len()];
            let mut probe = |layer: &BloomFilter| {
                layer.contains_hash_batch(hashes, found);
                for (o, &f) in out.iter_mut().zip(found.iter()) {
                    *o |= f;
                }
            };
            match &self.shape {
                Shape::Scaling(f) => f.layer_filters().iter().for_each(probe),
                Shape::Fixed { filter, .. } => probe(filter),
            }
        }
    }

    /// Adds each item in turn, as [`add`](Self::add) does, and calls `answer` with each
    /// result until it returns `false`. The items already present are found as a batch
    /// first ([`exists_many`](Self::exists_many)), which also brings the others' blocks
    /// into the cache for their inserts.
    pub fn add_many(
        &mut self,
        items: &[&[u8]],
        mut answer: impl FnMut(Result<bool, AddError>) -> bool,
    ) {
        let mut present = [false; BATCH];
        for chunk in items.chunks(BATCH) {
            let present = &mut present[..chunk.len()];
            self.exists_many(chunk, present);
            for (item, &was) in chunk.iter().zip(present.iter()) {
                // An item the batch found present stays present: nothing to add. One it
                // did not find may have been added by a copy earlier in the batch, which
                // `add` sees.
                let result = if was { Ok(false) } else { self.add(item) };
                if !answer(result) {
                    return;
                }
            }
        }
    }

    /// Adds `item`: `true` if it was new, `false` if the filter answered "maybe
    /// present" for it already (then nothing changes).
    pub fn add(&mut self, item: &[u8]) -> Result<bool, AddError> {
        let h = self.hash(item);
        match &mut self.shape {
            Shape::Scaling(f) => {
                if f.newest_len() >= f.newest_capacity() {
                    // A new item builds the next layer: refuse it here if that layer is
                    // too large to allocate.
                    if f.contains_hash(h) {
                        return Ok(false);
                    }
                    let (capacity, rate) = f.options().layer_shape(f.layers());
                    sized(capacity, rate).map_err(|_| AddError::Layer)?;
                }
                // The core answers `Ok(false)` for an item some layer holds.
                match f.insert_hash(h) {
                    Ok(new) => Ok(new),
                    Err(ScalableError::Full(_)) => Err(AddError::Full),
                    Err(_) => Err(AddError::Layer),
                }
            }
            Shape::Fixed {
                filter,
                capacity,
                len,
                ..
            } => {
                if filter.contains_hash(h) {
                    return Ok(false);
                }
                if *len >= *capacity {
                    return Err(AddError::Full);
                }
                filter.insert_hash(h);
                *len += 1;
                Ok(true)
            }
        }
    }

    /// Items added (`BF.CARD`, `Number of items inserted`).
    pub fn len(&self) -> u64 {
        match &self.shape {
            Shape::Scaling(f) => f.len(),
            Shape::Fixed { len, .. } => *len,
        }
    }

    /// No item added yet?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The layers' capacities summed (`Capacity`).
    pub fn capacity(&self) -> u64 {
        match &self.shape {
            Shape::Scaling(f) => f.capacity(),
            Shape::Fixed { capacity, .. } => *capacity,
        }
    }

    /// Layers (`Number of filters`).
    pub fn layers(&self) -> usize {
        match &self.shape {
            Shape::Scaling(f) => f.layers(),
            Shape::Fixed { .. } => 1,
        }
    }

    /// The expansion, `None` for a non-scaling filter (`Expansion rate`).
    pub fn expansion(&self) -> Option<u64> {
        match &self.shape {
            Shape::Scaling(f) => Some(f.options().growth() as u64),
            Shape::Fixed { .. } => None,
        }
    }

    /// The bound on the compounded false-positive rate with the layers so far.
    pub fn fpr_bound(&self) -> f64 {
        match &self.shape {
            Shape::Scaling(f) => f.fpr_bound(),
            Shape::Fixed { error_rate, .. } => *error_rate,
        }
    }

    /// Bytes the value takes in memory: the blocks and the structures around them
    /// (`MEMORY USAGE`, `Size`).
    pub fn memory_bytes(&self) -> usize {
        let blocks = match &self.shape {
            Shape::Scaling(f) => f.memory_bytes() + f.layers() * std::mem::size_of::<BloomFilter>(),
            Shape::Fixed { filter, .. } => filter.params().bytes(),
        };
        std::mem::size_of::<BfFilter>() + blocks
    }

    /// `BF.DEBUG`'s lines, in RedisBloom's format with this filter's numbers: `size:`
    /// the items, then per layer its bytes, bits, `k`, capacity, items and target rate.
    pub fn debug_lines(&self) -> Vec<String> {
        let mut lines = vec![format!("size:{}", self.len())];
        let layer = |bytes: usize, k: u32, capacity: u64, items: u64, rate: f64| {
            format!(
                "bytes:{bytes} bits:{} hashes:{k} hashwidth:64 capacity:{capacity} size:{items} ratio:{}",
                bytes * 8,
                c_general(rate)
            )
        };
        match &self.shape {
            Shape::Scaling(f) => {
                let o = f.options();
                let last = f.layers() - 1;
                for (i, l) in f.layer_filters().iter().enumerate() {
                    let (capacity, rate) = o.layer_shape(i);
                    let items = if i == last { f.newest_len() } else { capacity };
                    lines.push(layer(
                        l.params().bytes(),
                        l.params().k(),
                        capacity,
                        items,
                        rate,
                    ));
                }
            }
            Shape::Fixed {
                filter,
                capacity,
                error_rate,
                len,
            } => {
                let p = filter.params();
                lines.push(layer(p.bytes(), p.k(), *capacity, *len, *error_rate));
            }
        }
        lines
    }

    /// The body of this filter's dump.
    pub fn to_body(&self) -> Vec<u8> {
        let mut body = Vec::new();
        match &self.shape {
            Shape::Scaling(f) => {
                body.extend_from_slice(&BODY_SCALING.to_le_bytes());
                body.extend_from_slice(&f.to_bytes());
            }
            Shape::Fixed {
                filter,
                capacity,
                error_rate,
                len,
            } => {
                body.extend_from_slice(&BODY_FIXED.to_le_bytes());
                body.extend_from_slice(&capacity.to_le_bytes());
                body.extend_from_slice(&error_rate.to_bits().to_le_bytes());
                body.extend_from_slice(&len.to_le_bytes());
                body.extend_from_slice(&filter.to_bytes());
            }
        }
        body
    }

    /// The filter a dump's body holds, every field checked: the core decodes the
    /// layers (their shapes, checksums and counts), and the options must be ones
    /// `BF.RESERVE` could have given.
    pub fn from_body(body: &[u8]) -> Result<BfFilter, String> {
        let word = |at: usize| -> Result<u64, String> {
            body.get(at..at + 8)
                .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                .ok_or_else(|| format!("the body ends at {} bytes", body.len()))
        };
        match word(0)? {
            BODY_SCALING => {
                let f = ScalableBloomFilter::from_bytes(&body[8..]).map_err(|e| e.to_string())?;
                let o = f.options();
                let growth = o.growth();
                if o.tightening() != TIGHTENING
                    || growth.fract() != 0.0
                    || !(1.0..=MAX_EXPANSION as f64).contains(&growth)
                    || !(1..=MAX_CAPACITY).contains(&o.initial_capacity())
                    || !(o.fpr() > 0.0 && o.fpr() <= ERROR_RATE_CAP)
                    || o.mode() != Mode::Scaling
                {
                    return Err("options BF.RESERVE cannot give".into());
                }
                Ok(BfFilter {
                    shape: Shape::Scaling(f),
                })
            }
            BODY_FIXED => {
                let (capacity, error_rate, len) = (word(8)?, f64::from_bits(word(16)?), word(24)?);
                let filter = BloomFilter::from_bytes(&body[32..]).map_err(|e| e.to_string())?;
                let rate_ok = error_rate > 0.0 && error_rate <= ERROR_RATE_CAP;
                if !(1..=MAX_CAPACITY).contains(&capacity)
                    || !rate_ok
                    || len > capacity
                    || Params::for_fpr(capacity, error_rate) != Ok(filter.params())
                {
                    return Err("a non-scaling filter BF.RESERVE cannot give".into());
                }
                Ok(BfFilter {
                    shape: Shape::Fixed {
                        filter,
                        capacity,
                        error_rate,
                        len,
                    },
                })
            }
            other => Err(format!("unknown filter shape {other}")),
        }
    }
}

/// Body tag of a scaling filter: the core's scalable encoding follows.
const BODY_SCALING: u64 = 1;
/// Body tag of a non-scaling filter: capacity, error rate, count, then the core's
/// Bloom filter encoding.
const BODY_FIXED: u64 = 2;

/// `x` as C's `%g` prints it: six significant digits, trailing zeros dropped, an
/// exponent below 10⁻⁴ or from 10⁶.
fn c_general(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let exponent = x.abs().log10().floor() as i32;
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (-4..6).contains(&exponent) {
        trim(format!("{:.*}", (5 - exponent).max(0) as usize, x))
    } else {
        let mantissa = x / 10f64.powi(exponent);
        format!(
            "{}e{}{:02}",
            trim(format!("{mantissa:.5}")),
            if exponent < 0 { '-' } else { '+' },
            exponent.abs()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(range: std::ops::Range<u32>) -> impl Iterator<Item = Vec<u8>> {
        range.map(|i| format!("item:{i}").into_bytes())
    }

    #[test]
    fn a_scaling_filter_grows_and_keeps_every_item() {
        let mut f = BfFilter::new(BfOptions {
            error_rate: 0.01,
            capacity: 100,
            expansion: 2,
        })
        .unwrap();
        let mut added = 0;
        for item in items(0..5000) {
            added += u64::from(f.add(&item).unwrap());
        }
        assert_eq!(f.len(), added);
        assert!(f.layers() >= 6, "{} layers", f.layers());
        assert!(items(0..5000).all(|i| f.exists(&i)));
        assert!(f.fpr_bound() <= 0.01);
        assert_eq!(f.expansion(), Some(2));
        let back = BfFilter::from_body(&f.to_body()).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn rates_print_as_c_prints_them() {
        for (x, text) in [
            (0.005, "0.005"),
            (6.25e-05, "6.25e-05"),
            (0.0005, "0.0005"),
            (1.5625e-05, "1.5625e-05"),
            (0.25, "0.25"),
        ] {
            assert_eq!(c_general(x), text);
        }
    }

    #[test]
    fn a_non_scaling_filter_refuses_past_its_capacity() {
        let mut f = BfFilter::new(BfOptions {
            error_rate: 0.01,
            capacity: 3,
            expansion: 0,
        })
        .unwrap();
        for item in items(0..3) {
            assert_eq!(f.add(&item), Ok(true));
        }
        assert_eq!(f.add(b"item:0"), Ok(false), "present beats full");
        assert_eq!(f.add(b"another"), Err(AddError::Full));
        assert_eq!(
            (f.len(), f.capacity(), f.layers(), f.expansion()),
            (3, 3, 1, None)
        );
        assert_eq!(BfFilter::from_body(&f.to_body()).unwrap(), f);
    }

    #[test]
    fn a_non_scaling_filter_is_smaller_than_a_scaling_one() {
        let options = BfOptions {
            error_rate: 0.001,
            capacity: 1000,
            expansion: 2,
        };
        let scaling = BfFilter::new(options).unwrap();
        let fixed = BfFilter::new(BfOptions {
            expansion: 0,
            ..options
        })
        .unwrap();
        assert!(fixed.memory_bytes() < scaling.memory_bytes());
    }

    #[test]
    fn a_filter_past_the_layer_limit_is_refused_before_allocating() {
        let e = BfFilter::new(BfOptions {
            error_rate: 1e-9,
            capacity: MAX_CAPACITY,
            expansion: 2,
        });
        assert!(matches!(e, Err(CreateError::TooLarge { .. })), "{e:?}");
        // A huge expansion refuses the layer it cannot build, and keeps the filter.
        let mut f = BfFilter::new(BfOptions {
            error_rate: 0.01,
            capacity: 1 << 20,
            expansion: MAX_EXPANSION,
        })
        .unwrap();
        let mut refused = false;
        // Past the first layer's capacity, with room for the items that met a false
        // positive and were not added.
        for item in items(0..(1 << 20) + 50_000) {
            if f.add(&item) == Err(AddError::Layer) {
                refused = true;
                break;
            }
        }
        assert!(refused, "a layer of 2^35 items is over the limit");
        assert!(items(0..1000).all(|i| f.exists(&i)));
    }

    #[test]
    fn bodies_with_options_reserve_cannot_give_are_refused() {
        let f = BfFilter::new(BfOptions::default()).unwrap();
        let body = f.to_body();
        assert!(BfFilter::from_body(&body[..7]).is_err());
        let mut unknown = body.clone();
        unknown[0] = 9;
        assert!(BfFilter::from_body(&unknown).is_err());
        // A core encoding with the core's default tightening is not a BF.* filter.
        let mut other = BODY_SCALING.to_le_bytes().to_vec();
        other.extend(ScalableBloomFilter::for_fpr(100, 0.01).unwrap().to_bytes());
        assert!(BfFilter::from_body(&other).is_err());
    }
}
