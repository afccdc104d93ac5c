//! The footprint experiment's reference firmware: insert keys into a filter over a
//! 20-block array, count how many other keys it reports present, and nothing else.
//!
//! One Cargo feature picks the filter (see `Cargo.toml`); `dummy` has no filter at all,
//! so a variant's size minus `dummy`'s is what the filter costs. On Cortex-M the
//! cortex-m-rt entry calls [`run`]; on wasm32 it is the export `run_filter`. Keys come
//! through `black_box`, so nothing is computed at compile time, and no error is
//! unwrapped, so no formatting code is linked. The `stack` variant (Cortex-M only)
//! prints its measurement through semihosting and is not measured for size.
#![no_std]
#![no_main]

/// Blocks of 64 bytes the filter holds (1280 bytes: about 10 bits per key for 1000 keys).
const BLOCKS: usize = 20;

#[cfg(not(any(
    feature = "dummy",
    feature = "linebloom",
    feature = "quotient",
    feature = "sbbf"
)))]
compile_error!("pick one filter: --features dummy, linebloom, format, sizing, quotient or sbbf");

/// Inserts keys `0..keys`, then returns how many of `keys..2·keys` the filter reports
/// present (plus what the format and sizing variants read back).
fn run(keys: u64) -> u32 {
    subject::run(keys)
}

#[cfg(feature = "dummy")]
mod subject {
    /// No filter: the storage and the keys go to `black_box`, so what is left is the
    /// harness (the loops, the zeroed array, the entry point and the runtime).
    pub fn run(keys: u64) -> u32 {
        let mut storage = [0u64; super::BLOCKS * 8];
        core::hint::black_box(&mut storage);
        for key in 0..keys {
            core::hint::black_box(key);
        }
        (keys..2 * keys)
            .filter(|&key| core::hint::black_box(key) & 1 == 0)
            .count() as u32
    }
}

#[cfg(feature = "linebloom")]
mod subject {
    use linebloom::{Block, BloomFilter};

    pub fn run(keys: u64) -> u32 {
        let mut storage = [Block::ZERO; super::BLOCKS];
        let Ok(mut filter) = BloomFilter::from_storage(&mut storage[..], 8) else {
            return u32::MAX;
        };
        for key in 0..keys {
            filter.insert(&key);
        }
        let hits = (keys..2 * keys).filter(|key| filter.contains(key)).count() as u32;
        #[cfg(feature = "format")]
        let hits = hits + reread(&filter, keys);
        #[cfg(feature = "sizing")]
        let hits = hits + size(keys);
        hits
    }

    /// `encode_into` a buffer, then the same queries through a zero-copy `view`.
    #[cfg(feature = "format")]
    fn reread(filter: &BloomFilter<&mut [Block]>, keys: u64) -> u32 {
        use linebloom::block::{blocks_as_bytes, blocks_as_bytes_mut};
        let mut buffer = [Block::ZERO; super::BLOCKS + 2];
        let Ok(len) = filter.encode_into(blocks_as_bytes_mut(&mut buffer)) else {
            return u32::MAX;
        };
        let Ok(view) = BloomFilter::<&[Block]>::view(&blocks_as_bytes(&buffer)[..len]) else {
            return u32::MAX;
        };
        (keys..2 * keys).filter(|key| view.contains(key)).count() as u32
    }

    /// f64 sizing: the shape for 1% at `keys`, and its predicted rate in ppm.
    #[cfg(feature = "sizing")]
    fn size(keys: u64) -> u32 {
        match linebloom::Params::for_fpr(keys, 0.01) {
            Ok(params) => params.k() + (params.expected_fpr(keys) * 1e6) as u32,
            Err(_) => u32::MAX,
        }
    }
}

#[cfg(all(feature = "quotient", not(feature = "linebloom")))]
mod subject {
    use linebloom::{Block, VectorQuotientFilter};

    /// The vector quotient filter with 8-bit tags over the same 20 blocks (960 slots:
    /// the inserts past its capacity are refused, which is part of what is measured).
    pub fn run(keys: u64) -> u32 {
        let mut storage = [Block::ZERO; super::BLOCKS];
        let Ok(mut filter) = VectorQuotientFilter::from_storage(&mut storage[..], 8) else {
            return u32::MAX;
        };
        let refused = (0..keys).filter(|key| filter.insert(key).is_err()).count() as u32;
        let hits = (keys..2 * keys).filter(|key| filter.contains(key)).count() as u32;
        hits + refused
    }
}

#[cfg(feature = "sbbf")]
mod subject {
    use sbbf_rs::{BUCKET_SIZE, FilterFn};

    /// 64-byte aligned storage, as sbbf-rs requires.
    #[repr(C, align(64))]
    struct Aligned([u8; super::BLOCKS * 64]);

    pub fn run(keys: u64) -> u32 {
        let mut storage = Aligned([0; super::BLOCKS * 64]);
        let buckets = storage.0.len() / BUCKET_SIZE;
        let filter = FilterFn::new();
        let hash = |key: u64| xxhash_rust::xxh3::xxh3_64(&key.to_le_bytes());
        for key in 0..keys {
            // SAFETY: the buffer is 64-byte aligned and holds `buckets` buckets, ≥ 1.
            unsafe { filter.insert(storage.0.as_mut_ptr(), buckets, hash(key)) };
        }
        (keys..2 * keys)
            // SAFETY: as above.
            .filter(|&key| unsafe { filter.contains(storage.0.as_ptr(), buckets, hash(key)) })
            .count() as u32
    }
}

#[cfg(all(target_arch = "arm", not(feature = "stack")))]
#[cortex_m_rt::entry]
fn main() -> ! {
    core::hint::black_box(run(core::hint::black_box(1000)));
    loop {
        core::hint::spin_loop();
    }
}

#[cfg(all(target_arch = "arm", feature = "stack"))]
#[cortex_m_rt::entry]
fn main() -> ! {
    let _ = run;
    stack::report()
}

/// The stack one `insert` and one `contains` use, measured by painting: fill the free
/// stack below the stack pointer with a pattern, make the call, and find the deepest
/// word that no longer holds the pattern.
#[cfg(all(feature = "stack", target_arch = "arm"))]
mod stack {
    use core::arch::asm;
    use cortex_m_semihosting::{debug, hprintln};
    use linebloom::{Block, BloomFilter};

    /// The word painted below the stack pointer.
    const PAINT: u32 = 0x5a5a_5a5a;
    /// Bytes painted: far more than a probe may use.
    const DEPTH: usize = 1024;

    #[inline(never)]
    fn insert(filter: &mut BloomFilter<&mut [Block]>, key: u64) -> bool {
        filter.insert(&key)
    }

    #[inline(never)]
    fn contains(filter: &BloomFilter<&mut [Block]>, key: u64) -> bool {
        filter.contains(&key)
    }

    /// Bytes below this frame's stack pointer that `call` wrote.
    #[inline(always)]
    fn used(call: impl FnOnce()) -> usize {
        let end: usize;
        // SAFETY: writes PAINT to the DEPTH bytes just below the stack pointer: free
        // stack (the stack is the top of the board's 4 MiB of RAM and this program is
        // shallow), where no Rust object lives. Only the named registers change.
        unsafe {
            asm!(
                "mov {p}, sp",
                "sub {end}, {p}, #{depth}",
                "2:",
                "str {pat}, [{p}, #-4]!",
                "cmp {p}, {end}",
                "bne 2b",
                p = out(reg) _,
                end = out(reg) end,
                pat = in(reg) PAINT,
                depth = const DEPTH,
                options(nostack),
            )
        };
        call();
        let bytes: usize;
        // SAFETY: reads back the words painted above, from the deepest up to the stack
        // pointer, which is where it was when they were painted (same frame).
        unsafe {
            asm!(
                "mov {top}, sp",
                "2:",
                "cmp {p}, {top}",
                "bhs 3f",
                "ldr {w}, [{p}]",
                "cmp {w}, {pat}",
                "bne 3f",
                "adds {p}, {p}, #4",
                "b 2b",
                "3:",
                "subs {p}, {top}, {p}",
                p = inout(reg) end => bytes,
                top = out(reg) _,
                w = out(reg) _,
                pat = in(reg) PAINT,
                options(nostack, readonly),
            )
        };
        bytes
    }

    pub fn report() -> ! {
        let mut storage = [Block::ZERO; super::BLOCKS];
        let Ok(mut filter) = BloomFilter::from_storage(&mut storage[..], 8) else {
            debug::exit(debug::EXIT_FAILURE);
            loop {
                core::hint::spin_loop();
            }
        };
        for key in 0..1000u64 {
            filter.insert(&key);
        }
        let insert_bytes = used(|| {
            core::hint::black_box(insert(&mut filter, core::hint::black_box(5000)));
        });
        // A member: every one of its k bits is read.
        let contains_bytes = used(|| {
            core::hint::black_box(contains(&filter, core::hint::black_box(7)));
        });
        hprintln!("stack insert {} contains {}", insert_bytes, contains_bytes);
        debug::exit(debug::EXIT_SUCCESS);
        loop {
            core::hint::spin_loop();
        }
    }
}

/// The wasm export: [`run`].
#[cfg(target_family = "wasm")]
#[unsafe(no_mangle)]
pub extern "C" fn run_filter(keys: u64) -> u32 {
    run(keys)
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        core::hint::spin_loop();
    }
}
