//! On Cortex-M, links with cortex-m-rt's `link.x` and the mps2-an386 memory map.
fn main() {
    let target = std::env::var("TARGET").expect("TARGET");
    if target.starts_with("thumb") {
        let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
        std::fs::copy("memory.x", out.join("memory.x")).expect("copy the memory map");
        println!("cargo:rustc-link-search={}", out.display());
        println!("cargo:rustc-link-arg=-Tlink.x");
    }
    println!("cargo:rerun-if-changed=memory.x");
}
