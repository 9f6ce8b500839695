//! `toolcell serve` round trips, as an MCP client sees them: a raw JSON-RPC client (no SDK)
//! over stdio and over HTTP on loopback, and many HTTP calls at once.
//!
//! Run with `cargo bench -p toolcell-cli --bench serve` (release build). `cargo test` runs it
//! too (`test = true`), as a smoke test with a few samples, so it cannot rot.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const TOOLCELL: &str = env!("CARGO_BIN_EXE_toolcell");

#[derive(Clone, Copy)]
struct Size {
    warmup: usize,
    samples: usize,
    concurrent: usize,
}

impl Size {
    fn from_args() -> Self {
        if std::env::args().any(|arg| arg == "--bench") {
            Self { warmup: 200, samples: 2000, concurrent: 1000 }
        } else {
            println!("smoke test (figures are meaningless): run `cargo bench -p toolcell-cli --bench serve`");
            Self { warmup: 2, samples: 10, concurrent: 20 }
        }
    }
}

fn main() {
    let size = Size::from_args();
    // The client is one thread making one call at a time, as an MCP SDK's client is; more
    // client threads would only compete with the server for the cores.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        println!("\n`calculator` `2 * (3 + 4)`, one call at a time after {} warm-up calls:", size.warmup);
        println!("{:<40} {:>10} {:>10}", "transport", "p50", "p99");
        report("stdio, `ping` (no tool runs)", stdio_round_trips(size, ping).await);
        report("stdio (raw JSON-RPC lines)", stdio_round_trips(size, calculator_call).await);
        report("HTTP, session (SSE responses)", http_round_trips(size, &[], None).await);
        report("HTTP, --stateless (JSON responses)", http_round_trips(size, &["--stateless"], None).await);
        let token = "bench-token-0123456789abcdef";
        report(
            "HTTP, --stateless, --token",
            http_round_trips(size, &["--stateless", "--token", token], Some(token)).await,
        );
        report("HTTP, --stateless, OAuth (an ES256 JWT)", oauth_round_trips(size).await);
        concurrent_calls(size).await;
    });
}

fn report(label: &str, mut durations: Vec<Duration>) {
    durations.sort();
    let at = |fraction: f64| durations[((durations.len() - 1) as f64 * fraction) as usize];
    println!("{label:<40} {:>7.3} ms {:>7.3} ms", millis(at(0.5)), millis(at(0.99)));
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn serve(args: &[&str]) -> Command {
    let mut command = Command::new(TOOLCELL);
    command.arg("serve").args(args).env_remove("TOOLCELL_TOOLS_DIR").kill_on_drop(true);
    command.env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"));
    command
}

fn calculator_call(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "calculator", "arguments": {"expression": "2 * (3 + 4)"}}})
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
}

struct StdioServer {
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl StdioServer {
    async fn send(&mut self, message: &Value) {
        self.stdin.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }

    async fn reply(&mut self) -> Value {
        serde_json::from_str(&self.stdout.next_line().await.unwrap().unwrap()).unwrap()
    }
}

/// The lower bound of a round trip: a request the server answers without running a tool.
fn ping(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

/// Whether `reply` is the right answer to `request`.
fn answers(request: &Value, reply: &Value) -> bool {
    match request["method"].as_str() {
        Some("ping") => reply["result"] == json!({}),
        _ => reply["result"]["structuredContent"]["value"] == 14.0,
    }
}

async fn stdio_round_trips(size: Size, request: fn(u64) -> Value) -> Vec<Duration> {
    let mut child = serve(&[]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut server = StdioServer {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()).lines(),
        _child: child,
    };
    server.send(&initialize()).await;
    server.reply().await;
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
    let mut durations = Vec::with_capacity(size.samples);
    for id in 1..=(size.warmup + size.samples) as u64 {
        let started = Instant::now();
        server.send(&request(id)).await;
        let reply = server.reply().await;
        let elapsed = started.elapsed();
        assert!(answers(&request(id), &reply), "{reply}");
        if id > size.warmup as u64 {
            durations.push(elapsed);
        }
    }
    durations
}

/// A running HTTP server and its endpoint.
async fn http_server(args: &[&str]) -> (Child, String) {
    let mut command = serve(&["--transport", "http"]);
    if !args.contains(&"--listen") {
        command.args(["--listen", "127.0.0.1:0"]);
    }
    command.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut url = None;
    // It listens at once, and its tools are ready (from the compile cache) a moment later.
    loop {
        let line = lines.next_line().await.unwrap().expect("the server listens and loads its tools");
        if let Some(at) = line.strip_prefix("serving MCP at ") {
            url = Some(at.trim().to_owned());
        } else if line.ends_with(" tools ready") {
            break;
        }
    }
    let url = url.expect("the server said where it listens");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

/// The JSON-RPC message of a response body: plain JSON, or the last `data:` of an SSE stream.
fn message(body: &str) -> Value {
    let json = body.lines().filter_map(|line| line.strip_prefix("data:")).next_back().unwrap_or(body);
    serde_json::from_str(json.trim()).unwrap_or_else(|err| panic!("{err}: {body}"))
}

/// The same calls with every request's token checked as a JWT access token of an issuer
/// started here (its keys fetched once, then cached), against the same server with no token.
async fn oauth_round_trips(size: Size) -> Vec<Duration> {
    let issuer = toolcell_tests::issuer::Issuer::start().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let token = issuer.token(&json!({"iss": issuer.url, "aud": resource, "sub": "bench", "scope": "tools",
        "exp": now + 3600}));
    let listen = format!("127.0.0.1:{port}");
    let args = [
        "--stateless",
        "--listen",
        &listen,
        "--oauth-issuer",
        &issuer.url,
        "--oauth-resource",
        &resource,
        "--oauth-scope",
        "tools=*",
    ];
    http_round_trips(size, &args, Some(&token)).await
}

async fn http_round_trips(size: Size, args: &[&str], bearer: Option<&str>) -> Vec<Duration> {
    let stateless = args.contains(&"--stateless");
    let (_child, url) = http_server(args).await;
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| {
        let mut request = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        if let Some(bearer) = bearer {
            request = request.header("authorization", format!("Bearer {bearer}"));
        }
        request.send()
    };
    let response = post(initialize(), None).await.unwrap();
    let session = response.headers().get("mcp-session-id").map(|id| id.to_str().unwrap().to_owned());
    assert_eq!(session.is_none(), stateless, "a session only in session mode");
    response.text().await.unwrap();
    post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}), session.clone()).await.unwrap();
    let mut durations = Vec::with_capacity(size.samples);
    for id in 1..=(size.warmup + size.samples) as u64 {
        let started = Instant::now();
        let body = post(calculator_call(id), session.clone()).await.unwrap().text().await.unwrap();
        let elapsed = started.elapsed();
        let reply = message(&body);
        assert_eq!(reply["result"]["structuredContent"]["value"], 14.0, "{reply}");
        if id > size.warmup as u64 {
            durations.push(elapsed);
        }
    }
    durations
}

/// `concurrent` calls sent at once over HTTP (stateless), each on a task of its own.
async fn concurrent_calls(size: Size) {
    // One client opening a connection per call: past the default cap of 256 connections per
    // client address, which this measurement is not about.
    let caps = ["--max-connections", "2048", "--max-connections-per-client", "2048"];
    let (_child, url) = http_server(&[&["--stateless"][..], &caps[..]].concat()).await;
    let http = reqwest::Client::new();
    let started = Instant::now();
    let tasks: Vec<_> = (0..size.concurrent as u64)
        .map(|id| {
            let request = http
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-11-25")
                .body(calculator_call(id).to_string());
            tokio::spawn(async move {
                let body = request.send().await.ok()?.text().await.ok()?;
                (message(&body)["result"]["structuredContent"]["value"] == 14.0).then_some(())
            })
        })
        .collect();
    let mut answered = 0;
    for task in tasks {
        if task.await.unwrap().is_some() {
            answered += 1;
        }
    }
    let elapsed = started.elapsed();
    println!(
        "\n{} concurrent HTTP calls (--stateless): {answered} answered correctly in {:.0} ms ({:.0} calls/s)",
        size.concurrent,
        millis(elapsed),
        answered as f64 / elapsed.as_secs_f64()
    );
    assert_eq!(answered, size.concurrent, "every call is answered");
}
