//! The facts recorded with every result: seed, scale, git commit, CPU model and
//! features, the kernel, the date; written as `results/<experiment>/provenance.json`.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// One experiment run's provenance.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Provenance {
    /// Experiment name.
    pub experiment: String,
    /// Run size.
    pub scale: crate::Scale,
    /// RNG seed.
    pub seed: u64,
    /// `git rev-parse HEAD` of the tree that ran, with `-dirty` if it had changes.
    pub commit: String,
    /// CPU model from `/proc/cpuinfo`.
    pub cpu: String,
    /// SIMD features this CPU has that linebloom cares about.
    pub cpu_features: Vec<String>,
    /// Logical CPUs.
    pub cores: usize,
    /// The linebloom kernel measured where one is used.
    pub kernel: String,
    /// Every kernel this CPU runs.
    pub kernels_available: Vec<String>,
    /// RFC 3339 time the run finished.
    pub date: String,
    /// Seconds the run took.
    pub seconds: f64,
}

/// `git rev-parse HEAD` (+ `-dirty` when tracked files other than the results folder
/// differ from it: a run rewrites `results/` as it goes), or `unknown` outside a git
/// checkout.
pub fn commit() -> String {
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match run(&["rev-parse", "HEAD"]) {
        Some(rev) => {
            let dirty = run(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                ":(exclude)results",
            ])
            .is_some_and(|s| !s.is_empty());
            if dirty { format!("{rev}-dirty") } else { rev }
        }
        None => "unknown".into(),
    }
}

/// CPU model name.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// SIMD features relevant to the kernels.
pub fn cpu_features() -> Vec<String> {
    let mut out = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        for (name, has) in [
            ("sse2", std::is_x86_feature_detected!("sse2")),
            ("avx2", std::is_x86_feature_detected!("avx2")),
            ("avx512f", std::is_x86_feature_detected!("avx512f")),
            ("avx512bw", std::is_x86_feature_detected!("avx512bw")),
            (
                "avx512vpopcntdq",
                std::is_x86_feature_detected!("avx512vpopcntdq"),
            ),
        ] {
            if has {
                out.push(name.to_string());
            }
        }
    }
    #[cfg(target_arch = "aarch64")]
    out.push("neon".to_string());
    out
}

impl Provenance {
    /// The facts for a run of `experiment` under `ctx` that took `seconds`.
    pub fn new(ctx: &crate::Ctx, experiment: &str, seconds: f64) -> Self {
        Provenance {
            experiment: experiment.to_string(),
            scale: ctx.scale,
            seed: ctx.seed,
            commit: commit(),
            cpu: cpu_model(),
            cpu_features: cpu_features(),
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            kernel: ctx.kernel.name.to_string(),
            kernels_available: linebloom::arch::available()
                .map(|k| k.name.to_string())
                .collect(),
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            seconds,
        }
    }

    /// Writes `provenance.json` into `dir`.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let path = dir.join("provenance.json");
        std::fs::write(&path, serde_json::to_string_pretty(self)?)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
    }

    /// Reads `provenance.json` from `dir`.
    pub fn read(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join("provenance.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        Ok(serde_json::from_str(&text)?)
    }
}
