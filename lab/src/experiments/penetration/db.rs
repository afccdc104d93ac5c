//! The database: SQLite (rusqlite, bundled) on disk, one `products` table. A real
//! database with real query costs, not a mock.

use anyhow::Context;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;

/// The product store.
pub struct Db {
    conn: Connection,
}

impl Db {
    /// Creates (or truncates) `path` and loads products `0..n`.
    pub fn create(path: &Path, n: u64) -> anyhow::Result<Self> {
        if path.exists() {
            std::fs::remove_file(path)
                .with_context(|| format!("cannot replace {}", path.display()))?;
        }
        let mut conn = Connection::open(path)
            .with_context(|| format!("cannot open SQLite database {}", path.display()))?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;
             CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price INTEGER NOT NULL);",
        )?;
        let tx = conn.transaction()?;
        {
            let mut stmt =
                tx.prepare("INSERT INTO products (id, name, price) VALUES (?1, ?2, ?3)")?;
            for id in 0..n {
                stmt.execute(params![
                    id as i64,
                    format!("product-{id}"),
                    (id % 10_000) as i64
                ])?;
            }
        }
        tx.commit()?;
        Ok(Db { conn })
    }

    /// Opens an existing database file.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open SQLite database {}", path.display()))?;
        conn.execute_batch("PRAGMA synchronous = OFF;")?;
        Ok(Db { conn })
    }

    /// The product's name, or `None` if there is no such product.
    pub fn get(&self, id: u64) -> anyhow::Result<Option<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name FROM products WHERE id = ?1")?;
        Ok(stmt
            .query_row(params![id as i64], |r| r.get(0))
            .optional()?)
    }

    /// Adds a product.
    pub fn insert(&self, id: u64) -> anyhow::Result<()> {
        let mut stmt = self.conn.prepare_cached(
            "INSERT OR REPLACE INTO products (id, name, price) VALUES (?1, ?2, 1)",
        )?;
        stmt.execute(params![id as i64, format!("product-{id}")])?;
        Ok(())
    }

    /// Removes a product.
    pub fn delete(&self, id: u64) -> anyhow::Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached("DELETE FROM products WHERE id = ?1")?;
        stmt.execute(params![id as i64])?;
        Ok(())
    }

    /// Every product id, in order: the source a filter is rebuilt from.
    pub fn ids(&self) -> anyhow::Result<Vec<u64>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id FROM products ORDER BY id")?;
        let ids = stmt
            .query_map([], |r| r.get::<_, i64>(0))?
            .map(|id| Ok(id? as u64))
            .collect::<anyhow::Result<Vec<u64>>>()?;
        Ok(ids)
    }
}
