//! Capabilities under a policy: granted directories, environment variables (as secrets) and
//! the HTTP allow-list, each with the attacks that must fail, plus the two tools that need
//! grants, `files` and `http_fetch`. (Long: one test per grant and per attack on it.)

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};
use toolcell_runtime::{
    CallError, LimitOverrides, Policy, Runtime, ToolCall, ToolOutput,
    policy::{DirGrant, EnvGrant, Grants, REDACTED},
};

use crate::common::{COMPILE_CACHE, kind, value};

/// The secret granted to `env_reader` as `API_TOKEN`.
const TOKEN: &str = "tok-3f9a7c1e55";
/// Secrets granted to `leaky_output`: one of the shortest allowed length, one a number, one
/// with a quote and a backslash.
const SHORT_SECRET: &str = "s3cr3t-8";
const NUMBER_SECRET: &str = "31415926535";
const QUOTED_SECRET: &str = r#"tok"en\secret"#;
/// What the file outside the granted folder holds.
const OUTSIDE: &str = "TOP SECRET: outside the grant";
/// How much of an HTTP response a tool may read here.
const RESPONSE_CAP: u64 = 1 << 20;

/// A folder tree, a local HTTP server and a runtime granting parts of both.
pub struct World {
    runtime: Runtime,
    root: PathBuf,
    port: u16,
    /// The request lines the server received.
    requests: Arc<Mutex<Vec<String>>>,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("toolcell-capabilities-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for dir in ["data/sub", "scratch"] {
            std::fs::create_dir_all(root.join(dir)).expect("create folders");
        }
        std::fs::write(root.join("secret.txt"), OUTSIDE).expect("write");
        std::fs::write(root.join("data/notes.txt"), "alpha\nneedle here\nomega\n").expect("write");
        std::fs::write(root.join("data/sub/deep.txt"), "another needle\n").expect("write");
        std::os::unix::fs::symlink(root.join("secret.txt"), root.join("data/link")).expect("symlink");

        let (port, requests) = serve_http();
        let policy_text = format!(
            r#"
            [tools.fs_escape]
            dirs = [{{ host = "data", guest = "/data" }}]
            [tools.files]
            dirs = [{{ host = "data", guest = "/workspace" }}]
            [tools.fs_write]
            dirs = [{{ host = "data", guest = "/data", mode = "ro" }}, {{ host = "scratch", guest = "/scratch", mode = "rw" }}]
            [tools.env_reader]
            env = {{ API_TOKEN = {{ secret = "{TOKEN}" }} }}
            [tools.calculator]
            env = {{ UNITS = "4" }}
            [tools.leaky_output.env]
            SHORT_SECRET = {{ secret = "{SHORT_SECRET}" }}
            NUMBER_SECRET = {{ secret = "{NUMBER_SECRET}" }}
            QUOTED_SECRET = {{ secret = '{QUOTED_SECRET}' }}
            [tools.http_flood]
            allow_hosts = ["127.0.0.1:{port}"]
            [tools.http_retry_loop]
            allow_hosts = ["example.com"]
            [tools.http_unlisted_host]
            allow_hosts = ["example.com"]
            [tools.http_to_loopback]
            allow_hosts = ["*.example.com"]
            [tools.http_huge_response]
            allow_hosts = ["127.0.0.1:{port}"]
            limits = {{ max_http_response_bytes = {RESPONSE_CAP} }}
            [tools.http_fetch]
            allow_hosts = ["127.0.0.1:{port}"]
            limits = {{ max_http_response_bytes = {RESPONSE_CAP} }}
            "#
        );
        let policy_file = root.join("toolcell.toml");
        std::fs::write(&policy_file, policy_text).expect("write the policy");
        let policy = Policy::from_file(&policy_file).expect("a valid policy");

        let runtime = std::thread::spawn(move || {
            let tokio = tokio::runtime::Runtime::new().expect("tokio runtime");
            tokio.block_on(async {
                let guests = [
                    toolcell_tests::ENV_READER,
                    toolcell_tests::FS_ESCAPE,
                    toolcell_tests::FS_WRITE,
                    toolcell_tests::HTTP_FLOOD,
                    toolcell_tests::HTTP_HUGE_RESPONSE,
                    toolcell_tests::HTTP_RETRY_LOOP,
                    toolcell_tests::LEAKY_OUTPUT,
                    toolcell_tests::HTTP_TO_LOOPBACK,
                    toolcell_tests::HTTP_UNLISTED_HOST,
                    toolcell_tests::SOCKET_OPEN,
                ];
                let builder = crate::common::standard_tools().policy(policy);
                let builder = guests.iter().fold(builder, |builder, path| builder.component_file(path));
                let runtime = builder.build().await.expect("runtime builds");
                assert_eq!(runtime.diagnostics(), &[], "every guest loads");
                runtime
            })
        })
        .join()
        .expect("runtime thread");
        World { runtime, root, port, requests }
    })
}

/// A tiny HTTP/1.1 server on a thread of its own (tests' tokio runtimes come and go):
/// `/hello` (text), `/json`, `/huge` (100 MB), `/redirect-out` (to a host no grant names).
fn serve_http() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let seen = seen.clone();
            std::thread::spawn(move || respond(stream, &seen));
        }
    });
    (port, requests)
}

fn respond(mut stream: TcpStream, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
            break;
        }
    }
    seen.lock().expect("lock").push(request_line.trim_end().to_owned());
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    let head = |status: &str, content_type: &str, length: u64, extra: &str| {
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {length}\r\n{extra}connection: close\r\n\r\n"
        )
    };
    let _ = match path {
        "/hello" => {
            let body = "hello from the test server";
            stream.write_all(
                format!("{}{body}", head("200 OK", "text/plain; charset=utf-8", body.len() as u64, "")).as_bytes(),
            )
        }
        "/json" => {
            let body = r#"{"answer": 42}"#;
            stream.write_all(format!("{}{body}", head("200 OK", "application/json", body.len() as u64, "")).as_bytes())
        }
        "/huge" => {
            let total: u64 = 100 << 20;
            let chunk = vec![b'x'; 64 << 10];
            let mut result = stream.write_all(head("200 OK", "text/plain", total, "").as_bytes());
            let mut sent = 0;
            while result.is_ok() && sent < total {
                result = stream.write_all(&chunk);
                sent += chunk.len() as u64;
            }
            result
        }
        "/redirect-out" => {
            stream.write_all(head("302 Found", "text/plain", 0, "location: http://example.net/\r\n").as_bytes())
        }
        _ => stream.write_all(head("404 Not Found", "text/plain", 0, "").as_bytes()),
    };
}

async fn call(tool: &str, arguments: Value) -> ToolOutput {
    world().runtime.call(ToolCall::new("call-1", tool, arguments)).await
}

/// Runs a hostile call, then checks the runtime still answers a benign one correctly.
async fn contain(tool: &str, arguments: Value) -> ToolOutput {
    let output = call(tool, arguments).await;
    assert!(output.is_error, "{tool} must fail: {output:#?}");
    let benign = call("calculator", json!({"expression": "6 * 7"})).await;
    assert_eq!(value(&benign)["value"], json!(42.0), "the call after {tool}");
    output
}

fn tool_message(output: &ToolOutput) -> String {
    match &output.error {
        Some(CallError::ToolFailed { message, .. }) => message.clone(),
        other => panic!("expected tool_failed, got {other:?}: {output:#?}"),
    }
}

#[tokio::test]
async fn a_granted_directory_is_readable() {
    let output = call("fs_escape", json!({"path": "/data/notes.txt"})).await;
    assert_eq!(value(&output), json!("alpha\nneedle here\nomega\n"));
}

#[tokio::test]
async fn reads_outside_the_granted_directory_fail_inside_the_guest() {
    for path in [
        "/data/../secret.txt",
        "/secret.txt",
        "/etc/passwd",
        "/data/link",
        "../secret.txt",
        "/data/sub/../../secret.txt",
    ] {
        let output = contain("fs_escape", json!({ "path": path })).await;
        let message = tool_message(&output);
        assert!(!output.content.contains("TOP SECRET"), "{path}: {}", output.content);
        assert!(
            ["PermissionDenied", "NotFound", "Uncategorized", "Other"].iter().any(|kind| message.starts_with(kind)),
            "{path}: {message}"
        );
    }
}

#[tokio::test]
async fn a_read_only_grant_refuses_writes_and_a_read_write_grant_allows_them() {
    let output = call("fs_write", json!({"path": "/scratch/out.txt", "text": "written"})).await;
    assert_eq!(value(&output), json!(7));
    assert_eq!(std::fs::read_to_string(world().root.join("scratch/out.txt")).expect("written on the host"), "written");

    for path in ["/data/new.txt", "/data/notes.txt", "/data/sub/deep.txt"] {
        let output = contain("fs_write", json!({"path": path, "text": "overwritten"})).await;
        let message = tool_message(&output);
        assert!(
            message.starts_with("PermissionDenied") || message.starts_with("ReadOnlyFilesystem"),
            "{path}: {message}"
        );
    }
    assert!(!world().root.join("data/new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(world().root.join("data/notes.txt")).expect("read"),
        "alpha\nneedle here\nomega\n"
    );
}

#[tokio::test]
async fn an_environment_variable_that_is_not_granted_is_absent() {
    for name in ["HOME", "PATH", "USER", "CARGO"] {
        let output = contain("env_reader", json!({ "name": name })).await;
        assert_eq!(tool_message(&output), format!("{name}: environment variable not found"));
    }
}

#[tokio::test]
async fn granted_secrets_are_redacted_from_results_errors_and_diagnostics() {
    let output = call("env_reader", json!({"name": "API_TOKEN"})).await;
    assert_eq!(value(&output), json!(format!("token={REDACTED}")));
    assert!(output.diagnostics.stderr.contains(&format!("API_TOKEN={REDACTED}")), "{:?}", output.diagnostics);

    let output = contain("env_reader", json!({"name": "API_TOKEN", "fail": true})).await;
    assert_eq!(tool_message(&output), format!("the token {REDACTED} was rejected"));
    let everything = format!("{output:?} {}", serde_json::to_string(&output).expect("serialize"));
    assert!(!everything.contains(TOKEN), "{everything}");
}

#[tokio::test]
async fn granted_secrets_never_reach_span_attributes() {
    // The model echoes the secret in its arguments; the tool puts it in its result and error.
    let run = |id: &'static str, arguments: Value| world().runtime.call(ToolCall::new(id, "env_reader", arguments));
    let calls = async {
        run("secret-span-1", json!({"name": "API_TOKEN"})).await;
        run("secret-span-2", json!({"name": TOKEN, "fail": true})).await;
        run("secret-span-3", json!({"name": "API_TOKEN", "fail": true})).await
    };
    let (_, spans) = crate::spans::tool_call_spans("secret-span-", calls).await;
    assert_eq!(spans.len(), 3);
    let everything = format!("{spans:?}");
    assert!(!everything.contains(TOKEN), "{everything}");
    assert!(spans[1]["input.value"].contains(REDACTED), "{:?}", spans[1]);
    assert!(spans[2]["otel.status_description"].contains(REDACTED), "{:?}", spans[2]);
}

#[tokio::test]
async fn sockets_and_name_lookups_are_refused() {
    let output = contain("socket_open", json!({"port": world().port})).await;
    let message = tool_message(&output);
    // Creating a socket is refused outright; name resolution fails for good.
    assert!(message.contains(r#"tcp socket: ErrorCode { code: 1, name: "access-denied""#), "{message}");
    assert!(message.contains(r#"udp socket: ErrorCode { code: 1, name: "access-denied""#), "{message}");
    assert!(message.contains(r#"dns lookup: ErrorCode { code: 20, name: "permanent-resolver-failure""#), "{message}");
    assert!(world().requests.lock().expect("lock").iter().all(|line| !line.contains("socket")));
}

#[tokio::test]
async fn http_to_an_unlisted_host_is_denied_before_it_leaves() {
    let url = format!("http://127.0.0.1:{}/exfiltrate?data=stolen", world().port);
    let output = contain("http_unlisted_host", json!({ "url": url })).await;
    assert_eq!(
        output.error,
        Some(CallError::HttpDenied {
            request: Some(format!("GET {url}")),
            reason: format!("`127.0.0.1:{}` is not on this tool's allow-list", world().port),
            grant: Some(format!("127.0.0.1:{}", world().port)),
            rule: Some(format!(
                r#"{{ host = "127.0.0.1:{}", methods = ["GET"], paths = ["/exfiltrate"] }}"#,
                world().port
            )),
            allowed: vec!["example.com".into()],
        })
    );
    assert!(output.content.contains(&format!("allow_hosts = [\"127.0.0.1:{}\"]", world().port)), "{}", output.content);
    assert!(output.diagnostics.detail.as_deref().unwrap_or_default().contains("HttpRequestDenied"), "{output:#?}");
    assert!(world().requests.lock().expect("lock").iter().all(|line| !line.contains("exfiltrate")));
}

#[tokio::test]
async fn ip_literals_and_localhost_need_an_exact_grant() {
    let output = contain("http_to_loopback", json!({"port": world().port})).await;
    assert_eq!(kind(&output), "http_denied", "{output:#?}");
    let detail = output.diagnostics.detail.clone().unwrap_or_default();
    assert_eq!(detail.matches("HttpRequestDenied").count(), 6, "every spelling refused: {detail}");
}

#[tokio::test]
async fn a_huge_http_response_is_cut_at_the_cap() {
    let url = format!("http://127.0.0.1:{}/huge", world().port);
    let output = contain("http_huge_response", json!({ "url": url })).await;
    assert_eq!(output.error, Some(CallError::HttpResponseTooLarge { limit_bytes: RESPONSE_CAP }));
}

#[tokio::test]
async fn http_fetch_returns_text_json_and_truncated_bodies_from_allowed_hosts() {
    let base = format!("http://127.0.0.1:{}", world().port);
    let result = value(&call("http_fetch", json!({"url": format!("{base}/hello")})).await);
    assert_eq!((result["status"].clone(), result["text"].clone()), (json!(200), json!("hello from the test server")));

    let result = value(&call("http_fetch", json!({"url": format!("{base}/json")})).await);
    assert_eq!(result["json"], json!({"answer": 42}));

    // The tool stops reading at max_bytes: the 100 MB body never comes through.
    let result = value(&call("http_fetch", json!({"url": format!("{base}/huge"), "max_bytes": 1000})).await);
    assert_eq!((result["truncated"].clone(), result["text"].as_str().map(str::len)), (json!(true), Some(1000)));
}

#[tokio::test]
async fn http_fetch_is_denied_hosts_its_grant_does_not_name_even_through_a_redirect() {
    let output = call("http_fetch", json!({"url": "https://example.org/"})).await;
    assert_eq!(kind(&output), "http_denied");
    assert!(
        output.content.contains(&format!("`127.0.0.1:{}`", world().port)),
        "names what is allowed: {}",
        output.content
    );

    let output = call("http_fetch", json!({"url": format!("http://127.0.0.1:{}/redirect-out", world().port)})).await;
    match &output.error {
        Some(CallError::HttpDenied { request, grant, .. }) => {
            assert_eq!((request.as_deref(), grant.as_deref()), (Some("GET http://example.net/"), Some("example.net")));
        }
        other => panic!("expected http_denied, got {other:?}"),
    }
}

#[tokio::test]
async fn files_lists_reads_and_searches_only_the_granted_folder() {
    let listing = value(&call("files", json!({"operation": "list", "path": "/workspace"})).await);
    let names: Vec<&str> =
        listing["entries"].as_array().expect("entries").iter().filter_map(|e| e["name"].as_str()).collect();
    assert_eq!(names, ["link", "notes.txt", "sub"]);

    let read = value(
        &call("files", json!({"operation": "read", "path": "/workspace/notes.txt", "offset": 6, "length": 6})).await,
    );
    assert_eq!(read["text"], "needle");

    let found = value(&call("files", json!({"operation": "search", "path": "/workspace", "pattern": "needle"})).await);
    assert_eq!(found["count"], 2, "{found:#}");

    for path in ["/workspace/link", "/workspace/../secret.txt", "/etc/passwd"] {
        let output = call("files", json!({"operation": "read", "path": path})).await;
        assert!(output.is_error, "{path}: {output:#?}");
        assert!(!output.content.contains("TOP SECRET"), "{path}: {}", output.content);
    }
}

#[tokio::test]
async fn requested_and_granted_capabilities_are_reported() {
    let runtime = &world().runtime;
    let requested = runtime.requested("fs_write").expect("loaded");
    assert_eq!(requested.directories.len(), 1);
    assert!(requested.directories[0].writable);
    let grants = runtime.grants("fs_write").expect("loaded");
    assert_eq!(
        grants.dirs.iter().map(|dir| (dir.guest.as_str(), dir.writable)).collect::<Vec<_>>(),
        [("/data", false), ("/scratch", true)]
    );
    assert_eq!(runtime.requested("env_reader").expect("loaded").env, ["API_TOKEN"]);
    assert!(!format!("{:?}", runtime.grants("env_reader")).contains(TOKEN));
    assert!(runtime.requested("json_query").expect("loaded").is_empty());
    assert!(runtime.grants("json_query").expect("loaded").is_empty());
}

#[tokio::test]
async fn requests_in_flight_per_call_are_bounded() {
    let url = format!("http://127.0.0.1:{}/hello", world().port);
    let output = contain("http_flood", json!({"url": url, "count": 400})).await;
    let Some(CallError::HttpDenied { reason, .. }) = &output.error else { panic!("{output:#?}") };
    assert!(reason.contains("16 requests in flight"), "the denial names the bound: {reason}");
    let detail = output.diagnostics.detail.as_deref().unwrap_or_default();
    assert!(detail.contains("responses=16 "), "at most 16 requests (and sockets) were open: {detail}");
    assert!(detail.contains("ConnectionLimitReached\": 384"), "{detail}");
}

#[tokio::test]
async fn a_loop_of_refused_requests_that_runs_out_of_time_is_a_timeout() {
    let limits = LimitOverrides::new().timeout(std::time::Duration::from_millis(300));
    let call =
        ToolCall::new("loop", "http_retry_loop", json!({"url": "https://evil.example.net/"})).with_limits(limits);
    let output = world().runtime.call(call).await;
    assert_eq!(output.error, Some(CallError::Timeout { limit_ms: 300 }), "{output:#?}");
}

#[tokio::test]
async fn a_denial_quotes_a_long_url_only_in_part() {
    let url = format!("http://evil.example.net/{}", "a".repeat(60_000));
    let output = contain("http_unlisted_host", json!({ "url": url })).await;
    let Some(CallError::HttpDenied { request: Some(request), .. }) = &output.error else { panic!("{output:#?}") };
    assert!(request.len() <= 200 && request.starts_with("GET http://evil.example.net/aaa"), "{request}");
    assert!(output.content.len() < 1000, "{}", output.content.len());
}

#[tokio::test]
async fn plain_configuration_values_are_not_redacted() {
    // `UNITS = "4"` is granted to the calculator as a plain value: 42 stays 42.
    let output = call("calculator", json!({"expression": "6 * 7"})).await;
    assert_eq!(value(&output), json!({"value": 42.0}));
}

#[tokio::test]
async fn redaction_comes_before_the_output_limit() {
    // Each 8-character secret becomes the 10 characters of [REDACTED].
    let limits = LimitOverrides::new().max_output_bytes(2400);
    let call = ToolCall::new("1", "leaky_output", json!({"copies": 200})).with_limits(limits);
    let output = world().runtime.call(call).await;
    match output.error {
        Some(CallError::OutputTooLarge { size, limit: 2400 }) => assert!(size > 2400, "{size}"),
        other => panic!("expected output_too_large, got {other:?}: {}", output.content),
    }
    let fits = world().runtime.call(ToolCall::new("2", "leaky_output", json!({"copies": 3}))).await;
    assert_eq!(value(&fits)["copies"], json!([REDACTED, REDACTED, REDACTED]));
}

#[tokio::test]
async fn redaction_never_turns_a_valid_result_into_an_invalid_one_silently() {
    let output = contain("leaky_output", json!({"copies": 0, "number": true})).await;
    let Some(CallError::InvalidOutput { reason }) = &output.error else { panic!("{output:#?}") };
    assert!(reason.contains("secret"), "{reason}");
    assert!(!format!("{output:?}").contains(NUMBER_SECRET), "{output:#?}");
}

#[tokio::test]
async fn secrets_never_reach_output_schema_violations_in_any_spelling() {
    let output = contain("leaky_output", json!({"copies": 0, "note": true})).await;
    assert_eq!(kind(&output), "invalid_output", "{output:#?}");
    let everything = format!("{output:?} {}", serde_json::to_string(&output).unwrap());
    for spelling in ["tok", "en\\\\secret", "secret"] {
        assert!(!everything.contains(spelling), "{spelling} in {everything}");
    }
}

#[tokio::test]
async fn a_secret_too_short_to_redact_is_refused() {
    let runtime = Runtime::builder()
        .component_file(toolcell_tools::CALCULATOR)
        .grant("calculator", Grants::new().env(EnvGrant::secret("PIN", "4242")))
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    assert_eq!(runtime.definitions().len(), 0);
    let reason = &runtime.diagnostics()[0].reason;
    assert!(reason.contains("`PIN`") && reason.contains("4 characters"), "{reason}");
}

/// A folder tree for the directory attacks: `proj/inner/file.txt`, `secret/id_key` outside.
fn tree(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("toolcell-dirs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("proj/inner")).unwrap();
    std::fs::create_dir_all(root.join("secret")).unwrap();
    std::fs::write(root.join("proj/inner/file.txt"), "inner file").unwrap();
    std::fs::write(root.join("secret/id_key"), OUTSIDE).unwrap();
    root
}

async fn granted(grants: &[(&str, &str, DirGrant)], cache: Option<&Path>) -> Runtime {
    let mut builder =
        Runtime::builder().component_file(toolcell_tests::FS_ESCAPE).component_file(toolcell_tests::FS_WRITE);
    for (tool, _, dir) in grants {
        builder = builder.grant(*tool, Grants::new().dir(dir.clone()));
    }
    builder.compile_cache(cache.map_or_else(|| PathBuf::from(COMPILE_CACHE), Path::to_owned)).build().await.unwrap()
}

#[tokio::test]
async fn a_granted_directory_cannot_be_redirected_by_replacing_it_with_a_symlink() {
    let root = tree("redirect");
    let runtime = granted(&[("fs_escape", "", DirGrant::read_only(root.join("proj/inner"), "/data"))], None).await;
    let read = |path: &str| runtime.call(ToolCall::new("1", "fs_escape", json!({ "path": path })));
    assert_eq!(value(&read("/data/file.txt").await), json!("inner file"));

    // Whoever can write to `proj` (another tool, another user) swaps `inner` for a symlink.
    std::fs::rename(root.join("proj/inner"), root.join("proj/moved")).unwrap();
    std::os::unix::fs::symlink("../secret", root.join("proj/inner")).unwrap();

    let output = read("/data/id_key").await;
    assert!(!output.content.contains("TOP SECRET"), "{}", output.content);
    assert_eq!(kind(&output), "tool_failed", "{output:#?}");
    assert_eq!(value(&read("/data/file.txt").await), json!("inner file"), "the grant still names the same directory");
    let _ = std::fs::remove_dir_all(root);
}

#[tokio::test]
async fn grants_nested_in_another_tools_writable_grant_are_refused_naming_both() {
    let root = tree("nested");
    let grants = [
        ("fs_write", "", DirGrant::read_write(root.join("proj"), "/data")),
        ("fs_escape", "", DirGrant::read_only(root.join("proj/inner"), "/data")),
    ];
    let runtime = granted(&grants, None).await;
    assert_eq!(runtime.definitions().len(), 0, "{:#?}", runtime.diagnostics());
    for diagnostic in runtime.diagnostics() {
        assert!(
            diagnostic.reason.contains("`fs_write`") && diagnostic.reason.contains("`fs_escape`"),
            "{diagnostic:?}"
        );
    }
    // The same two read-only may nest.
    let grants = [
        ("fs_write", "", DirGrant::read_only(root.join("proj"), "/data")),
        ("fs_escape", "", DirGrant::read_only(root.join("proj/inner"), "/data")),
    ];
    assert_eq!(granted(&grants, None).await.diagnostics(), &[]);
    let _ = std::fs::remove_dir_all(root);
}

#[tokio::test]
async fn a_grant_containing_the_compile_cache_is_refused() {
    let root = tree("cache");
    let cache = root.join("proj/.cache");
    let grants = [("fs_escape", "", DirGrant::read_only(root.join("proj"), "/data"))];
    let runtime = granted(&grants, Some(&cache)).await;
    assert!(runtime.definition("fs_escape").is_none());
    let reason = &runtime.diagnostics()[0].reason;
    assert!(reason.contains("compile cache"), "{reason}");
    let _ = std::fs::remove_dir_all(root);
}

/// A runtime where `http_unlisted_host` may reach `allow_hosts`, and `*.example.test` names
/// resolve as pinned.
async fn resolving(allow_hosts: &[String]) -> Runtime {
    let grants = allow_hosts.iter().fold(Grants::new(), |grants, host| grants.allow_host(host.parse().unwrap()));
    Runtime::builder()
        .component_file(toolcell_tests::HTTP_UNLISTED_HOST)
        .grant("http_unlisted_host", grants)
        .resolve("internal.example.test", ["127.0.0.1".parse().unwrap()])
        .resolve("mapped.example.test", ["::ffff:127.0.0.1".parse().unwrap()])
        .resolve("metadata.example.test", ["169.254.169.254".parse().unwrap()])
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_name_on_the_allow_list_cannot_reach_a_loopback_private_or_link_local_address() {
    let port = world().port;
    let runtime = resolving(&[format!("*.example.test:{port}"), "*.example.test".into()]).await;
    for (host, class) in [
        (format!("internal.example.test:{port}"), "loopback"),
        (format!("mapped.example.test:{port}"), "loopback"),
        ("metadata.example.test".to_owned(), "link-local"),
    ] {
        let url = format!("http://{host}/resolved-attack");
        let output = runtime.call(ToolCall::new("1", "http_unlisted_host", json!({ "url": url }))).await;
        let Some(CallError::HttpDenied { reason, grant, .. }) = &output.error else { panic!("{output:#?}") };
        assert!(reason.contains("resolves to") && reason.contains(class), "{host}: {reason}");
        assert!(grant.as_deref().is_some_and(|grant| grant.contains("127.0.0.1") || grant.contains("169.254")));
    }
    assert!(world().requests.lock().unwrap().iter().all(|line| !line.contains("resolved-attack")));

    // An entry naming the address itself allows it.
    let runtime = resolving(&[format!("*.example.test:{port}"), format!("127.0.0.1:{port}")]).await;
    let url = format!("http://internal.example.test:{port}/hello");
    let output = runtime.call(ToolCall::new("2", "http_unlisted_host", json!({ "url": url }))).await;
    assert_eq!(value(&output), json!(200));
}

#[tokio::test]
async fn an_authority_with_user_info_is_refused() {
    let port = world().port;
    let runtime = resolving(&[format!("*.example.test:{port}"), format!("127.0.0.1:{port}")]).await;
    for url in [
        format!("http://127.0.0.1:{port}@internal.example.test/userinfo"),
        format!("http://user:pw@127.0.0.1:{port}/userinfo"),
    ] {
        let output = runtime.call(ToolCall::new("1", "http_unlisted_host", json!({ "url": url }))).await;
        let Some(CallError::HttpDenied { reason, .. }) = &output.error else { panic!("{url}: {output:#?}") };
        assert!(reason.contains("user name or password"), "{reason}");
    }
    assert!(world().requests.lock().unwrap().iter().all(|line| !line.contains("userinfo")));
}
