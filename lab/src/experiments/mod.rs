//! The experiments, one module each, and the registry that drives `lab run`, `lab plot`
//! and `lab report`.
//!
//! Each module has `NAME`, `run(ctx)` (measure, write `data.csv`), `plot(ctx)` (read the
//! CSV back, draw `plot.svg`/`plot.png`) and `summary(ctx)` (read the CSV back, give the
//! report's table and findings).

pub mod capabilities;
pub mod churn;
pub mod footprint;
pub mod formula;
pub mod fpr_vs_bits;
pub mod growth;
pub mod kernels;
pub mod latency;
pub mod sizing;
pub mod sizing_per_filter;
pub mod sizing_table;
pub mod space;
pub mod threads;
pub mod throughput;

use crate::Ctx;

/// What an experiment contributes to `REPORT.md`.
pub struct Summary {
    /// A Markdown table of the headline numbers.
    pub table: String,
    /// What the plot shows, in two sentences.
    pub caption: String,
    /// Where linebloom does not lead (or "—"), stated plainly.
    pub not_leading: String,
}

/// One registered experiment.
pub struct Experiment {
    /// Name for `lab run <name>`, and the results folder.
    pub name: &'static str,
    /// One line for `lab list`.
    pub about: &'static str,
    /// Needs a server (Redis): skipped by `lab report`.
    pub needs_server: bool,
    /// Measures and writes `data.csv`.
    pub run: fn(&Ctx) -> anyhow::Result<()>,
    /// Draws the plot from the CSV.
    pub plot: fn(&Ctx) -> anyhow::Result<()>,
    /// Report material from the CSV.
    pub summary: fn(&Ctx) -> anyhow::Result<Summary>,
}

/// Every experiment, in report order.
pub const REGISTRY: &[Experiment] = &[
    Experiment {
        name: fpr_vs_bits::NAME,
        about: "measured FPR vs bits per key for every scheme, against the theoretical curves",
        needs_server: false,
        run: fpr_vs_bits::run,
        plot: fpr_vs_bits::plot,
        summary: fpr_vs_bits::summary,
    },
    Experiment {
        name: formula::NAME,
        about: "the exact blocked formula against >= 1e8 probes (random keys) and structured integer keys",
        needs_server: false,
        run: formula::run,
        plot: formula::plot,
        summary: formula::summary,
    },
    Experiment {
        name: sizing::NAME,
        about: "requested vs achieved FPR over n x p: who keeps the promise",
        needs_server: false,
        run: sizing::run,
        plot: sizing::plot,
        summary: sizing::summary,
    },
    Experiment {
        name: sizing_per_filter::NAME,
        about: "the promise per filter: over 100+ key sets per small (n, p) cell, the share of filters above p",
        needs_server: false,
        run: sizing_per_filter::run,
        plot: sizing_per_filter::plot,
        summary: sizing_per_filter::summary,
    },
    Experiment {
        name: sizing_table::NAME,
        about: "the seeds' n/m/k table: each scheme's bits, k, predicted and measured rate at n",
        needs_server: false,
        run: sizing_table::run,
        plot: sizing_table::plot,
        summary: sizing_table::summary,
    },
    Experiment {
        name: throughput::NAME,
        about: "ns/op (insert, hit, miss; single and batched) vs filter size, with memory limit lines",
        needs_server: false,
        run: throughput::run,
        plot: throughput::plot,
        summary: throughput::summary,
    },
    Experiment {
        name: latency::NAME,
        about: "dependent-chain lookup latency vs size, and p50/p99/p99.9 of batch latency",
        needs_server: false,
        run: latency::run,
        plot: latency::plot,
        summary: latency::summary,
    },
    Experiment {
        name: space::NAME,
        about: "bits per key vs achieved FPR (the space-accuracy frontier) with the lower bound",
        needs_server: false,
        run: space::run,
        plot: space::plot,
        summary: space::summary,
    },
    Experiment {
        name: churn::NAME,
        about: "a set that changes: delete the oldest 10% and insert as many new keys, round after round, for every filter that can delete",
        needs_server: false,
        run: churn::run,
        plot: churn::plot,
        summary: churn::summary,
    },
    Experiment {
        name: growth::NAME,
        about: "a set that outgrows its first estimate: rate and memory at 1 to 100 times it, for every filter that can grow",
        needs_server: false,
        run: growth::run,
        plot: growth::plot,
        summary: growth::summary,
    },
    Experiment {
        name: capabilities::NAME,
        about: "the capability matrix: insert after build, delete, grow, merge, concurrent insert and serialize, each run and checked for every contender",
        needs_server: false,
        run: capabilities::run,
        plot: capabilities::plot,
        summary: capabilities::summary,
    },
    Experiment {
        name: threads::NAME,
        about: "AtomicBloomFilter throughput vs threads, against fastbloom's AtomicBloomFilter",
        needs_server: false,
        run: threads::run,
        plot: threads::plot,
        summary: threads::summary,
    },
    Experiment {
        name: crate::penetration::NAME,
        about: "cache penetration: a filter in front of cache and SQLite, live metrics (Redis schemes with --redis)",
        needs_server: false,
        run: crate::penetration::run,
        plot: crate::penetration::plot,
        summary: crate::penetration::summary,
    },
    Experiment {
        name: kernels::NAME,
        about: "every kernel on one workload: insert, hit and miss, interleaved, with a control copy",
        needs_server: false,
        run: kernels::run,
        plot: kernels::plot,
        summary: kernels::summary,
    },
    Experiment {
        name: footprint::NAME,
        about: "flash and stack on a Cortex-M4 and wasm32: code over a program with no filter at opt-level s and 3, next to sbbf-rs",
        needs_server: false,
        run: footprint::run,
        plot: footprint::plot,
        summary: footprint::summary,
    },
];

/// The experiment called `name`, or an error listing the valid names.
pub fn find(name: &str) -> anyhow::Result<&'static Experiment> {
    REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        anyhow::anyhow!(
            "no experiment called {name:?}; the experiments are: {}",
            names.join(", ")
        )
    })
}

/// `n` member keys for this run (even, from the run's seed).
pub fn members(ctx: &Ctx, n: usize, stream: u64) -> Vec<u64> {
    use rand::{RngExt, SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(ctx.seed ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    (0..n).map(|_| rng.random::<u64>() & !1).collect()
}

/// `n` non-member keys (odd: disjoint from every member set).
pub fn non_members(ctx: &Ctx, n: usize, stream: u64) -> Vec<u64> {
    use rand::{RngExt, SeedableRng, rngs::StdRng};
    let mut rng = StdRng::seed_from_u64(!ctx.seed ^ stream.wrapping_mul(0xc2b2_ae3d_27d4_eb4f));
    (0..n).map(|_| rng.random::<u64>() | 1).collect()
}

/// Counts false positives of `f` over `probes`, in batches.
pub fn false_positives(f: &dyn crate::rivals::Filter, probes: &[u64]) -> u64 {
    let mut out = vec![false; 4096];
    let mut hits = 0;
    for chunk in probes.chunks(4096) {
        f.contains_batch(chunk, &mut out[..chunk.len()]);
        hits += out[..chunk.len()].iter().filter(|&&x| x).count() as u64;
    }
    hits
}

/// A Markdown table from a header and rows.
pub fn markdown_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for r in rows {
        s.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    s
}

/// Member key number `i` of a keyed stream (even; SplitMix64 of `i` and the run's seed),
/// for filters too large to hold their key set in memory.
#[inline]
pub fn member_key(ctx: &Ctx, i: u64) -> u64 {
    let mut z = i
        .wrapping_add(ctx.seed.wrapping_mul(0xd6e8_feb8_6659_fd93))
        .wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) & !1
}

/// Inserts member keys `0..n` of the stream into `f`, in chunks, with a progress bar.
pub fn fill_stream(ctx: &Ctx, f: &mut dyn crate::rivals::Filter, n: u64, what: &str) {
    let bar = crate::progress::bar(ctx, n, what);
    let mut chunk = Vec::with_capacity(1 << 16);
    let mut i = 0;
    while i < n {
        chunk.clear();
        chunk.extend((i..n.min(i + (1 << 16))).map(|j| member_key(ctx, j)));
        f.insert_batch(&chunk);
        i += chunk.len() as u64;
        bar.set_position(i);
    }
    bar.finish_and_clear();
}
