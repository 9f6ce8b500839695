//! `GET /metrics`: the Prometheus text format from the runtime's metrics; who may read it
//! (the token, the Host and Origin checks of `/mcp`); what it can never show (secrets,
//! arguments, names a client chose); and that scraping it without end holds nothing.
//! (`tests/peers/python/test_metrics.py` checks the same output with Prometheus' own
//! `promtool check metrics`.)

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rmcp::RoleClient;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

use crate::common::{HttpServer, ToolsDir, call, error_kind};

const TOKEN: &str = "correct-horse-battery-staple";

const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

async fn client(url: &str, token: Option<&str>) -> RunningService<RoleClient, ()> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    ().serve_with_lifecycle(StreamableHttpClientTransport::from_config(config), ClientLifecycleMode::Initialize)
        .await
        .unwrap()
}

/// `GET {base}/metrics`, with the token when given: the status and the body.
async fn scrape(http: &reqwest::Client, base: &str, token: Option<&str>) -> (u16, String) {
    let mut request = http.get(format!("{base}/metrics"));
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

/// Each sample of a scrape: its series (name and labels, as written) and its value.
fn samples(body: &str) -> BTreeMap<String, f64> {
    body.lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("a sample line: {line}"));
            (series.to_owned(), value.parse().unwrap_or_else(|_| panic!("a number: {line}")))
        })
        .collect()
}

/// The value of one series, which must be there.
fn value(samples: &BTreeMap<String, f64>, series: &str) -> f64 {
    *samples.get(series).unwrap_or_else(|| panic!("{series} is not in the scrape: {samples:#?}"))
}

#[tokio::test]
async fn calls_errors_and_unknown_tools_are_counted_in_the_prometheus_text_format() {
    let server = HttpServer::start(&[]).await;
    let client = client(&server.url, None).await;
    let result = client.call_tool(call("calculator", json!({"expression": "6 * 7"}))).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"value": 42.0})));
    let failed = client.call_tool(call("calculator", json!({"expression": "6 *"}))).await.unwrap();
    assert_eq!(error_kind(&failed), "rejected_arguments");
    assert!(client.call_tool(call("calculater", json!({}))).await.is_err(), "an unknown tool is a protocol error");

    let http = reqwest::Client::new();
    let response = http.get(format!("{}/metrics", server.base)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], PROMETHEUS_TEXT);
    let body = response.text().await.unwrap();
    let samples = samples(&body);
    let calculator = |series: &str| value(&samples, &series.replace("TOOL", r#"tool_name="calculator""#));
    assert_eq!(value(&samples, "toolcell_tools_ready"), 1.0);
    assert_eq!(value(&samples, "toolcell_tools_loaded"), 8.0);
    assert_eq!(value(&samples, "toolcell_mcp_sessions"), 1.0, "the client's session");
    assert!(value(&samples, "toolcell_http_connections") >= 1.0, "this scrape's connection at least");
    assert_eq!(value(&samples, "toolcell_calls_running"), 0.0);
    assert_eq!(calculator("toolcell_tool_calls_total{TOOL}"), 2.0);
    assert_eq!(calculator(r#"toolcell_tool_errors_total{TOOL,error_type="rejected_arguments"}"#), 1.0);
    assert_eq!(value(&samples, r#"toolcell_tool_errors_total{error_type="unknown_tool"}"#), 1.0);
    assert_eq!(calculator(r#"toolcell_tool_duration_seconds_bucket{TOOL,le="+Inf"}"#), 2.0);
    assert_eq!(calculator("toolcell_tool_duration_seconds_count{TOOL}"), 2.0);
    assert!(calculator("toolcell_tool_duration_seconds_sum{TOOL}") > 0.0);
    assert!(calculator("toolcell_tool_fuel_sum{TOOL}") > 0.0);
    assert_eq!(value(&samples, r#"toolcell_tool_calls_total{tool_name="python"}"#), 0.0, "every loaded tool");
    assert!(!body.contains("calculater"), "the unknown name is nowhere: {body}");

    // HEAD too; any other method is 405 with Allow and says what to send.
    let head = http.head(format!("{}/metrics", server.base)).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["content-type"], PROMETHEUS_TEXT);
    for method in [reqwest::Method::POST, reqwest::Method::PUT, reqwest::Method::DELETE] {
        let response = http.request(method.clone(), format!("{}/metrics", server.base)).body("x").send().await.unwrap();
        assert_eq!(response.status(), 405, "{method}");
        assert_eq!(response.headers()["allow"], "GET,HEAD", "{method}");
        let error: serde_json::Value = response.json().await.unwrap();
        assert!(error["error"].as_str().unwrap().contains("scrape it with GET"), "{error}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn with_a_token_metrics_need_it_in_the_authorization_header_and_nowhere_else() {
    // Off loopback, where a token is required.
    let server = HttpServer::start_on("0.0.0.0:0", &["--token", TOKEN]).await;
    let port = server.url.rsplit(':').next().unwrap().trim_end_matches("/mcp").to_owned();
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let url = format!("{base}/metrics");
    let refused = [
        http.get(&url),
        http.get(&url).header("authorization", "Bearer correct-horse-battery-stapl3"),
        http.get(&url).header("authorization", format!("Bearer {TOKEN}x")),
        http.get(&url).header("authorization", TOKEN),
        http.get(&url).header("authorization", format!("Basic {TOKEN}")),
        http.get(&url).header("cookie", format!("token={TOKEN}")),
        http.get(format!("{url}?token={TOKEN}")),
        http.get(format!("{url}?access_token={TOKEN}")),
        http.get(format!("{url}?authorization=Bearer%20{TOKEN}")),
        // The method is not told before the token is.
        http.post(&url).body("x"),
    ];
    for (n, request) in refused.into_iter().enumerate() {
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401, "request {n}");
        assert_eq!(response.headers()["www-authenticate"], r#"Bearer realm="toolcell""#, "request {n}");
        let body = response.text().await.unwrap();
        assert!(!body.contains("toolcell_"), "request {n} learned nothing: {body}");
    }
    let (status, body) = scrape(&http, &base, Some(TOKEN)).await;
    assert_eq!(status, 200);
    assert_eq!(value(&samples(&body), "toolcell_tools_ready"), 1.0);
    // Health probes still need none, and say nothing but the count.
    assert_eq!(http.get(format!("{base}/healthz")).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn on_loopback_a_rebound_host_or_a_foreign_origin_gets_403() {
    let server = HttpServer::start(&[]).await;
    let port = server.base.rsplit(':').next().unwrap().to_owned();
    let http = reqwest::Client::new();
    let get = |headers: &[(&str, String)]| {
        let mut request = http.get(format!("{}/metrics", server.base));
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        request.send()
    };
    // A page whose name was re-pointed at 127.0.0.1 sends its own name as the Host.
    let rebound = get(&[("host", format!("attacker.example:{port}"))]).await.unwrap();
    assert_eq!(rebound.status(), 403);
    assert!(rebound.text().await.unwrap().contains("localhost, 127.0.0.1 or [::1]"));
    assert_eq!(get(&[("origin", "http://attacker.example".into())]).await.unwrap().status(), 403);
    assert_eq!(get(&[("origin", "null".into())]).await.unwrap().status(), 403);
    for allowed in [
        vec![("host", format!("localhost:{port}"))],
        vec![("host", format!("[::1]:{port}"))],
        vec![("origin", "http://localhost:3000".into())],
        vec![],
    ] {
        assert_eq!(get(&allowed).await.unwrap().status(), 200, "{allowed:?}");
    }
}

#[tokio::test]
async fn a_scrape_never_shows_a_secret_an_argument_or_a_name_a_client_chose() {
    let secret = "metrics-secret-7c41d09e";
    let marker = "argument-marker-3f9a";
    let dir = ToolsDir::with("metrics-secrets", &[toolcell_tests::ENV_READER, toolcell_tests::ECHO]);
    std::fs::write(
        dir.path().join("toolcell.toml"),
        format!("[tools.env_reader.env]\nAPI_TOKEN = {{ secret = \"{secret}\" }}\n"),
    )
    .unwrap();
    let tools_dir = dir.path().to_str().unwrap();
    let server = HttpServer::start(&["--tools-dir", tools_dir, "--no-builtins", "--token", TOKEN]).await;
    let client = client(&server.url, Some(TOKEN)).await;
    let read = client.call_tool(call("env_reader", json!({"name": "API_TOKEN"}))).await.unwrap();
    assert_eq!(read.is_error, Some(false), "{read:?}");
    let failed = client.call_tool(call("env_reader", json!({"name": "API_TOKEN", "fail": true}))).await.unwrap();
    assert_eq!(error_kind(&failed), "tool_failed");
    let echoed = client.call_tool(call("echo", json!({"text": marker, "count": 1}))).await.unwrap();
    assert_eq!(echoed.is_error, Some(false), "{echoed:?}");
    let invalid = client.call_tool(call("echo", json!({"text": marker, "count": 1000}))).await.unwrap();
    assert_eq!(error_kind(&invalid), "invalid_arguments");
    assert!(client.call_tool(call("unknown-0", json!({"text": marker}))).await.is_err());

    let http = reqwest::Client::new();
    let (status, before) = scrape(&http, &server.base, Some(TOKEN)).await;
    assert_eq!(status, 200);
    let before = samples(&before);

    // Names of every shape, each once: none becomes a series.
    let names: Vec<String> = (1..=200).map(|n| format!("unknown-{n}\"}} 1\n{marker}{{\\")).collect();
    for name in &names {
        assert!(client.call_tool(call(name, json!({}))).await.is_err(), "{name:?}");
    }
    let (status, after) = scrape(&http, &server.base, Some(TOKEN)).await;
    assert_eq!(status, 200);
    for hidden in [secret, marker, TOKEN, "unknown-"] {
        assert!(!after.contains(hidden), "{hidden} is in the scrape:\n{after}");
    }
    let after_samples = samples(&after);
    let series = |samples: &BTreeMap<String, f64>| samples.keys().cloned().collect::<BTreeSet<_>>();
    assert_eq!(series(&after_samples), series(&before), "the same series, whatever names clients call");
    let unknown = r#"toolcell_tool_errors_total{error_type="unknown_tool"}"#;
    assert_eq!(value(&after_samples, unknown), value(&before, unknown) + 200.0);
    let tool_names: BTreeSet<&str> =
        after.lines().filter_map(|line| line.split("tool_name=\"").nth(1)?.split('"').next()).collect();
    assert_eq!(tool_names, BTreeSet::from(["echo", "env_reader"]));
    client.cancel().await.unwrap();
}

/// A process's resident memory, from its `smaps_rollup` (exact, where `VmRSS` lags in a
/// threaded process).
#[cfg(target_os = "linux")]
fn resident_bytes(pid: u32) -> u64 {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap();
    let kib = rollup
        .lines()
        .find_map(|line| line.strip_prefix("Rss:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    kib.expect("Rss in smaps_rollup") * 1024
}

/// Scrapers at once in the flood, and the most scrapes it makes (it stops sooner, once the
/// calls made during it are done).
const SCRAPERS: usize = 16;
const MAX_FLOOD_SCRAPES: usize = 40_000;

/// What resident memory may grow by over the flood, after the warm-up: the allocator's slack.
const MAX_GROWTH_BYTES: u64 = 8 << 20;

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_flood_of_scrapes_holds_no_memory_and_calls_go_on_meanwhile() {
    let server = HttpServer::start(&[]).await;
    let pid = server.child.id().unwrap();
    let http = reqwest::Client::new();
    let (_, first) = scrape(&http, &server.base, None).await;
    let lines = first.lines().count();

    // Scrapes until told to stop; every one complete, and of the same series.
    let flood = |http: reqwest::Client, stop: Arc<AtomicBool>, done: Arc<AtomicUsize>, limit: usize| {
        let base = server.base.clone();
        (0..SCRAPERS)
            .map(|_| {
                let (http, base, stop, done) = (http.clone(), base.clone(), stop.clone(), done.clone());
                tokio::spawn(async move {
                    while !stop.load(Ordering::Relaxed) && done.fetch_add(1, Ordering::Relaxed) < limit {
                        let (status, body) = scrape(&http, &base, None).await;
                        assert_eq!((status, body.lines().count()), (200, lines));
                    }
                })
            })
            .collect::<Vec<_>>()
    };
    // Warm up: the server's buffers and the allocator's arenas reach their working size, and
    // a call takes its instance slot (about 2 MiB once used).
    let client = client(&server.url, None).await;
    let result = client.call_tool(call("calculator", json!({"expression": "6 * 7"}))).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"value": 42.0})));
    let warm = flood(http.clone(), Arc::default(), Arc::default(), 2_000);
    for scraper in warm {
        scraper.await.unwrap();
    }
    let before = resident_bytes(pid);

    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let scrapers = flood(http.clone(), stop.clone(), done.clone(), MAX_FLOOD_SCRAPES);
    while done.load(Ordering::Relaxed) < 1_000 {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // Calls are served while the scrapes go on.
    for _ in 0..50 {
        let result = client.call_tool(call("calculator", json!({"expression": "6 * 7"}))).await.unwrap();
        assert_eq!(result.structured_content, Some(json!({"value": 42.0})));
    }
    let during = done.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    for scraper in scrapers {
        scraper.await.unwrap();
    }
    let scraped = done.load(Ordering::Relaxed).min(MAX_FLOOD_SCRAPES);
    let after = resident_bytes(pid);
    let grown = after.saturating_sub(before);
    eprintln!(
        "{scraped} scrapes of {} bytes ({during} when the 50 calls were done): resident {} KiB -> {} KiB",
        first.len(),
        before / 1024,
        after / 1024
    );
    assert!(during < MAX_FLOOD_SCRAPES, "the calls finished while the flood still ran");
    // At least 1,000 scrapes of a body over 8 KiB: one that kept anything of its body would
    // hold more than this.
    assert!(first.len() > 8 * 1024 && scraped >= 1_000);
    assert!(grown < MAX_GROWTH_BYTES, "resident memory grew by {} KiB over {scraped} scrapes", grown / 1024);
    let (_, last) = scrape(&http, &server.base, None).await;
    let last = samples(&last);
    assert_eq!(value(&last, r#"toolcell_tool_calls_total{tool_name="calculator"}"#), 51.0);
    client.cancel().await.unwrap();
}
