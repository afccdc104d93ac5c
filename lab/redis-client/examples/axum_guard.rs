//! An async HTTP service (axum on tokio) that guards a SQLite table of products with a
//! linebloom filter held in Redis, its Redis connections from a bb8 pool.
//!
//! ```text
//! cargo run --release -p linebloom-redis-client --features tokio --example axum_guard -- REDIS_URL [SECONDS]
//! ```
//!
//! `REDIS_URL` (or `$LINEBLOOM_REDIS_URL`) is a server on loopback, for example one
//! started with `redis-server --port 6400 --save ""` (add `--loadmodule
//! target/release/liblinebloom_redis.so` for the module's commands). The service:
//!
//! * `GET /products/{id}`: the guard first; "certainly absent" answers 404 without a
//!   database query, "maybe" asks the table;
//! * `POST /products/{id}`: the guard first, then the table, so that no request ever
//!   sees a false "absent";
//! * `GET /guard`: the filter's [`Info`](linebloom_redis_client::Info): generation,
//!   count, expected rate, batch path, eviction warning.
//!
//! Every request task takes a connection from the pool and shares one
//! [`AsyncRedisFilter`] handle. Started with `SECONDS` (3 by default), the example
//! serves on a free loopback port while a load of concurrent clients asks for products
//! that exist and ids that do not and adds products, checks that no existing product
//! ever got a 404, prints what the guard saved the database, and deletes the filter.
//! With `SECONDS` = 0 it serves on 127.0.0.1:3000 until Ctrl-C.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use linebloom_redis_client::linebloom::Params;
use linebloom_redis_client::{AsyncRedisFilter, BuildOptions, FilterOptions, redis};
use rusqlite::{OptionalExtension, params};
use std::future::IntoFuture;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Products in the table at the start.
const PRODUCTS: u64 = 50_000;

/// What every request handler shares.
#[derive(Clone)]
struct App {
    guard: AsyncRedisFilter,
    pool: bb8::Pool<redis::Client>,
    db: Arc<Mutex<rusqlite::Connection>>,
    /// Requests the guard answered without a database query.
    saved: Arc<AtomicU64>,
    /// Database queries.
    queries: Arc<AtomicU64>,
}

/// A handler's error: 503, with the reason (the guard never answers "absent" for what
/// it could not check).
struct Failure(String);

impl axum::response::IntoResponse for Failure {
    fn into_response(self) -> axum::response::Response {
        (StatusCode::SERVICE_UNAVAILABLE, self.0).into_response()
    }
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}

/// Runs a query on the table off the async threads.
async fn with_db<T: Send + 'static>(
    app: &App,
    query: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
) -> Result<T, Failure> {
    let db = Arc::clone(&app.db);
    app.queries.fetch_add(1, Ordering::Relaxed);
    let result = tokio::task::spawn_blocking(move || query(&db.lock().expect("the table's lock")));
    Ok(result.await??)
}

async fn get_product(
    State(app): State<App>,
    Path(id): Path<u64>,
) -> Result<(StatusCode, String), Failure> {
    let mut con = app.pool.get().await?;
    if !app.guard.contains(&mut *con, &id).await? {
        app.saved.fetch_add(1, Ordering::Relaxed);
        return Ok((StatusCode::NOT_FOUND, "no such product (the guard)".into()));
    }
    drop(con);
    let name = with_db(&app, move |db| {
        db.query_row(
            "SELECT name FROM products WHERE id = ?1",
            params![id as i64],
            |r| r.get(0),
        )
        .optional()
    })
    .await?;
    Ok(match name {
        Some(name) => (StatusCode::OK, name),
        None => (StatusCode::NOT_FOUND, "no such product (the table)".into()),
    })
}

async fn add_product(State(app): State<App>, Path(id): Path<u64>) -> Result<StatusCode, Failure> {
    // The guard first: once the row exists, every reader's guard says "maybe".
    let mut con = app.pool.get().await?;
    app.guard.insert(&mut *con, &id).await?;
    drop(con);
    with_db(&app, move |db| {
        db.execute(
            "INSERT OR IGNORE INTO products (id, name) VALUES (?1, ?2)",
            params![id as i64, format!("product {id}")],
        )
    })
    .await?;
    Ok(StatusCode::CREATED)
}

async fn guard_info(State(app): State<App>) -> Result<String, Failure> {
    let mut con = app.pool.get().await?;
    Ok(format!("{:#?}\n", app.guard.info(&mut *con).await?))
}

fn router(app: App) -> axum::Router {
    axum::Router::new()
        .route("/products/{id}", get(get_product).post(add_product))
        .route("/guard", get(guard_info))
        .with_state(app)
}

/// The table, in a scratch file, with `PRODUCTS` rows.
fn table(path: &std::path::Path) -> Result<rusqlite::Connection, Error> {
    let mut db = rusqlite::Connection::open(path)?;
    db.execute_batch("CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")?;
    let tx = db.transaction()?;
    for id in 0..PRODUCTS {
        tx.execute(
            "INSERT INTO products (id, name) VALUES (?1, ?2)",
            params![id as i64, format!("product {id}")],
        )?;
    }
    tx.commit()?;
    Ok(db)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let url = args
        .next()
        .or_else(|| std::env::var("LINEBLOOM_REDIS_URL").ok())
        .ok_or(
            "usage: axum_guard REDIS_URL [SECONDS] (or set LINEBLOOM_REDIS_URL); start a \
             server with: redis-server --port 6400 --save \"\"",
        )?;
    let seconds: u64 = match args.next() {
        Some(s) => s
            .parse()
            .map_err(|_| format!("SECONDS must be a number, not {s:?}"))?,
        None => 3,
    };
    let dir = tempfile::tempdir()?;
    let db = Arc::new(Mutex::new(table(&dir.path().join("shop.db"))?));
    let pool = bb8::Pool::builder()
        .max_size(8)
        .build(redis::Client::open(url.as_str())?)
        .await?;
    let prefix = format!("axum-guard:{}:products", std::process::id());
    let guard = {
        let mut con = pool.get().await?;
        // Every instance of the service starts this way: the first builds the filter
        // from the table before it answers, the others wait for it and open it.
        let table = Arc::clone(&db);
        let all_ids = move || async move {
            let ids = tokio::task::spawn_blocking(move || {
                let db = table.lock().expect("the table's lock");
                let mut stmt = db.prepare("SELECT id FROM products")?;
                let ids = stmt.query_map([], |row| row.get::<_, i64>(0))?;
                ids.map(|id| id.map(|id| id as u64))
                    .collect::<rusqlite::Result<Vec<u64>>>()
            })
            .await?;
            Ok::<_, Error>(ids?)
        };
        AsyncRedisFilter::open_or_build(
            &mut *con,
            &prefix,
            Params::for_fpr(4 * PRODUCTS, 0.01)?,
            FilterOptions::default(),
            BuildOptions::default(),
            all_ids,
        )
        .await?
    };
    let app = App {
        guard: guard.clone(),
        pool: pool.clone(),
        db,
        saved: Arc::default(),
        queries: Arc::default(),
    };
    let served = if seconds == 0 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
        println!("serving on http://127.0.0.1:3000/products/7 until Ctrl-C");
        axum::serve(listener, router(app.clone()))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(Error::from)
    } else {
        load(app.clone(), seconds).await
    };
    let mut con = pool.get().await?;
    guard.delete(&mut *con).await?;
    served
}

/// Serves on a free loopback port while 16 concurrent clients send requests for
/// `seconds`: reads of products that exist, of ids that do not, and new products.
/// Fails if an existing product ever answers 404.
async fn load(app: App, seconds: u64) -> Result<(), Error> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let server = tokio::spawn(axum::serve(listener, router(app.clone())).into_future());
    // The next id to add, and the added ids whose POST was acknowledged: a client reads
    // only those, since an id reserved but not yet acknowledged rightly answers 404.
    let next = Arc::new(AtomicU64::new(PRODUCTS));
    let added = Arc::new(Mutex::new(Vec::new()));
    let end = Instant::now() + Duration::from_secs(seconds);
    let clients: Vec<_> = (0..16u64)
        .map(|client| {
            let (base, next, added) = (base.clone(), Arc::clone(&next), Arc::clone(&added));
            tokio::task::spawn_blocking(move || -> Result<u64, Error> {
                let agent = ureq::Agent::new_with_defaults();
                let mut requests = 0u64;
                while Instant::now() < end {
                    requests += 1;
                    let status = |r: Result<ureq::http::Response<ureq::Body>, ureq::Error>| match r
                    {
                        Ok(r) => Ok(r.status().as_u16()),
                        Err(ureq::Error::StatusCode(code)) => Ok(code),
                        Err(e) => Err(e),
                    };
                    if requests.is_multiple_of(20) {
                        let id = next.fetch_add(1, Ordering::Relaxed);
                        let code =
                            status(agent.post(format!("{base}/products/{id}")).send_empty())?;
                        if code != 201 {
                            return Err(format!("adding product {id} answered {code}").into());
                        }
                        added.lock().expect("the added ids' lock").push(id);
                    }
                    let (id, exists) = if requests.is_multiple_of(2) {
                        let added = added.lock().expect("the added ids' lock");
                        let pick =
                            (client * 7_919 + requests * 104_729) % (PRODUCTS + added.len() as u64);
                        let id = match pick.checked_sub(PRODUCTS) {
                            Some(i) => added[i as usize],
                            None => pick,
                        };
                        (id, true)
                    } else {
                        ((1 << 40) + client * 1_000_000 + requests, false)
                    };
                    let code = status(agent.get(format!("{base}/products/{id}")).call())?;
                    if exists && code != 200 {
                        return Err(
                            format!("product {id} answered {code}: a false \"absent\"").into()
                        );
                    }
                }
                Ok(requests)
            })
        })
        .collect();
    let mut requests = 0;
    for client in clients {
        requests += client.await??;
    }
    let info = get_body(&format!("{base}/guard")).await?;
    server.abort();
    println!(
        "{requests} requests over {seconds} s from 16 clients: {} answered by the guard alone, \
         {} database queries; no existing product answered 404\n{info}",
        app.saved.load(Ordering::Relaxed),
        app.queries.load(Ordering::Relaxed)
    );
    Ok(())
}

/// One GET's body, off the async threads.
async fn get_body(url: &str) -> Result<String, Error> {
    let url = url.to_string();
    tokio::task::spawn_blocking(move || -> Result<String, Error> {
        Ok(ureq::get(&url).call()?.body_mut().read_to_string()?)
    })
    .await?
}
