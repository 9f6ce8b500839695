//! Over streamable HTTP: sessions and the stateless 2026-07-28 revision, cancellation,
//! the token and Origin checks, host context from headers, many clients, shutdown.

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
