//! HTTP in a journaled call ([`crate::sandbox::journal`]). Recording keeps each request with
//! what it got, the response read whole before the guest sees it (secrets redacted);
//! replaying answers each request from the record, with no network and no grant consulted.
//! An error is kept as what the guest sees of it (`wasi:http`'s error code), so that the
//! replayed guest takes the same path.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use wasmtime_wasi_http::{Error, WasiBody};

use super::HttpEvents;
use crate::redact::Redactor;
use crate::sandbox::journal::{HttpAnswer, from_hex, to_hex};

/// The future that drives a connection until its response is read.
pub(super) type Drive = Pin<Box<dyn Future<Output = Result<(), Error>> + Send>>;

/// `GET https://example.com/path`, whole, with secrets redacted: how a record names a request.
pub(super) fn request_line(request: &http::Request<WasiBody>, redactor: &Redactor) -> String {
    let mut line = format!("{} {}", request.method(), request.uri());
    redactor.text(&mut line);
    line
}

/// Reads `response` whole while `drive` drives its connection: the response to give the
/// guest (the same bytes, and the same error at the end), what to record, and the rest of
/// the drive.
pub(super) async fn read_whole(
    response: http::Response<WasiBody>,
    mut drive: Drive,
    redactor: &Redactor,
) -> (http::Response<WasiBody>, HttpAnswer, Drive) {
    let (parts, mut body) = response.into_parts();
    let mut read = BytesMut::new();
    let mut failed = None;
    let mut driven = None;
    loop {
        tokio::select! {
            frame = body.frame() => match frame {
                None => break,
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref() {
                        read.extend_from_slice(data);
                    }
                }
                Some(Err(err)) => {
                    failed = Some(guest_view(err));
                    break;
                }
            },
            done = &mut drive, if driven.is_none() => driven = Some(done),
        }
    }
    let read = read.freeze();
    let answer = HttpAnswer::Response {
        status: parts.status.as_u16(),
        headers: headers(&parts.headers, redactor),
        body_hex: to_hex(&redacted(&read, redactor)),
        body_error: failed.as_ref().map(error_text),
    };
    let drive: Drive = match driven {
        Some(done) => Box::pin(async move { done }),
        None => drive,
    };
    (http::Response::from_parts(parts, ReplayedBody::new(read, failed).boxed()), answer, drive)
}

/// The response a recorded answer gives the guest; the refusal or failure it got otherwise.
/// A body that hit its cap marks `events` as a live one does.
pub(super) fn replayed_response(
    answer: HttpAnswer,
    events: &Arc<HttpEvents>,
) -> Result<http::Response<WasiBody>, Error> {
    match answer {
        HttpAnswer::Response { status, headers, body_hex, body_error } => {
            let body =
                from_hex(&body_hex).ok_or_else(|| Error::InternalError(Some("the record's body is not hex".into())))?;
            let failed = body_error.as_deref().map(error_from);
            if matches!(failed, Some(Error::HttpResponseBodySize(_))) {
                events.response_capped.store(true, Ordering::Relaxed);
            }
            let mut response = http::Response::builder().status(status);
            for (name, value) in &headers {
                response = response.header(name, value);
            }
            response
                .body(ReplayedBody::new(Bytes::from(body), failed).boxed())
                .map_err(|err| Error::InternalError(Some(format!("the record's response is not valid: {err}"))))
        }
        HttpAnswer::Failed { error } => Err(error_from(&error)),
        HttpAnswer::Refused { in_flight: true, .. } => Err(Error::ConnectionLimitReached),
        HttpAnswer::Refused { .. } => Err(Error::HttpRequestDenied),
    }
}

/// `error` as the guest sees it: what `wasi:http` turns a connection, TLS or protocol error
/// into, so that a record keeps only error codes.
pub(super) fn guest_view(error: Error) -> Error {
    match error {
        Error::Hyper(_) => Error::HttpProtocolError,
        Error::Connect(err)
            if err.kind() == std::io::ErrorKind::AddrNotAvailable
                || err.to_string().starts_with("failed to lookup address information") =>
        {
            Error::DnsError { rcode: Some("address not available".into()), info_code: None }
        }
        Error::Connect(_) => Error::ConnectionRefused,
        Error::Tls(_) => Error::TlsProtocolError,
        other => other,
    }
}

/// An error code as a record keeps it.
pub(super) fn error_text(error: &Error) -> String {
    format!("{error:?}")
}

/// The error code a record keeps; one this toolcell does not know is an internal error
/// quoting it.
fn error_from(text: &str) -> Error {
    let simple = [
        ("DnsTimeout", Error::DnsTimeout),
        ("DestinationNotFound", Error::DestinationNotFound),
        ("DestinationUnavailable", Error::DestinationUnavailable),
        ("DestinationIpProhibited", Error::DestinationIpProhibited),
        ("DestinationIpUnroutable", Error::DestinationIpUnroutable),
        ("ConnectionRefused", Error::ConnectionRefused),
        ("ConnectionTerminated", Error::ConnectionTerminated),
        ("ConnectionTimeout", Error::ConnectionTimeout),
        ("ConnectionReadTimeout", Error::ConnectionReadTimeout),
        ("ConnectionWriteTimeout", Error::ConnectionWriteTimeout),
        ("ConnectionLimitReached", Error::ConnectionLimitReached),
        ("TlsProtocolError", Error::TlsProtocolError),
        ("TlsCertificateError", Error::TlsCertificateError),
        ("HttpRequestDenied", Error::HttpRequestDenied),
        ("HttpRequestUriInvalid", Error::HttpRequestUriInvalid),
        ("HttpResponseIncomplete", Error::HttpResponseIncomplete),
        ("HttpResponseTimeout", Error::HttpResponseTimeout),
        ("HttpProtocolError", Error::HttpProtocolError),
    ];
    if let Some((_, error)) = simple.into_iter().find(|(name, _)| *name == text) {
        return error;
    }
    if let Some(limit) = text.strip_prefix("HttpResponseBodySize(").and_then(|rest| rest.strip_suffix(')')) {
        let limit = limit.strip_prefix("Some(").and_then(|n| n.strip_suffix(')')).and_then(|n| n.parse().ok());
        return Error::HttpResponseBodySize(limit);
    }
    if text.starts_with("DnsError") {
        return Error::DnsError { rcode: Some("address not available".into()), info_code: None };
    }
    Error::InternalError(Some(text.to_owned()))
}

/// The response headers, values as text (secrets redacted).
fn headers(headers: &http::HeaderMap, redactor: &Redactor) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(name, value)| {
            let mut value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            redactor.text(&mut value);
            (name.as_str().to_owned(), value)
        })
        .collect()
}

/// A body with secrets redacted, when it is text (a binary body is kept as it is).
fn redacted(body: &Bytes, redactor: &Redactor) -> Vec<u8> {
    match std::str::from_utf8(body) {
        Ok(text) => {
            let mut text = text.to_owned();
            redactor.text(&mut text);
            text.into_bytes()
        }
        Err(_) => body.to_vec(),
    }
}

/// A body read already: its bytes, then the error reading it ended with, if any.
struct ReplayedBody {
    data: Option<Bytes>,
    failed: Option<Error>,
}

impl ReplayedBody {
    fn new(data: Bytes, failed: Option<Error>) -> Self {
        Self { data: (!data.is_empty()).then_some(data), failed }
    }

    fn boxed(self) -> WasiBody {
        BodyExt::boxed_unsync(self)
    }
}

impl Body for ReplayedBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        if let Some(data) = self.data.take() {
            return Poll::Ready(Some(Ok(Frame::data(data))));
        }
        Poll::Ready(self.failed.take().map(Err))
    }

    fn is_end_stream(&self) -> bool {
        self.data.is_none() && self.failed.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        let length = self.data.as_ref().map_or(0, |data| data.len() as u64);
        if self.failed.is_some() { SizeHint::default() } else { SizeHint::with_exact(length) }
    }
}
