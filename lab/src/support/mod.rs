//! The lab's infrastructure, shared by every experiment and driver: the experiment
//! machinery, key streams, timing, statistics, CSV files, run facts, plots, Markdown
//! tables and progress bars.

pub mod csvio;
pub mod experiment;
pub mod keys;
pub mod meta;
pub mod plot;
pub mod progress;
pub mod stats;
pub mod table;
pub mod timing;
