//! The experiments, one module each. Each implements [`crate::support::experiment::Experiment`];
//! `crate::drivers::registry` lists them in report order.

pub mod capabilities;
pub mod churn;
pub mod footprint;
pub mod formula;
pub mod fpr_vs_bits;
pub mod growth;
pub mod kernels;
pub mod latency;
pub mod penetration;
pub mod quotient_load;
pub mod sizing;
pub mod sizing_per_filter;
pub mod sizing_table;
pub mod space;
pub mod threads;
pub mod throughput;
