//! CSV in and out through serde, with errors that name the file.

use anyhow::Context;
use serde::{Serialize, de::DeserializeOwned};
use std::path::Path;

/// Writes `rows` to `path` (header from the struct's field names).
pub fn write<T: Serialize>(path: &Path, rows: &[T]) -> anyhow::Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    for r in rows {
        w.serialize(r)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Reads every row of `path`.
pub fn read<T: DeserializeOwned>(path: &Path) -> anyhow::Result<Vec<T>> {
    let mut r =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut rows = Vec::new();
    for (i, row) in r.deserialize().enumerate() {
        rows.push(row.with_context(|| format!("{}: bad row {}", path.display(), i + 2))?);
    }
    if rows.is_empty() {
        anyhow::bail!("{} has no rows", path.display());
    }
    Ok(rows)
}
