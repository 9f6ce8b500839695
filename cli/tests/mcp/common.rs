//! Starting the server, folders of test tools, and assertions on results.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

pub const TOOLCELL: &str = env!("CARGO_BIN_EXE_toolcell");

/// A folder of tools, removed when dropped.
pub struct ToolsDir(PathBuf);

impl ToolsDir {
    /// A folder holding these test guests, with a policy that lets the slow ones run for a
    /// minute (so only cancellation or shutdown stops them).
    pub fn with(name: &str, guests: &[&str]) -> Self {
        let dir = std::env::temp_dir().join(format!("toolcell-mcp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for guest in guests {
            let file = Path::new(guest);
            std::fs::copy(file, dir.join(file.file_name().unwrap())).unwrap();
        }
        std::fs::write(
            dir.join("toolcell.toml"),
            "[tools.sleeper]\nlimits = { timeout_ms = 60000 }\n\
             [tools.infinite_loop]\nlimits = { timeout_ms = 60000, fuel = 1_000_000_000_000_000 }\n",
        )
        .unwrap();
        Self(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ToolsDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `toolcell serve` with the environment of a test: no inherited tools folder, the test
/// suite's compile cache.
pub fn serve_command(args: &[&str]) -> Command {
    warm_cache();
    let mut command = Command::new(TOOLCELL);
    command.arg("serve").args(args);
    command.env_remove("TOOLCELL_TOOLS_DIR").env_remove("TOOLCELL_TOKEN");
    command.env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"));
    command.kill_on_drop(true);
    command
}

/// Compiles the built-in tools into the suite's cache once, before the first server starts:
/// the tests run at once, and each server would compile what the cache lacks (python's
/// 21 MB component is about 20 s of CPU).
fn warm_cache() {
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        let status = std::process::Command::new(TOOLCELL)
            .arg("list")
            .env_remove("TOOLCELL_TOOLS_DIR")
            .env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"))
            .stdout(std::process::Stdio::null())
            .status()
            .expect("toolcell list runs");
        assert!(status.success(), "toolcell list failed: {status}");
    });
}

/// An rmcp client connected to `toolcell serve` over stdio (the `initialize` handshake).
pub async fn stdio_client(args: &[&str]) -> RunningService<RoleClient, ()> {
    stdio_client_with_env(args, &[]).await
}

/// [`stdio_client`] with these environment variables set for the server.
pub async fn stdio_client_with_env(args: &[&str], env: &[(&str, &str)]) -> RunningService<RoleClient, ()> {
    let mut command = serve_command(args);
    command.envs(env.iter().copied());
    let (transport, _stderr) =
        TokioChildProcess::builder(command).stderr(Stdio::null()).spawn().expect("toolcell starts");
    rmcp::ServiceExt::serve((), transport).await.expect("the MCP handshake succeeds")
}

/// A running `toolcell serve --transport http` and the URL of its endpoint.
pub struct HttpServer {
    pub child: Child,
    pub url: String,
    pub base: String,
    /// The server's stderr from the line after the one saying where it listens (without the
    /// one saying its tools are ready).
    pub log: mpsc::UnboundedReceiver<String>,
}

impl HttpServer {
    /// Starts the server on a free loopback port and waits until it listens.
    pub async fn start(args: &[&str]) -> Self {
        Self::start_on("127.0.0.1:0", args).await
    }

    pub async fn start_on(listen: &str, args: &[&str]) -> Self {
        Self::start_with_env(listen, args, &[]).await
    }

    /// [`HttpServer::start_on`] with these environment variables set for the server; returns
    /// once its tools are ready.
    pub async fn start_with_env(listen: &str, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut server = Self::start_listening(listen, args, env).await;
        let mut before = Vec::new();
        let ready = tokio::time::timeout(Duration::from_secs(120), async {
            while let Some(line) = server.log.recv().await {
                if line.starts_with("toolcell: ") && line.ends_with(" tools ready") {
                    return;
                }
                before.push(line);
            }
            panic!("the server exited before its tools were ready");
        });
        ready.await.expect("the tools are ready within two minutes");
        // What was logged while loading stays for the test to read.
        let (logged, log) = mpsc::unbounded_channel();
        for line in before {
            let _ = logged.send(line);
        }
        let mut rest = std::mem::replace(&mut server.log, log);
        tokio::spawn(async move {
            while let Some(line) = rest.recv().await {
                let _ = logged.send(line);
            }
        });
        server
    }

    /// Starts the server and returns as soon as it listens: its tools may still be loading.
    pub async fn start_listening(listen: &str, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = serve_command(&["--transport", "http", "--listen", listen]);
        command.args(args).envs(env.iter().copied()).stderr(Stdio::piped()).stdout(Stdio::null());
        let mut child = command.spawn().expect("toolcell starts");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let url = tokio::time::timeout(Duration::from_secs(120), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if line.starts_with("serving ")
                    && let Some((_, url)) = line.split_once(" at ")
                {
                    return url.trim().to_owned();
                }
            }
            panic!("the server exited before it listened");
        })
        .await
        .expect("the server listens within two minutes");
        // Keep draining stderr so the server never blocks on a full pipe.
        let (logged, log) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let _ = logged.send(line);
            }
        });
        let base = url.trim_end_matches("/mcp").to_owned();
        Self { child, url, base, log }
    }
}

/// What a started server prints on stderr before `toolcell: N tools ready`, read until that
/// line (at most two minutes: a cold start compiles).
pub async fn stderr_until_ready(child: &mut Child) -> Vec<String> {
    let mut lines = BufReader::new(child.stderr.take().expect("stderr is piped")).lines();
    let mut said = Vec::new();
    let reading = async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with("toolcell: ") && line.ends_with(" tools ready") {
                return;
            }
            said.push(line);
        }
        panic!("the server ended before its tools were ready: {said:#?}");
    };
    tokio::time::timeout(Duration::from_secs(120), reading).await.expect("the tools are ready within two minutes");
    said
}

/// A JSON-RPC POST to an MCP endpoint, as a client without an SDK sends it.
pub fn post(http: &reqwest::Client, url: &str, message: &Value) -> reqwest::RequestBuilder {
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(message.to_string())
}

/// The `initialize` request of a 2025-11-25 client.
pub fn initialize() -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
}

pub fn arguments(value: Value) -> Map<String, Value> {
    value.as_object().expect("arguments are an object").clone()
}

pub fn call(tool: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments(args))
}

/// The text of a result's single text block.
pub fn text(result: &CallToolResult) -> String {
    let value = serde_json::to_value(result).unwrap();
    assert_eq!(value["content"].as_array().map(Vec::len), Some(1), "one content block: {value}");
    value["content"][0]["text"].as_str().expect("a text block").to_owned()
}

/// The error kind a failed result carries in `_meta`.
pub fn error_kind(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "a failed call is a result with isError: {result:?}");
    let meta = result.meta.as_ref().expect("a failed result has _meta");
    meta.0["toolcell/error"]["kind"].as_str().expect("_meta names the error kind").to_owned()
}

/// Polls `/healthz` until no call is running or waiting, for at most `limit`.
pub async fn calls_in_flight_after(base: &str, limit: Duration) -> Value {
    let client = reqwest::Client::new();
    let until = tokio::time::Instant::now() + limit;
    loop {
        let health: Value =
            serde_json::from_slice(&client.get(format!("{base}/healthz")).send().await.unwrap().bytes().await.unwrap())
                .unwrap();
        let calls = health["calls"].clone();
        if calls["running"] == 0 && calls["waiting"] == 0 || tokio::time::Instant::now() >= until {
            return calls;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
