//! Hot reload seen by clients: `notifications/tools/list_changed` when a file is added,
//! replaced or removed; a broken file keeps the previous version serving.

use std::time::Duration;

use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;
use tokio::sync::mpsc;

use crate::common::{HttpServer, ToolsDir, call, serve_command, text};

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
    let (transport, _) = TokioChildProcess::builder(serve_command(&["--tools-dir", dir.path().to_str().unwrap()]))
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
    let server = HttpServer::start(&["--tools-dir", dir.path().to_str().unwrap()]).await;

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
