//! The entries `toolcell client-config` prints for MCP hosts, used as a host would: the
//! command started with a desktop app's PATH (no ~/.cargo/bin), the URL reached with the
//! token the entry refers to.

use std::process::Stdio;

use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};

use crate::common::{HttpServer, TOOLCELL, ToolsDir, call};

/// What a desktop app started from a graphical session has on its PATH.
const GUI_PATH: &str = "/usr/bin:/bin";

const CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache");

/// `toolcell [global...] client-config ARGS...`, its JSON.
fn client_config(global: &[&str], args: &[&str]) -> Value {
    let output = std::process::Command::new(TOOLCELL)
        .args(global)
        .arg("client-config")
        .args(args)
        .env_remove("TOOLCELL_TOOLS_DIR")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test]
async fn a_stdio_entry_starts_the_server_with_a_desktop_apps_path() {
    let dir = ToolsDir::with("client-config", &[toolcell_tests::ECHO]);
    let global = ["--tools-dir", dir.path().to_str().unwrap(), "--cache-dir", CACHE];
    for (host, servers) in [("claude-desktop", "mcpServers"), ("vscode", "servers"), ("cursor", "mcpServers")] {
        let config = client_config(&global, &["--client", host]);
        let entry = &config[servers]["toolcell"];
        let command = entry["command"].as_str().unwrap();
        assert!(std::path::Path::new(command).is_absolute(), "{host}: {entry}");
        let args: Vec<&str> = entry["args"].as_array().unwrap().iter().map(|arg| arg.as_str().unwrap()).collect();
        assert_eq!(args, [global.as_slice(), &["serve"]].concat(), "{host}");
        if host == "vscode" {
            assert_eq!(entry["type"], "stdio");
        }
        // As the host starts it: nothing of this shell's environment but what the entry says.
        let mut server = tokio::process::Command::new(command);
        server.args(&args).env_clear().env("PATH", GUI_PATH).env("HOME", std::env::temp_dir());
        for (name, value) in entry["env"].as_object().unwrap() {
            server.env(name, value.as_str().unwrap());
        }
        server.kill_on_drop(true);
        let (transport, _) = TokioChildProcess::builder(server).stderr(Stdio::null()).spawn().unwrap();
        let client = rmcp::ServiceExt::serve((), transport).await.unwrap_or_else(|err| panic!("{host}: {err}"));
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 9, "{host}: the folder's tool beside the eight built-in ones");
        let echoed = client.call_tool(call("echo", json!({"text": "from a host", "count": 1}))).await.unwrap();
        assert_eq!(echoed.is_error, Some(false), "{host}: {echoed:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn an_http_entry_reaches_the_server_with_the_token_it_names_and_never_holds_it() {
    const TOKEN: &str = "client-config-token-5f2a9c";
    let server = HttpServer::start(&["--token", TOKEN]).await;
    for (host, servers, placeholder) in
        [("vscode", "servers", "${input:toolcell-token}"), ("cursor", "mcpServers", "${env:TOOLCELL_TOKEN}")]
    {
        let config = client_config(&[], &["--client", host, "--transport", "http", "--url", &server.url]);
        assert!(!config.to_string().contains(TOKEN), "{host}: {config}");
        let entry = &config[servers]["toolcell"];
        assert_eq!(entry["url"], server.url.as_str(), "{host}");
        let authorization = entry["headers"]["Authorization"].as_str().unwrap();
        assert_eq!(authorization, format!("Bearer {placeholder}"), "{host}");
        if host == "vscode" {
            assert_eq!(config["inputs"][0]["id"], "toolcell-token");
            assert_eq!(config["inputs"][0]["password"], true);
        }
        // As the host sends it, the placeholder filled in.
        let header = authorization.replace(placeholder, TOKEN);
        let transport_config = StreamableHttpClientTransportConfig::with_uri(server.url.clone())
            .auth_header(header.strip_prefix("Bearer ").unwrap().to_owned());
        let transport = StreamableHttpClientTransport::from_config(transport_config);
        let client = rmcp::ServiceExt::serve((), transport).await.unwrap();
        assert_eq!(client.list_all_tools().await.unwrap().len(), 8, "{host}");
        client.cancel().await.unwrap();
    }
    // Claude Desktop's file has no remote servers; a plain-HTTP URL off this machine would
    // carry the token in clear.
    for (host, url, said) in [
        ("claude-desktop", server.url.as_str(), "custom connector"),
        ("cursor", "http://example.com:8000/mcp", "behind TLS"),
    ] {
        let output = std::process::Command::new(TOOLCELL)
            .args(["client-config", "--client", host, "--transport", "http", "--url", url])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{host}");
        assert!(String::from_utf8_lossy(&output.stderr).contains(said), "{host}");
    }
}
