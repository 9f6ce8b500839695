//! The seam between the tool's logic and the network.
//!
//! [`Transport`] sends one GET and hands back the status, the headers and a body to read in
//! pieces. The component uses `wasi:http/outgoing-handler` (`crate::wasi_http`); native tests
//! use a fake. [`ErrorCode`] mirrors the wasi-http `error-code` variant so the fake can produce
//! every failure the host can report, and [`failure`] turns each into the message the model sees.

use toolcell_guest::ToolError;
use url::Url;

/// One GET request, as the transport sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// An absolute `http` or `https` URL with a host, without credentials or a fragment.
    pub(crate) url: Url,
    /// The request headers, names in lower case, in the order to send them.
    pub(crate) headers: Vec<(String, String)>,
}

impl Request {
    /// Whether the request goes over TLS.
    #[cfg_attr(
        not(any(target_arch = "wasm32", test)),
        expect(dead_code, reason = "used by the wasi:http transport only")
    )]
    pub(crate) fn is_https(&self) -> bool {
        self.url.scheme() == "https"
    }

    /// `host` or `host:port` (the port only when it is not the scheme's default), as the `Host`
    /// header carries it. IPv6 addresses keep their brackets.
    #[cfg_attr(
        not(any(target_arch = "wasm32", test)),
        expect(dead_code, reason = "used by the wasi:http transport only")
    )]
    pub(crate) fn authority(&self) -> String {
        let host = self.url.host_str().unwrap_or_default();
        match self.url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        }
    }

    /// The path and query, e.g. `/search?q=rust`; never empty for an http(s) URL.
    #[cfg_attr(
        not(any(target_arch = "wasm32", test)),
        expect(dead_code, reason = "used by the wasi:http transport only")
    )]
    pub(crate) fn path_with_query(&self) -> &str {
        &self.url[url::Position::BeforePath..url::Position::AfterQuery]
    }
}

/// A response whose headers have arrived and whose body is still to be read.
pub(crate) struct Response {
    /// The status code.
    pub(crate) status: u16,
    /// The headers in the order received; names as the host gives them, values as raw bytes.
    pub(crate) headers: Vec<(String, Vec<u8>)>,
    /// The body, read on demand so that a huge body is never read whole.
    pub(crate) body: Box<dyn Body>,
}

/// A response body being received.
pub(crate) trait Body {
    /// The next piece of the body, at most `max` bytes (at least 1); `Ok(None)` at its end.
    fn read(&mut self, max: usize) -> Result<Option<Vec<u8>>, ErrorCode>;
}

/// Sends requests.
pub(crate) trait Transport {
    /// Sends `request` and waits for the response headers.
    fn send(&mut self, request: &Request) -> Result<Response, ErrorCode>;
}

/// Why a request failed: the wasi-http `error-code` variant (0.2), plus the few failures the
/// host reports another way. Payloads the messages do not use are left out.
// Natively only the tests build most variants; the component's transport builds them all.
#[cfg_attr(not(any(target_arch = "wasm32", test)), expect(dead_code, reason = "used by the wasi:http transport only"))]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ErrorCode {
    DnsTimeout,
    DnsError {
        rcode: Option<String>,
        info_code: Option<u16>,
    },
    DestinationNotFound,
    DestinationUnavailable,
    DestinationIpProhibited,
    DestinationIpUnroutable,
    ConnectionRefused,
    ConnectionTerminated,
    ConnectionTimeout,
    ConnectionReadTimeout,
    ConnectionWriteTimeout,
    ConnectionLimitReached,
    TlsProtocolError,
    TlsCertificateError,
    TlsAlertReceived {
        alert_id: Option<u8>,
        alert_message: Option<String>,
    },
    HttpRequestDenied,
    HttpRequestLengthRequired,
    HttpRequestBodySize,
    HttpRequestMethodInvalid,
    HttpRequestUriInvalid,
    HttpRequestUriTooLong,
    HttpRequestHeaderSectionSize,
    HttpRequestHeaderSize,
    HttpRequestTrailerSectionSize,
    HttpRequestTrailerSize,
    HttpResponseIncomplete,
    HttpResponseHeaderSectionSize,
    HttpResponseHeaderSize,
    /// The host's limit on response bodies, in bytes, when it says.
    HttpResponseBodySize(Option<u64>),
    HttpResponseTrailerSectionSize,
    HttpResponseTrailerSize,
    HttpResponseTransferCoding(Option<String>),
    HttpResponseContentCoding(Option<String>),
    HttpResponseTimeout,
    HttpUpgradeFailed,
    HttpProtocolError,
    LoopDetected,
    ConfigurationError,
    InternalError(Option<String>),
    /// The host refused to put a request header into the request (`header-error`): `forbidden`
    /// when its policy forbids the name, otherwise the name or value is malformed.
    HeaderRejected {
        name: String,
        forbidden: bool,
    },
    /// A failure without an error code: a stream error the host did not classify, or a
    /// resource used out of order. The text says what happened.
    Other(String),
}

/// The message and retryability of a failed request to `url`. `redirected_from` is the URL whose
/// redirect led there, if any: a denial then names both, so the model does not conclude that
/// the URL it asked for is the one not allowed.
pub(crate) fn failure(code: &ErrorCode, url: &Url, redirected_from: Option<&Url>) -> ToolError {
    use ErrorCode::*;

    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or_default();
    let origin = format!("{}://{host}:{port}", url.scheme());
    let via = redirected_from.map(|from| format!(" (reached by a redirect from {from})")).unwrap_or_default();
    let retry_later = |what: String| ToolError::retryable(format!("{what}{via}; try again later"));
    let give_up = |what: String| ToolError::failed(format!("{what}{via}"));

    match code {
        HttpRequestDenied => give_up(format!(
            "the host operator has not allowed requests to {origin}: only allowed hosts can be fetched, so \
             retrying will not help. Use a URL on an allowed host, or ask the user to have {host} allowed"
        )),
        DnsTimeout => retry_later(format!("looking up the address of {host} timed out")),
        DnsError { rcode, info_code } => {
            let detail = match (rcode, info_code) {
                (Some(rcode), Some(info)) => format!(" ({rcode}, code {info})"),
                (Some(rcode), None) => format!(" ({rcode})"),
                (None, Some(info)) => format!(" (code {info})"),
                (None, None) => String::new(),
            };
            retry_later(format!(
                "the host name {host} could not be resolved{detail}: check it for typos; if it is right, the \
                 name server may be unreachable for now"
            ))
        }
        DestinationNotFound => retry_later(format!("{host} was not found: check the host name for typos")),
        DestinationUnavailable => retry_later(format!("{origin} is unavailable")),
        DestinationIpProhibited => give_up(format!(
            "the host does not allow connections to the address {host} resolves to (for example a private or \
             loopback address), so retrying will not help: fetch a public URL instead"
        )),
        DestinationIpUnroutable => retry_later(format!("there is no network route to {origin}")),
        ConnectionRefused => retry_later(format!(
            "{origin} refused the connection: the server is down or nothing listens on port {port} (check the \
             port and http vs https)"
        )),
        ConnectionTerminated => retry_later(format!("the connection to {origin} closed before the response arrived")),
        ConnectionTimeout => retry_later(format!("connecting to {origin} timed out")),
        ConnectionReadTimeout => retry_later(format!("reading from {origin} timed out")),
        ConnectionWriteTimeout => retry_later(format!("sending the request to {origin} timed out")),
        ConnectionLimitReached => retry_later("the host has too many open connections".to_owned()),
        TlsProtocolError => give_up(format!(
            "the TLS handshake with {origin} failed: its certificate was rejected (expired, self-signed or for \
             another name) or it does not speak TLS on port {port}. The tool never skips certificate checks, so \
             retrying will not help"
        )),
        TlsCertificateError => give_up(format!(
            "the TLS certificate of {origin} was rejected (expired, self-signed or issued for another name); the \
             tool never skips certificate checks, so this URL cannot be fetched and retrying will not help"
        )),
        TlsAlertReceived { alert_id, alert_message } => {
            let alert = match (alert_message, alert_id) {
                (Some(message), _) => format!(": {message}"),
                (None, Some(id)) => format!(": alert {id}"),
                (None, None) => String::new(),
            };
            give_up(format!(
                "{origin} aborted the TLS handshake{alert}; it does not accept this client's TLS connection, so \
                 retrying will not help"
            ))
        }
        HttpRequestLengthRequired | HttpRequestBodySize => give_up(format!(
            "{origin} or the host wants a request body, which a GET does not have: this URL cannot be fetched \
             with this tool, and retrying will not help"
        )),
        HttpRequestMethodInvalid => ToolError::unavailable(
            "the host does not allow GET requests, so this tool cannot fetch anything here; retrying will not help: \
             tell the user an operator must allow it",
        ),
        HttpRequestUriInvalid => give_up(format!(
            "the host rejected the URL {url} as invalid: percent-encode unusual characters in the path and query \
             and call again"
        )),
        HttpRequestUriTooLong => give_up(format!("the URL is too long for {origin}: shorten the query and call again")),
        HttpRequestHeaderSectionSize | HttpRequestHeaderSize => {
            give_up("the request headers are too large: send fewer or shorter `headers` and call again".to_owned())
        }
        HttpRequestTrailerSectionSize | HttpRequestTrailerSize => give_up(
            "the host rejected the request's trailers, which this tool never sends; retrying will not help".to_owned(),
        ),
        HttpResponseIncomplete => retry_later(format!("the response from {origin} ended before it was complete")),
        HttpResponseHeaderSectionSize | HttpResponseHeaderSize => give_up(format!(
            "the response headers from {origin} are larger than the host accepts, so this URL cannot be fetched \
             and retrying will not help"
        )),
        HttpResponseBodySize(limit) => {
            let limit = limit.map(|limit| format!(" (at most {limit} bytes)")).unwrap_or_default();
            give_up(format!(
                "the response body from {origin} is larger than the host accepts{limit}; retrying will not help: \
                 fetch a smaller resource"
            ))
        }
        HttpResponseTrailerSectionSize | HttpResponseTrailerSize => give_up(format!(
            "the response trailers from {origin} are larger than the host accepts; retrying will not help"
        )),
        HttpResponseTransferCoding(coding) | HttpResponseContentCoding(coding) => {
            let coding = coding.as_deref().map(|coding| format!(" `{coding}`")).unwrap_or_default();
            give_up(format!(
                "{origin} answered with an encoding{coding} the host cannot decode; retrying will not help"
            ))
        }
        HttpResponseTimeout => retry_later(format!("{origin} did not answer in time")),
        HttpUpgradeFailed => give_up(format!("the protocol upgrade with {origin} failed; retrying will not help")),
        HttpProtocolError => ToolError::retryable(format!(
            "the response from {origin} was not valid HTTP, or the connection broke mid-response{via}; try once \
             more, and if it fails again check http vs https and the port"
        )),
        LoopDetected => {
            give_up(format!("the host detected a request loop while fetching {url}; retrying will not help"))
        }
        ConfigurationError => ToolError::unavailable(
            "the host's HTTP client is misconfigured; retrying will not help: tell the user the operator must fix it",
        ),
        InternalError(detail) => {
            let detail = detail.as_deref().map(|detail| format!(": {detail}")).unwrap_or_default();
            ToolError::retryable(format!(
                "the host's HTTP client failed while fetching {url}{detail}{via}; try once more, and stop if it \
                 fails again"
            ))
        }
        HeaderRejected { name, forbidden: true } => ToolError::invalid_arguments(format!(
            "the host does not allow the request header `{name}`: remove it from `headers` and call again"
        )),
        HeaderRejected { name, forbidden: false } => ToolError::invalid_arguments(format!(
            "the host rejected the request header `{name}` as malformed: fix or remove it in `headers`"
        )),
        Other(detail) => give_up(format!("fetching {url} failed: {detail}; retrying will not help")),
    }
}

/// The transport of a native build: none. The tool reaches the network only as a component;
/// natively its logic runs in tests, with a fake transport.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Debug, Default)]
pub(crate) struct NoNetwork;

#[cfg(not(target_arch = "wasm32"))]
impl Transport for NoNetwork {
    fn send(&mut self, _request: &Request) -> Result<Response, ErrorCode> {
        Err(ErrorCode::Other(
            "this native build of http_fetch has no network access; it fetches only as a wasm32-wasip2 component \
             run by a toolcell host"
                .to_owned(),
        ))
    }
}

/// The transport this build uses.
pub(crate) fn default_transport() -> impl Transport {
    #[cfg(target_arch = "wasm32")]
    return crate::wasi_http::WasiHttp;
    #[cfg(not(target_arch = "wasm32"))]
    return NoNetwork;
}
