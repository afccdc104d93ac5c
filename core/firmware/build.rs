//! Puts the board's memory map where cortex-m-rt's `link.x` finds it: QEMU's
//! `mps2-an386` (Cortex-M4) for thumbv7em, `lm3s6965evb` (Cortex-M3) for thumbv7m,
//! `microbit` (Cortex-M0) for thumbv6m.
fn main() {
    let target = std::env::var("TARGET").expect("TARGET");
    let (board, memory) = if target.starts_with("thumbv7m-") {
        ("Cortex-M3 (lm3s6965evb)", "memory-lm3s6965evb.x")
    } else if target.starts_with("thumbv6m-") {
        ("Cortex-M0 (microbit)", "memory-microbit.x")
    } else {
        ("Cortex-M4 (mps2-an386)", "memory-mps2-an386.x")
    };
    println!("cargo:rustc-env=FIRMWARE_BOARD={board}");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::copy(memory, out.join("memory.x")).expect("copy the memory map");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed={memory}");
}
