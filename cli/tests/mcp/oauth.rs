//! `serve --transport http` as an OAuth resource server, against an issuer whose keys the
//! test holds (`toolcell_tests::issuer`): metadata and challenges, every way a token can be
//! wrong, rotation, scopes as the tools a caller sees and calls, and the caller's identity in
//! the host context. (The peer tests do it again with a real authorization server and SDK
//! clients that run the OAuth flow.)

use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::service::ClientLifecycleMode;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use toolcell_tests::issuer::Issuer;

use crate::common::{HttpServer, ToolsDir, call, initialize, post};

/// A port free a moment ago: the resource URL names it before the server listens on it.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

struct Served {
    issuer: Issuer,
    /// Kept so that the server runs as long as the test (it stops when dropped).
    _server: HttpServer,
    resource: String,
}

impl Served {
    async fn start(extra: &[&str]) -> Self {
        let issuer = Issuer::start().await;
        let port = free_port();
        let resource = format!("http://127.0.0.1:{port}/mcp");
        let listen = format!("127.0.0.1:{port}");
        let mut args = vec![
            "--oauth-issuer",
            &issuer.url,
            "--oauth-resource",
            &resource,
            "--oauth-scope",
            "tools.math=calculator,unit_convert",
            "--oauth-scope",
            "tools.all=*",
        ];
        args.extend_from_slice(extra);
        let server = HttpServer::start_on(&listen, &args).await;
        Self { issuer, _server: server, resource }
    }

    fn claims(&self, scope: &str) -> Value {
        json!({
            "iss": self.issuer.url, "aud": self.resource, "sub": "alice", "client_id": "agent-7",
            "scope": scope, "iat": now(), "exp": now() + 300,
        })
    }

    fn token(&self, scope: &str) -> String {
        self.issuer.token(&self.claims(scope))
    }

    async fn list(&self, token: &str) -> Vec<String> {
        let config = StreamableHttpClientTransportConfig::with_uri(self.resource.clone()).auth_header(token);
        let client = rmcp::service::ClientServiceExt::serve_with_lifecycle(
            (),
            StreamableHttpClientTransport::from_config(config),
            ClientLifecycleMode::Initialize,
        )
        .await
        .unwrap();
        let names = client.list_all_tools().await.unwrap().into_iter().map(|tool| tool.name.to_string()).collect();
        client.cancel().await.unwrap();
        names
    }

    /// A raw `initialize` with `token`: its status and `WWW-Authenticate`.
    async fn knock(&self, token: Option<&str>) -> (u16, String, Value) {
        let http = reqwest::Client::new();
        let mut request = post(&http, &self.resource, &initialize());
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let challenge = response
            .headers()
            .get("www-authenticate")
            .map(|value| value.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let body = response.json().await.unwrap_or(Value::Null);
        (status, challenge, body)
    }
}

#[tokio::test]
async fn the_metadata_and_the_challenge_say_where_to_get_a_token() {
    let served = Served::start(&[]).await;
    let port = served.resource.trim_end_matches("/mcp").rsplit(':').next().unwrap().to_owned();
    let metadata_url = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
    let (status, challenge, _) = served.knock(None).await;
    assert_eq!(status, 401);
    assert_eq!(challenge, format!(r#"Bearer resource_metadata="{metadata_url}", scope="tools.all tools.math""#));
    let metadata: Value = reqwest::get(&metadata_url).await.unwrap().json().await.unwrap();
    assert_eq!(metadata["resource"], served.resource.as_str());
    assert_eq!(metadata["authorization_servers"], json!([served.issuer.url]));
    assert_eq!(metadata["scopes_supported"], json!(["tools.all", "tools.math"]));
    // The root well-known path too (clients that know only the host), and no token needed.
    let root: Value = reqwest::get(format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(root, metadata);
    // `/metrics` is behind the token as `/mcp` is.
    let metrics = reqwest::get(format!("http://127.0.0.1:{port}/metrics")).await.unwrap();
    assert_eq!(metrics.status(), 401);
}

#[tokio::test]
async fn tokens_that_are_not_this_servers_are_refused_and_say_why() {
    let served = Served::start(&[]).await;
    let with = |field: &str, value: Value| {
        let mut claims = served.claims("tools.all");
        claims[field] = value;
        served.issuer.token(&claims)
    };
    let cases = [
        ("expired", with("exp", json!(now() - 600)), "the token has expired"),
        ("wrong audience", with("aud", json!("http://127.0.0.1:1/mcp")), "its audience does not include"),
        ("wrong issuer", with("iss", json!("http://127.0.0.1:2")), "was issued by"),
        (
            "alg none",
            Issuer::unsigned(&json!({"alg": "none", "typ": "at+jwt"}), &served.claims("tools.all")),
            "algorithm `none` is not accepted",
        ),
        (
            "HS256",
            served.issuer.token_with_header(&json!({"alg": "HS256", "kid": "key-1"}), &served.claims("tools.all")),
            "algorithm `HS256` is not accepted",
        ),
        (
            "unknown key",
            served.issuer.token_with_header(&json!({"alg": "ES256", "kid": "forged"}), &served.claims("tools.all")),
            "key `forged` is not among the issuer's keys",
        ),
        ("not a JWT", "opaque-token-0123456789".to_owned(), "not a JWT"),
    ];
    for (case, token, says) in cases {
        let (status, challenge, body) = served.knock(Some(&token)).await;
        assert_eq!(status, 401, "{case}");
        assert!(challenge.contains(r#"error="invalid_token""#), "{case}: {challenge}");
        assert!(body["error"].as_str().unwrap().contains(says), "{case}: {body}");
        assert!(!challenge.contains(&token) && !body.to_string().contains(&token), "{case}: the token is not echoed");
    }
    let (status, _, _) = served.knock(Some(&served.token("tools.all"))).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_rotated_key_is_fetched_once_and_made_up_keys_do_not_flood_the_issuer() {
    let served = Served::start(&[]).await;
    assert_eq!(served.knock(Some(&served.token("tools.all"))).await.0, 200);
    let fetched = served.issuer.fetches();
    served.issuer.rotate();
    assert_eq!(served.knock(Some(&served.token("tools.all"))).await.0, 200, "the new key was fetched");
    assert_eq!(served.issuer.fetches(), fetched + 1);
    // Fifty tokens naming keys that do not exist: a few fetches at most, then refusals from
    // the cache.
    for n in 0..50 {
        let header = json!({"alg": "ES256", "kid": format!("made-up-{n}")});
        let token = served.issuer.token_with_header(&header, &served.claims("tools.all"));
        assert_eq!(served.knock(Some(&token)).await.0, 401);
    }
    assert!(served.issuer.fetches() <= fetched + 3, "{} fetches", served.issuer.fetches());
}

#[tokio::test]
async fn each_caller_sees_and_calls_only_the_tools_its_scopes_grant() {
    let served = Served::start(&[]).await;
    let math = served.token("openid tools.math");
    assert_eq!(served.list(&math).await, ["calculator", "unit_convert"]);
    assert_eq!(served.list(&served.token("tools.all")).await.len(), 8);
    assert!(served.list(&served.token("openid")).await.is_empty(), "a token granting no tool lists none");

    // A granted tool is served.
    let config = StreamableHttpClientTransportConfig::with_uri(served.resource.clone()).auth_header(math.clone());
    let client = rmcp::service::ClientServiceExt::serve_with_lifecycle(
        (),
        StreamableHttpClientTransport::from_config(config),
        ClientLifecycleMode::Initialize,
    )
    .await
    .unwrap();
    let result = client.call_tool(call("calculator", json!({"expression": "6 * 7"}))).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    client.cancel().await.unwrap();

    // One some other scope grants: MCP's scope challenge, naming the scope to ask for.
    let http = reqwest::Client::new();
    let message = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "files", "arguments": {"operation": "list", "path": "/"}}});
    let response =
        post(&http, &served.resource, &message).header("authorization", format!("Bearer {math}")).send().await.unwrap();
    assert_eq!(response.status(), 403);
    let challenge = response.headers()["www-authenticate"].to_str().unwrap().to_owned();
    assert!(challenge.starts_with(r#"Bearer error="insufficient_scope", scope="tools.all""#), "{challenge}");
}

#[tokio::test]
async fn the_verified_caller_reaches_the_host_context_and_a_header_cannot_pose_as_it() {
    let dir = ToolsDir::with("oauth-context", &[toolcell_tests::ECHO]);
    let served =
        Served::start(&["--tools-dir", dir.path().to_str().unwrap(), "--context-header", "X-Caller=caller"]).await;
    let token = served.token("tools.all");
    let mut config = StreamableHttpClientTransportConfig::with_uri(served.resource.clone()).auth_header(token);
    config.custom_headers.insert("x-caller".parse().unwrap(), "mallory".parse().unwrap());
    let client = rmcp::service::ClientServiceExt::serve_with_lifecycle(
        (),
        StreamableHttpClientTransport::from_config(config),
        ClientLifecycleMode::Initialize,
    )
    .await
    .unwrap();
    let tool = client.list_all_tools().await.unwrap().into_iter().find(|tool| tool.name == "echo").unwrap();
    assert!(!serde_json::to_string(&*tool.input_schema).unwrap().contains("caller"), "never in the schema");
    let result = client.call_tool(call("echo", json!({"text": "hi", "count": 1}))).await.unwrap();
    let context = &result.structured_content.unwrap()["host_context"];
    assert_eq!(context["caller"], json!({"subject": "alice", "client_id": "agent-7", "scopes": ["tools.all"]}));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn oauth_settings_that_cannot_work_stop_the_server_at_start() {
    let output = crate::common::serve_command(&[
        "--transport",
        "http",
        "--listen",
        "127.0.0.1:0",
        "--oauth-issuer",
        "http://id.example.com",
        "--oauth-resource",
        "http://127.0.0.1:8000/mcp",
        "--oauth-scope",
        "tools=*",
    ])
    .output()
    .await
    .unwrap();
    assert_eq!(output.status.code(), Some(2), "a usage error: {}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--oauth-issuer: `http://id.example.com` is not https"));
    let output = crate::common::serve_command(&["--transport", "http", "--oauth-issuer", "https://id.example.com"])
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "the resource and a scope are required");
}

/// A raw POST of `message` with `token` (and a session): its status and body.
async fn raw(url: &str, token: &str, session: Option<&str>, message: &Value) -> (u16, String) {
    let http = reqwest::Client::new();
    let mut request = post(&http, url, message).header("authorization", format!("Bearer {token}"));
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25");
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

#[tokio::test]
async fn a_tool_that_calls_others_reaches_only_the_callers_tools() {
    // `python` may call `regex` by the policy; a token granting `python` alone must not reach it.
    let dir = std::env::temp_dir().join(format!("toolcell-oauth-reach-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, "[tools.python]\ncall_tools = [\"regex\"]\n").unwrap();
    let served = Served::start(&["--policy", policy.to_str().unwrap(), "--oauth-scope", "tools.py=python"]).await;
    let run = |token: String| {
        let resource = served.resource.clone();
        async move {
            let config = StreamableHttpClientTransportConfig::with_uri(resource).auth_header(token);
            let client = rmcp::service::ClientServiceExt::serve_with_lifecycle(
                (),
                StreamableHttpClientTransport::from_config(config),
                ClientLifecycleMode::Initialize,
            )
            .await
            .unwrap();
            let code = json!({"code": "tools.regex(operation='find', pattern='an', text='banana')"});
            let result = client.call_tool(call("python", code)).await.unwrap();
            client.cancel().await.unwrap();
            serde_json::to_string(&result).unwrap()
        }
    };
    let limited = run(served.token("tools.py")).await;
    assert!(limited.contains("may call no tools here"), "{limited}");
    let everything = run(served.token("tools.all")).await;
    assert!(!everything.contains("may call no tools here") && everything.contains("\"an\""), "{everything}");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_session_answers_only_the_caller_that_opened_it() {
    let served = Served::start(&[]).await;
    let http = reqwest::Client::new();
    let alice = served.issuer.token(&json!({"iss": served.issuer.url, "aud": served.resource, "sub": "alice",
        "scope": "tools.all", "exp": now() + 300}));
    let opened = post(&http, &served.resource, &initialize())
        .header("authorization", format!("Bearer {alice}"))
        .send()
        .await
        .unwrap();
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let mallory = served.token("tools.all");
    let (status, _) = raw(&served.resource, &mallory, Some(&session), &list).await;
    assert_eq!(status, 404, "another caller's requests find no session");
    let closed = http
        .delete(&served.resource)
        .header("authorization", format!("Bearer {mallory}"))
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert!(!closed.status().is_success(), "nor can it close it: {}", closed.status());
    let (status, body) = raw(&served.resource, &alice, Some(&session), &list).await;
    assert_eq!(status, 200, "{body}");
}
