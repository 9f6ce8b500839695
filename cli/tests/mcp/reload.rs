//! Hot reload seen by clients: `notifications/tools/list_changed` when a file is added,
//! replaced or removed; a broken file keeps the previous version serving. And seen in the
//! server's log: one reload per change, none for reading or touching a file, and a new
//! component loads while every call slot is busy.

use std::time::{Duration, SystemTime};

use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;
use tokio::sync::mpsc;

use crate::common::{HttpServer, ToolsDir, call, serve_command, text};

/// What the server logs for each reload that built a new version.
const RELOADED: &str = "tools reloaded";

/// A client that reports each list-change notification on a channel.
struct Listener(mpsc::UnboundedSender<()>);

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.0.send(());
    }
}

async fn next_notification(changes: &mut mpsc::UnboundedReceiver<()>) {
    tokio::time::timeout(Duration::from_secs(60), changes.recv())
        .await
        .expect("notifications/tools/list_changed arrives")
        .expect("the client is still connected");
}

async fn names(client: &RunningService<RoleClient, Listener>) -> Vec<String> {
    client.list_all_tools().await.unwrap().into_iter().map(|tool| tool.name.into_owned()).collect()
}

#[tokio::test]
async fn over_stdio_clients_hear_of_added_replaced_and_removed_tools() {
    let dir = ToolsDir::with("reload-stdio", &[toolcell_tests::ECHO]);
    let (transport, _) =
        TokioChildProcess::builder(serve_command(&["--no-builtins", "--tools-dir", dir.path().to_str().unwrap()]))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
    let (sender, mut changes) = mpsc::unbounded_channel();
    let client = rmcp::ServiceExt::serve(Listener(sender), transport).await.unwrap();
    assert_eq!(names(&client).await, ["echo"]);

    std::fs::copy(toolcell_tests::COUNTER, dir.path().join("counter.wasm")).unwrap();
    next_notification(&mut changes).await;
    assert_eq!(names(&client).await, ["counter", "echo"]);

    std::fs::copy(toolcell_tests::ECHO_DUPLICATE, dir.path().join("echo.wasm")).unwrap();
    next_notification(&mut changes).await;
    let echo = client.list_all_tools().await.unwrap().into_iter().find(|tool| tool.name == "echo").unwrap();
    assert!(echo.description.unwrap().contains("Also claims"), "the replacement serves");

    std::fs::remove_file(dir.path().join("counter.wasm")).unwrap();
    next_notification(&mut changes).await;
    assert_eq!(names(&client).await, ["echo"]);

    // A broken replacement: nothing changes for the client, and the tool keeps working.
    std::fs::write(dir.path().join("echo.wasm"), "not a component").unwrap();
    std::fs::copy(toolcell_tests::COUNTER, dir.path().join("counter.wasm")).unwrap();
    next_notification(&mut changes).await;
    assert_eq!(names(&client).await, ["counter", "echo"]);
    let result = client.call_tool(call("echo", json!({"text": "kept"}))).await.unwrap();
    assert_eq!(text(&result), "\"kept\"", "the replacement from before the broken write still serves");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn over_http_sessions_and_2026_subscriptions_hear_of_changes() {
    let dir = ToolsDir::with("reload-http", &[toolcell_tests::ECHO]);
    let server = HttpServer::start(&["--no-builtins", "--tools-dir", dir.path().to_str().unwrap()]).await;

    let (sender, mut session_changes) = mpsc::unbounded_channel();
    let transport = StreamableHttpClientTransport::from_uri(server.url.clone());
    let session = rmcp::ServiceExt::serve(Listener(sender), transport).await.unwrap();

    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let transport =
        StreamableHttpClientTransport::from_config(StreamableHttpClientTransportConfig::with_uri(server.url.clone()));
    let (unused, _) = mpsc::unbounded_channel();
    let modern = Listener(unused).serve_with_lifecycle(transport, lifecycle).await.unwrap();
    let mut subscription =
        modern.peer().listen(SubscriptionFilter::builder().tools_list_changed().build()).await.unwrap();

    std::fs::copy(toolcell_tests::COUNTER, dir.path().join("counter.wasm")).unwrap();
    next_notification(&mut session_changes).await;
    let notification = tokio::time::timeout(Duration::from_secs(60), subscription.next()).await.unwrap().unwrap();
    assert!(matches!(notification, Some(ServerNotification::ToolListChangedNotification(_))), "{notification:?}");
    assert_eq!(names(&session).await, ["counter", "echo"]);
    assert_eq!(modern.list_all_tools().await.unwrap().len(), 2);
    session.cancel().await.unwrap();
    modern.cancel().await.unwrap();
}

/// `toolcell serve --transport http` over `dir`, logging each reload and each diagnostic.
async fn logging_server(dir: &ToolsDir, args: &[&str]) -> HttpServer {
    let mut all = vec!["--no-builtins", "--tools-dir", dir.path().to_str().unwrap()];
    all.extend_from_slice(args);
    HttpServer::start_with_env("127.0.0.1:0", &all, &[("TOOLCELL_LOG", "toolcell_mcp::reload=info,warn")]).await
}

/// The lines logged over the next `window` that contain `text`.
async fn logged_within(log: &mut mpsc::UnboundedReceiver<String>, text: &str, window: Duration) -> Vec<String> {
    let until = tokio::time::Instant::now() + window;
    let mut found = Vec::new();
    while let Ok(Some(line)) = tokio::time::timeout_at(until, log.recv()).await {
        if line.contains(text) {
            found.push(line);
        }
    }
    found
}

/// Waits (at most a minute: compiling may be slow here) for the next line containing `text`.
async fn next_logged(log: &mut mpsc::UnboundedReceiver<String>, text: &str) -> String {
    let until = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        match tokio::time::timeout_at(until, log.recv()).await {
            Ok(Some(line)) if line.contains(text) => return line,
            Ok(Some(_)) => {}
            Ok(None) => panic!("the server exited"),
            Err(_) => panic!("no `{text}` logged within a minute"),
        }
    }
}

#[tokio::test]
async fn one_edit_reloads_exactly_once() {
    let dir = ToolsDir::with("reload-once", &[toolcell_tests::ECHO]);
    let mut server = logging_server(&dir, &[]).await;
    std::fs::copy(toolcell_tests::COUNTER, dir.path().join("counter.wasm")).unwrap();

    let first = next_logged(&mut server.log, RELOADED).await;
    assert!(first.contains("tools=2"), "{first}");
    // Each reload reads every component: reading must not be taken for a change.
    let again = logged_within(&mut server.log, RELOADED, Duration::from_secs(10)).await;
    assert_eq!(again, Vec::<String>::new(), "one edit, one reload");
}

#[tokio::test]
async fn reading_or_touching_the_files_reloads_nothing() {
    let dir = ToolsDir::with("reload-touch", &[toolcell_tests::ECHO]);
    let mut server = logging_server(&dir, &[]).await;
    for file in ["echo.wasm", "toolcell.toml"] {
        let path = dir.path().join(file);
        std::fs::read(&path).unwrap();
        let opened = std::fs::File::options().append(true).open(&path).unwrap();
        opened.set_modified(SystemTime::now()).unwrap();
    }
    let reloads = logged_within(&mut server.log, RELOADED, Duration::from_secs(5)).await;
    assert_eq!(reloads, Vec::<String>::new(), "nothing changed");

    // Still watching: a change reloads.
    std::fs::copy(toolcell_tests::COUNTER, dir.path().join("counter.wasm")).unwrap();
    next_logged(&mut server.log, RELOADED).await;
}

#[tokio::test]
async fn with_every_slot_busy_a_new_component_still_loads() {
    let dir = ToolsDir::with("reload-busy", &[toolcell_tests::SLEEPER]);
    let mut server = logging_server(&dir, &["--max-concurrent-calls", "1"]).await;
    let client =
        rmcp::ServiceExt::serve((), StreamableHttpClientTransport::from_uri(server.url.clone())).await.unwrap();
    let peer = client.peer().clone();
    let sleeping = tokio::spawn(async move { peer.call_tool(call("sleeper", json!({}))).await });
    let http = reqwest::Client::new();
    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let health: serde_json::Value =
            http.get(format!("{}/healthz", server.base)).send().await.unwrap().json().await.unwrap();
        if health["calls"]["running"] == 1 {
            break;
        }
        assert!(tokio::time::Instant::now() < until, "the sleeper runs: {health}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    std::fs::copy(toolcell_tests::COUNTER, dir.path().join("counter.wasm")).unwrap();
    let reloaded = next_logged(&mut server.log, RELOADED).await;
    let tools: Vec<String> =
        client.list_all_tools().await.unwrap().into_iter().map(|tool| tool.name.into_owned()).collect();
    assert_eq!(tools, ["counter", "sleeper"], "{reloaded}");
    sleeping.abort();
    client.cancel().await.unwrap();
}
