//! CSV in and out through serde, with errors that name the file.

use anyhow::Context;
use serde::{Serialize, de::DeserializeOwned};
use std::path::Path;

/// Writes `rows` to `path` (header from the struct's field names).
pub fn write<T: Serialize>(path: &Path, rows: &[T]) -> anyhow::Result<()> {
    let text = to_string(rows).with_context(|| format!("writing {}", path.display()))?;
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// `rows` as CSV text, exactly as [`write`](fn@write) puts it in a file.
pub fn to_string<T: Serialize>(rows: &[T]) -> anyhow::Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
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
