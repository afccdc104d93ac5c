//! The lab's infrastructure, shared by every experiment and driver: the experiment
//! machinery, key streams, timing, statistics, CSV files, run facts, plots, Markdown
//! tables, progress bars and (feature `redis`) the lab's Redis connections.

pub mod csvio;
#[cfg(feature = "experiments")]
pub mod experiment;
pub mod keys;
#[cfg(feature = "experiments")]
pub mod plot;
pub mod progress;
pub mod provenance;
#[cfg(feature = "redis")]
pub mod redis;
pub mod stats;
pub mod table;
pub mod timing;
