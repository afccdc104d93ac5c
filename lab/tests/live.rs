//! `lab live`: the protocol (state, server-sent events, controls and bad input) over
//! plain HTTP, and the page in a real headless Chromium driven over WebDriver.
//!
//! The browser test needs Debian's `chromium` and `chromium-driver`; where they are
//! missing it says so and skips, unless `LINEBLOOM_REQUIRE_BROWSER=1` (set by
//! `.ci/run`). It saves a screenshot to `$LINEBLOOM_LIVE_SCREENSHOT` if set, else to
//! the test's temporary folder. Where a Redis server with both modules can start, the
//! page also runs the Redis defences (RedisBloom's and the module's `BF.*` and `CF.*`),
//! so that the screenshot shows them; elsewhere it runs the in-process ones alone.

use linebloom_lab::drivers::live::engine::Controls;
use linebloom_lab::drivers::live::{self, Options, Running};
use linebloom_redis_testing::{Modules, Server};
use std::io::{BufRead, BufReader, Read, Write};
use std::time::{Duration, Instant};

/// A tiny-scale context, with a Redis server if `redis` is given.
fn ctx(redis: Option<String>) -> linebloom_lab::Ctx {
    linebloom_lab::Ctx {
        seed: 5,
        redis,
        ..linebloom_lab::Ctx::tiny(std::env::temp_dir())
    }
}

/// Options for a run on `port` (0: any) with `products` per database, `rate` requests
/// per second per defence and `attack_share` at the start, until stopped.
fn options(port: u16, products: u64, rate: u32, attack_share: f64) -> Options {
    Options {
        port,
        duration: None,
        products,
        controls: Controls {
            attack_share,
            rate,
            paused: false,
        },
    }
}

fn start(products: u64, rate: u32) -> Running {
    let ctx = ctx(None);
    let options = options(0, products, rate, 0.0);
    live::start(&ctx, &options).expect("start the live view")
}

/// `(status, body)` of a request to the running view.
fn http(running: &Running, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(running.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let status: u16 = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

fn state(running: &Running) -> serde_json::Value {
    let body = ureq::get(format!("{}state?seconds=5", running.url()))
        .call()
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap();
    serde_json::from_str(&body).unwrap()
}

/// The last full second's `field` for `defence`.
fn last(state: &serde_json::Value, defence: &str, field: &str) -> f64 {
    let s = state["defences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == defence)
        .unwrap();
    s["rows"].as_array().unwrap().last().unwrap()[field]
        .as_f64()
        .unwrap_or(f64::NAN)
}

#[test]
fn controls_take_effect_and_bad_input_changes_nothing() {
    let running = start(20_000, 1500);
    std::thread::sleep(Duration::from_millis(2500));
    let s = state(&running);
    let names: Vec<&str> = s["defences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["no-protection", "null-caching", "linebloom-in-process"]
    );
    // Paced at the rate: 1500 a second, give or take the pacing step.
    let served = last(&s, "linebloom-in-process", "requests");
    assert!(
        (1400.0..=1600.0).contains(&served),
        "{served} requests in a second"
    );

    // Bad input: 4xx, and the controls stay as they were.
    for bad in [
        "{not json",
        r#"{"attack_share": 1.5}"#,
        r#"{"attack_share": -0.1}"#,
        r#"{"rate": 0}"#,
        r#"{"rate": 100001}"#,
        r#"{"add": 0}"#,
        r#"{"rebuild": false}"#,
        r#"{"attack": 0.5}"#,
        r#"{"attack_share": "half"}"#,
        r#"{"attack_share": 0.5, "rate": 0}"#,
    ] {
        let (status, body) = http(&running, "POST", "/control", bad);
        assert_eq!(status, 400, "{bad} -> {status} {body}");
        assert!(!body.is_empty(), "{bad}: the 400 says why");
    }
    assert_eq!(
        running.live.controls(),
        Controls {
            attack_share: 0.0,
            rate: 1500,
            paused: false
        }
    );
    assert_eq!(http(&running, "GET", "/nothing", "").0, 404);

    // A 90% attack: the unprotected database takes it, the filter rejects it.
    let (status, body) = http(&running, "POST", "/control", r#"{"attack_share": 0.9}"#);
    assert_eq!(status, 200, "{body}");
    std::thread::sleep(Duration::from_millis(2500));
    let s = state(&running);
    let unprotected = last(&s, "no-protection", "db_queries");
    let filtered = last(&s, "linebloom-in-process", "db_queries");
    assert!(
        unprotected > 5.0 * filtered,
        "no protection {unprotected} DB queries/s, filter {filtered}"
    );

    // "add N ids" grows the filter: its estimated count and fill ratio rise.
    let (len0, fill0) = (
        last(&s, "linebloom-in-process", "estimated_len"),
        last(&s, "linebloom-in-process", "fill_ratio"),
    );
    assert_eq!(
        http(&running, "POST", "/control", r#"{"add": 20000}"#).0,
        200
    );
    std::thread::sleep(Duration::from_millis(2500));
    let s = state(&running);
    let (len1, fill1) = (
        last(&s, "linebloom-in-process", "estimated_len"),
        last(&s, "linebloom-in-process", "fill_ratio"),
    );
    assert!(len1 > len0 + 18_000.0, "estimated count {len0} -> {len1}");
    assert!(fill1 > fill0, "fill {fill0} -> {fill1}");
    // Twice the keys it was sized for: over target. A rebuild rotates it larger.
    let cap1 = last(&s, "linebloom-in-process", "capacity");
    assert!(last(&s, "linebloom-in-process", "estimated_fpr") > 0.01);
    assert_eq!(
        http(&running, "POST", "/control", r#"{"rebuild": true}"#).0,
        200
    );
    std::thread::sleep(Duration::from_millis(2200));
    let s = state(&running);
    let cap2 = last(&s, "linebloom-in-process", "capacity");
    assert!(cap2 > 1.8 * cap1, "capacity {cap1} -> {cap2}");
    assert!(last(&s, "linebloom-in-process", "estimated_fpr") < 0.01);

    // Pause: no requests in a full second.
    assert_eq!(
        http(&running, "POST", "/control", r#"{"paused": true}"#).0,
        200
    );
    std::thread::sleep(Duration::from_millis(2200));
    assert_eq!(last(&state(&running), "no-protection", "requests"), 0.0);
    running.stop().unwrap();
}

#[test]
fn events_stream_a_snapshot_then_ticks() {
    let running = start(5_000, 500);
    let mut s = std::net::TcpStream::connect(running.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET /events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let reader = BufReader::new(s);
    let mut events: Vec<(String, serde_json::Value)> = Vec::new();
    let mut name = String::new();
    // The first defence's latest row in a tick, if it has one. A tick can come before a
    // defence thread finished its first second, and repeats the latest row until the
    // thread finished the next (a loaded machine stalls it; the page drops repeats), so
    // the stream is read until the ticks carried two distinct seconds, or the deadline.
    let second =
        |v: &serde_json::Value| v["defences"][0]["rows"].as_array()?.last()?["second"].as_f64();
    let distinct_seconds = |events: &[(String, serde_json::Value)]| {
        let mut seconds: Vec<f64> = events.iter().filter_map(|(_, v)| second(v)).collect();
        seconds.dedup();
        seconds.len()
    };
    let deadline = Instant::now() + Duration::from_secs(8);
    for line in reader.lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("event: ") {
            name = n.to_string();
        } else if let Some(d) = line.strip_prefix("data: ") {
            events.push((name.clone(), serde_json::from_str(d).unwrap()));
            if (events.len() >= 4 && distinct_seconds(&events[1..]) >= 2)
                || Instant::now() > deadline
            {
                break;
            }
        }
    }
    assert_eq!(events[0].0, "snapshot");
    assert!(events[1..].iter().all(|(n, _)| n == "tick"), "{events:?}");
    // Ticks carry at most one row per defence, and the seconds move on.
    let seconds: Vec<f64> = events[1..].iter().filter_map(|(_, v)| second(v)).collect();
    assert!(seconds.windows(2).all(|w| w[1] >= w[0]));
    assert!(seconds.last() > seconds.first(), "{seconds:?}");
    for (_, v) in &events[1..] {
        for s in v["defences"].as_array().unwrap() {
            assert!(s["rows"].as_array().unwrap().len() <= 1);
        }
    }
    // The browser went away (the stream was dropped above): the pipeline keeps its rate.
    std::thread::sleep(Duration::from_millis(2200));
    let served = last(&state(&running), "no-protection", "requests");
    assert!(
        served >= 450.0,
        "{served} requests a second after the page closed"
    );
    running.stop().unwrap();
}

#[test]
fn a_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let ctx = ctx(None);
    let options = options(port, 1000, 100, 0.0);
    let err = live::start(&ctx, &options).err().expect("port in use");
    assert!(err.to_string().contains("in use"), "{err}");
}

/// A chromedriver child process, killed when dropped.
struct Driver(std::process::Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The text of the element `sel` selects. The page re-renders its rows and cards every
/// second, so an element found can be replaced before its text is read (WebDriver's
/// "stale element reference"): then it is found again, up to 20 times 50 ms apart.
/// Any other error, or a 21st stale one, fails the test.
async fn text_of(client: &fantoccini::Client, sel: &str) -> String {
    let mut stale = 0;
    loop {
        let element = client
            .find(fantoccini::Locator::Css(sel))
            .await
            .unwrap_or_else(|e| panic!("find {sel}: {e}"));
        match element.text().await {
            Ok(text) => return text,
            Err(e) if e.is_stale_element_reference() && stale < 20 => {
                stale += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("text of {sel}: {e}"),
        }
    }
}

#[test]
fn the_page_works_in_a_real_browser() {
    let chromium = ["chromium", "chromium-browser"].into_iter().find(|b| {
        std::process::Command::new(b)
            .arg("--version")
            .output()
            .is_ok()
    });
    let driver_ok = std::process::Command::new("chromedriver")
        .arg("--version")
        .output()
        .is_ok();
    let (Some(chromium), true) = (chromium, driver_ok) else {
        assert!(
            std::env::var("LINEBLOOM_REQUIRE_BROWSER").as_deref() != Ok("1"),
            "chromium or chromedriver is missing, and LINEBLOOM_REQUIRE_BROWSER=1"
        );
        println!(
            "SKIPPED: chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), Modules::BOTH, false);
    let running = live::start(
        &ctx(server.as_ref().map(Server::url)),
        &options(0, 20_000, 1500, 0.0),
    )
    .expect("start the live view");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _driver = Driver(
        std::process::Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start chromedriver"),
    );
    let url = running.url();
    let shot = std::env::var("LINEBLOOM_LIVE_SCREENSHOT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir().join("linebloom-live.png"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let shot_path = shot.clone();
    rt.block_on(async move {
        use fantoccini::{ClientBuilder, Locator};
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": which(chromium),
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1400,1500"]
            }),
        );
        let webdriver = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(15);
        let client = loop {
            let plain_http = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(plain_http)
                .capabilities(caps.clone())
                .connect(&webdriver)
                .await
            {
                Ok(c) => break c,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => panic!("cannot start a WebDriver session: {e}"),
            }
        };
        client.goto(&url).await.unwrap();
        let text = |sel: &'static str| {
            let client = client.clone();
            async move { text_of(&client, sel).await }
        };
        let number = |s: String| -> f64 {
            s.trim_end_matches('%').replace(',', "").parse().unwrap_or(f64::NAN)
        };
        // The counters move.
        let wait = |secs| tokio::time::sleep(Duration::from_secs(secs));
        wait(2).await;
        let before = number(text("#total-requests").await);
        wait(2).await;
        let after = number(text("#total-requests").await);
        assert!(after > before + 2000.0, "served {before} -> {after}");
        // The curves are drawn: points for every defence and second so far, and
        // coloured pixels on the canvas.
        let points = client
            .find(Locator::Css("#c-rps"))
            .await
            .unwrap()
            .attr("data-points")
            .await
            .unwrap()
            .unwrap_or_default();
        assert!(number(points.clone()) >= 9.0, "{points} points drawn");
        let drawn = client
            .execute(
                "const c = document.getElementById('c-dbps'); const d = c.getContext('2d')\
                 .getImageData(0, 0, c.width, c.height).data; let n = 0; \
                 for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i] !== d[i + 1]) n++; return n;",
                vec![],
            )
            .await
            .unwrap();
        assert!(drawn.as_u64().unwrap() > 0, "no curve pixels");
        // The 90% attack button: the unprotected database takes it, the filter does not.
        client
            .find(Locator::Css("#attack-90"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        // The table averages the last 5 seconds: let them all be under attack.
        wait(7).await;
        let db = |defence: &'static str| {
            let client = client.clone();
            async move {
                let sel = format!("tr[data-defence='{defence}'] td.dbps");
                text_of(&client, &sel).await.parse::<f64>().unwrap()
            }
        };
        let (unprotected, filtered) = (db("no-protection").await, db("linebloom-in-process").await);
        assert!(
            unprotected > 3.0 * filtered,
            "DB queries/s: no protection {unprotected}, filter {filtered}"
        );
        // "add" grows the filter: the fill ratio rises.
        let fill = || text("div.card[data-defence='linebloom-in-process'] .fill");
        let fill0 = number(fill().await);
        client
            .find(Locator::Css("#add-button"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait(3).await;
        let fill1 = number(fill().await);
        assert!(fill1 > fill0, "fill ratio {fill0} -> {fill1}");
        let png = client.screenshot().await.unwrap();
        std::fs::write(&shot_path, png).unwrap();
        client.close().await.unwrap();
    });
    println!("screenshot: {}", shot.display());
    running.stop().unwrap();
}

/// The full path of `program` on PATH.
fn which(program: &str) -> String {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .map(|d| std::path::Path::new(d).join(program))
        .find(|p| p.exists())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| program.to_string())
}

#[test]
fn a_dead_redis_degrades_its_defences_live_and_the_rest_keep_running() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut server) = Server::start(dir.path(), Modules::NONE, false) else {
        return;
    };
    let url = server.url();
    let ctx = ctx(Some(url.clone()));
    let options = options(0, 5_000, 500, 0.5);
    let running = live::start(&ctx, &options).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let s = state(&running);
    assert_eq!(last(&s, "linebloom-in-redis", "degraded"), 0.0);
    assert!(last(&s, "linebloom-in-redis", "requests") > 400.0);
    server.crash();
    std::thread::sleep(Duration::from_millis(3500));
    let s = state(&running);
    // The Redis defences degrade (never "absent": no false negative), live.
    for defence in ["linebloom-in-redis", "classic-setbit-redis"] {
        assert!(
            last(&s, defence, "degraded") > 0.0,
            "{defence} not degraded"
        );
        assert_eq!(last(&s, defence, "false_negatives"), 0.0, "{defence}");
    }
    // The in-process defences and the page keep going.
    assert!(last(&s, "linebloom-in-process", "requests") > 400.0);
    assert_eq!(http(&running, "GET", "/", "").0, 200);
    // The keys cannot be removed from a dead server: stop says so, and returns.
    let _ = running.stop();
}

#[test]
fn the_page_runs_redisblooms_commands_on_both_modules_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(dir.path(), Modules::BOTH, false) else {
        return;
    };
    let ctx = ctx(Some(server.url()));
    let running = live::start(&ctx, &options(0, 5_000, 500, 0.5)).unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    let s = state(&running);
    // BF.* on RedisBloom and on the module, and CF.* (with deletes) on both.
    for defence in [
        "redisbloom",
        "linebloom-module-bf",
        "redisbloom-cuckoo",
        "linebloom-module-cf",
    ] {
        assert!(last(&s, defence, "requests") > 400.0, "{defence}");
        assert!(
            last(&s, defence, "rejections") > 0.0,
            "{defence} rejected nothing"
        );
        assert_eq!(last(&s, defence, "false_negatives"), 0.0, "{defence}");
    }
    running.stop().unwrap();
}
