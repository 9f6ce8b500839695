//! Request bodies, received within one budget of bytes for the whole server.
//!
//! Every body is read in full before the endpoint sees it (rmcp would read it whole
//! anyway). Without a budget, 40 connections each holding a 4 MiB body one byte short cost
//! 161 MiB. Here the bytes of bodies being received count against
//! [`HttpOptions::max_buffered_body_bytes`](crate::HttpOptions); past it a request is refused
//! with 503 and `Retry-After` instead of buffered. The first [`FREE_BYTES`] of each body are
//! not counted, so that small requests (nearly every MCP message) are never refused: they
//! cost no more than the read buffer every connection has, and the connections are capped.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Body as _;
use serde_json::json;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The bytes of each body not counted against the budget.
pub(crate) const FREE_BYTES: usize = 16 * 1024;

/// The budget, and what each body may be.
#[derive(Debug)]
pub(crate) struct Budget {
    bytes: Arc<Semaphore>,
    total: usize,
    max_body_bytes: usize,
    read_timeout: Duration,
}

impl Budget {
    /// A budget of `total` bytes (raised to one largest body: a smaller budget would refuse
    /// every large body forever).
    pub(crate) fn new(total: usize, max_body_bytes: usize, read_timeout: Duration) -> Arc<Self> {
        let total = total.max(max_body_bytes.saturating_sub(FREE_BYTES)).min(Semaphore::MAX_PERMITS);
        Arc::new(Self { bytes: Arc::new(Semaphore::new(total)), total, max_body_bytes, read_timeout })
    }

    fn busy(&self) -> Response {
        let message = format!(
            "the server is receiving as many request bytes as it holds at once ({} bytes of other requests): retry \
             in a moment, or send a smaller request",
            self.total
        );
        let mut response = (StatusCode::SERVICE_UNAVAILABLE, axum::Json(json!({ "error": message }))).into_response();
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        response
    }

    fn too_large(&self) -> Response {
        let message = format!(
            "the request body is larger than the {} bytes this server accepts: send less, or ask the operator to \
             raise --max-body",
            self.max_body_bytes
        );
        (StatusCode::PAYLOAD_TOO_LARGE, axum::Json(json!({ "error": message }))).into_response()
    }

    fn too_slow(&self) -> Response {
        let message = format!(
            "the request body did not arrive within {} s: send it at once, or send less",
            self.read_timeout.as_secs_f64()
        );
        (StatusCode::REQUEST_TIMEOUT, axum::Json(json!({ "error": message }))).into_response()
    }
}

/// Reads the request's body within the budget, then passes the request on with it.
pub(crate) async fn receive(State(budget): State<Arc<Budget>>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    if body.is_end_stream() {
        return next.run(Request::from_parts(parts, body)).await;
    }
    // A declared length is checked before a byte is read.
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<usize>().ok());
    if let Some(declared) = declared {
        if declared > budget.max_body_bytes {
            return budget.too_large();
        }
        if declared.saturating_sub(FREE_BYTES) > budget.bytes.available_permits() {
            return budget.busy();
        }
    }
    let received = tokio::time::timeout(budget.read_timeout, read(&budget, body, declared)).await;
    match received {
        Ok(Ok(bytes)) => next.run(Request::from_parts(parts, Body::from(bytes))).await,
        Ok(Err(refused)) => refused.response(&budget),
        Err(_) => budget.too_slow(),
    }
}

/// Why a body was not received.
enum Refused {
    TooLarge,
    Busy,
    Broken(axum::Error),
}

impl Refused {
    fn response(self, budget: &Budget) -> Response {
        match self {
            Self::TooLarge => budget.too_large(),
            Self::Busy => budget.busy(),
            Self::Broken(err) => {
                let message = format!("the request body could not be read ({err}): send the request again");
                (StatusCode::BAD_REQUEST, axum::Json(json!({ "error": message }))).into_response()
            }
        }
    }
}

/// Reads the body whole, counting every byte past [`FREE_BYTES`] against the budget until
/// it is read.
async fn read(budget: &Budget, body: Body, declared: Option<usize>) -> Result<Bytes, Refused> {
    let mut body = std::pin::pin!(body);
    let mut received: Vec<u8> = Vec::with_capacity(declared.unwrap_or(0).min(FREE_BYTES));
    let mut counted: Option<OwnedSemaphorePermit> = None;
    while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        let Ok(data) = frame.map_err(Refused::Broken)?.into_data() else { continue };
        let length = received.len().saturating_add(data.len());
        if length > budget.max_body_bytes {
            return Err(Refused::TooLarge);
        }
        let owed = length
            .saturating_sub(FREE_BYTES)
            .saturating_sub(counted.as_ref().map_or(0, OwnedSemaphorePermit::num_permits));
        if owed > 0 {
            let owed = u32::try_from(owed).map_err(|_| Refused::TooLarge)?;
            let permit = budget.bytes.clone().try_acquire_many_owned(owed).map_err(|_| Refused::Busy)?;
            match counted.as_mut() {
                Some(counted) => counted.merge(permit),
                None => counted = Some(permit),
            }
        }
        received.extend_from_slice(&data);
    }
    // Received: the bytes go on to the endpoint, and the budget to other requests.
    drop(counted);
    Ok(Bytes::from(received))
}
