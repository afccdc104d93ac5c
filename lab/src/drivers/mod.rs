//! What runs the experiments: the registry behind `lab run`, `lab plot` and `lab report`,
//! the report with its "Choosing a filter" section, and the live page (`lab live`).

pub mod choosing;
pub mod live;
pub mod registry;
pub mod report;
