//! The live view's HTTP server (axum on tokio), on 127.0.0.1 only.
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the page (embedded in the binary; no network needed) |
//! | `GET /state?seconds=N` | a JSON [`Snapshot`](super::engine::Snapshot) with each defence's last `N` seconds (default and most: the whole window) |
//! | `GET /events` | server-sent events: `snapshot` (the whole window) on connect, then `tick` (each defence's latest second) every second |
//! | `POST /control` | a JSON [`ControlRequest`]; 200 with the controls in force, or 400 with the reason, and nothing changed |
//!
//! The server only reads the shared state: a slow or closed browser never holds up the
//! pipeline threads.

use super::engine::{ControlRequest, Live, WINDOW};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio_stream::StreamExt;

/// The page: HTML, CSS and script in one file, drawn on canvases.
pub const PAGE: &str = include_str!("page.html");

/// The router over `live`.
pub fn router(live: Arc<Live>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/state", get(state))
        .route("/events", get(events))
        .route("/control", post(control))
        .with_state(live)
}

async fn page() -> Html<&'static str> {
    Html(PAGE)
}

#[derive(serde::Deserialize)]
struct StateQuery {
    seconds: Option<usize>,
}

async fn state(State(live): State<Arc<Live>>, Query(q): Query<StateQuery>) -> Response {
    let seconds = q.seconds.unwrap_or(WINDOW).min(WINDOW);
    axum::Json(live.snapshot(seconds)).into_response()
}

async fn events(
    State(live): State<Arc<Live>>,
) -> Sse<impl tokio_stream::Stream<Item = Result<Event, Infallible>>> {
    let first = {
        let live = Arc::clone(&live);
        tokio_stream::once(event("snapshot", &live.snapshot(WINDOW)))
    };
    let ticks =
        tokio_stream::wrappers::IntervalStream::new(tokio::time::interval(Duration::from_secs(1)))
            .map(move |_| event("tick", &live.snapshot(1)));
    Sse::new(first.chain(ticks)).keep_alive(KeepAlive::default())
}

fn event(name: &str, snapshot: &super::engine::Snapshot) -> Result<Event, Infallible> {
    Ok(Event::default()
        .event(name)
        .data(serde_json::to_string(snapshot).unwrap_or_else(|_| "{}".into())))
}

async fn control(State(live): State<Arc<Live>>, body: Bytes) -> Response {
    let req: ControlRequest = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return bad(format!("malformed control request: {e}")),
    };
    match live.apply(&req) {
        Ok(controls) => axum::Json(controls).into_response(),
        Err(e) => bad(e),
    }
}

fn bad(message: String) -> Response {
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        message,
    )
        .into_response()
}
