//! The `http_fetch` tool: GET an http(s) URL and return the status, the response headers and
//! the body as text.
//!
//! At run time the tool is a `wasm32-wasip2` component whose only way out is
//! `wasi:http/outgoing-handler`: it has no sockets and no DNS of its own. The host checks every
//! request (each redirect hop is a new one) against the operator's allow-list and answers a
//! denied one with `HTTP-request-denied`, which the tool reports as such.
//!
//! Everything but the transport is plain Rust behind the `Transport` seam and is tested
//! natively with a fake: argument checks, redirects, the bounded body read (never more than
//! `max_bytes` + 1 bytes, however large the body), decoding, and one message per failure.
//!
//! (Over 500 lines: the URL, redirect and body rules and their messages belong together.)

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use toolcell_guest::{ToolError, json, tool};
use url::Url;

use crate::body::{Kind, MediaType};
use crate::transport::{Body, ErrorCode, Request, Response, Transport, failure};

mod body;
mod headers;
mod transport;
#[cfg(target_arch = "wasm32")]
mod wasi_http;

#[cfg(test)]
mod tests;

/// How much of the body is returned unless the caller says otherwise: about 25k tokens of
/// English text, enough for most pages and API responses.
const DEFAULT_MAX_BYTES: usize = 100_000;
/// The most a caller may ask for. The body is held in the guest's memory and returned to the
/// model whole, so it is kept to what a model can usefully read.
const MAX_MAX_BYTES: usize = 1_000_000;
/// How many redirects are followed before giving up. Browsers allow more, but five covers real
/// chains (http to https, bare domain to `www`, a trailing slash, a CDN or sign-in hop) and
/// stops a chain that leads nowhere early; each hop costs the call time.
const MAX_REDIRECTS: usize = 5;
/// The longest URL accepted, in bytes; servers commonly reject longer ones.
const MAX_URL_BYTES: usize = 8 * 1024;
/// How many characters of a string from the model or a server a message quotes at most.
const EXCERPT_CHARS: usize = 200;

fn default_max_bytes() -> usize {
    DEFAULT_MAX_BYTES
}

fn follow_redirects_by_default() -> bool {
    true
}

/// One redirect that was followed.
#[json]
#[derive(PartialEq, Eq)]
pub struct Redirect {
    /// The URL that was requested.
    pub url: String,
    /// The redirect status it answered with: 301, 302, 303, 307 or 308.
    pub status: u16,
}

/// The final response.
#[json]
pub struct HttpFetchOutput {
    /// The URL of the final response: the requested URL, or where the redirects led.
    pub url: String,
    /// The HTTP status code, e.g. 200 or 404. Error statuses (4xx, 5xx) are results too, with
    /// the server's body.
    pub status: u16,
    /// The standard reason phrase of `status`, e.g. `Not Found`; omitted for unusual codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The redirects followed to reach `url`, in order. Omitted when there were none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirects: Vec<Redirect>,
    /// The response headers: names in lower case, repeated headers joined with `, `. At most 64
    /// names; a value longer than 2048 bytes is cut and ends with `…` (`notes` says when).
    pub headers: BTreeMap<String, String>,
    /// The media type from `Content-Type`, lower case without parameters, e.g. `text/html`.
    /// Omitted when the server sent none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The body's size in bytes as the server announced it (`Content-Length`), when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_length: Option<u64>,
    /// How many bytes of the body were read: at most `max_bytes`.
    pub bytes_read: usize,
    /// True when the body goes on past `bytes_read`: it was longer than `max_bytes`, or the
    /// connection failed before its end (`notes` says which).
    pub truncated: bool,
    /// What the model should know about the body: truncation, decoding, why it is not
    /// returned. Omitted when there is nothing to say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The body as text (converted to UTF-8; when truncated, it ends at the last whole
    /// character). Omitted for binary content and when the body is in `json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A JSON body (`application/json` or `+json`) that was complete and valid, exactly as sent.
    /// `text` is then omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub json: Option<Box<RawValue>>,
}

/// Fetch a URL with an HTTP GET and return the status, the response headers and the body.
/// Use it to read web pages, text files and JSON or XML APIs. Only hosts the operator has
/// allowed can be reached: a request to another host fails with a message saying so.
/// Redirects are followed (at most 5) and listed in `redirects`; `url` in the result is the
/// final URL. 4xx and 5xx responses are results, not errors: check `status`. At most
/// `max_bytes` of the body are read (default 100000); `truncated` says whether there was more.
/// Text is converted to UTF-8 and returned in `text` (HTML as-is, markup included; no
/// JavaScript runs); a complete JSON body is returned parsed in `json` instead; binary content
/// (images, PDF, archives) is not returned, only its type and size. No cookies are kept.
/// Example: {"url": "https://api.github.com/repos/rust-lang/rust", "headers": {"Accept": "application/json"}}
// Only ever sends GET without a body (the transport has no other kind). It requests no
// hosts (it fetches whatever the operator allows), so open_world must be said here.
#[tool(title = "Fetch URL", output_schema, read_only, idempotent, open_world)]
pub fn http_fetch(
    /// The absolute `http://` or `https://` URL to GET, e.g. `https://example.com/docs?page=2`.
    /// Credentials in the URL (`user:password@`) are refused; a `#fragment` is ignored.
    url: String,
    /// The most bytes of the body to read and return, 1 to 1000000. A longer body is cut
    /// there (never inside a character) and `truncated` is true.
    #[serde(default = "default_max_bytes")]
    #[schemars(range(min = 1, max = 1_000_000))]
    max_bytes: usize,
    /// Request headers, e.g. `{"Accept": "application/json", "Authorization": "Bearer ..."}`;
    /// at most 32. `User-Agent` and `Accept: */*` are sent unless given here. Not allowed:
    /// `Host`, `Content-Length`, `Transfer-Encoding`, `Expect`, `Accept-Encoding` (bodies are
    /// always requested uncompressed), and hop-by-hop and proxy headers (`Connection`,
    /// `Keep-Alive`, `TE`, `Trailer`, `Upgrade`, `Proxy-*`). `Authorization` and `Cookie` are
    /// not sent on after a redirect to another origin.
    #[serde(default)]
    #[schemars(extend("maxProperties" = 32))]
    headers: BTreeMap<String, String>,
    /// Follow redirects (301, 302, 303, 307, 308), at most 5, each with a new GET. When false,
    /// a redirect is returned as the result, its target in `headers.location`.
    #[serde(default = "follow_redirects_by_default")]
    follow_redirects: bool,
) -> Result<HttpFetchOutput, ToolError> {
    Fetch::new(&url, max_bytes, &headers, follow_redirects)?.run(&mut transport::default_transport())
}

/// A fetch whose arguments have been checked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fetch {
    url: Url,
    max_bytes: usize,
    headers: Vec<(String, String)>,
    follow_redirects: bool,
}

impl Fetch {
    /// Checks the arguments: every problem the model can fix is reported before any request.
    fn new(
        url: &str,
        max_bytes: usize,
        request_headers: &BTreeMap<String, String>,
        follow_redirects: bool,
    ) -> Result<Self, ToolError> {
        if !(1..=MAX_MAX_BYTES).contains(&max_bytes) {
            return Err(ToolError::invalid_arguments(format!(
                "`max_bytes` must be between 1 and {MAX_MAX_BYTES} (default {DEFAULT_MAX_BYTES}), not {max_bytes}"
            )));
        }
        let url = parse_url(url)?;
        let headers = headers::request_headers(request_headers)?;
        Ok(Self { url, max_bytes, headers, follow_redirects })
    }

    /// Sends the request, follows redirects, and reads the final response.
    fn run(self, transport: &mut impl Transport) -> Result<HttpFetchOutput, ToolError> {
        let Self { mut url, max_bytes, headers: mut sent_headers, follow_redirects } = self;
        let mut redirects: Vec<Redirect> = Vec::new();
        let mut notes = Vec::new();
        let mut redirected_from: Option<Url> = None;
        loop {
            let request = Request { url: url.clone(), headers: sent_headers.clone() };
            let response = transport.send(&request).map_err(|code| failure(&code, &url, redirected_from.as_ref()))?;
            let status = response.status;
            let location = (follow_redirects && is_redirect(status))
                .then(|| headers::first(&response.headers, "location"))
                .flatten();
            let Some(location) = location else {
                return Ok(read_response(response, url, redirects, notes, max_bytes));
            };
            let next = match resolve_redirect(&url, &location) {
                Ok(next) => next,
                Err(why_not) => {
                    notes.push(why_not);
                    return Ok(read_response(response, url, redirects, notes, max_bytes));
                }
            };
            // The body of a redirect is not read: dropping the response abandons it.
            drop(response);
            let chain =
                || redirects.iter().map(|redirect| redirect.url.as_str()).chain([url.as_str()]).collect::<Vec<_>>();
            if chain().contains(&next.as_str()) {
                return Err(ToolError::failed(format!(
                    "the redirects go in a loop: {} -> {next}. The server keeps redirecting (it may expect a \
                     cookie, which this tool does not keep), so retrying will not help: try another URL",
                    chain().join(" -> ")
                )));
            }
            if redirects.len() == MAX_REDIRECTS {
                return Err(ToolError::failed(format!(
                    "gave up after {MAX_REDIRECTS} redirects: {}, which redirects again to {next}. Fetch that URL \
                     directly if it is what you want, or set `follow_redirects` to false to see each redirect",
                    chain().join(" -> ")
                )));
            }
            if next.origin() != url.origin() {
                let (dropped, kept) = sent_headers
                    .into_iter()
                    .partition::<Vec<_>, _>(|(name, _)| headers::CREDENTIAL_HEADERS.contains(&name.as_str()));
                sent_headers = kept;
                if !dropped.is_empty() {
                    let names: Vec<String> = dropped.iter().map(|(name, _)| format!("`{name}`")).collect();
                    let (noun, verb) = if names.len() == 1 { ("header", "was") } else { ("headers", "were") };
                    notes.push(format!(
                        "the {} {noun} {verb} not sent after the redirect to {}, another origin",
                        names.join(" and "),
                        next.origin().ascii_serialization()
                    ));
                }
            }
            redirects.push(Redirect { url: url.to_string(), status });
            redirected_from = Some(std::mem::replace(&mut url, next));
        }
    }
}

/// Whether `status` is a redirect the tool follows. All five are followed the same way, with a
/// GET and no body: that is what 301, 302 and 303 mean for a GET, and 307 and 308 only forbid
/// changing a method that is already GET.
fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// Checks and normalizes the URL the model gave.
fn parse_url(text: &str) -> Result<Url, ToolError> {
    const VALID: &str = "a valid URL looks like `https://example.com/path?query`";
    if text.len() > MAX_URL_BYTES {
        return Err(ToolError::invalid_arguments(format!(
            "`url` is {} bytes long; at most {MAX_URL_BYTES} are accepted: shorten the query",
            text.len()
        )));
    }
    let trimmed = text.trim();
    let shown = excerpt(trimmed);
    let no_scheme = || {
        ToolError::invalid_arguments(format!(
            "`url` `{shown}` has no scheme: write the full URL, e.g. `https://{}`",
            excerpt(trimmed.trim_start_matches('/'))
        ))
    };
    let mut url = Url::parse(trimmed).map_err(|error| match error {
        url::ParseError::RelativeUrlWithoutBase => no_scheme(),
        url::ParseError::EmptyHost => ToolError::invalid_arguments(format!("`url` `{shown}` has no host: {VALID}")),
        other => ToolError::invalid_arguments(format!("`url` `{shown}` is not a valid URL ({other}): {VALID}")),
    })?;
    match url.scheme() {
        "http" | "https" => {}
        // `example.com:8080/x` and `localhost:3000` parse with the host as the scheme.
        scheme if scheme.contains('.') || url.path().starts_with(|c: char| c.is_ascii_digit()) => {
            return Err(no_scheme());
        }
        scheme => {
            return Err(ToolError::invalid_arguments(format!(
                "`url` uses the `{scheme}` scheme; only `http` and `https` URLs can be fetched: {VALID}"
            )));
        }
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(ToolError::invalid_arguments(format!("`url` `{shown}` has no host: {VALID}")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        // The URL is not quoted: it holds a secret.
        return Err(ToolError::invalid_arguments(
            "`url` contains credentials (`user:password@`), which the tool does not send: remove them, and if the \
             server needs them send an `Authorization` header instead (for Basic auth: `Basic ` followed by the \
             base64 of `user:password`)",
        ));
    }
    url.set_fragment(None);
    Ok(url)
}

/// Where a redirect leads: `location` resolved against the URL that answered. `Err` says why
/// the redirect is not followed; the redirect is then the result.
fn resolve_redirect(current: &Url, location: &str) -> Result<Url, String> {
    let mut next = current.join(location).map_err(|error| {
        format!("the redirect was not followed: its `Location` `{}` is not a valid URL ({error})", excerpt(location))
    })?;
    if !matches!(next.scheme(), "http" | "https") || next.host_str().is_none_or(str::is_empty) {
        return Err(format!(
            "the redirect was not followed: it leads to `{}`, which is not an http(s) URL",
            excerpt(next.as_str())
        ));
    }
    // Credentials and the fragment are not part of a request.
    let _ = next.set_username("");
    let _ = next.set_password(None);
    next.set_fragment(None);
    Ok(next)
}

/// The start of a string from the model or the server, short enough to quote in a message.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The bytes read from a body.
#[derive(Debug)]
struct BodyRead {
    /// At most `max_bytes` of them.
    bytes: Vec<u8>,
    /// Whether the body goes on: it had more than `max_bytes`, or reading failed.
    truncated: bool,
    /// Why reading stopped before the end, if it did.
    error: Option<ErrorCode>,
}

/// Reads at most `max_bytes` + 1 bytes: the extra byte tells whether the body goes on, and a
/// huge body is never read whole.
fn read_body(body: &mut dyn Body, max_bytes: usize) -> BodyRead {
    let limit = max_bytes.saturating_add(1);
    let mut bytes = Vec::new();
    let mut error = None;
    while bytes.len() < limit {
        let wanted = limit - bytes.len();
        match body.read(wanted) {
            Ok(Some(chunk)) => bytes.extend_from_slice(&chunk[..chunk.len().min(wanted)]),
            Ok(None) => break,
            Err(code) => {
                error = Some(code);
                break;
            }
        }
    }
    let truncated = bytes.len() > max_bytes || error.is_some();
    bytes.truncate(max_bytes);
    BodyRead { bytes, truncated, error }
}

/// Reads the body of the final response and describes it for the model.
fn read_response(
    mut response: Response,
    url: Url,
    redirects: Vec<Redirect>,
    mut notes: Vec<String>,
    max_bytes: usize,
) -> HttpFetchOutput {
    let raw = &response.headers;
    let collected = headers::collect(raw);
    let media = MediaType::parse(headers::first(raw, "content-type").as_deref());
    let content_length = headers::content_length(raw);
    let encodings: Vec<String> =
        headers::list(raw, "content-encoding").into_iter().filter(|coding| coding != "identity").collect();

    let BodyRead { bytes, truncated, error } = read_body(response.body.as_mut(), max_bytes);
    let read = bytes.len();
    let size = match content_length {
        Some(length) => format!("{length} bytes"),
        None if truncated => format!("more than {read} bytes"),
        None => format!("{read} bytes"),
    };
    if let Some(code) = &error {
        notes.push(format!(
            "reading the body failed after {read} bytes, so it is incomplete: {}",
            failure(code, &url, None).message()
        ));
    } else if let Some(length) = content_length.filter(|&length| !truncated && length > read as u64)
        // These statuses have no body; their Content-Length describes another response.
        && !matches!(response.status, 204 | 304)
    {
        notes.push(format!("the server announced {length} bytes but the body ended after {read}"));
    }

    let type_name = media.essence.clone().unwrap_or_else(|| "no Content-Type".to_owned());
    let kind = if bytes.is_empty() {
        Kind::Text
    } else if !encodings.is_empty() {
        notes.push(format!(
            "the body is compressed (`Content-Encoding: {}`) although the tool asked for none, and the tool cannot \
             decompress it: it is not returned ({size})",
            encodings.join(", ")
        ));
        Kind::Binary
    } else {
        match body::classify(media.essence.as_deref()) {
            Kind::Sniff if body::looks_like_text(&bytes, truncated) => Kind::Text,
            Kind::Sniff => {
                notes.push(format!("the body ({type_name}, {size}) looks binary, so it is not returned"));
                Kind::Binary
            }
            Kind::Binary => {
                notes.push(format!("`{type_name}` is binary content, which the tool does not return ({size})"));
                Kind::Binary
            }
            kind => kind,
        }
    };

    let mut text = None;
    let mut json = None;
    if kind != Kind::Binary {
        if truncated && error.is_none() {
            let more = if max_bytes < MAX_MAX_BYTES {
                format!("call again with a larger `max_bytes` (at most {MAX_MAX_BYTES}) to read more")
            } else {
                "that is the most this tool reads".to_owned()
            };
            notes.push(format!("the body is {size}: only the first {read} were read (`max_bytes`); {more}"));
        }
        let decoded = body::decode(&bytes, media.charset.as_deref(), truncated);
        notes.extend(decoded.note);
        if kind == Kind::Json && truncated {
            notes.push("the JSON is incomplete, so it is returned in `text`, not parsed in `json`".to_owned());
        } else if kind == Kind::Json {
            match body::parse_json(&decoded.text) {
                Ok(value) => json = Some(value),
                Err(error) => notes.push(format!("the body is not valid JSON ({error}), so it is returned in `text`")),
            }
        }
        if json.is_none() {
            text = Some(decoded.text);
        }
    }

    if collected.omitted > 0 {
        notes.push(format!(
            "{} more response header name(s) are not listed: at most {} are",
            collected.omitted,
            headers::MAX_RESPONSE_HEADERS
        ));
    }
    if collected.shortened > 0 {
        notes.push(format!(
            "{} response header value(s) longer than {} bytes are cut and end with `…`",
            collected.shortened,
            headers::MAX_RESPONSE_HEADER_VALUE_BYTES
        ));
    }

    HttpFetchOutput {
        url: url.into(),
        status: response.status,
        reason: reason_phrase(response.status).map(str::to_owned),
        redirects,
        headers: collected.map,
        content_type: media.essence,
        content_length,
        bytes_read: read,
        truncated,
        notes,
        text,
        json,
    }
}

/// The reason phrase RFC 9110 (and the RFCs that added codes) gives `status`.
fn reason_phrase(status: u16) -> Option<&'static str> {
    Some(match status {
        100 => "Continue",
        101 => "Switching Protocols",
        103 => "Early Hints",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        203 => "Non-Authoritative Information",
        204 => "No Content",
        205 => "Reset Content",
        206 => "Partial Content",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        407 => "Proxy Authentication Required",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        412 => "Precondition Failed",
        413 => "Content Too Large",
        414 => "URI Too Long",
        415 => "Unsupported Media Type",
        416 => "Range Not Satisfiable",
        417 => "Expectation Failed",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        425 => "Too Early",
        426 => "Upgrade Required",
        428 => "Precondition Required",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        511 => "Network Authentication Required",
        _ => return None,
    })
}
