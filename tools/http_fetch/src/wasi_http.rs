//! The component's transport: `wasi:http/outgoing-handler` 0.2 through the `wasip2` bindings,
//! used blocking (each wait is one `pollable.block`), so no async runtime is needed.

use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    ErrorCode as WasiErrorCode, Fields, HeaderError, IncomingBody, IncomingResponse, Method, OutgoingRequest,
    RequestOptions, Scheme, http_error_code,
};
use wasip2::io::streams::{InputStream, StreamError};

use crate::transport::{Body, ErrorCode, Request, Response, Transport};

/// How long connecting (TCP and TLS) may take. The host's own defaults are minutes long; a
/// model is better served by a prompt, retryable timeout.
const CONNECT_TIMEOUT_NS: u64 = 10_000_000_000;
/// How long the server may take to start its response once the request is sent.
const FIRST_BYTE_TIMEOUT_NS: u64 = 30_000_000_000;
/// How long the server may pause between two pieces of the response.
const BETWEEN_BYTES_TIMEOUT_NS: u64 = 30_000_000_000;

/// Sends requests through the host's `wasi:http/outgoing-handler`.
#[derive(Debug, Default)]
pub(crate) struct WasiHttp;

impl Transport for WasiHttp {
    fn send(&mut self, request: &Request) -> Result<Response, ErrorCode> {
        let fields = Fields::new();
        for (name, value) in &request.headers {
            fields.append(name, value.as_bytes()).map_err(|error| ErrorCode::HeaderRejected {
                name: name.clone(),
                forbidden: matches!(error, HeaderError::Forbidden),
            })?;
        }
        let outgoing = OutgoingRequest::new(fields);
        let scheme = if request.is_https() { Scheme::Https } else { Scheme::Http };
        outgoing.set_method(&Method::Get).map_err(|()| ErrorCode::HttpRequestMethodInvalid)?;
        outgoing.set_scheme(Some(&scheme)).map_err(|()| ErrorCode::HttpRequestUriInvalid)?;
        outgoing.set_authority(Some(&request.authority())).map_err(|()| ErrorCode::HttpRequestUriInvalid)?;
        outgoing.set_path_with_query(Some(request.path_with_query())).map_err(|()| ErrorCode::HttpRequestUriInvalid)?;

        let options = RequestOptions::new();
        // A host that does not support a timeout refuses to set it; its own default then applies.
        let _ = options.set_connect_timeout(Some(CONNECT_TIMEOUT_NS));
        let _ = options.set_first_byte_timeout(Some(FIRST_BYTE_TIMEOUT_NS));
        let _ = options.set_between_bytes_timeout(Some(BETWEEN_BYTES_TIMEOUT_NS));

        let pending = outgoing_handler::handle(outgoing, Some(options)).map_err(convert)?;
        let response = loop {
            match pending.get() {
                None => pending.subscribe().block(),
                Some(Ok(Ok(response))) => break response,
                Some(Ok(Err(code))) => return Err(convert(code)),
                Some(Err(())) => return Err(ErrorCode::Other("the host had already handed out the response".into())),
            }
        };
        let status = response.status();
        let headers = response.headers().entries();
        let body = response.consume().map_err(|()| ErrorCode::Other("the response body was already taken".into()))?;
        let stream = body.stream().map_err(|()| ErrorCode::Other("the response stream was already taken".into()))?;
        Ok(Response { status, headers, body: Box::new(WasiBody { stream, _body: body, _response: response }) })
    }
}

/// A response body being read. Fields drop in declaration order, and the order matters: the
/// stream is a child resource of the body and must be dropped before it.
struct WasiBody {
    stream: InputStream,
    _body: IncomingBody,
    _response: IncomingResponse,
}

impl Body for WasiBody {
    fn read(&mut self, max: usize) -> Result<Option<Vec<u8>>, ErrorCode> {
        let len = u64::try_from(max).unwrap_or(u64::MAX);
        match self.stream.blocking_read(len) {
            Ok(chunk) => Ok(Some(chunk)),
            Err(StreamError::Closed) => Ok(None),
            Err(StreamError::LastOperationFailed(error)) => Err(http_error_code(&error)
                .map(convert)
                .unwrap_or_else(|| ErrorCode::Other(format!("reading the body failed: {}", error.to_debug_string())))),
        }
    }
}

/// The host's error code as the tool's mirror of it.
fn convert(code: WasiErrorCode) -> ErrorCode {
    match code {
        WasiErrorCode::DnsTimeout => ErrorCode::DnsTimeout,
        WasiErrorCode::DnsError(payload) => ErrorCode::DnsError { rcode: payload.rcode, info_code: payload.info_code },
        WasiErrorCode::DestinationNotFound => ErrorCode::DestinationNotFound,
        WasiErrorCode::DestinationUnavailable => ErrorCode::DestinationUnavailable,
        WasiErrorCode::DestinationIpProhibited => ErrorCode::DestinationIpProhibited,
        WasiErrorCode::DestinationIpUnroutable => ErrorCode::DestinationIpUnroutable,
        WasiErrorCode::ConnectionRefused => ErrorCode::ConnectionRefused,
        WasiErrorCode::ConnectionTerminated => ErrorCode::ConnectionTerminated,
        WasiErrorCode::ConnectionTimeout => ErrorCode::ConnectionTimeout,
        WasiErrorCode::ConnectionReadTimeout => ErrorCode::ConnectionReadTimeout,
        WasiErrorCode::ConnectionWriteTimeout => ErrorCode::ConnectionWriteTimeout,
        WasiErrorCode::ConnectionLimitReached => ErrorCode::ConnectionLimitReached,
        WasiErrorCode::TlsProtocolError => ErrorCode::TlsProtocolError,
        WasiErrorCode::TlsCertificateError => ErrorCode::TlsCertificateError,
        WasiErrorCode::TlsAlertReceived(payload) => {
            ErrorCode::TlsAlertReceived { alert_id: payload.alert_id, alert_message: payload.alert_message }
        }
        WasiErrorCode::HttpRequestDenied => ErrorCode::HttpRequestDenied,
        WasiErrorCode::HttpRequestLengthRequired => ErrorCode::HttpRequestLengthRequired,
        WasiErrorCode::HttpRequestBodySize(_) => ErrorCode::HttpRequestBodySize,
        WasiErrorCode::HttpRequestMethodInvalid => ErrorCode::HttpRequestMethodInvalid,
        WasiErrorCode::HttpRequestUriInvalid => ErrorCode::HttpRequestUriInvalid,
        WasiErrorCode::HttpRequestUriTooLong => ErrorCode::HttpRequestUriTooLong,
        WasiErrorCode::HttpRequestHeaderSectionSize(_) => ErrorCode::HttpRequestHeaderSectionSize,
        WasiErrorCode::HttpRequestHeaderSize(_) => ErrorCode::HttpRequestHeaderSize,
        WasiErrorCode::HttpRequestTrailerSectionSize(_) => ErrorCode::HttpRequestTrailerSectionSize,
        WasiErrorCode::HttpRequestTrailerSize(_) => ErrorCode::HttpRequestTrailerSize,
        WasiErrorCode::HttpResponseIncomplete => ErrorCode::HttpResponseIncomplete,
        WasiErrorCode::HttpResponseHeaderSectionSize(_) => ErrorCode::HttpResponseHeaderSectionSize,
        WasiErrorCode::HttpResponseHeaderSize(_) => ErrorCode::HttpResponseHeaderSize,
        WasiErrorCode::HttpResponseBodySize(limit) => ErrorCode::HttpResponseBodySize(limit),
        WasiErrorCode::HttpResponseTrailerSectionSize(_) => ErrorCode::HttpResponseTrailerSectionSize,
        WasiErrorCode::HttpResponseTrailerSize(_) => ErrorCode::HttpResponseTrailerSize,
        WasiErrorCode::HttpResponseTransferCoding(coding) => ErrorCode::HttpResponseTransferCoding(coding),
        WasiErrorCode::HttpResponseContentCoding(coding) => ErrorCode::HttpResponseContentCoding(coding),
        WasiErrorCode::HttpResponseTimeout => ErrorCode::HttpResponseTimeout,
        WasiErrorCode::HttpUpgradeFailed => ErrorCode::HttpUpgradeFailed,
        WasiErrorCode::HttpProtocolError => ErrorCode::HttpProtocolError,
        WasiErrorCode::LoopDetected => ErrorCode::LoopDetected,
        WasiErrorCode::ConfigurationError => ErrorCode::ConfigurationError,
        WasiErrorCode::InternalError(detail) => ErrorCode::InternalError(detail),
    }
}
