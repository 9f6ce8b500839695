//! Over streamable HTTP: sessions and the stateless 2026-07-28 revision, cancellation,
//! the token and Origin checks, host context from headers, many clients, shutdown. (Long:
//! one test per behaviour of the front door.)

use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

use crate::common::{HttpServer, ToolsDir, call, calls_in_flight_after, error_kind, initialize, post, serve_command};

const TOKEN: &str = "correct-horse-battery-staple";

async fn client(url: &str) -> RunningService<RoleClient, ()> {
    rmcp::ServiceExt::serve((), StreamableHttpClientTransport::from_uri(url.to_owned())).await.unwrap()
}

async fn client_with(
    config: StreamableHttpClientTransportConfig,
    lifecycle: ClientLifecycleMode,
) -> RunningService<RoleClient, ()> {
    ().serve_with_lifecycle(StreamableHttpClientTransport::from_config(config), lifecycle).await.unwrap()
}

#[tokio::test]
async fn a_session_client_lists_and_calls() {
    let server = HttpServer::start(&[]).await;
    let client = client(&server.url).await;
    assert_eq!(client.peer_info().unwrap().protocol_version.as_str(), "2025-11-25");
    assert_eq!(client.list_all_tools().await.unwrap().len(), 8);
    let result = client.call_tool(call("calculator", json!({"expression": "6 * 7"}))).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"value": 42.0})));
    let failed = client.call_tool(call("calculator", json!({"expression": "6 *"}))).await.unwrap();
    assert_eq!(error_kind(&failed), "rejected_arguments");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_2026_07_28_client_discovers_and_calls_without_a_session() {
    let server = HttpServer::start(&[]).await;
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = client_with(StreamableHttpClientTransportConfig::with_uri(server.url.clone()), lifecycle).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 8);
    let result =
        client.call_tool(call("unit_convert", json!({"value": 1, "from": "kilometer", "to": "meter"}))).await.unwrap();
    assert_eq!(result.structured_content.unwrap()["value"], json!(1000.0));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn cancelling_stops_a_sleeping_and_a_spinning_tool_and_frees_their_slots() {
    let dir = ToolsDir::with("cancel", &[toolcell_tests::SLEEPER, toolcell_tests::INFINITE_LOOP]);
    let server = HttpServer::start(&["--tools-dir", dir.path().to_str().unwrap()]).await;
    let client = client(&server.url).await;
    for tool in ["sleeper", "infinite_loop"] {
        // Dropping the pending call makes rmcp send notifications/cancelled.
        let pending = client.call_tool(call(tool, json!({})));
        assert!(tokio::time::timeout(Duration::from_millis(500), pending).await.is_err(), "{tool} still runs");
        // Both tools would run for a minute; polling ends as soon as nothing runs.
        let calls = calls_in_flight_after(&server.base, Duration::from_secs(20)).await;
        assert_eq!((calls["running"].as_u64(), calls["waiting"].as_u64()), (Some(0), Some(0)), "{tool}: {calls}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn max_concurrent_calls_bounds_the_calls_that_run_and_queues_the_rest() {
    let dir = ToolsDir::with("slots", &[toolcell_tests::SLEEPER]);
    let server = HttpServer::start(&["--tools-dir", dir.path().to_str().unwrap(), "--max-concurrent-calls", "2"]).await;
    let client = client(&server.url).await;
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let peer = client.peer().clone();
            tokio::spawn(async move { peer.call_tool(call("sleeper", json!({}))).await })
        })
        .collect();
    let http = reqwest::Client::new();
    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    let expected = json!({"running": 2, "waiting": 1, "limit": 2});
    loop {
        let health: serde_json::Value =
            http.get(format!("{}/healthz", server.base)).send().await.unwrap().json().await.unwrap();
        if health["calls"] == expected {
            break;
        }
        assert!(tokio::time::Instant::now() < until, "{health}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Dropping the calls cancels them, queued or running.
    calls.iter().for_each(tokio::task::JoinHandle::abort);
    let calls = calls_in_flight_after(&server.base, Duration::from_secs(20)).await;
    assert_eq!(calls, json!({"running": 0, "waiting": 0, "limit": 2}));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_client_that_goes_away_stops_its_call() {
    let dir = ToolsDir::with("gone", &[toolcell_tests::SLEEPER]);
    for mode in [&[][..], &["--stateless"][..]] {
        let mut args = vec!["--tools-dir", dir.path().to_str().unwrap()];
        args.extend_from_slice(mode);
        let server = HttpServer::start(&args).await;
        let http = reqwest::Client::new();
        let post = |body: serde_json::Value, session: Option<&str>| {
            let request = post(&http, &server.url, &body).header("mcp-protocol-version", "2025-11-25");
            match session {
                Some(session) => request.header("mcp-session-id", session),
                None => request,
            }
        };
        let response = post(initialize(), None).send().await.unwrap();
        let session = response.headers().get("mcp-session-id").map(|id| id.to_str().unwrap().to_owned());
        response.text().await.unwrap();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        post(initialized, session.as_deref()).send().await.unwrap();

        // The sleeper would run for a minute; the client hangs up after half a second.
        let call =
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "sleeper", "arguments": {}}});
        let hung_up = post(call, session.as_deref()).timeout(Duration::from_millis(500)).send().await;
        let hung_up = match hung_up {
            Ok(response) => response.text().await.map(|_| ()),
            Err(err) => Err(err),
        };
        assert!(hung_up.is_err_and(|err| err.is_timeout()), "{mode:?}: the call was still running");
        let calls = calls_in_flight_after(&server.base, Duration::from_secs(20)).await;
        assert_eq!(calls["running"], 0, "{mode:?}: {calls}");
    }
}

#[tokio::test]
async fn request_headers_become_host_context_and_never_arguments() {
    let dir = ToolsDir::with("context", &[toolcell_tests::ECHO]);
    let server =
        HttpServer::start(&["--tools-dir", dir.path().to_str().unwrap(), "--context-header", "X-User-Id=user_id"])
            .await;
    let mut config = StreamableHttpClientTransportConfig::with_uri(server.url.clone());
    config.custom_headers.insert("x-user-id".parse().unwrap(), "alice".parse().unwrap());
    config.custom_headers.insert("x-other".parse().unwrap(), "ignored".parse().unwrap());
    let client = client_with(config, ClientLifecycleMode::Initialize).await;
    let tool = client.list_all_tools().await.unwrap().remove(0);
    assert!(!tool.input_schema["properties"].as_object().unwrap().contains_key("user_id"));
    let result = client.call_tool(call("echo", json!({"text": "hi", "count": 1}))).await.unwrap();
    assert_eq!(result.structured_content.unwrap()["host_context"], json!({"user_id": "alice"}));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn many_clients_call_at_once() {
    let server = HttpServer::start(&[]).await;
    let clients = futures_join(server.url.clone(), 8, 10).await;
    assert_eq!(clients, 80);
}

/// `clients` sessions, each making `calls` calls concurrently; returns how many succeeded.
async fn futures_join(url: String, clients: usize, calls: usize) -> usize {
    let tasks: Vec<_> = (0..clients)
        .map(|n| {
            let url = url.clone();
            tokio::spawn(async move {
                let client = client(&url).await;
                let mut ok = 0;
                let calls: Vec<_> = (0..calls)
                    .map(|i| client.call_tool(call("calculator", json!({"expression": format!("{n} * 100 + {i}")}))))
                    .collect();
                for (i, result) in calls.into_iter().enumerate() {
                    let result = result.await.unwrap();
                    assert_eq!(result.structured_content, Some(json!({"value": (n * 100 + i) as f64})));
                    ok += 1;
                }
                client.cancel().await.unwrap();
                ok
            })
        })
        .collect();
    let mut total = 0;
    for task in tasks {
        total += task.await.unwrap();
    }
    total
}

#[tokio::test]
async fn off_loopback_the_server_refuses_to_start_without_a_strong_token() {
    let output = serve_command(&["--transport", "http", "--listen", "0.0.0.0:0"]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("without a bearer token"));
    let output =
        serve_command(&["--transport", "http", "--listen", "127.0.0.1:0", "--token", "short"]).output().await.unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("at least 16"));
}

#[tokio::test]
async fn with_a_token_requests_without_it_get_401_and_with_it_are_served() {
    let server = HttpServer::start_on("0.0.0.0:0", &["--token", TOKEN]).await;
    let port = server.url.rsplit(':').next().unwrap().trim_end_matches("/mcp").to_owned();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let http = reqwest::Client::new();
    let post = |token: Option<&str>| {
        let mut request = post(&http, &url, &initialize());
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        request.send()
    };
    for token in [None, Some("correct-horse-battery-stapl3")] {
        let response = post(token).await.unwrap();
        assert_eq!(response.status(), 401, "{token:?}");
        assert_eq!(response.headers()["www-authenticate"], r#"Bearer realm="toolcell""#);
        assert_eq!(response.headers()["connection"], "close", "its body unread, the connection ends");
    }
    assert_eq!(post(Some(TOKEN)).await.unwrap().status(), 200);
    // Health probes need no token.
    assert_eq!(http.get(format!("http://127.0.0.1:{port}/healthz")).send().await.unwrap().status(), 200);

    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    config = config.auth_header(TOKEN);
    let client = client_with(config, ClientLifecycleMode::Initialize).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 8);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_foreign_origin_gets_403_and_a_loopback_origin_is_served() {
    let server = HttpServer::start(&[]).await;
    let http = reqwest::Client::new();
    let post = |origin: &str| post(&http, &server.url, &initialize()).header("origin", origin).send();
    assert_eq!(post("http://evil.example").await.unwrap().status(), 403);
    assert_eq!(post("http://localhost:6274").await.unwrap().status(), 200);
}

#[tokio::test]
async fn closing_a_session_is_204_no_content() {
    let server = HttpServer::start(&[]).await;
    let http = reqwest::Client::new();
    let response = post(&http, &server.url, &initialize()).send().await.unwrap();
    let session = response.headers()["mcp-session-id"].clone();
    let closed = http.delete(&server.url).header("mcp-session-id", session).send().await.unwrap();
    assert_eq!(closed.status(), 204);
}

#[tokio::test]
async fn an_oversized_body_is_refused() {
    let server = HttpServer::start(&["--max-body", "64KiB"]).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "calculator", "arguments": {"expression": "1".repeat(100_000)}}});
    let response = post(&reqwest::Client::new(), &server.url, &body).send().await.unwrap();
    assert_eq!(response.status(), 413);
}

#[tokio::test]
async fn shutdown_lets_a_call_in_flight_finish_then_exits() {
    let dir = ToolsDir::with("shutdown", &[toolcell_tests::SLEEPER]);
    std::fs::write(dir.path().join("toolcell.toml"), "[tools.sleeper]\nlimits = { timeout_ms = 1500 }\n").unwrap();
    let mut server = HttpServer::start(&["--tools-dir", dir.path().to_str().unwrap()]).await;
    let client = client(&server.url).await;
    let pending = tokio::spawn(async move {
        let result = client.call_tool(call("sleeper", json!({}))).await;
        (result, client)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pid = i32::try_from(server.child.id().unwrap()).unwrap();
    let status = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    assert!(status.success());
    let (result, client) = tokio::time::timeout(Duration::from_secs(30), pending).await.unwrap().unwrap();
    // The sleeper ran to its own 1.5 s limit: the call was answered, not cut off.
    assert_eq!(error_kind(&result.expect("the call in flight is answered")), "timeout");
    drop(client);
    let exited = tokio::time::timeout(Duration::from_secs(30), server.child.wait()).await.unwrap().unwrap();
    assert!(exited.success(), "{exited}");
}

// The front door under attack: connections, sessions and bodies from clients that never
// finish, or never stop. Where the caps per client address are the point, attackers connect
// from 127.0.0.2 (still loopback) and the well-behaved client from 127.0.0.1: Linux routes
// all of 127.0.0.0/8 to the loopback interface; macOS has only 127.0.0.1 unless aliased, so
// those tests run on Linux.

/// A connection to the server at `base` from the loopback address `source`.
async fn connect_from(source: [u8; 4], base: &str) -> tokio::net::TcpStream {
    let address: std::net::SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(std::net::SocketAddr::from((source, 0))).unwrap();
    socket.connect(address).await.unwrap()
}

/// Reads until the server closes the connection or `limit` passes: `Some(bytes)` when it
/// closed (a reset counts as closed), `None` when it was still open.
async fn read_until_closed(stream: &mut tokio::net::TcpStream, limit: Duration) -> Option<Vec<u8>> {
    use tokio::io::AsyncReadExt as _;
    let mut received = Vec::new();
    match tokio::time::timeout(limit, stream.read_to_end(&mut received)).await {
        Ok(_) => Some(received),
        Err(_) => None,
    }
}

/// Reads one response whose body has a Content-Length, without waiting for the connection
/// to close: `(status, head, body)`, or `None` if none came within `limit` or it broke.
async fn read_response(stream: &mut tokio::net::TcpStream, limit: Duration) -> Option<(u16, String, String)> {
    use tokio::io::AsyncReadExt as _;
    let read = async {
        let mut received = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            let n = stream.read(&mut buffer).await.ok()?;
            if n == 0 {
                return None;
            }
            received.extend_from_slice(&buffer[..n]);
            let text = String::from_utf8_lossy(&received).into_owned();
            let Some((head, body)) = text.split_once("\r\n\r\n") else { continue };
            let length = head
                .lines()
                .find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length:").map(|n| n.trim().to_owned()))
                .and_then(|n| n.parse::<usize>().ok())
                .unwrap_or(0);
            if body.len() >= length {
                let status = head.split(' ').nth(1)?.parse().ok()?;
                return Some((status, head.to_owned(), body.to_owned()));
            }
        }
    };
    tokio::time::timeout(limit, read).await.ok().flatten()
}

async fn write(stream: &mut tokio::net::TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt as _;
    stream.write_all(bytes).await
}

fn healthz_request(base: &str) -> String {
    format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", base.trim_start_matches("http://"))
}

#[tokio::test]
async fn half_sent_requests_and_idle_connections_are_closed_and_a_client_with_the_token_is_served() {
    let server =
        HttpServer::start_with_env("127.0.0.1:0", &["--token", TOKEN], &[("TOOLCELL_HEADER_TIMEOUT", "1s")]).await;
    // Half a request line each: hyper's defaults waited for the rest forever.
    let mut half_sent = Vec::new();
    for _ in 0..200 {
        let mut stream = connect_from([127, 0, 0, 1], &server.base).await;
        write(&mut stream, b"POST /mcp HT").await.unwrap();
        half_sent.push(stream);
    }
    // A keep-alive connection that made one request and then says nothing.
    let mut idle = connect_from([127, 0, 0, 1], &server.base).await;
    write(&mut idle, healthz_request(&server.base).as_bytes()).await.unwrap();
    let (status, _, _) = read_response(&mut idle, Duration::from_secs(20)).await.expect("healthz answers");
    assert_eq!(status, 200);

    // While they are open, a client with the token is served.
    let mut config = StreamableHttpClientTransportConfig::with_uri(server.url.clone());
    config = config.auth_header(TOKEN);
    let client = client_with(config, ClientLifecycleMode::Initialize).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 8);
    client.cancel().await.unwrap();

    // The header timeout (1 s here) closes every one of them.
    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    for (n, stream) in half_sent.iter_mut().chain(std::iter::once(&mut idle)).enumerate() {
        let left = until.saturating_duration_since(tokio::time::Instant::now());
        assert!(read_until_closed(stream, left).await.is_some(), "connection {n} is still open after 20 s");
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn connections_past_the_cap_per_client_are_refused_and_others_are_served() {
    let server = HttpServer::start_with_env("127.0.0.1:0", &[], &[("TOOLCELL_MAX_CONNECTIONS_PER_CLIENT", "8")]).await;
    // Eight keep-alive connections from one address, each served once and then held open.
    let mut held = Vec::new();
    for _ in 0..8 {
        let mut stream = connect_from([127, 0, 0, 2], &server.base).await;
        write(&mut stream, healthz_request(&server.base).as_bytes()).await.unwrap();
        let (status, _, _) = read_response(&mut stream, Duration::from_secs(20)).await.expect("healthz answers");
        assert_eq!(status, 200);
        held.push(stream);
    }
    // The ninth from the same address is refused with a reason and a way out.
    let mut ninth = connect_from([127, 0, 0, 2], &server.base).await;
    write(&mut ninth, healthz_request(&server.base).as_bytes()).await.unwrap();
    let (status, head, body) = read_response(&mut ninth, Duration::from_secs(20)).await.expect("a refusal");
    assert_eq!(status, 429, "{head}\n{body}");
    assert!(head.to_ascii_lowercase().contains("retry-after:"), "{head}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    let message = error["error"].as_str().unwrap();
    assert!(message.contains("8 open connections") && message.contains("--max-connections-per-client"), "{message}");
    // The refused connection is closed, not kept.
    assert!(read_until_closed(&mut ninth, Duration::from_secs(20)).await.is_some());

    // Another client is served, over HTTP and MCP.
    let http = reqwest::Client::new();
    assert_eq!(http.get(format!("{}/healthz", server.base)).send().await.unwrap().status(), 200);
    let client = client(&server.url).await;
    let result = client.call_tool(call("calculator", json!({"expression": "6 * 7"}))).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"value": 42.0})));
    client.cancel().await.unwrap();
    drop(held);
}

/// Opens a session with a raw `initialize` from `http`: the response's status, session id
/// and body.
async fn open_session(http: &reqwest::Client, url: &str) -> (u16, Option<String>, String) {
    let response = post(http, url, &initialize()).send().await.unwrap();
    let status = response.status().as_u16();
    let session = response.headers().get("mcp-session-id").map(|id| id.to_str().unwrap().to_owned());
    (status, session, response.text().await.unwrap())
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn sessions_past_the_caps_are_refused_with_a_clear_error() {
    let server = HttpServer::start_with_env(
        "127.0.0.1:0",
        &[],
        &[("TOOLCELL_MAX_SESSIONS", "5"), ("TOOLCELL_MAX_SESSIONS_PER_CLIENT", "3")],
    )
    .await;
    let http = reqwest::Client::new();
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let (status, session, body) = open_session(&http, &server.url).await;
        assert_eq!(status, 200, "{body}");
        sessions.push(session.expect("a session id"));
    }
    // A fourth from the same address: 429, and what to do.
    let (status, session, body) = open_session(&http, &server.url).await;
    assert_eq!((status, session), (429, None), "{body}");
    let message = serde_json::from_str::<serde_json::Value>(&body).unwrap()["error"].as_str().unwrap().to_owned();
    assert!(message.contains("3 open sessions") && message.contains("DELETE"), "{message}");

    // Closing one frees its place.
    let closed = http.delete(&server.url).header("mcp-session-id", &sessions[0]).send().await.unwrap();
    assert_eq!(closed.status(), 204);
    let (status, _, body) = open_session(&http, &server.url).await;
    assert_eq!(status, 200, "{body}");

    // Another address may open the two left of the five, then the server is full: 503.
    let other = reqwest::Client::builder().local_address(std::net::IpAddr::from([127, 0, 0, 2])).build().unwrap();
    for _ in 0..2 {
        let (status, _, body) = open_session(&other, &server.url).await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, _, body) = open_session(&other, &server.url).await;
    assert_eq!(status, 503, "{body}");
    let message = serde_json::from_str::<serde_json::Value>(&body).unwrap()["error"].as_str().unwrap().to_owned();
    assert!(message.contains("5 open sessions") && message.contains("--max-sessions"), "{message}");
}

#[tokio::test]
async fn an_idle_session_ends_and_frees_its_place() {
    let server = HttpServer::start_with_env(
        "127.0.0.1:0",
        &[],
        &[("TOOLCELL_SESSION_IDLE", "1s"), ("TOOLCELL_MAX_SESSIONS_PER_CLIENT", "1")],
    )
    .await;
    let http = reqwest::Client::new();
    let (status, session, body) = open_session(&http, &server.url).await;
    assert_eq!(status, 200, "{body}");
    let session = session.unwrap();
    // The one place this client has comes back once its session has been idle for a second
    // (a refused `initialize` is no request of that session).
    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (status, _, body) = open_session(&http, &server.url).await;
        if status == 200 {
            break;
        }
        assert_eq!(status, 429, "{body}");
        assert!(tokio::time::Instant::now() < until, "the idle session still holds its place after 20 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // And the idle session is gone: its client must start a new one.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let response = post(&http, &server.url, &list)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn a_session_has_at_most_one_event_stream() {
    let server = HttpServer::start(&[]).await;
    let http = reqwest::Client::new();
    let (status, session, body) = open_session(&http, &server.url).await;
    assert_eq!(status, 200, "{body}");
    let session = session.unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(&http, &server.url, &initialized)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    let stream = || {
        http.get(&server.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
    };
    let first = stream().await.unwrap();
    assert_eq!(first.status(), 200);
    for _ in 0..3 {
        let second = stream().await.unwrap();
        assert_eq!(second.status(), 409);
        let body: serde_json::Value = second.json().await.unwrap();
        assert!(body["error"].as_str().unwrap().contains("already has an open event stream"), "{body}");
    }
    drop(first);
}

#[tokio::test]
async fn large_slow_bodies_are_refused_past_the_byte_budget_and_a_normal_call_succeeds() {
    let server = HttpServer::start_with_env(
        "127.0.0.1:0",
        &["--max-body", "256KiB"],
        &[("TOOLCELL_MAX_BUFFERED_BYTES", "1MiB")],
    )
    .await;
    let host = server.base.trim_start_matches("http://").to_owned();
    let head = |length: usize| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {length}\r\n\r\n"
        )
    };
    // Bodies one byte short of their length, each nearly the largest accepted, held open:
    // the server buffered every one of them, waiting for the last byte.
    let length = 256 * 1024;
    let (mut held, mut refused) = (Vec::new(), 0);
    for _ in 0..8 {
        let mut stream = connect_from([127, 0, 0, 1], &server.base).await;
        let mut request = head(length).into_bytes();
        request.resize(request.len() + length - 1, b' ');
        let written = tokio::time::timeout(Duration::from_secs(5), write(&mut stream, &request)).await;
        if !matches!(written, Ok(Ok(()))) {
            refused += 1;
            continue;
        }
        match read_response(&mut stream, Duration::from_secs(2)).await {
            Some((status, head, _)) => {
                assert_eq!(status, 503, "{head}");
                refused += 1;
            }
            // Still waiting for its last byte, or reset while refusing.
            None if read_until_closed(&mut stream, Duration::from_millis(100)).await.is_none() => held.push(stream),
            None => refused += 1,
        }
    }
    assert!(refused > 0, "all 8 bodies of 256 KiB were buffered at once");
    assert!(held.len() <= 4, "{} bodies held within a 1 MiB budget", held.len());

    // A request that announces a large body is refused before it sends it: 503, and when to retry.
    let mut probe = connect_from([127, 0, 0, 1], &server.base).await;
    write(&mut probe, head(length).as_bytes()).await.unwrap();
    let (status, head, body) = read_response(&mut probe, Duration::from_secs(20)).await.expect("a refusal");
    assert_eq!(status, 503, "{head}\n{body}");
    assert!(head.to_ascii_lowercase().contains("retry-after:"), "{head}");
    let message = serde_json::from_str::<serde_json::Value>(&body).unwrap()["error"].as_str().unwrap().to_owned();
    assert!(message.contains("retry"), "{message}");

    // A normal call is still served.
    let client = client(&server.url).await;
    let result = client.call_tool(call("calculator", json!({"expression": "6 * 7"}))).await.unwrap();
    assert_eq!(result.structured_content, Some(json!({"value": 42.0})));
    client.cancel().await.unwrap();
    drop(held);
}
