//! The response to a request that carried a secret, with the secret redacted from its
//! headers and body before the guest reads a byte: a server that echoes what it received
//! (a debugging endpoint, an error page quoting the request) hands the tool nothing.
//!
//! The body is redacted as it streams: each chunk is held back by the length of the longest
//! spelling less one, so a secret split across chunks is still caught whole. Its length
//! changes, so `content-length` is dropped.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Bytes, BytesMut};
use http::HeaderValue;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use wasmtime_wasi_http::{Error, WasiBody};

use crate::redact::Redactor;

/// `response` with `secrets` redacted from its headers and body.
pub(super) fn redact_response(response: http::Response<WasiBody>, secrets: Redactor) -> http::Response<WasiBody> {
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(http::header::CONTENT_LENGTH);
    for value in parts.headers.values_mut() {
        if let Some(redacted) = secrets.bytes(value.as_bytes()) {
            *value = HeaderValue::from_bytes(&redacted).unwrap_or_else(|_| HeaderValue::from_static("[REDACTED]"));
        }
    }
    let body = RedactingBody { inner: body, held: BytesMut::new(), secrets, ended: false };
    http::Response::from_parts(parts, body.boxed_unsync())
}

struct RedactingBody {
    inner: WasiBody,
    /// The tail of what came so far, which may be the start of a secret.
    held: BytesMut,
    secrets: Redactor,
    ended: bool,
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
    /// What is still held, at the end of the body.
    fn flush(&mut self) -> Option<Result<Frame<Bytes>, Error>> {
        let held = self.held.split().freeze();
        (!held.is_empty()).then(|| Ok(Frame::data(held)))
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
        let chunks = Chunks(VecDeque::from(["echo: tok-12", "3456", "7890 and tok-1234567890", "!", "tok-"]));
        let response = http::Response::builder()
            .header("x-echo", format!("Bearer {SECRET}"))
            .header("content-length", "999")
            .body(chunks.boxed_unsync())
            .expect("response");
        let redacted = redact_response(response, Redactor::new([SECRET.to_owned()]));
        assert_eq!(redacted.headers()["x-echo"], format!("Bearer {REDACTED}").as_str());
        assert!(redacted.headers().get("content-length").is_none());
        let body = redacted.into_body().collect().await.expect("body").to_bytes();
        assert_eq!(std::str::from_utf8(&body).expect("utf-8"), format!("echo: {REDACTED} and {REDACTED}!tok-"));
    }
}
