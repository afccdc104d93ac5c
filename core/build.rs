//! Names the kernel set of the target once, as cfgs the code tests instead of
//! repeating target lists:
//!
//! * `linebloom_table`: the target chooses among kernels at run time (x86_64: AVX2 and
//!   AVX-512 by CPUID; aarch64: NEON), so a kernel is a table of entry points. Elsewhere
//!   the kernel is fixed by the build and probes call its block operations directly,
//!   which links only what the program calls (see `arch`'s module docs).
//! * `linebloom_portable`: the `portable` kernel exists: where `wide` has vectors
//!   (SSE2, NEON on aarch64, wasm `simd128`) and on every table target. Elsewhere `wide`
//!   falls back to arrays and the kernel would be the scalar one under another name.
//! * `linebloom_inline_k8`: the `k = 8` probe of the AVX2 and AVX-512 kernels runs as
//!   inline `asm!` in the caller's code (`src/arch/x86_64/inline_k8.rs`): x86_64 builds
//!   that have SSE registers and do not enable AVX themselves (those call the kernel
//!   they compile in), outside Miri (which cannot run inline assembly).
//! * `linebloom_compiled_in`: the build enables a kernel's features itself (AVX2 and up
//!   on x86_64, as `-C target-cpu=native` may; NEON on aarch64), so that kernel's block
//!   operations inline into the caller's code (`src/arch/dispatch.rs`), outside Miri.
//! * `linebloom_huge_pages`: `Blocks::zeroed` maps large filters itself and advises
//!   transparent huge pages (`src/huge_pages.rs`): Linux with the `std` feature, outside
//!   Miri (which cannot run `mmap`).
//!
//! It also finds the README whose examples the doc tests compile: `README.md` beside
//! this file in the packaged crate, the workspace's `../README.md` in the repository
//! (`LINEBLOOM_README`, read by `src/lib.rs` under `cfg(doctest)`).
fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let manifest = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let readme = [manifest.join("README.md"), manifest.join("../README.md")]
        .into_iter()
        .find(|p| p.is_file())
        .expect("no README.md beside core/ or in the crate");
    println!("cargo::rerun-if-changed={}", readme.display());
    println!("cargo::rustc-env=LINEBLOOM_README={}", readme.display());
    println!("cargo::rustc-check-cfg=cfg(linebloom_table)");
    println!("cargo::rustc-check-cfg=cfg(linebloom_portable)");
    println!("cargo::rustc-check-cfg=cfg(linebloom_huge_pages)");
    println!("cargo::rustc-check-cfg=cfg(linebloom_inline_k8)");
    println!("cargo::rustc-check-cfg=cfg(linebloom_compiled_in)");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let std = std::env::var_os("CARGO_FEATURE_STD").is_some();
    let miri = std::env::var_os("CARGO_CFG_MIRI").is_some();
    if os == "linux" && std && !miri {
        println!("cargo::rustc-cfg=linebloom_huge_pages");
    }
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let has = |f: &str| features.split(',').any(|x| x == f);
    let table = arch == "x86_64" || arch == "aarch64";
    if table {
        println!("cargo::rustc-cfg=linebloom_table");
    }
    if table || has("sse2") || has("simd128") {
        println!("cargo::rustc-cfg=linebloom_portable");
    }
    if arch == "x86_64" && has("sse2") && !has("avx") && !miri {
        println!("cargo::rustc-cfg=linebloom_inline_k8");
    }
    if ((arch == "x86_64" && has("avx2")) || (arch == "aarch64" && has("neon"))) && !miri {
        println!("cargo::rustc-cfg=linebloom_compiled_in");
    }
}
