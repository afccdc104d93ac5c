//! `sizing_table`: the sizing recipes' table of bits `m` and hash count `k` for `n` keys
//! at rate `p`, reproduced and measured. For each (n, p) the background texts discuss
//! (10⁴ to 10⁶ keys at 1% and 0.1%), each recipe gives the bits `m` and hash count
//! `k`; the table adds bits per key, the rate the recipe's own
//! formula predicts for that shape, and the rate measured after inserting n keys.
//!
//! Recipes:
//!
//! * `textbook`: the background texts' recipe, `m = −n ln p / (ln 2)²`, `k = round((m/n) ln 2)`,
//!   predicted by `(1 − e^{−kn/m})^k`, measured on linebloom's classic (unblocked)
//!   filter of exactly that shape;
//! * `redisbloom-formula`: RedisBloom's `BF.RESERVE` recipe, bits per entry
//!   `−ln p / (ln 2)²`, `k = ⌈(ln 2)·bpe⌉`, predicted and measured like `textbook` (the
//!   shape, not RedisBloom itself: the penetration experiment runs the module);
//! * `linebloom`, `linebloom-counting`, `linebloom-classic`: each type's `for_fpr`,
//!   predicted by its exact formula;
//! * `sbbf (Parquet formula)`: the Parquet spec's bits per key for a split-block filter
//!   (`k = 8` words of 32 bits per 256-bit block), measured on sbbf-rs-safe; its
//!   formula is the one that sized it, so its prediction is the requested rate.
//!
//! `lab size --n N --p P` prints the same rows for any (n, p), without measuring.

use crate::Ctx;
use crate::contenders::{LabFilter, Linebloom, Sizing, build, parquet_bits_per_key};
use crate::support::experiment::{Experiment, Run, Summary};
use crate::support::keys::{false_positives, members, non_members};
use crate::support::stats::{Z99, wilson};
use crate::support::table::markdown_table;
use linebloom::{ClassicBloomFilter, ClassicParams, Params, fpr};
use serde::{Deserialize, Serialize};

/// Experiment name.
pub const NAME: &str = "sizing_table";

/// One CSV row: a recipe's shape for (n, p), its prediction and its measurement.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Recipe (see the module docs).
    #[serde(alias = "scheme")]
    pub contender: String,
    /// Keys.
    pub n: u64,
    /// Requested rate.
    pub requested: f64,
    /// Bits of filter memory.
    pub bits: u64,
    /// Hash functions (bit positions per key).
    pub k: u32,
    /// Bits per key.
    pub bits_per_key: f64,
    /// The recipe's own formula for this shape after n keys.
    pub predicted: f64,
    /// Measured after inserting n keys (NaN when not measured).
    pub measured: f64,
    /// Non-member probes of the measurement.
    pub probes: u64,
}

/// The recipes, in table order.
pub const RECIPES: &[&str] = &[
    "textbook",
    "redisbloom-formula",
    "linebloom",
    "linebloom-counting",
    "linebloom-classic",
    "sbbf (Parquet formula)",
];

/// A recipe's shape for (n, p) and its predicted rate: `(bits, k, predicted)`.
pub fn shape(recipe: &str, n: u64, p: f64) -> anyhow::Result<(u64, u32, f64)> {
    let ln2 = std::f64::consts::LN_2;
    let classic = |bits: f64, k: f64| {
        let (bits, k) = (
            bits.max(1.0) as u64,
            (k as u32).clamp(1, linebloom::classic::MAX_CLASSIC_K),
        );
        (bits, k, fpr::classic_approx(bits as f64, k, n as f64))
    };
    Ok(match recipe {
        "textbook" => {
            let m = (-(n as f64) * p.ln() / (ln2 * ln2)).floor();
            classic(m, (m / n as f64 * ln2).round())
        }
        "redisbloom-formula" => {
            let bpe = -p.ln() / (ln2 * ln2);
            classic((n as f64 * bpe).ceil(), (ln2 * bpe).ceil())
        }
        "linebloom" => {
            let params = Params::for_fpr(n, p)?;
            (params.bits(), params.k(), params.expected_fpr(n))
        }
        "linebloom-counting" => {
            let params = linebloom::CountingParams::for_fpr(n, p)?;
            (params.bits(), params.k(), params.expected_fpr(n))
        }
        "linebloom-classic" => {
            let params = ClassicParams::for_fpr(n, p)?;
            (params.bits(), params.k(), params.expected_fpr(n))
        }
        "sbbf (Parquet formula)" => {
            // sbbf-rs-safe rounds the bits up to whole 256-bit blocks.
            let bits = (n * parquet_bits_per_key(p) as u64).div_ceil(256) * 256;
            (bits, 8, p)
        }
        other => anyhow::bail!("unknown recipe {other}"),
    })
}

/// The filter a recipe measures with, holding `keys`.
fn filter(
    recipe: &str,
    n: u64,
    p: f64,
    keys: &[u64],
    ctx: &Ctx,
) -> anyhow::Result<Box<dyn LabFilter>> {
    let by_rival = |name: &str| -> anyhow::Result<Box<dyn LabFilter>> {
        build(name, Sizing::Fpr(p), keys, ctx.kernel)?
            .ok_or_else(|| anyhow::anyhow!("{name} cannot be built for n = {n}, p = {p}"))
    };
    match recipe {
        "textbook" | "redisbloom-formula" => {
            let (bits, k, _) = shape(recipe, n, p)?;
            let mut f = Linebloom(ClassicBloomFilter::new(ClassicParams::new(bits, k)?));
            f.insert_batch(keys);
            Ok(Box::new(f))
        }
        "sbbf (Parquet formula)" => by_rival("sbbf-rs-safe"),
        other => by_rival(other),
    }
}

/// One row per recipe for (n, p), without measurement.
pub fn rows_for(n: u64, p: f64) -> anyhow::Result<Vec<Row>> {
    RECIPES
        .iter()
        .map(|&recipe| {
            let (bits, k, predicted) = shape(recipe, n, p)?;
            Ok(Row {
                contender: recipe.into(),
                n,
                requested: p,
                bits,
                k,
                bits_per_key: bits as f64 / n as f64,
                predicted,
                measured: f64::NAN,
                probes: 0,
            })
        })
        .collect()
}

/// The (n, p) cases at this scale.
fn cases(scale: crate::Scale) -> (Vec<(u64, f64)>, usize) {
    match scale {
        crate::Scale::Test => (vec![(10_000, 0.01)], 200_000),
        crate::Scale::Preview | crate::Scale::Reference => (
            vec![
                (10_000, 0.01),
                (100_000, 0.01),
                (1_000_000, 0.01),
                (1_000_000, 0.001),
            ],
            2_000_000,
        ),
        crate::Scale::Full => (
            vec![
                (10_000, 0.01),
                (100_000, 0.01),
                (1_000_000, 0.01),
                (1_000_000, 0.001),
                (10_000_000, 0.01),
            ],
            20_000_000,
        ),
    }
}

/// The `sizing_table` experiment.
pub struct SizingTable;

impl Experiment for SizingTable {
    const NAME: &'static str = NAME;
    const ABOUT: &'static str = "each sizing recipe's bits m and hash count k for n keys at rate p, with its predicted and measured rate";
    type Row = Row;

    /// Measures: the rows the registry writes to `data.csv`.
    fn measure(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
        let (cases, probes) = cases(ctx.scale);
        let probe_keys = non_members(ctx, probes, 3);
        let bar = crate::support::progress::bar(ctx, (cases.len() * RECIPES.len()) as u64, NAME);
        let mut rows = Vec::new();
        for &(n, p) in &cases {
            let keys = members(ctx, n as usize, n ^ 0x5eed);
            for mut row in rows_for(n, p)? {
                bar.set_message(format!("{} n = {n}, p = {p}", row.contender));
                let f = filter(&row.contender, n, p, &keys, ctx)?;
                let fp = false_positives(f.as_ref(), &probe_keys);
                row.measured = fp as f64 / probes as f64;
                row.probes = probes as u64;
                rows.push(row);
                bar.inc(1);
            }
        }
        bar.finish_and_clear();
        Ok(rows)
    }

    /// Bits per key of every recipe at each (n, p), from the CSV.
    fn plot(rows: &[Row], run: &Run) -> anyhow::Result<()> {
        let bars: Vec<(String, String, f64)> = rows
            .iter()
            .map(|r| {
                (
                    format!("n={:.0e} p={}", r.n as f64, r.requested),
                    r.contender.clone(),
                    r.bits_per_key,
                )
            })
            .collect();
        crate::support::plot::bar_chart(
            &run.dir,
            "Bits per key each sizing recipe gives for n keys at rate p",
            "bits per key",
            &bars,
        )
    }

    /// Report material from the CSV.
    fn summary(rows: &[Row], _run: &Run) -> anyhow::Result<Summary> {
        let case = |r: &Row| format!("n = {}, p = {}", r.n, r.requested);
        // Above the target beyond the noise: the Wilson 99% lower bound is above it.
        let over: Vec<String> = rows
            .iter()
            .filter(|r| {
                wilson((r.measured * r.probes as f64).round() as u64, r.probes, Z99).0 > r.requested
            })
            .map(|r| format!("{} at {}: {}", r.contender, case(r), percent(r.measured)))
            .collect();
        // Recipes that kept the target with fewer bits than linebloom, with the cases.
        let leaner: Vec<String> = RECIPES
            .iter()
            .filter(|&&s| s != "linebloom")
            .filter_map(|&recipe| {
                let cases: Vec<String> = rows
                    .iter()
                    .filter(|r| r.contender == recipe && r.measured <= r.requested)
                    .filter(|r| {
                        rows.iter().any(|l| {
                            l.contender == "linebloom"
                                && l.n == r.n
                                && l.requested == r.requested
                                && r.bits < l.bits
                        })
                    })
                    .map(|r| format!("{} ({:.2} bits/key)", case(r), r.bits_per_key))
                    .collect();
                (!cases.is_empty()).then(|| format!("{recipe} at {}", cases.join(", ")))
            })
            .collect();
        let mut not_leading = String::new();
        if !leaner.is_empty() {
            not_leading.push_str(&format!(
                "Measured at or below the target with fewer bits than linebloom's blocked filter \
             (blocking costs memory; the unblocked filters pay one cache miss per probe): {}. ",
                leaner.join("; ")
            ));
        }
        if !over.is_empty() {
            not_leading.push_str(&format!(
                "Measured above the target beyond noise (Wilson 99% lower bound above it): {}.",
                over.join("; ")
            ));
        }
        if not_leading.is_empty() {
            not_leading = "—".into();
        }
        Ok(Summary {
        table: table(rows),
        caption: "The sizing recipes' table: for each n and p, the bits and hash count each recipe chooses, the rate its own formula predicts for that shape, and the rate measured after inserting n random keys (non-member probes as in the CSV). The plot compares bits per key.".into(),
        not_leading,
    })
    }
}

/// Formats a rate as a percentage with three significant digits.
fn percent(rate: f64) -> String {
    if rate.is_nan() {
        "—".into()
    } else {
        format!("{:.3}%", 100.0 * rate)
    }
}

/// The table of every row, as Markdown.
pub fn table(rows: &[Row]) -> String {
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.contender.clone(),
                r.n.to_string(),
                percent(r.requested),
                r.bits.to_string(),
                r.k.to_string(),
                format!("{:.2}", r.bits_per_key),
                percent(r.predicted),
                percent(r.measured),
            ]
        })
        .collect();
    markdown_table(
        &[
            "recipe",
            "n",
            "p",
            "bits m",
            "k",
            "bits/key",
            "predicted",
            "measured",
        ],
        &body,
    )
}
