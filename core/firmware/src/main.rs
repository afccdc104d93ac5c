//! linebloom on an emulated Cortex-M4 (and M3, and M0): a filter in a `static` with no
//! `unsafe` and no allocator, 1000 keys, no false negatives, the false-positive rate
//! within the 99% binomial interval of the filter's exact rate and that rate below the
//! formula's 99th percentile over filters, and `encode_into` round trips through `view`
//! and through `from_bytes_into` (unaligned bytes, static storage) that answer alike, as
//! does the same filter built with 32-bit atomics in a `static`
//! (`StaticAtomicBloomFilter`; on the M0, portable-atomic's). Then a
//! `VectorQuotientFilter` in a `static` (8-bit tags, the scalar kernel's broadword
//! select: no BMI2 here) holds the same keys, deletes half of them with no false
//! negative among the rest, answers within its rate's 99% interval, and round trips
//! through `encode_into`, `view` and `from_bytes_into`. The exit status (through
//! semihosting) is the test's verdict.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use linebloom::block::{blocks_as_bytes, blocks_as_bytes_mut};
use linebloom::{Block, BloomFilter, StaticAtomicBloomFilter, StaticBlocks, VectorQuotientFilter};

/// 20 blocks (1280 bytes): about 10 bits per key for 1000 keys.
static STORAGE: StaticBlocks<20> = StaticBlocks::new();
/// A 64-byte aligned buffer for the encoding (header, 20 blocks, checksum).
static ENCODED: StaticBlocks<22> = StaticBlocks::new();
/// Where the no-alloc decode copies the filter.
static DECODED: StaticBlocks<20> = StaticBlocks::new();
/// The same filter shared through `&self`, on 32-bit atomics (an interrupt handler and
/// the main loop could both insert).
static SHARED: StaticAtomicBloomFilter<20> = StaticAtomicBloomFilter::new(8);
/// 24 blocks of 48 one-byte tags (1536 bytes): 1000 keys fill 87% of the slots.
static QUOTIENT: StaticBlocks<24> = StaticBlocks::new();
/// The quotient filter's encoding (header, 24 blocks, checksum).
static QUOTIENT_ENCODED: StaticBlocks<26> = StaticBlocks::new();
/// Where the quotient filter's no-alloc decode copies it.
static QUOTIENT_DECODED: StaticBlocks<24> = StaticBlocks::new();

const KEYS: u32 = 1000;
const PROBES: u32 = 100_000;

#[entry]
fn main() -> ! {
    let mut filter: BloomFilter = BloomFilter::from_storage(STORAGE.take().unwrap(), 8).unwrap();
    for i in 0..KEYS {
        filter.insert(&(i * 2));
        SHARED.insert(&(i * 2));
    }
    let missing = (0..KEYS).filter(|i| !filter.contains(&(i * 2))).count();
    let false_positives = (0..PROBES)
        .filter(|i| filter.contains(&(i * 2 + 1)))
        .count();
    let predicted = filter.params().expected_fpr(KEYS as u64);

    let mut buffer = ENCODED.take().unwrap();
    let len = filter
        .encode_into(blocks_as_bytes_mut(buffer.as_mut()))
        .unwrap();
    let view = BloomFilter::<&[Block]>::view(&blocks_as_bytes(buffer.as_ref())[..len]).unwrap();
    let view_agrees = (0..PROBES).all(|i| view.contains(&i) == filter.contains(&i));
    // The same encoding one byte off alignment, decoded into static storage.
    let bytes = blocks_as_bytes_mut(buffer.as_mut());
    let len = filter.encode_into(&mut bytes[1..]).unwrap();
    let decoded: BloomFilter =
        BloomFilter::from_bytes_into(&bytes[1..1 + len], DECODED.take().unwrap()).unwrap();
    let decode_agrees = (0..PROBES).all(|i| decoded.contains(&i) == filter.contains(&i));
    let atomic_agrees = (0..PROBES).all(|i| SHARED.contains(&i) == filter.contains(&i));

    // The filter's exact rate given its bits (`estimated_fpr`), and the formula's
    // expected rate over all filters of this shape. The 1e5 probes are then
    // Binomial(1e5, exact): the count must lie within its two-sided 99% interval,
    // |fp − N·q| ≤ 2.576·√(N·q·(1 − q)), compared squared (no square root in no_std).
    let exact = filter.estimated_fpr();
    let expected_count = PROBES as f64 * exact;
    let deviation = false_positives as f64 - expected_count;
    let within_99 = deviation * deviation <= 2.576 * 2.576 * expected_count * (1.0 - exact);
    // And the filter itself is within the formula's spread: below the rate that only 1%
    // of filters of this shape exceed.
    let quantile_99 = filter.params().per_filter_fpr(KEYS as u64);
    // Parts per million, so that nothing here needs float formatting.
    let ppm = |rate: f64| (rate * 1e6) as u64;
    let measured_ppm = false_positives as u64 * 1_000_000 / PROBES as u64;
    hprintln!(
        "linebloom on {} (kernel {}): {} keys, {} missing, {} false positives in {} \
         probes = {} ppm (this filter's exact rate {} ppm, within its 99% interval: {}; \
         the formula over all filters {} ppm, its 99th percentile {} ppm), view agrees: {}, unaligned decode agrees: {}, \
         atomic filter agrees: {}",
        env!("FIRMWARE_BOARD"),
        filter.kernel_name(),
        KEYS,
        missing,
        false_positives,
        PROBES,
        measured_ppm,
        ppm(exact),
        within_99,
        ppm(predicted),
        ppm(quantile_99),
        view_agrees,
        decode_agrees,
        atomic_agrees
    );
    let ok = missing == 0
        && view_agrees
        && decode_agrees
        && atomic_agrees
        && within_99
        && exact <= quantile_99
        && quotient_checks();
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {}
}

/// Whether |count − N·q| lies within the two-sided 99% interval of Binomial(N, q),
/// compared squared (no square root in no_std).
fn within_99(count: u32, trials: u32, q: f64) -> bool {
    let expected = trials as f64 * q;
    let deviation = count as f64 - expected;
    deviation * deviation <= 2.576 * 2.576 * expected * (1.0 - q)
}

/// The quotient filter's run: insert, delete half, probe, round trip. Prints what it
/// saw and returns whether every check passed.
fn quotient_checks() -> bool {
    let Ok(mut filter) = VectorQuotientFilter::from_storage(QUOTIENT.take().unwrap(), 8) else {
        hprintln!("quotient: the storage was refused");
        return false;
    };
    let refused = (0..KEYS)
        .filter(|i| filter.insert(&(i * 2)).is_err())
        .count();
    let missing = (0..KEYS).filter(|i| !filter.contains(&(i * 2))).count();
    // Delete the first half; each delete must find its key, and the second half must
    // all still answer present.
    let not_found = (0..KEYS / 2)
        .filter(|i| filter.remove(&(i * 2)).is_err())
        .count();
    let missing_after = (KEYS / 2..KEYS)
        .filter(|i| !filter.contains(&(i * 2)))
        .count();
    let false_positives = (0..PROBES)
        .filter(|i| filter.contains(&(i * 2 + 1)))
        .count() as u32;
    // This filter's rate from its block loads, and the count's 99% interval around it.
    let exact = filter.estimated_fpr();
    let within = within_99(false_positives, PROBES, exact);

    let mut buffer = QUOTIENT_ENCODED.take().unwrap();
    let Ok(len) = filter.encode_into(blocks_as_bytes_mut(buffer.as_mut())) else {
        hprintln!("quotient: encode_into refused its buffer");
        return false;
    };
    let view_agrees =
        match VectorQuotientFilter::<&[Block]>::view(&blocks_as_bytes(buffer.as_ref())[..len]) {
            Ok(view) => (0..PROBES).all(|i| view.contains(&i) == filter.contains(&i)),
            Err(_) => false,
        };
    let decode_agrees = match VectorQuotientFilter::from_bytes_into(
        &blocks_as_bytes(buffer.as_ref())[..len],
        QUOTIENT_DECODED.take().unwrap(),
    ) {
        Ok(decoded) => {
            decoded.len() == filter.len()
                && (0..PROBES).all(|i| decoded.contains(&i) == filter.contains(&i))
        }
        Err(_) => false,
    };
    hprintln!(
        "vector quotient filter (kernel {}, 8-bit tags, {} blocks): {} keys, {} refused, \
         {} missing; deleted {} ({} not found), {} of the rest missing; {} false \
         positives in {} probes at {} keys (this filter's rate {} ppm, within its 99% \
         interval: {}), view agrees: {}, decode agrees: {}",
        filter.kernel_name(),
        filter.params().blocks(),
        KEYS,
        refused,
        missing,
        KEYS / 2,
        not_found,
        missing_after,
        false_positives,
        PROBES,
        filter.len(),
        (exact * 1e6) as u64,
        within,
        view_agrees,
        decode_agrees
    );
    refused == 0
        && missing == 0
        && not_found == 0
        && missing_after == 0
        && filter.len() == u64::from(KEYS - KEYS / 2)
        && within
        && view_agrees
        && decode_agrees
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    hprintln!("panic: {}", info);
    debug::exit(debug::EXIT_FAILURE);
    loop {}
}
