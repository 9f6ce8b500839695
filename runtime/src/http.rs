//! Outbound HTTP for tools (`wasi:http/outgoing-handler`): every request is checked against
//! the tool's allow-list before anything leaves the host, and response bodies are capped.
//!
//! The guest never resolves names or opens sockets: the host does both, only for requests
//! that passed the check.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use crate::policy::{HostPattern, Scheme};

/// A request the allow-list refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeniedRequest {
    /// `GET https://example.com/path`.
    pub(crate) request: String,
    /// The `allow_hosts` entry that would allow it.
    pub(crate) grant: String,
}

/// The wasi-http hooks of one call.
pub(crate) struct HttpGate {
    allow_hosts: Arc<[HostPattern]>,
    max_response_bytes: u64,
    /// Every request refused during the call, in order.
    pub(crate) denied: Vec<DeniedRequest>,
    /// Set when a response body went past the cap.
    pub(crate) response_capped: Arc<AtomicBool>,
}

impl HttpGate {
    pub(crate) fn new(allow_hosts: Arc<[HostPattern]>, max_response_bytes: u64) -> Self {
        Self { allow_hosts, max_response_bytes, denied: Vec::new(), response_capped: Arc::default() }
    }

    /// Checks a request's scheme, host and port against the allow-list.
    fn check(&self, request: &http::Request<WasiBody>) -> Result<(), DeniedRequest> {
        let uri = request.uri();
        let described = format!("{} {uri}", request.method());
        let denied = |grant: String| DeniedRequest { request: described.clone(), grant };
        let scheme = match uri.scheme_str() {
            Some("http") => Scheme::Http,
            Some("https") => Scheme::Https,
            _ => return Err(denied("(only http and https requests can be allowed)".into())),
        };
        let host = uri.host().unwrap_or_default().to_ascii_lowercase();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let host = host.strip_suffix('.').unwrap_or(host);
        let default_port = if scheme == Scheme::Https { 443 } else { 80 };
        let port = uri.port_u16().unwrap_or(default_port);
        if self.allow_hosts.iter().any(|pattern| pattern.matches(scheme, host, port)) {
            return Ok(());
        }
        let host = if host.contains(':') { format!("[{host}]") } else { host.to_owned() };
        Err(denied(if port == default_port { host } else { format!("{host}:{port}") }))
    }
}

impl WasiHttpHooks for HttpGate {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _request_done: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<
        dyn Future<
                Output = Result<(http::Response<WasiBody>, Box<dyn Future<Output = Result<(), Error>> + Send>), Error>,
            > + Send,
    > {
        if let Err(denied) = self.check(&request) {
            tracing::info!(request = %denied.request, grant = %denied.grant, "HTTP request denied");
            self.denied.push(denied);
            return Box::new(async { Err(Error::HttpRequestDenied) });
        }
        let (limit, capped) = (self.max_response_bytes, self.response_capped.clone());
        Box::new(async move {
            let (response, io) = wasmtime_wasi_http::default_send_request(request, options).await?;
            let response = response
                .map(|body| CappedBody { inner: body.boxed_unsync(), remaining: limit, limit, capped }.boxed_unsync());
            Ok((response, Box::new(io) as Box<dyn Future<Output = Result<(), Error>> + Send>))
        })
    }
}

/// A response body that fails once more than `limit` bytes have come through.
struct CappedBody {
    inner: WasiBody,
    remaining: u64,
    limit: u64,
    capped: Arc<AtomicBool>,
}

impl Body for CappedBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if let Some(Ok(frame)) = &frame
            && let Some(data) = frame.data_ref()
        {
            let size = data.len() as u64;
            if size > self.remaining {
                self.remaining = 0;
                self.capped.store(true, Ordering::Relaxed);
                return Poll::Ready(Some(Err(Error::HttpResponseBodySize(Some(self.limit)))));
            }
            self.remaining -= size;
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::{Empty, Full};

    use super::*;

    fn gate(patterns: &[&str]) -> HttpGate {
        let patterns: Vec<HostPattern> = patterns.iter().map(|p| p.parse().expect("pattern")).collect();
        HttpGate::new(patterns.into(), 100)
    }

    fn request(uri: &str) -> http::Request<WasiBody> {
        let body = Empty::<Bytes>::new().map_err(|never| match never {}).boxed_unsync();
        http::Request::get(uri).body(body).expect("request")
    }

    #[test]
    fn denials_name_the_grant_that_would_allow_them() {
        let gate = gate(&["example.com", "127.0.0.1:8080"]);
        assert!(gate.check(&request("https://example.com/a?b")).is_ok());
        assert!(gate.check(&request("http://EXAMPLE.com./")).is_ok());
        assert!(gate.check(&request("http://127.0.0.1:8080/")).is_ok());
        let denied = |uri: &str| gate.check(&request(uri)).expect_err(uri).grant;
        assert_eq!(denied("https://evil.net/x"), "evil.net");
        assert_eq!(denied("http://example.com:8080/"), "example.com:8080");
        assert_eq!(denied("http://127.0.0.1/"), "127.0.0.1");
        assert_eq!(denied("http://[::1]:9000/"), "[::1]:9000");
        assert_eq!(denied("http://localhost:8080/"), "localhost:8080");
        let denial = gate.check(&request("https://evil.net/x?q=1")).expect_err("denied");
        assert_eq!(denial.request, "GET https://evil.net/x?q=1");
    }

    #[tokio::test]
    async fn bodies_past_the_cap_fail_and_say_so() {
        let capped = Arc::new(AtomicBool::new(false));
        let inner = Full::new(Bytes::from(vec![b'x'; 101])).map_err(|never| match never {}).boxed_unsync();
        let body = CappedBody { inner, remaining: 100, limit: 100, capped: capped.clone() };
        let err = body.collect().await.expect_err("over the cap");
        assert!(matches!(err, Error::HttpResponseBodySize(Some(100))), "{err:?}");
        assert!(capped.load(Ordering::Relaxed));

        let inner = Full::new(Bytes::from(vec![b'x'; 100])).map_err(|never| match never {}).boxed_unsync();
        let body = CappedBody { inner, remaining: 100, limit: 100, capped: Arc::default() };
        assert_eq!(body.collect().await.expect("within the cap").to_bytes().len(), 100);
    }
}
