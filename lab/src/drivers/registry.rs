//! The registry: every experiment, in report order, the one module that names them all
//! and drives `lab run`, `lab plot` and `lab report`.

use crate::experiments::{
    capabilities, churn, footprint, formula, fpr_vs_bits, growth, kernels, latency, quotient_load,
    sizing, sizing_per_filter, sizing_table, space, threads, throughput,
};
use crate::support::experiment::{Registered, entry};

/// Every experiment, in report order.
pub const REGISTRY: &[Registered] = &[
    entry::<fpr_vs_bits::FprVsBits>(),
    entry::<formula::Formula>(),
    entry::<sizing::SizingGrid>(),
    entry::<sizing_per_filter::SizingPerFilter>(),
    entry::<sizing_table::SizingTable>(),
    entry::<throughput::Throughput>(),
    entry::<latency::Latency>(),
    entry::<space::Space>(),
    entry::<churn::Churn>(),
    entry::<quotient_load::QuotientLoad>(),
    entry::<growth::Growth>(),
    entry::<capabilities::Capabilities>(),
    entry::<threads::Threads>(),
    entry::<crate::experiments::penetration::Penetration>(),
    entry::<kernels::Kernels>(),
    entry::<footprint::Footprint>(),
];

/// The experiment called `name`, or an error listing the valid names.
pub fn find(name: &str) -> anyhow::Result<&'static Registered> {
    REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        anyhow::anyhow!(
            "no experiment called {name:?}; the experiments are: {}",
            names.join(", ")
        )
    })
}
