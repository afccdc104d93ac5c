//! A service that guards a SQLite table with a linebloom filter held in Redis, and
//! rebuilds the filter from the table on a schedule while requests keep coming.
//!
//! ```text
//! cargo run --release -p linebloom-redis-client --example sqlite_guard -- REDIS_URL [SECONDS]
//! ```
//!
//! `REDIS_URL` (or `$LINEBLOOM_REDIS_URL`) is a server on loopback, for example one
//! started with `redis-server --port 6400 --save ""` (add `--loadmodule
//! target/release/liblinebloom_redis.so` for the module's batches). The example keeps
//! its filter under one prefix (`sqlite-guard:<pid>:`) and deletes it at the end.
//!
//! What it does:
//!
//! * a table of 100,000 products in a scratch SQLite database, and a filter in Redis
//!   built from it at start-up (`open_or_build`);
//! * a request loop for `SECONDS` (3 by default): half the requests ask for products
//!   that exist, half for ids that do not (the flood). The guard answers "certainly
//!   absent" for most of the latter without a database query; the rest ("maybe") go to
//!   the table. Every 50th request adds a product (the guard first, then the table, so
//!   no request ever sees a false "absent"); every 80th deletes one (the table only: the
//!   filter cannot delete, so the id stays "maybe" until the next rebuild);
//! * a second thread, with its own connections, that rebuilds the filter from the table
//!   every second: the same shape while the filter is under its target rate, a filter
//!   twice as large when the capacity monitor says it has filled past it.
//!
//! It checks what a guard must never do: say "absent" for a product in the table. The
//! counts at the end show what the guard saved the database.

use linebloom_redis_client::linebloom::Params;
use linebloom_redis_client::{BuildOptions, FilterOptions, RebuildOptions, RedisFilter, redis};
use rusqlite::{Connection, OptionalExtension, params};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Products in the table at the start.
const PRODUCTS: u64 = 100_000;
/// The filter's target rate.
const TARGET: f64 = 0.01;
/// The longest a writer takes between its guard insert and its table insert: the
/// rebuild's grace (`PROTOCOL.md`, "Rebuild and rotation").
const GRACE: Duration = Duration::from_millis(50);

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .or_else(|| std::env::var("LINEBLOOM_REDIS_URL").ok())
        .ok_or(
            "usage: sqlite_guard REDIS_URL [SECONDS] (or set LINEBLOOM_REDIS_URL); start a \
             server with: redis-server --port 6400 --save \"\"",
        )?;
    let seconds: u64 = match args.next() {
        Some(s) => s
            .parse()
            .map_err(|_| format!("SECONDS must be a number, not {s:?}"))?,
        None => 3,
    };
    let key = format!("sqlite-guard:{}:products", std::process::id());
    let client = redis::Client::open(url.as_str())?;
    let mut con = client.get_connection_with_timeout(Duration::from_secs(3))?;
    let result = run(&client, &mut con, &key, seconds);
    // Every key of the filter, whatever generation it reached.
    if let Ok(guard) = RedisFilter::open(&mut con, &key) {
        guard.delete(&mut con)?;
    }
    result
}

/// The database: a scratch file (WAL, so the rebuild thread reads while the service
/// writes).
fn open_table(path: &std::path::Path) -> Result<Connection, Error> {
    let db = Connection::open(path)?;
    db.pragma_update(None, "journal_mode", "WAL")?;
    db.busy_timeout(Duration::from_secs(5))?;
    Ok(db)
}

/// Every id in the table: the rebuild's source of truth.
fn all_ids(db: &Connection) -> Result<Vec<u64>, rusqlite::Error> {
    let mut stmt = db.prepare("SELECT id FROM products")?;
    let ids = stmt.query_map([], |row| row.get::<_, i64>(0).map(|id| id as u64))?;
    ids.collect()
}

fn run(
    client: &redis::Client,
    con: &mut redis::Connection,
    key: &str,
    seconds: u64,
) -> Result<(), Error> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("shop.db");
    let mut db = open_table(&path)?;
    db.execute_batch("CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")?;
    let tx = db.transaction()?;
    for id in 0..PRODUCTS {
        tx.execute(
            "INSERT INTO products (id, name) VALUES (?1, ?2)",
            params![id as i64, format!("product {id}")],
        )?;
    }
    tx.commit()?;

    // The guard, built from the table before it answers (every instance of the service
    // starts this way: the first builds it, the others wait for it and open it).
    let params = Params::for_fpr(PRODUCTS, TARGET)?;
    let guard = RedisFilter::open_or_build(
        con,
        key,
        params,
        FilterOptions::default(),
        BuildOptions::default(),
        || all_ids(&db),
    )?;
    println!(
        "{PRODUCTS} products; guard {key} in Redis: {} KiB, batches by {}",
        guard.bytes() >> 10,
        guard.batch_path().name()
    );

    let stop = AtomicBool::new(false);
    let rebuilds = std::thread::scope(|s| -> Result<_, Error> {
        // The rebuild thread shares the handle: a clone, with a connection of its own.
        let rebuilder = s.spawn(|| rebuild_on_schedule(client, guard.clone(), &path, &stop));
        let served = serve(con, &guard, &mut db, seconds);
        stop.store(true, Ordering::Relaxed);
        let rebuilds = rebuilder
            .join()
            .map_err(|_| "the rebuild thread panicked")??;
        served?;
        Ok(rebuilds)
    })?;
    println!("{rebuilds} rebuilds from the table while requests ran; no false \"absent\"");
    Ok(())
}

/// Serves requests for `seconds`; see the module docs.
fn serve(
    con: &mut redis::Connection,
    guard: &RedisFilter,
    db: &mut Connection,
    seconds: u64,
) -> Result<(), Error> {
    let (mut requests, mut rejected, mut queries, mut false_positives) = (0u64, 0, 0, 0);
    let mut next_id = PRODUCTS;
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut random = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let end = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < end {
        requests += 1;
        if requests % 50 == 0 {
            // A new product: the guard first, then the table.
            guard.insert(con, &next_id)?;
            db.execute(
                "INSERT INTO products (id, name) VALUES (?1, 'new')",
                params![next_id as i64],
            )?;
            next_id += 1;
        }
        if requests % 80 == 0 {
            let id = random() % next_id;
            db.execute("DELETE FROM products WHERE id = ?1", params![id as i64])?;
        }
        // Half the requests are for ids that exist (or did), half for ids far past them.
        let id = if requests % 2 == 0 {
            random() % next_id
        } else {
            (1 << 40) + random() % (1 << 40)
        };
        if !guard.contains(con, &id)? {
            rejected += 1;
            let exists: Option<i64> = db
                .query_row(
                    "SELECT id FROM products WHERE id = ?1",
                    params![id as i64],
                    |r| r.get(0),
                )
                .optional()?;
            // Checked, not trusted: a guard must never hide a product.
            if exists.is_some() {
                return Err(format!("the guard said \"absent\" for product {id}").into());
            }
            continue;
        }
        queries += 1;
        let found: Option<String> = db
            .query_row(
                "SELECT name FROM products WHERE id = ?1",
                params![id as i64],
                |r| r.get(0),
            )
            .optional()?;
        if found.is_none() {
            false_positives += 1; // a deleted product, or a false positive of the filter
        }
    }
    println!(
        "{requests} requests: {rejected} rejected by the guard without a query, {queries} \
         reached the table ({false_positives} of them for ids it does not hold)"
    );
    Ok(())
}

/// Rebuilds the filter from the table every second until `stop`; returns how many
/// rebuilds it made.
fn rebuild_on_schedule(
    client: &redis::Client,
    guard: RedisFilter,
    path: &std::path::Path,
    stop: &AtomicBool,
) -> Result<u64, Error> {
    let mut con = client.get_connection_with_timeout(Duration::from_secs(3))?;
    let db = open_table(path)?;
    let mut rebuilds = 0;
    let mut next = Instant::now() + Duration::from_secs(1);
    while !stop.load(Ordering::Relaxed) {
        if Instant::now() < next {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        next += Duration::from_secs(1);
        let capacity = guard.measure(&mut con, TARGET)?;
        // Rotate to twice the size once the filter has filled past its target rate.
        let params = if capacity.over_target() {
            Params::for_fpr(2 * capacity.capacity, TARGET)?
        } else {
            guard.params()
        };
        let options = RebuildOptions::default().grace(GRACE);
        let done = guard.rebuild(&mut con, params, options, || all_ids(&db))?;
        rebuilds += 1;
        println!(
            "rebuild {rebuilds}: generation {} from {} ids in {:.0} ms (fill was {:.1}%, estimated rate {:.3}%)",
            done.generation.number,
            done.keys,
            done.took.as_secs_f64() * 1e3,
            capacity.fill_ratio.unwrap_or(0.0) * 100.0,
            capacity.estimated_fpr.unwrap_or(0.0) * 100.0
        );
    }
    Ok(rebuilds)
}
