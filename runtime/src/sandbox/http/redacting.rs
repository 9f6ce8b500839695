//! A response to a tool the host sends secrets for, with the secrets redacted from its headers
//! and body before the guest reads a byte: a server that echoes what it received (a debugging
//! endpoint, an error page quoting the request, a value it stored) hands the tool nothing.
//!
//! The body is redacted as it streams: each chunk is held back by the length of the longest
//! spelling less one, so a secret split across chunks is still caught whole, and a body that
//! ends with the start of a secret has that redacted too. Its length changes, so
//! `content-length` is dropped. A header whose name holds a secret is dropped. A compressed
//! body cannot be checked: the host asks for none, and reading one anyway fails.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Bytes, BytesMut};
use http::HeaderValue;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use wasmtime_wasi_http::{Error, WasiBody};

use crate::redact::Redactor;

/// `response` with `secrets` redacted from its headers and body. A compressed body (the host
/// asked for none) cannot be checked, so reading it fails.
pub(super) fn redact_response(response: http::Response<WasiBody>, secrets: Redactor) -> http::Response<WasiBody> {
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(http::header::CONTENT_LENGTH);
    let coding = parts
        .headers
        .get(http::header::CONTENT_ENCODING)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).trim().to_ascii_lowercase());
    let compressed = coding.filter(|coding| !coding.is_empty() && coding != "identity");
    // A header whose name carries a secret goes: a name cannot hold `[REDACTED]`.
    let named: Vec<http::HeaderName> =
        parts.headers.keys().filter(|name| secrets.bytes_ignoring_case(name.as_str().as_bytes())).cloned().collect();
    for name in named {
        parts.headers.remove(name);
    }
    for value in parts.headers.values_mut() {
        if let Some(redacted) = secrets.bytes(value.as_bytes()) {
            *value = HeaderValue::from_bytes(&redacted).unwrap_or_else(|_| HeaderValue::from_static("[REDACTED]"));
        }
    }
    let body = RedactingBody { inner: body, held: BytesMut::new(), secrets, ended: false, compressed };
    http::Response::from_parts(parts, body.boxed_unsync())
}

struct RedactingBody {
    inner: WasiBody,
    /// The tail of what came so far, which may be the start of a secret.
    held: BytesMut,
    secrets: Redactor,
    ended: bool,
    /// The body's coding, when it is compressed: then it is not passed on.
    compressed: Option<String>,
}

impl RedactingBody {
    /// Redacts `held` and `data` together; returns what can be passed on, keeping the tail.
    fn pass(&mut self, data: &[u8]) -> Bytes {
        self.held.extend_from_slice(data);
        if let Some(redacted) = self.secrets.bytes(&self.held) {
            self.held = BytesMut::from(&redacted[..]);
        }
        let keep = self.secrets.longest().saturating_sub(1).min(self.held.len());
        self.held.split_to(self.held.len() - keep).freeze()
    }
}

impl Body for RedactingBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        if let Some(coding) = self.compressed.take() {
            self.ended = true;
            return Poll::Ready(Some(Err(Error::HttpResponseContentCoding(Some(coding)))));
        }
        loop {
            if self.ended {
                return Poll::Ready(None);
            }
            match ready!(Pin::new(&mut self.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        let passed = self.pass(&data);
                        if !passed.is_empty() {
                            return Poll::Ready(Some(Ok(Frame::data(passed))));
                        }
                    }
                    // Trailers end the body: what is held goes first, then they are dropped
                    // (a trailer can echo as well as a header, and tools do not read them).
                    Err(_) => {
                        self.ended = true;
                        return Poll::Ready(self.flush());
                    }
                },
                Some(Err(err)) => return Poll::Ready(Some(Err(err))),
                None => {
                    self.ended = true;
                    return Poll::Ready(self.flush());
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

impl RedactingBody {
    /// What is still held, at the end of the body; a tail that is the start of a secret (a body
    /// cut mid-secret) is redacted too.
    fn flush(&mut self) -> Option<Result<Frame<Bytes>, Error>> {
        let mut held = self.held.split().to_vec();
        self.secrets.redact_partial_tail(&mut held);
        (!held.is_empty()).then(|| Ok(Frame::data(Bytes::from(held))))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::policy::REDACTED;

    const SECRET: &str = "tok-1234567890";

    /// A body that yields its chunks one frame each.
    struct Chunks(VecDeque<&'static str>);

    impl Body for Chunks {
        type Data = Bytes;
        type Error = Error;

        fn poll_frame(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
            Poll::Ready(self.0.pop_front().map(|chunk| Ok(Frame::data(Bytes::from_static(chunk.as_bytes())))))
        }
    }

    #[tokio::test]
    async fn a_secret_split_across_chunks_is_redacted_whole() {
        let chunks = Chunks(VecDeque::from(["echo: tok-12", "3456", "7890 and tok-1234567890", "!", "tok-1234"]));
        let response = http::Response::builder()
            .header("x-echo", format!("Bearer {SECRET}"))
            .header("content-length", "999")
            .body(chunks.boxed_unsync())
            .expect("response");
        let redacted = redact_response(response, Redactor::new([SECRET.to_owned()]));
        assert_eq!(redacted.headers()["x-echo"], format!("Bearer {REDACTED}").as_str());
        assert!(redacted.headers().get("content-length").is_none());
        let body = redacted.into_body().collect().await.expect("body").to_bytes();
        assert_eq!(std::str::from_utf8(&body).expect("utf-8"), format!("echo: {REDACTED} and {REDACTED}!{REDACTED}"));
    }

    #[tokio::test]
    async fn a_compressed_body_is_refused_and_a_header_named_by_a_secret_dropped() {
        let response = http::Response::builder()
            .header("content-encoding", "gzip")
            .header(format!("x-{SECRET}"), "1")
            .body(Chunks(VecDeque::from(["compressed bytes"])).boxed_unsync())
            .expect("response");
        let redacted = redact_response(response, Redactor::new([SECRET.to_owned()]));
        assert_eq!(redacted.headers().len(), 1, "{:?}", redacted.headers());
        let err = redacted.into_body().collect().await.expect_err("compressed");
        assert!(matches!(err, Error::HttpResponseContentCoding(Some(ref coding)) if coding == "gzip"), "{err:?}");
    }
}
