//! `split-block-256`: a 256-bit split-block Bloom filter with linebloom's integer hash,
//! a contender only, so that linebloom's probe is measured against the best-known
//! single-key probe on the same hash.
//!
//! The layout is Impala's and Parquet's: blocks of eight 32-bit words, and one bit in
//! every word per key (k = 8). Here:
//!
//! ```text
//! h     = IntFold::fold(key, 0)                 linebloom's default hash of a u64 key
//! block = (h · B) >> 64                         multiply-shift, from the high bits
//! word w gets bit (x ·₃₂ SALTS[w]) >> 27        x = h mod 2³², Parquet's eight salts
//! ```
//!
//! The probe is plain Rust over `[u32; 8]`. Its pass loops ([`LabFilter::count_each`],
//! [`LabFilter::insert_each`], [`LabFilter::dedup_each`]) run inside
//! `#[target_feature(enable = "avx2")]` functions where the CPU has AVX2, where LLVM
//! compiles the eight words to one 256-bit vector each step (`vpmulld`, `vpsrld`,
//! `vpsllvd`, `vptest`), with no call per key: the shape of the C++ split-block filters
//! of the fastfilter collection, whose pass loops are compiled with `-mavx2`. Outside
//! those loops its `contains` is the same code compiled for the build's target.
//!
//! Sizing: from bits per key, or for a rate `p` by the layout's exact rate for ideal
//! positions ([`split_block_fpr`]), so that it can be sized to linebloom's measured
//! rate and compared at equal false positives.

use super::lab_filter::LabFilter;
use linebloom::IntFold;
use linebloom::pattern::{SALTS, block_index};

/// One 256-bit block: eight 32-bit words.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Bucket([u32; 8]);

/// The split-block contender (see the module docs).
pub struct SplitBlock256 {
    buckets: Vec<Bucket>,
    /// Does this CPU run AVX2? Checked once, here, by `is_x86_feature_detected!`.
    avx2: bool,
}

/// The key's hash: linebloom's default hash of a `u64` key.
#[inline(always)]
fn hash(key: u64) -> u64 {
    IntFold::fold(key, 0)
}

/// The key's bit in each word of its block.
#[inline(always)]
fn mask(h: u64) -> [u32; 8] {
    let x = h as u32;
    core::array::from_fn(|w| 1 << (x.wrapping_mul(SALTS[w]) >> 27))
}

/// `key`'s hash and its block's index.
#[inline(always)]
fn locate(buckets: &[Bucket], key: u64) -> (u64, usize) {
    let h = hash(key);
    (h, block_index(h, buckets.len()))
}

/// Are all of `key`'s bits set?
#[inline(always)]
fn probe(buckets: &[Bucket], key: u64) -> bool {
    let (h, i) = locate(buckets, key);
    // SAFETY: `block_index(h, len) < len` for `len ≥ 1` (a multiply-shift), and the
    // filter has at least one block (`with_blocks`): no bounds check in the probe, as in
    // the C++ filters.
    let bucket = unsafe { &buckets.get_unchecked(i).0 };
    let m = mask(h);
    let mut missing = 0;
    for w in 0..8 {
        missing |= m[w] & !bucket[w];
    }
    missing == 0
}

/// Sets `key`'s bits; true if any was clear.
#[inline(always)]
fn set(buckets: &mut [Bucket], key: u64) -> bool {
    let (h, i) = locate(buckets, key);
    // SAFETY: as in `probe`.
    let bucket = unsafe { &mut buckets.get_unchecked_mut(i).0 };
    let m = mask(h);
    let mut fresh = 0;
    for w in 0..8 {
        fresh |= m[w] & !bucket[w];
        bucket[w] |= m[w];
    }
    fresh != 0
}

/// The pass loops, compiled once for the build's target and once with AVX2.
macro_rules! loops {
    ($count:ident, $fill:ident, $dedup:ident $(, #[$attr:meta])?) => {
        $(#[$attr])?
        fn $count(buckets: &[Bucket], keys: &[u64]) -> u64 {
            keys.iter()
                .filter(|&&k| probe(buckets, std::hint::black_box(k)))
                .count() as u64
        }
        $(#[$attr])?
        fn $fill(buckets: &mut [Bucket], keys: &[u64]) {
            for &k in keys {
                set(buckets, std::hint::black_box(k));
            }
        }
        $(#[$attr])?
        fn $dedup(buckets: &mut [Bucket], keys: &[u64]) -> u64 {
            let mut fresh = 0;
            for &k in keys {
                fresh += u64::from(set(buckets, std::hint::black_box(k)));
            }
            fresh
        }
    };
}

loops!(count_plain, fill_plain, dedup_plain);
#[cfg(target_arch = "x86_64")]
loops!(count_avx2, fill_avx2, dedup_avx2, #[target_feature(enable = "avx2")]);

/// The exact false-positive rate of a split-block filter of `blocks` blocks holding
/// `n` keys, for ideal positions: each block's load is Poisson with mean `n / blocks`,
/// and a block holding `j` keys answers a non-member yes with probability
/// `(1 − (31/32)^j)^8` (one of 32 bits in each of the eight words).
pub fn split_block_fpr(blocks: u64, n: u64) -> f64 {
    let lambda = n as f64 / blocks.max(1) as f64;
    // Up to 12 standard deviations past the mean, where the Poisson tail is below 1e-30.
    let last = (lambda + 12.0 * lambda.sqrt() + 30.0) as u64;
    let mut pmf = (-lambda).exp();
    let mut total = 0.0;
    for j in 0..=last {
        if j > 0 {
            pmf *= lambda / j as f64;
        }
        let fill = 1.0 - (31.0f64 / 32.0).powf(j as f64);
        total += pmf * fill.powi(8);
    }
    total
}

impl SplitBlock256 {
    /// A filter of `blocks` 32-byte blocks (at least one).
    pub fn with_blocks(blocks: u64) -> SplitBlock256 {
        #[cfg(target_arch = "x86_64")]
        let avx2 = std::is_x86_feature_detected!("avx2");
        #[cfg(not(target_arch = "x86_64"))]
        let avx2 = false;
        SplitBlock256 {
            buckets: vec![Bucket::default(); blocks.max(1) as usize],
            avx2,
        }
    }

    /// For `n` keys at `bits` bits per key.
    pub fn with_bits_per_key(n: u64, bits: f64) -> SplitBlock256 {
        SplitBlock256::with_blocks((n as f64 * bits / 256.0).ceil() as u64)
    }

    /// The fewest blocks whose exact rate ([`split_block_fpr`]) at `n` keys is at most
    /// `p`.
    ///
    /// # Errors
    ///
    /// If `p` is not in `(0, 1)`.
    pub fn for_fpr(n: u64, p: f64) -> anyhow::Result<SplitBlock256> {
        anyhow::ensure!(p > 0.0 && p < 1.0, "rate {p} is not in (0, 1)");
        // Invariant: `hi` blocks meet the rate, `lo` blocks do not (or lo = 0).
        let (mut lo, mut hi) = (0u64, n.max(1));
        while split_block_fpr(hi, n) > p {
            lo = hi;
            hi *= 2;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if split_block_fpr(mid, n) <= p {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Ok(SplitBlock256::with_blocks(hi))
    }

    /// Its blocks.
    pub fn blocks(&self) -> u64 {
        self.buckets.len() as u64
    }
}

impl LabFilter for SplitBlock256 {
    fn name(&self) -> String {
        "split-block-256".into()
    }
    #[inline]
    fn insert(&mut self, key: u64) {
        set(&mut self.buckets, key);
    }
    #[inline]
    fn insert_reporting(&mut self, key: u64) -> bool {
        set(&mut self.buckets, key)
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        probe(&self.buckets, key)
    }
    fn bytes(&self) -> usize {
        self.buckets.len() * 32
    }
    fn count_each(&self, keys: &[u64]) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: `avx2` is true only where `is_x86_feature_detected!` found AVX2.
            return unsafe { count_avx2(&self.buckets, keys) };
        }
        count_plain(&self.buckets, keys)
    }
    fn insert_each(&mut self, keys: &[u64]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: as in `count_each`.
            return unsafe { fill_avx2(&mut self.buckets, keys) };
        }
        fill_plain(&mut self.buckets, keys)
    }
    fn dedup_each(&mut self, keys: &[u64]) -> u64 {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: as in `count_each`.
            return unsafe { dedup_avx2(&mut self.buckets, keys) };
        }
        dedup_plain(&mut self.buckets, keys)
    }
    fn insert_batch(&mut self, keys: &[u64]) {
        self.insert_each(keys);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No false negatives, on both loops; the pass loops agree with the per-key calls;
    /// the measured rate is the formula's within the binomial's 6σ (a 1e-9 chance of a
    /// spurious failure) plus 3% of the mean for the hash's unevenness.
    #[test]
    fn finds_every_member_at_the_rate_of_its_formula() {
        let n = 50_000u64;
        let members: Vec<u64> = (0..n)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let probes: Vec<u64> = (0..1_000_000u64).map(|i| (i << 1) | 1).collect();
        let mut f = SplitBlock256::for_fpr(n, 0.01).unwrap();
        assert!(split_block_fpr(f.blocks(), n) <= 0.01);
        assert!(
            split_block_fpr(f.blocks() - 1, n) > 0.01,
            "not the fewest blocks"
        );
        // A key whose bits earlier keys set is reported as seen: at most 1% of them,
        // the rate of the full filter.
        let fresh = f.dedup_each(&members[..n as usize / 2]);
        assert!((n / 2 - n / 200..=n / 2).contains(&fresh), "{fresh} new");
        f.insert_each(&members[n as usize / 2..]);
        assert_eq!(f.dedup_each(&members), 0, "none new the second time");
        assert!(members.iter().all(|&k| f.contains(k)), "false negative");
        assert_eq!(f.count_each(&members), n);
        let fp = f.count_each(&probes);
        assert_eq!(fp, probes.iter().filter(|&&k| f.contains(k)).count() as u64);
        let m = probes.len() as f64;
        let p = split_block_fpr(f.blocks(), n);
        let slack = 6.0 * (m * p * (1.0 - p)).sqrt() + 0.03 * m * p;
        assert!(
            (fp as f64 - m * p).abs() <= slack,
            "{fp} false positives, formula {:.0}",
            m * p
        );
    }

    /// At 10 bits per key, the formula gives the rate the Parquet spec quotes for its
    /// sizing (about 1.2%).
    #[test]
    fn ten_bits_per_key_is_near_one_percent() {
        let p = split_block_fpr(1 << 20, (1u64 << 20) * 256 / 10);
        assert!((0.010..0.014).contains(&p), "{p}");
    }
}
