//! aarch64 kernels: NEON, which is baseline on every aarch64 target, so it is selected
//! at compile time (no run-time detection needed).

pub mod neon;
