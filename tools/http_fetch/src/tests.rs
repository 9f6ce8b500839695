//! The `http_fetch` tool's native tests, through a scripted transport. (Long: one small test per
//! behaviour of URLs, redirects, headers, bodies and errors.)

use std::cell::Cell;
use std::collections::VecDeque;
use std::rc::Rc;

use serde_json::{Value, json};
use toolcell_guest::{Context, Tool};

use super::*;

// --- the fake transport ---

/// A scripted server: answers each request with the next prepared response and records the
/// requests it was sent.
#[derive(Default)]
struct Fake {
    answers: VecDeque<Result<Response, ErrorCode>>,
    requests: Vec<Request>,
}

impl Fake {
    fn new(answers: impl IntoIterator<Item = Result<Response, ErrorCode>>) -> Self {
        Self { answers: answers.into_iter().collect(), requests: Vec::new() }
    }

    fn urls(&self) -> Vec<String> {
        self.requests.iter().map(|request| request.url.to_string()).collect()
    }
}

impl Transport for Fake {
    fn send(&mut self, request: &Request) -> Result<Response, ErrorCode> {
        self.requests.push(request.clone());
        self.answers.pop_front().unwrap_or_else(|| Err(ErrorCode::Other("the fake has no more answers".into())))
    }
}

/// A body served in chunks of `chunk` bytes, `length` bytes long (pieces of `data` repeated),
/// optionally failing instead of ending. `delivered` counts the bytes handed out.
struct FakeBody {
    data: Vec<u8>,
    length: usize,
    chunk: usize,
    position: usize,
    fail_with: Option<ErrorCode>,
    delivered: Rc<Cell<usize>>,
    /// Hand out more than asked for, as a misbehaving transport might.
    overfill: bool,
}

impl Body for FakeBody {
    fn read(&mut self, max: usize) -> Result<Option<Vec<u8>>, ErrorCode> {
        assert!(max >= 1, "the tool asked for 0 bytes");
        if self.position >= self.length {
            return match self.fail_with.take() {
                Some(code) => Err(code),
                None => Ok(None),
            };
        }
        let take = if self.overfill { self.chunk } else { self.chunk.min(max) }.min(self.length - self.position);
        let piece: Vec<u8> = (self.position..self.position + take).map(|i| self.data[i % self.data.len()]).collect();
        self.position += take;
        self.delivered.set(self.delivered.get() + take);
        Ok(Some(piece))
    }
}

fn body(data: &[u8]) -> FakeBody {
    FakeBody {
        data: if data.is_empty() { vec![0] } else { data.to_vec() },
        length: data.len(),
        chunk: 4096,
        position: 0,
        fail_with: None,
        delivered: Rc::new(Cell::new(0)),
        overfill: false,
    }
}

fn respond_with(status: u16, headers: &[(&str, &str)], body: FakeBody) -> Result<Response, ErrorCode> {
    let headers = headers.iter().map(|(name, value)| ((*name).to_owned(), value.as_bytes().to_vec())).collect();
    Ok(Response { status, headers, body: Box::new(body) })
}

fn respond(status: u16, headers: &[(&str, &str)], data: &[u8]) -> Result<Response, ErrorCode> {
    respond_with(status, headers, body(data))
}

fn text_response(data: &str) -> Result<Response, ErrorCode> {
    respond(200, &[("content-type", "text/plain; charset=utf-8")], data.as_bytes())
}

fn redirect(status: u16, location: &str) -> Result<Response, ErrorCode> {
    respond(status, &[("location", location)], b"<a href=...>moved</a>")
}

fn fetch(fake: &mut Fake, url: &str) -> Result<HttpFetchOutput, ToolError> {
    Fetch::new(url, DEFAULT_MAX_BYTES, &BTreeMap::new(), true)?.run(fake)
}

fn fetch_max(fake: &mut Fake, url: &str, max_bytes: usize) -> HttpFetchOutput {
    Fetch::new(url, max_bytes, &BTreeMap::new(), true).and_then(|fetch| fetch.run(fake)).unwrap()
}

fn fetch_with_headers(fake: &mut Fake, url: &str, headers: &[(&str, &str)]) -> Result<HttpFetchOutput, ToolError> {
    let headers = headers.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect();
    Fetch::new(url, DEFAULT_MAX_BYTES, &headers, true)?.run(fake)
}

/// The output for one response to a GET of `https://example.com/`.
fn output_for(response: Result<Response, ErrorCode>) -> HttpFetchOutput {
    fetch(&mut Fake::new([response]), "https://example.com/").unwrap()
}

fn output_for_max(response: Result<Response, ErrorCode>, max_bytes: usize) -> HttpFetchOutput {
    fetch_max(&mut Fake::new([response]), "https://example.com/", max_bytes)
}

fn to_json(output: &HttpFetchOutput) -> Value {
    serde_json::to_value(output).expect("the output serializes")
}

fn invalid_arguments<T: std::fmt::Debug>(result: Result<T, ToolError>) -> String {
    match result {
        Err(ToolError::InvalidArguments(message)) => message,
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

fn failed<T: std::fmt::Debug>(result: Result<T, ToolError>) -> (String, bool) {
    match result {
        Err(ToolError::Failed { message, retryable }) => (message, retryable),
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn url_error(url: &str) -> String {
    invalid_arguments(Fetch::new(url, DEFAULT_MAX_BYTES, &BTreeMap::new(), true))
}

fn invoke(arguments: Value) -> Result<Value, ToolError> {
    HttpFetchTool::invoke(&arguments.to_string(), Context::default())
        .map(|output| serde_json::from_str(&output).expect("the tool returns JSON"))
}

// --- a complete exchange ---

#[test]
fn a_text_response_comes_back_with_status_headers_and_body() {
    let mut fake = Fake::new([respond(
        200,
        &[("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", "12"), ("ETag", "\"abc\"")],
        b"hello, world",
    )]);
    let output = fetch(&mut fake, "https://example.com/hello.txt").unwrap();
    assert_eq!(
        to_json(&output),
        json!({
            "url": "https://example.com/hello.txt",
            "status": 200,
            "reason": "OK",
            "headers": {"content-type": "text/plain; charset=utf-8", "content-length": "12", "etag": "\"abc\""},
            "content_type": "text/plain",
            "content_length": 12,
            "bytes_read": 12,
            "truncated": false,
            "text": "hello, world",
        })
    );
}

#[test]
fn the_request_is_a_get_with_the_tools_default_headers() {
    let mut fake = Fake::new([text_response("ok")]);
    fetch(&mut fake, "https://example.com/a?b=c").unwrap();
    let request = &fake.requests[0];
    assert_eq!(request.url.as_str(), "https://example.com/a?b=c");
    assert_eq!(
        request.headers,
        [
            ("user-agent".to_owned(), headers::USER_AGENT.to_owned()),
            ("accept".to_owned(), "*/*".to_owned()),
            ("accept-encoding".to_owned(), "identity".to_owned()),
        ]
    );
    assert!(headers::USER_AGENT.starts_with("toolcell-http-fetch/"));
}

#[test]
fn request_parts_are_what_wasi_http_wants() {
    let request = |url: &str| Request { url: parse_url(url).unwrap(), headers: Vec::new() };

    let plain = request("https://Example.COM:443/a b/ü?q=1&r=é#section");
    assert!(plain.is_https());
    assert_eq!(plain.authority(), "example.com");
    assert_eq!(plain.path_with_query(), "/a%20b/%C3%BC?q=1&r=%C3%A9");

    let with_port = request("http://[::1]:8080");
    assert!(!with_port.is_https());
    assert_eq!(with_port.authority(), "[::1]:8080");
    assert_eq!(with_port.path_with_query(), "/");

    assert_eq!(request("http://bücher.example/").authority(), "xn--bcher-kva.example");
}

#[test]
fn error_statuses_are_results_with_their_body() {
    let output = output_for(respond(404, &[("content-type", "text/html")], b"<h1>Not here</h1>"));
    assert_eq!((output.status, output.reason.as_deref()), (404, Some("Not Found")));
    assert_eq!(output.text.as_deref(), Some("<h1>Not here</h1>"));

    let output = output_for(respond(503, &[("retry-after", "120")], b"busy"));
    assert_eq!((output.status, output.reason.as_deref()), (503, Some("Service Unavailable")));
    assert_eq!(output.headers["retry-after"], "120");
    assert_eq!(output.text.as_deref(), Some("busy"));
}

#[test]
fn unusual_statuses_have_no_reason_phrase() {
    let output = output_for(respond(599, &[], b""));
    assert_eq!((output.status, output.reason.as_deref()), (599, None));
    assert!(!to_json(&output).as_object().unwrap().contains_key("reason"));
}

#[test]
fn an_empty_body_is_empty_text() {
    let output = output_for(respond(204, &[], b""));
    assert_eq!((output.status, output.text.as_deref(), output.bytes_read, output.truncated), (204, Some(""), 0, false));
    assert!(output.notes.is_empty(), "{:?}", output.notes);
}

// --- the URL ---

#[test]
fn http_and_https_urls_are_accepted_and_normalized() {
    for (given, sent) in [
        ("https://example.com", "https://example.com/"),
        ("http://example.com:80/x", "http://example.com/x"),
        ("  https://EXAMPLE.com/Path?Q=1  ", "https://example.com/Path?Q=1"),
        ("https://example.com/page#section-2", "https://example.com/page"),
        ("HTTPS://example.com:8443/", "https://example.com:8443/"),
        ("http://127.0.0.1:3000/api", "http://127.0.0.1:3000/api"),
        ("http://[2001:db8::1]/", "http://[2001:db8::1]/"),
        ("https://example.com/a b", "https://example.com/a%20b"),
    ] {
        let mut fake = Fake::new([text_response("ok")]);
        let output = fetch(&mut fake, given).unwrap();
        assert_eq!(fake.urls(), [sent], "{given}");
        assert_eq!(output.url, sent);
    }
}

#[test]
fn a_url_without_scheme_gets_a_suggestion() {
    for (url, suggestion) in [
        ("example.com/docs", "https://example.com/docs"),
        ("www.example.com", "https://www.example.com"),
        ("//cdn.example.com/x.js", "https://cdn.example.com/x.js"),
        ("example.com:8080/x", "https://example.com:8080/x"),
        ("localhost:3000", "https://localhost:3000"),
    ] {
        let message = url_error(url);
        assert!(message.contains("has no scheme"), "{url}: {message}");
        assert!(message.contains(&format!("`{suggestion}`")), "{url}: {message}");
    }
}

#[test]
fn other_schemes_are_rejected() {
    for (url, scheme) in [
        ("ftp://example.com/file", "ftp"),
        ("file:///etc/passwd", "file"),
        ("mailto:ann@example.com", "mailto"),
        ("data:text/plain,hi", "data"),
        ("javascript:alert(1)", "javascript"),
        ("ws://example.com/socket", "ws"),
    ] {
        let message = url_error(url);
        assert!(message.contains(&format!("uses the `{scheme}` scheme")), "{url}: {message}");
        assert!(message.contains("only `http` and `https`"), "{message}");
        assert!(message.contains("https://example.com/path?query"), "{message}");
    }
}

#[test]
fn a_url_without_host_is_rejected() {
    for url in ["http://", "https://:443/x", "http:///"] {
        let message = url_error(url);
        assert!(message.contains("has no host"), "{url}: {message}");
        assert!(message.contains("https://example.com/path?query"), "{message}");
    }
}

#[test]
fn credentials_in_the_url_are_rejected_without_being_echoed() {
    for url in ["https://ann:s3cret@example.com/", "https://ann@example.com/", "https://:s3cret@example.com/"] {
        let message = url_error(url);
        assert!(message.contains("contains credentials"), "{url}: {message}");
        assert!(message.contains("`Authorization` header"), "{message}");
        assert!(!message.contains("s3cret") && !message.contains("ann"), "{message}");
    }
}

#[test]
fn unparsable_urls_say_why_and_what_a_url_looks_like() {
    for (url, why) in [
        ("http://exa mple.com/", "invalid international domain name"),
        ("http://[::1/", "invalid IPv6 address"),
        ("http://example.com:99999/", "invalid port number"),
        ("http://999.1.1.1/", "invalid IPv4 address"),
    ] {
        let message = url_error(url);
        assert!(message.contains("is not a valid URL"), "{url}: {message}");
        assert!(message.contains(why), "{url}: {message}");
        assert!(message.contains("https://example.com/path?query"), "{message}");
    }
    assert!(url_error("").contains("has no scheme"));
}

#[test]
fn overlong_urls_are_rejected_and_long_ones_quoted_in_part() {
    let message = url_error(&format!("https://example.com/?q={}", "a".repeat(MAX_URL_BYTES)));
    assert!(message.starts_with("`url` is 8215 bytes long; at most 8192"), "{message}");

    let message = url_error(&format!("example.com/{}", "é".repeat(500)));
    assert!(message.chars().count() < 600, "{message}");
    assert!(message.contains('…'), "{message}");
}

// --- max_bytes ---

#[test]
fn max_bytes_must_be_in_range() {
    for max_bytes in [0, MAX_MAX_BYTES + 1, usize::MAX] {
        let message = invalid_arguments(Fetch::new("https://example.com/", max_bytes, &BTreeMap::new(), true));
        assert!(message.starts_with("`max_bytes` must be between 1 and 1000000 (default 100000)"), "{message}");
    }
    for max_bytes in [1, MAX_MAX_BYTES] {
        assert!(Fetch::new("https://example.com/", max_bytes, &BTreeMap::new(), true).is_ok());
    }
}

// --- request headers ---

#[test]
fn request_headers_are_sent_lower_case_and_override_the_defaults() {
    let mut fake = Fake::new([text_response("ok")]);
    fetch_with_headers(
        &mut fake,
        "https://api.example.com/",
        &[("Accept", " application/json "), ("User-Agent", "my-agent/2"), ("X-Api-Key", "k")],
    )
    .unwrap();
    assert_eq!(
        fake.requests[0].headers,
        [
            ("accept".to_owned(), "application/json".to_owned()),
            ("user-agent".to_owned(), "my-agent/2".to_owned()),
            ("x-api-key".to_owned(), "k".to_owned()),
            ("accept-encoding".to_owned(), "identity".to_owned()),
        ]
    );
}

#[test]
fn forbidden_request_headers_are_rejected_with_the_reason() {
    for (name, reason) in [
        ("Host", "derived from `url`"),
        ("Content-Length", "no body"),
        ("transfer-encoding", "no body"),
        ("Expect", "no body"),
        ("Connection", "hop-by-hop"),
        ("Keep-Alive", "hop-by-hop"),
        ("TE", "hop-by-hop"),
        ("Trailer", "hop-by-hop"),
        ("Upgrade", "hop-by-hop"),
        ("Proxy-Connection", "hop-by-hop"),
        ("HTTP2-Settings", "hop-by-hop"),
        ("Proxy-Authorization", "proxies"),
        ("Accept-Encoding", "cannot decompress"),
    ] {
        let message =
            invalid_arguments(fetch_with_headers(&mut Fake::default(), "https://example.com/", &[(name, "x")]));
        assert!(message.starts_with(&format!("request header `{name}` cannot be set")), "{message}");
        assert!(message.contains(reason) && message.contains("remove it from `headers`"), "{name}: {message}");
    }
}

#[test]
fn malformed_request_headers_are_rejected() {
    let check = |headers: &[(&str, &str)], expected: &str| {
        let message = invalid_arguments(fetch_with_headers(&mut Fake::default(), "https://example.com/", headers));
        assert!(message.contains(expected), "{headers:?}: {message}");
    };
    check(&[("Bad Header", "x")], "invalid header name `Bad Header`");
    check(&[("X-Foo:", "x")], "invalid header name");
    check(&[("", "x")], "invalid header name ``");
    check(&[("Ünïcode", "x")], "invalid header name");
    check(&[("X-Evil", "a\r\nHost: other")], "contains a line break");
    check(&[("X-Nul", "a\0b")], "control character");
    check(&[("X-Big", &"v".repeat(headers::MAX_REQUEST_HEADER_VALUE_BYTES + 1))], "at most 8192 are allowed");
    check(&[("Accept", "a"), ("accept", "b")], "sets `Accept` and `accept`, which are the same header");

    let many: Vec<(String, String)> =
        (0..=headers::MAX_REQUEST_HEADERS).map(|i| (format!("x-h{i}"), "v".into())).collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    check(&many, "`headers` has 33 entries; at most 32");
}

#[test]
fn non_ascii_header_values_and_empty_values_are_allowed() {
    let mut fake = Fake::new([text_response("ok")]);
    fetch_with_headers(&mut fake, "https://example.com/", &[("X-Name", "Zoë"), ("X-Empty", "")]).unwrap();
    assert!(fake.requests[0].headers.contains(&("x-name".to_owned(), "Zoë".to_owned())));
    assert!(fake.requests[0].headers.contains(&("x-empty".to_owned(), String::new())));
}

// --- redirects ---

#[test]
fn relative_redirects_resolve_against_the_current_url() {
    let mut fake = Fake::new([
        redirect(301, "/docs/"),
        redirect(302, "guide?page=1"),
        redirect(307, "../about#team"),
        redirect(308, "//cdn.example.org/final"),
        text_response("arrived"),
    ]);
    let output = fetch(&mut fake, "http://example.com/start").unwrap();
    assert_eq!(
        fake.urls(),
        [
            "http://example.com/start",
            "http://example.com/docs/",
            "http://example.com/docs/guide?page=1",
            "http://example.com/about",
            "http://cdn.example.org/final",
        ]
    );
    assert_eq!(output.url, "http://cdn.example.org/final");
    assert_eq!(
        output.redirects,
        [
            Redirect { url: "http://example.com/start".into(), status: 301 },
            Redirect { url: "http://example.com/docs/".into(), status: 302 },
            Redirect { url: "http://example.com/docs/guide?page=1".into(), status: 307 },
            Redirect { url: "http://example.com/about".into(), status: 308 },
        ]
    );
    assert_eq!(output.text.as_deref(), Some("arrived"));
}

#[test]
fn absolute_redirects_are_followed_and_listed() {
    let mut fake = Fake::new([redirect(301, "https://www.example.com/"), text_response("home")]);
    let output = fetch(&mut fake, "http://example.com").unwrap();
    assert_eq!(fake.urls(), ["http://example.com/", "https://www.example.com/"]);
    assert_eq!(to_json(&output)["redirects"], json!([{"url": "http://example.com/", "status": 301}]));
    assert_eq!(output.url, "https://www.example.com/");
}

#[test]
fn a_303_is_followed_with_a_get_of_the_new_location() {
    let mut fake = Fake::new([redirect(303, "/result/42"), text_response("done")]);
    let output = fetch(&mut fake, "https://example.com/submit").unwrap();
    // Every request is a GET without a body: the transport has no other kind.
    assert_eq!(fake.urls(), ["https://example.com/submit", "https://example.com/result/42"]);
    assert_eq!(fake.requests[0].headers, fake.requests[1].headers);
    assert_eq!((output.status, output.redirects[0].status), (200, 303));
}

#[test]
fn redirect_bodies_are_not_read() {
    let redirect_body = body(&[b'x'; 10_000]);
    let delivered = Rc::clone(&redirect_body.delivered);
    let mut fake = Fake::new([respond_with(302, &[("location", "/b")], redirect_body), text_response("b")]);
    fetch(&mut fake, "https://example.com/a").unwrap();
    assert_eq!(delivered.get(), 0);
}

#[test]
fn five_redirects_are_followed_and_a_sixth_is_an_error() {
    let hops = |count: usize| (1..=count).map(|hop| redirect(302, &format!("/hop{hop}")));

    let mut fake = Fake::new(hops(5).chain([text_response("end")]));
    let output = fetch(&mut fake, "https://example.com/hop0").unwrap();
    assert_eq!((output.url.as_str(), output.redirects.len()), ("https://example.com/hop5", 5));

    let mut fake = Fake::new(hops(6).chain([text_response("end")]));
    let (message, retryable) = failed(fetch(&mut fake, "https://example.com/hop0"));
    assert!(!retryable);
    assert_eq!(fake.requests.len(), 6);
    assert!(message.starts_with("gave up after 5 redirects: https://example.com/hop0 -> "), "{message}");
    assert!(
        message.contains("https://example.com/hop5, which redirects again to https://example.com/hop6"),
        "{message}"
    );
    assert!(message.contains("`follow_redirects` to false"), "{message}");
}

#[test]
fn redirect_loops_are_detected() {
    let mut fake = Fake::new([redirect(302, "/b"), redirect(302, "/a"), text_response("never")]);
    let (message, retryable) = failed(fetch(&mut fake, "https://example.com/a"));
    assert!(!retryable);
    assert_eq!(fake.requests.len(), 2);
    assert!(
        message.starts_with(
            "the redirects go in a loop: https://example.com/a -> https://example.com/b -> https://example.com/a"
        ),
        "{message}"
    );
    assert!(message.contains("cookie"), "{message}");

    let mut fake = Fake::new([redirect(301, "https://example.com/self#top")]);
    let (message, _) = failed(fetch(&mut fake, "https://example.com/self"));
    assert!(message.contains("https://example.com/self -> https://example.com/self"), "{message}");
}

#[test]
fn with_follow_redirects_off_the_redirect_is_the_result() {
    let mut fake = Fake::new([redirect(301, "https://example.org/new")]);
    let output = Fetch::new("https://example.com/old", DEFAULT_MAX_BYTES, &BTreeMap::new(), false)
        .unwrap()
        .run(&mut fake)
        .unwrap();
    assert_eq!(fake.requests.len(), 1);
    assert_eq!((output.status, output.url.as_str()), (301, "https://example.com/old"));
    assert_eq!(output.headers["location"], "https://example.org/new");
    assert!(output.redirects.is_empty());
}

#[test]
fn redirects_that_cannot_be_followed_are_the_result_with_a_note() {
    let output = output_for(respond(302, &[], b"no location"));
    assert_eq!((output.status, output.text.as_deref()), (302, Some("no location")));

    let mut fake = Fake::new([redirect(302, "ftp://files.example.com/x")]);
    let output = fetch(&mut fake, "https://example.com/").unwrap();
    assert_eq!((fake.requests.len(), output.status), (1, 302));
    assert!(
        output.notes[0].contains("leads to `ftp://files.example.com/x`, which is not an http(s) URL"),
        "{:?}",
        output.notes
    );

    let output = output_for(redirect(301, "http://[broken/"));
    assert_eq!(output.status, 301);
    assert!(output.notes[0].contains("its `Location` `http://[broken/` is not a valid URL"), "{:?}", output.notes);
}

#[test]
fn redirects_drop_credentials_in_the_location() {
    let mut fake = Fake::new([redirect(302, "https://user:pw@example.com/next#frag"), text_response("ok")]);
    fetch(&mut fake, "https://example.com/").unwrap();
    assert_eq!(fake.urls()[1], "https://example.com/next");
}

#[test]
fn credential_headers_are_not_sent_to_another_origin() {
    let credentials = [("Authorization", "Bearer t0ken"), ("Cookie", "session=1"), ("Accept", "text/plain")];
    let sent_names = |request: &Request| request.headers.iter().map(|(name, _)| name.clone()).collect::<Vec<_>>();

    // Same origin: kept.
    let mut fake = Fake::new([redirect(302, "/other"), text_response("ok")]);
    let output = fetch_with_headers(&mut fake, "https://example.com/", &credentials).unwrap();
    assert!(sent_names(&fake.requests[1]).contains(&"authorization".to_owned()));
    assert!(output.notes.is_empty());

    // Another origin (here only the scheme differs), and back: dropped for good.
    let mut fake = Fake::new([
        redirect(302, "http://example.com/plain"),
        redirect(302, "https://example.com/again"),
        text_response("ok"),
    ]);
    let output = fetch_with_headers(&mut fake, "https://example.com/", &credentials).unwrap();
    assert!(sent_names(&fake.requests[0]).contains(&"cookie".to_owned()));
    for request in &fake.requests[1..] {
        let names = sent_names(request);
        assert!(!names.contains(&"authorization".to_owned()) && !names.contains(&"cookie".to_owned()), "{names:?}");
        assert!(names.contains(&"accept".to_owned()));
    }
    assert_eq!(
        output.notes,
        [
            "the `authorization` and `cookie` headers were not sent after the redirect to http://example.com, another origin"
        ]
    );
    let mut fake = Fake::new([redirect(307, "https://api.example.org/"), text_response("ok")]);
    let output = fetch_with_headers(&mut fake, "https://example.com/", &[("Authorization", "Basic YTpi")]).unwrap();
    assert_eq!(
        output.notes,
        ["the `authorization` header was not sent after the redirect to https://api.example.org, another origin"]
    );
}

// --- reading the body ---

#[test]
fn a_body_longer_than_max_bytes_is_truncated_and_not_read_whole() {
    let huge = FakeBody { length: 50_000_000, ..body(b"0123456789") };
    let delivered = Rc::clone(&huge.delivered);
    let output = output_for_max(respond_with(200, &[("content-type", "text/plain")], huge), 1000);
    assert_eq!((output.bytes_read, output.truncated), (1000, true));
    assert_eq!(output.text.as_deref(), Some("0123456789".repeat(100).as_str()));
    assert_eq!(delivered.get(), 1001, "the tool reads max_bytes + 1 bytes, no more");
    assert_eq!(
        output.notes,
        ["the body is more than 1000 bytes: only the first 1000 were read (`max_bytes`); call again with a \
             larger `max_bytes` (at most 1000000) to read more"]
    );
}

#[test]
fn a_body_of_exactly_max_bytes_is_not_truncated() {
    let output = output_for_max(text_response("12345"), 5);
    assert_eq!((output.bytes_read, output.truncated, output.text.as_deref()), (5, false, Some("12345")));
    assert!(output.notes.is_empty());
}

#[test]
fn truncation_reports_the_announced_length() {
    let output = output_for_max(respond(200, &[("content-length", "26")], b"abcdefghijklmnopqrstuvwxyz"), 10);
    assert_eq!((output.content_length, output.bytes_read, output.truncated), (Some(26), 10, true));
    assert!(output.notes[0].starts_with("the body is 26 bytes: only the first 10 were read"), "{:?}", output.notes);
}

#[test]
fn at_the_largest_max_bytes_the_note_does_not_suggest_raising_it() {
    let big = FakeBody { length: MAX_MAX_BYTES + 10, chunk: 65_536, ..body(b"abc") };
    let output = output_for_max(respond_with(200, &[("content-type", "text/plain")], big), MAX_MAX_BYTES);
    assert_eq!((output.bytes_read, output.truncated), (MAX_MAX_BYTES, true));
    assert!(output.notes[0].ends_with("that is the most this tool reads"), "{:?}", output.notes);
}

#[test]
fn truncation_never_splits_a_character() {
    // "é" is 2 bytes, "€" 3, "🎉" 4: cut after every byte of each.
    for (body_text, max_bytes, expected) in [
        ("aé", 2, "a"),
        ("aé", 3, "aé"),
        ("a€b", 2, "a"),
        ("a€b", 3, "a"),
        ("a€b", 4, "a€"),
        ("a🎉b", 2, "a"),
        ("a🎉b", 4, "a"),
        ("a🎉b", 5, "a🎉"),
    ] {
        let output = output_for_max(text_response(body_text), max_bytes);
        assert_eq!(output.text.as_deref(), Some(expected), "{body_text:?} cut at {max_bytes}");
        assert_eq!(output.bytes_read, max_bytes.min(body_text.len()));
        assert!(output.notes.iter().all(|note| !note.contains("U+FFFD")), "{:?}", output.notes);
    }
}

#[test]
fn an_incomplete_character_at_the_real_end_is_replaced_not_dropped() {
    let output = output_for(respond(200, &[("content-type", "text/plain; charset=utf-8")], b"ab\xE2\x82"));
    assert_eq!(output.text.as_deref(), Some("ab\u{FFFD}"));
    assert_eq!(output.notes, ["1 undecodable byte sequence(s) are shown as U+FFFD"]);
}

#[test]
fn chunking_does_not_change_the_result() {
    let text = "naïve café — 🎉 done";
    for chunk in [1, 2, 3, 7, 4096] {
        for max_bytes in [1, 5, 13, 100] {
            let served = FakeBody { chunk, ..body(text.as_bytes()) };
            let output = output_for_max(respond_with(200, &[("content-type", "text/plain")], served), max_bytes);
            let expected = output_for_max(text_response(text), max_bytes);
            assert_eq!(output.text, expected.text, "chunk {chunk}, max_bytes {max_bytes}");
            assert_eq!(output.bytes_read, max_bytes.min(text.len()));
        }
    }
}

#[test]
fn a_transport_handing_out_more_than_asked_is_clipped() {
    let greedy = FakeBody { overfill: true, chunk: 100, ..body(&[b'z'; 100]) };
    let output = output_for_max(respond_with(200, &[("content-type", "text/plain")], greedy), 10);
    assert_eq!((output.bytes_read, output.truncated, output.text.as_deref()), (10, true, Some("zzzzzzzzzz")));
}

#[test]
fn a_failure_mid_body_returns_what_arrived_with_a_note() {
    let failing = FakeBody { fail_with: Some(ErrorCode::ConnectionTerminated), chunk: 3, ..body(b"partial") };
    let output = output_for(respond_with(200, &[("content-type", "text/plain")], failing));
    assert_eq!((output.text.as_deref(), output.bytes_read, output.truncated), (Some("partial"), 7, true));
    assert_eq!(output.notes.len(), 1);
    assert!(
        output.notes[0].starts_with("reading the body failed after 7 bytes, so it is incomplete: the connection"),
        "{:?}",
        output.notes
    );
}

#[test]
fn the_hosts_body_cap_mid_body_returns_what_arrived() {
    let capped = FakeBody { fail_with: Some(ErrorCode::HttpResponseBodySize(Some(8))), ..body(b"12345678") };
    let output = output_for(respond_with(200, &[("content-type", "text/plain")], capped));
    assert_eq!((output.text.as_deref(), output.truncated), (Some("12345678"), true));
    assert_eq!(
        output.notes,
        ["reading the body failed after 8 bytes, so it is incomplete: the response body from https://example.com:443 \
             is larger than the host accepts (at most 8 bytes); retrying will not help: fetch a smaller resource"]
    );
}

#[test]
fn a_body_shorter_than_announced_is_noted() {
    let output = output_for(respond(200, &[("content-type", "text/plain"), ("content-length", "100")], b"short"));
    assert_eq!((output.truncated, output.content_length), (false, Some(100)));
    assert_eq!(output.notes, ["the server announced 100 bytes but the body ended after 5"]);
}

// --- content types and charsets ---

#[test]
fn textual_types_are_returned_as_text() {
    for content_type in [
        "text/html",
        "text/plain",
        "text/css",
        "text/csv",
        "text/markdown; charset=utf-8",
        "application/xml",
        "application/xhtml+xml",
        "application/rss+xml",
        "image/svg+xml",
        "application/javascript",
        "application/x-ndjson",
        "application/yaml",
        "application/x-www-form-urlencoded",
        "TEXT/HTML; Charset=UTF-8",
    ] {
        let output = output_for(respond(200, &[("content-type", content_type)], b"<x>caf\xC3\xA9</x>"));
        assert_eq!(output.text.as_deref(), Some("<x>café</x>"), "{content_type}");
        assert!(output.json.is_none() && output.notes.is_empty(), "{content_type}: {:?}", output.notes);
    }
}

#[test]
fn a_missing_content_type_is_text_when_the_bytes_are_utf8() {
    let output = output_for(respond(200, &[], "plain words, ünïcode\n".as_bytes()));
    assert_eq!(output.content_type, None);
    assert_eq!(output.text.as_deref(), Some("plain words, ünïcode\n"));

    let output = output_for(respond(200, &[], b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"));
    assert_eq!(output.text, None);
    assert_eq!(output.notes, ["the body (no Content-Type, 16 bytes) looks binary, so it is not returned"]);
}

#[test]
fn octet_stream_is_returned_as_text_only_when_it_is_text() {
    let output = output_for(respond(200, &[("content-type", "application/octet-stream")], b"fn main() {}\n"));
    assert_eq!(output.text.as_deref(), Some("fn main() {}\n"));

    let output = output_for(respond(200, &[("content-type", "application/octet-stream")], &[0, 1, 2, 255]));
    assert_eq!(output.text, None);
    assert_eq!(output.notes, ["the body (application/octet-stream, 4 bytes) looks binary, so it is not returned"]);
}

#[test]
fn binary_types_are_not_returned() {
    for content_type in [
        "image/png",
        "image/jpeg",
        "audio/mpeg",
        "video/mp4",
        "font/woff2",
        "application/pdf",
        "application/zip",
        "application/gzip",
        "application/wasm",
        "application/epub+zip",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ] {
        // Even bytes that happen to be text are not returned for a declared binary type.
        let output = output_for(respond(200, &[("content-type", content_type), ("content-length", "5")], b"ABCDE"));
        assert_eq!((output.text.as_deref(), output.json.is_none()), (None, true), "{content_type}");
        assert_eq!(
            output.notes,
            [format!("`{content_type}` is binary content, which the tool does not return (5 bytes)")],
            "{content_type}"
        );
        assert_eq!((output.bytes_read, output.content_type.as_deref()), (5, Some(content_type)));
    }
}

#[test]
fn binary_size_without_content_length_is_what_was_read() {
    let output = output_for_max(respond(200, &[("content-type", "image/gif")], &[7; 300]), 100);
    assert_eq!((output.text, output.bytes_read, output.truncated), (None, 100, true));
    // No advice to raise `max_bytes`: the content would not be returned anyway.
    assert_eq!(output.notes, ["`image/gif` is binary content, which the tool does not return (more than 100 bytes)"]);

    let output =
        output_for_max(respond(200, &[("content-type", "image/gif"), ("content-length", "300")], &[7; 300]), 100);
    assert_eq!(output.notes, ["`image/gif` is binary content, which the tool does not return (300 bytes)"]);
}

#[test]
fn compressed_bodies_are_not_returned() {
    let output = output_for(respond(
        200,
        &[("content-type", "text/html"), ("content-encoding", "gzip")],
        b"\x1f\x8b\x08\x00garbage",
    ));
    assert_eq!(output.text, None);
    assert!(output.notes[0].starts_with("the body is compressed (`Content-Encoding: gzip`)"), "{:?}", output.notes);

    let output = output_for(respond(200, &[("content-type", "text/plain"), ("content-encoding", "identity")], b"ok"));
    assert_eq!(output.text.as_deref(), Some("ok"));
}

#[test]
fn latin1_and_ascii_are_converted() {
    for charset in ["iso-8859-1", "ISO-8859-1", "latin1", "us-ascii", "windows-1252", "\"iso-8859-1\""] {
        let output = output_for(respond(
            200,
            &[("content-type", &format!("text/plain; charset={charset}"))],
            b"caf\xe9 \x80 \xab\xbb \x93q\x94",
        ));
        assert_eq!(output.text.as_deref(), Some("café € «» \u{201C}q\u{201D}"), "{charset}");
        assert!(output.notes.is_empty(), "{charset}: {:?}", output.notes);
    }
}

#[test]
fn undeclared_non_utf8_text_falls_back_to_windows_1252() {
    let output = output_for(respond(200, &[("content-type", "text/html")], b"<p>Gr\xfc\xdfe</p>"));
    assert_eq!(output.text.as_deref(), Some("<p>Grüße</p>"));
    assert_eq!(output.notes, ["no charset was declared and the body is not UTF-8: it was decoded as windows-1252"]);
}

#[test]
fn invalid_utf8_is_replaced_with_a_note() {
    let output = output_for(respond(200, &[("content-type", "text/plain; charset=utf-8")], b"ok \xff\xfe then \xc3"));
    assert_eq!(output.text.as_deref(), Some("ok \u{FFFD}\u{FFFD} then \u{FFFD}"));
    assert_eq!(output.notes, ["3 undecodable byte sequence(s) are shown as U+FFFD"]);
}

#[test]
fn unsupported_charsets_are_decoded_lossily_with_a_note() {
    let output = output_for(respond(200, &[("content-type", "text/plain; charset=Shift_JIS")], b"abc \x82\xa0"));
    assert_eq!(output.text.as_deref(), Some("abc \u{FFFD}\u{FFFD}"));
    assert_eq!(
        output.notes,
        ["the body declares charset `shift_jis`, which the tool does not convert: it was decoded as UTF-8, so \
          non-ASCII characters may be wrong; 2 undecodable byte sequence(s) are shown as U+FFFD"]
    );
}

#[test]
fn byte_order_marks_decide_the_encoding() {
    let output =
        output_for(respond(200, &[("content-type", "text/plain; charset=iso-8859-1")], b"\xEF\xBB\xBFcaf\xC3\xA9"));
    assert_eq!(output.text.as_deref(), Some("café"));

    let utf16le: Vec<u8> = [0xFF, 0xFE].into_iter().chain("hé🎉".encode_utf16().flat_map(u16::to_le_bytes)).collect();
    let output = output_for(respond(200, &[("content-type", "text/plain")], &utf16le));
    assert_eq!(output.text.as_deref(), Some("hé🎉"));

    let utf16be: Vec<u8> = "hé🎉".encode_utf16().flat_map(u16::to_be_bytes).collect();
    let output = output_for(respond(200, &[("content-type", "text/plain; charset=utf-16be")], &utf16be));
    assert_eq!(output.text.as_deref(), Some("hé🎉"));
}

#[test]
fn utf16_truncation_never_splits_a_character() {
    let utf16le: Vec<u8> = "a🎉".encode_utf16().flat_map(u16::to_le_bytes).collect();
    for (max_bytes, expected) in [(1, ""), (2, "a"), (3, "a"), (4, "a"), (5, "a")] {
        let output =
            output_for_max(respond(200, &[("content-type", "text/plain; charset=utf-16le")], &utf16le), max_bytes);
        assert_eq!(output.text.as_deref(), Some(expected), "cut at {max_bytes}");
        assert!(output.notes.iter().all(|note| !note.contains("U+FFFD")), "{:?}", output.notes);
    }
}

// --- JSON ---

#[test]
fn complete_json_is_returned_parsed_exactly_as_sent() {
    let sent = r#"  {"zebra": 1, "apple": [true, null], "big": 123456789012345678901234567890, "pi": 3.14159265358979323846}
"#;
    let output = output_for(respond(200, &[("content-type", "application/json; charset=utf-8")], sent.as_bytes()));
    assert_eq!(output.text, None);
    assert_eq!(output.json.as_ref().map(|json| json.get()), Some(sent.trim()));
    // Serialized as JSON, not as a string: key order and number precision are kept.
    let serialized = serde_json::to_string(&output).unwrap();
    assert!(serialized.contains(r#""json":{"zebra": 1, "apple": [true, null], "big": 123456789012345678901234567890"#));
    assert!(!serialized.contains(r#""text""#));
}

#[test]
fn json_suffix_types_are_parsed_too() {
    for content_type in ["application/problem+json", "application/ld+json", "application/vnd.github+json"] {
        let output = output_for(respond(200, &[("content-type", content_type)], br#"{"title": "x"}"#));
        assert_eq!(to_json(&output)["json"], json!({"title": "x"}), "{content_type}");
    }
}

#[test]
fn truncated_json_is_returned_as_text() {
    let output = output_for_max(respond(200, &[("content-type", "application/json")], br#"{"items": [1, 2, 3]}"#), 10);
    assert_eq!((output.text.as_deref(), output.json.is_none()), (Some(r#"{"items": "#), true));
    assert!(
        output.notes.contains(&"the JSON is incomplete, so it is returned in `text`, not parsed in `json`".to_owned())
    );
}

#[test]
fn invalid_json_is_returned_as_text_with_the_parse_error() {
    let output = output_for(respond(200, &[("content-type", "application/json")], b"{'single': quotes}"));
    assert_eq!(output.text.as_deref(), Some("{'single': quotes}"));
    assert_eq!(output.notes.len(), 1);
    assert!(
        output.notes[0].starts_with("the body is not valid JSON (key must be a string at line 1 column 2)"),
        "{:?}",
        output.notes
    );
}

#[test]
fn json_served_as_text_plain_stays_text() {
    let output = output_for(respond(200, &[("content-type", "text/plain")], b"{\"a\": 1}"));
    assert_eq!((output.text.as_deref(), output.json.is_none()), (Some("{\"a\": 1}"), true));
}

// --- response headers ---

#[test]
fn response_headers_are_lower_case_and_repeated_ones_joined() {
    let output = output_for(respond(
        200,
        &[
            ("Set-Cookie", "a=1"),
            ("Vary", "Accept"),
            ("set-cookie", "b=2"),
            ("X-Spaced", "  padded\t"),
            ("X-Bytes", "caf\u{e9}"),
        ],
        b"",
    ));
    assert_eq!(
        output.headers,
        BTreeMap::from([
            ("set-cookie".to_owned(), "a=1, b=2".to_owned()),
            ("vary".to_owned(), "Accept".to_owned()),
            ("x-spaced".to_owned(), "padded".to_owned()),
            ("x-bytes".to_owned(), "café".to_owned()),
        ])
    );
}

#[test]
fn invalid_utf8_in_header_values_is_replaced() {
    let response = Response {
        status: 200,
        headers: vec![("x-latin1".to_owned(), b"caf\xe9".to_vec())],
        body: Box::new(body(b"")),
    };
    assert_eq!(output_for(Ok(response)).headers["x-latin1"], "caf\u{FFFD}");
}

#[test]
fn response_headers_are_capped_in_number_and_size() {
    let names: Vec<String> = (0..70).map(|i| format!("x-header-{i:02}")).collect();
    let long = format!("{}é", "v".repeat(headers::MAX_RESPONSE_HEADER_VALUE_BYTES - 1));
    let mut raw: Vec<(&str, &str)> = names.iter().map(|name| (name.as_str(), "1")).collect();
    raw.insert(0, ("x-long", &long));
    let output = output_for(respond(200, &raw, b""));

    assert_eq!(output.headers.len(), headers::MAX_RESPONSE_HEADERS);
    assert!(output.headers.contains_key("x-long") && output.headers.contains_key("x-header-62"));
    assert!(!output.headers.contains_key("x-header-63"));
    // The cut falls inside "é": the value ends before it.
    assert_eq!(output.headers["x-long"], format!("{}…", "v".repeat(headers::MAX_RESPONSE_HEADER_VALUE_BYTES - 1)));
    assert_eq!(
        output.notes,
        [
            "7 more response header name(s) are not listed: at most 64 are",
            "1 response header value(s) longer than 2048 bytes are cut and end with `…`",
        ]
    );
}

#[test]
fn many_repetitions_of_one_header_stay_bounded() {
    let raw: Vec<(&str, &str)> = (0..10_000).map(|_| ("set-cookie", "session=0123456789")).collect();
    let output = output_for(respond(200, &raw, b""));
    assert!(output.headers["set-cookie"].len() <= headers::MAX_RESPONSE_HEADER_VALUE_BYTES + '…'.len_utf8());
}

#[test]
fn content_length_is_reported_only_when_it_is_a_number() {
    let length = |values: &[&str]| {
        let raw: Vec<(&str, &str)> = values.iter().map(|value| ("content-length", *value)).collect();
        output_for(respond(200, &raw, b"")).content_length
    };
    assert_eq!(length(&["0"]), Some(0));
    assert_eq!(length(&["42", "42"]), Some(42));
    assert_eq!(length(&["42, 42"]), Some(42));
    assert_eq!(length(&["42", "43"]), None);
    assert_eq!(length(&["-1"]), None);
    assert_eq!(length(&["lots"]), None);
    assert_eq!(length(&[]), None);
}

#[test]
fn content_type_is_reported_without_parameters() {
    let output = output_for(respond(200, &[("content-type", "Text/HTML ; charset=\"UTF-8\"")], b"<p>"));
    assert_eq!(output.content_type.as_deref(), Some("text/html"));
    assert_eq!(output.headers["content-type"], "Text/HTML ; charset=\"UTF-8\"");
}

// --- robustness ---

/// A small deterministic pseudo-random generator (xorshift64*), so the test needs no crate.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

#[test]
fn arbitrary_responses_never_panic_and_keep_the_invariants() {
    let content_types = [
        "",
        "text/plain",
        "text/html; charset=utf-8",
        "text/plain; charset=iso-8859-1",
        "text/plain; charset=utf-16",
        "text/plain; charset=utf-16be",
        "text/plain; charset=koi8-r",
        "application/json",
        "application/problem+json; charset=\"utf-8\"",
        "application/octet-stream",
        "image/png",
        ";;;",
        "text/",
        "/",
        "application/x-unknown; charset=",
    ];
    let pieces: [&[u8]; 9] = [
        b"a",
        b"\xC3\xA9",
        b"\xF0\x9F\x8E\x89",
        b"\xFF",
        b"\x00",
        b"{\"k\": [1, 2]}",
        b"\xEF\xBB\xBF",
        b"\xFE\xFF",
        b" ",
    ];
    let mut random = Random(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let mut data = Vec::new();
        for _ in 0..random.below(40) {
            data.extend_from_slice(pieces[random.below(pieces.len())]);
        }
        let max_bytes = 1 + random.below(64);
        let mut headers = vec![("content-type", random.pick(&content_types))];
        if random.below(4) == 0 {
            headers.push(("content-encoding", "br"));
        }
        let served = FakeBody { chunk: 1 + random.below(9), ..body(&data) };
        let output = output_for_max(respond_with(200, &headers, served), max_bytes);

        assert!(output.bytes_read <= max_bytes);
        assert_eq!(output.truncated, data.len() > max_bytes, "{data:?}");
        assert_eq!(output.bytes_read, data.len().min(max_bytes));
        assert!(output.text.is_none() || output.json.is_none());
        if let Some(json) = &output.json {
            assert!(!output.truncated);
            serde_json::from_str::<Value>(json.get()).expect("`json` holds valid JSON");
        }
        serde_json::to_string(&output).expect("the output serializes");
    }
}

#[test]
fn arbitrary_urls_and_header_names_never_panic() {
    let parts = [
        "http",
        "https",
        "ftp",
        ":",
        "//",
        "/",
        "?",
        "#",
        "@",
        "[",
        "]",
        "::1",
        "example.com",
        "é",
        "%",
        " ",
        "80",
        "x",
    ];
    let mut random = Random(42);
    for _ in 0..3000 {
        let url: String = (0..random.below(12)).map(|_| random.pick(&parts)).collect();
        let name: String = (0..random.below(4)).map(|_| random.pick(&parts)).collect();
        let headers = BTreeMap::from([(name, random.pick(&parts).to_owned())]);
        if let Ok(fetch) = Fetch::new(&url, 10, &headers, true) {
            assert!(matches!(fetch.url.scheme(), "http" | "https"), "{url}");
            assert!(fetch.url.host_str().is_some_and(|host| !host.is_empty()), "{url}");
            let request = Request { url: fetch.url.clone(), headers: Vec::new() };
            assert!(request.path_with_query().starts_with('/'), "{url}");
            assert!(!request.authority().is_empty());
        }
        let _ = resolve_redirect(&Url::parse("https://example.com/a/b").unwrap(), &url);
    }
}

// --- transport errors ---

/// Every error code, the retryability it must map to, and a phrase its message must contain.
fn every_error_code() -> Vec<(ErrorCode, bool, &'static str)> {
    use ErrorCode::*;
    vec![
        (DnsTimeout, true, "looking up the address of example.com timed out"),
        (
            DnsError { rcode: Some("NXDOMAIN".into()), info_code: Some(3) },
            true,
            "could not be resolved (NXDOMAIN, code 3)",
        ),
        (DnsError { rcode: None, info_code: None }, true, "example.com could not be resolved: check it for typos"),
        (DestinationNotFound, true, "example.com was not found"),
        (DestinationUnavailable, true, "https://example.com:443 is unavailable"),
        (DestinationIpProhibited, false, "does not allow connections to the address"),
        (DestinationIpUnroutable, true, "no network route"),
        (ConnectionRefused, true, "refused the connection"),
        (ConnectionTerminated, true, "closed before the response arrived"),
        (ConnectionTimeout, true, "connecting to https://example.com:443 timed out"),
        (ConnectionReadTimeout, true, "reading from https://example.com:443 timed out"),
        (ConnectionWriteTimeout, true, "sending the request to https://example.com:443 timed out"),
        (ConnectionLimitReached, true, "too many open connections"),
        (TlsProtocolError, false, "TLS handshake with https://example.com:443 failed"),
        (TlsCertificateError, false, "TLS certificate of https://example.com:443 was rejected"),
        (
            TlsAlertReceived { alert_id: Some(40), alert_message: Some("handshake failure".into()) },
            false,
            "aborted the TLS handshake: handshake failure",
        ),
        (TlsAlertReceived { alert_id: Some(40), alert_message: None }, false, "aborted the TLS handshake: alert 40"),
        (HttpRequestDenied, false, "not allowed requests to https://example.com:443"),
        (HttpRequestLengthRequired, false, "a GET does not have"),
        (HttpRequestBodySize, false, "a GET does not have"),
        (HttpRequestMethodInvalid, false, "does not allow GET requests"),
        (HttpRequestUriInvalid, false, "rejected the URL https://example.com/page as invalid"),
        (HttpRequestUriTooLong, false, "the URL is too long"),
        (HttpRequestHeaderSectionSize, false, "request headers are too large"),
        (HttpRequestHeaderSize, false, "request headers are too large"),
        (HttpRequestTrailerSectionSize, false, "trailers"),
        (HttpRequestTrailerSize, false, "trailers"),
        (HttpResponseIncomplete, true, "ended before it was complete"),
        (HttpResponseHeaderSectionSize, false, "response headers from https://example.com:443 are larger"),
        (HttpResponseHeaderSize, false, "response headers from https://example.com:443 are larger"),
        (HttpResponseBodySize(None), false, "response body from https://example.com:443 is larger"),
        (HttpResponseBodySize(Some(4096)), false, "larger than the host accepts (at most 4096 bytes)"),
        (HttpResponseTrailerSectionSize, false, "response trailers"),
        (HttpResponseTrailerSize, false, "response trailers"),
        (HttpResponseTransferCoding(Some("chunked2".into())), false, "an encoding `chunked2` the host cannot decode"),
        (HttpResponseContentCoding(None), false, "an encoding the host cannot decode"),
        (HttpResponseTimeout, true, "did not answer in time"),
        (HttpUpgradeFailed, false, "upgrade"),
        (HttpProtocolError, true, "was not valid HTTP"),
        (LoopDetected, false, "request loop"),
        (ConfigurationError, false, "misconfigured"),
        (InternalError(Some("boom".into())), true, "failed while fetching https://example.com/page: boom"),
        (InternalError(None), true, "the host's HTTP client failed"),
        (Other("the stream broke".into()), false, "fetching https://example.com/page failed: the stream broke"),
    ]
}

#[test]
fn every_transport_error_maps_to_a_failure_with_a_next_step() {
    for (code, retryable, phrase) in every_error_code() {
        let mut fake = Fake::new([Err(code.clone())]);
        let (message, was_retryable) = failed(fetch(&mut fake, "https://example.com/page"));
        assert_eq!(was_retryable, retryable, "{code:?}: {message}");
        assert!(message.contains(phrase), "{code:?}: {message}");
        // Each says what to do next: retry, or change the call, or that retrying is pointless.
        let next_step = if retryable {
            ["try again", "try once more"].iter().any(|step| message.contains(step))
        } else {
            ["retrying will not help", "call again"].iter().any(|step| message.contains(step))
        };
        assert!(next_step, "{code:?}: {message}");
    }
}

#[test]
fn a_denied_request_names_the_origin_and_says_only_allowed_hosts_work() {
    let mut fake = Fake::new([Err(ErrorCode::HttpRequestDenied)]);
    let (message, retryable) = failed(fetch(&mut fake, "https://internal.example.com/secrets"));
    assert!(!retryable);
    assert_eq!(
        message,
        "the host operator has not allowed requests to https://internal.example.com:443: only allowed hosts can be \
         fetched, so retrying will not help. Use a URL on an allowed host, or ask the user to have \
         internal.example.com allowed"
    );

    let mut fake = Fake::new([Err(ErrorCode::HttpRequestDenied)]);
    let (message, _) = failed(fetch(&mut fake, "http://example.com:8080/"));
    assert!(message.contains("http://example.com:8080"), "{message}");
}

#[test]
fn a_denied_redirect_hop_names_where_the_redirect_came_from() {
    let mut fake = Fake::new([redirect(302, "https://tracker.example.net/r"), Err(ErrorCode::HttpRequestDenied)]);
    let (message, retryable) = failed(fetch(&mut fake, "https://example.com/link"));
    assert!(!retryable);
    assert!(message.contains("not allowed requests to https://tracker.example.net:443"), "{message}");
    assert!(message.contains("(reached by a redirect from https://example.com/link)"), "{message}");
}

#[test]
fn a_header_the_host_rejects_is_an_argument_problem() {
    for (forbidden, phrase) in [(true, "does not allow the request header `x-secret`"), (false, "as malformed")] {
        let mut fake = Fake::new([Err(ErrorCode::HeaderRejected { name: "x-secret".into(), forbidden })]);
        let message = invalid_arguments(fetch_with_headers(&mut fake, "https://example.com/", &[("X-Secret", "1")]));
        assert!(message.contains(phrase) && message.contains("`headers`"), "{message}");
    }
}

// --- through JSON ---

#[test]
fn natively_a_valid_call_reaches_the_transport_which_has_no_network() {
    let error = invoke(json!({"url": "https://example.com/"})).unwrap_err();
    let ToolError::Failed { message, retryable: false } = &error else { panic!("{error:?}") };
    assert!(message.contains("no network access") && message.contains("wasm32-wasip2"), "{message}");
}

#[test]
fn argument_errors_through_json() {
    let error = invoke(json!({"url": "ftp://example.com/"})).unwrap_err();
    assert!(matches!(&error, ToolError::InvalidArguments(message) if message.contains("`ftp` scheme")), "{error:?}");

    let error = invoke(json!({"url": "https://example.com/", "max_bytes": 0})).unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments(message) if message.contains("- /max_bytes: must be at least 1")),
        "{error:?}"
    );

    let error = invoke(json!({"url": "https://example.com/", "headers": {"Host": "evil"}})).unwrap_err();
    assert!(matches!(&error, ToolError::InvalidArguments(message) if message.contains("`Host`")), "{error:?}");

    // Shapes the host's schema validation would reject still fail cleanly, never panic.
    for arguments in [
        json!({}),
        json!({"url": 42}),
        json!({"url": "https://example.com/", "max_bytes": -1}),
        json!({"url": "https://example.com/", "headers": {"Accept": 1}}),
        json!({"url": "https://example.com/", "headers": ["Accept: text/plain"]}),
        json!({"url": "https://example.com/", "follow_redirects": "yes"}),
        json!({"url": "https://example.com/", "method": "POST"}),
    ] {
        let error = invoke(arguments.clone()).unwrap_err();
        assert!(matches!(error, ToolError::InvalidArguments(_)), "{arguments}: {error:?}");
    }
}

#[test]
fn optional_arguments_have_defaults() {
    let arguments: Value = json!({"url": "https://example.com/"});
    let schema = HttpFetchTool::metadata().parameters_schema;
    assert_eq!(schema["required"], json!(["url"]));
    assert_eq!(schema["properties"]["max_bytes"]["default"], json!(DEFAULT_MAX_BYTES));
    assert_eq!(schema["properties"]["follow_redirects"]["default"], json!(true));
    // The defaults parse: the call gets as far as the (absent) network.
    assert!(matches!(invoke(arguments), Err(ToolError::Failed { .. })));
}

// --- metadata ---

#[test]
fn metadata_names_the_tool_http_fetch() {
    let metadata = HttpFetchTool::metadata();
    assert_eq!(metadata.name, "http_fetch");
    assert_eq!(metadata.version, "1.0.0");
    let description = &metadata.description;
    assert!(description.chars().count() <= 1024, "{} characters", description.chars().count());
    assert!(description.contains("allowed") && description.contains("max_bytes"), "{description}");
}

#[test]
fn parameters_schema_snapshot() {
    insta::assert_json_snapshot!(HttpFetchTool::metadata().parameters_schema);
}

#[test]
fn output_schema_snapshot() {
    insta::assert_json_snapshot!(HttpFetchTool::metadata().output_schema);
}
