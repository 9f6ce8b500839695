//! Cancelling a session's call when its client hangs up.
//!
//! Over a session, rmcp answers each `tools/call` POST on an event stream of its own, but
//! does not notice when the client closes that stream before the answer: the tool would run
//! on to its timeout, holding a slot. (Without a session, rmcp cancels on hang-up itself.)
//! This layer watches the response body and, when it is dropped unfinished, sends the
//! session the `notifications/cancelled` the client could no longer send.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::{Frame, SizeHint};
use serde_json::{Value, json};

use crate::http::Mcp;

/// The header naming a session.
const SESSION: &str = "mcp-session-id";

/// What the layer needs: the endpoint to send cancellations to, and the body limit.
#[derive(Clone)]
pub(crate) struct HangUps {
    pub(crate) mcp: Mcp,
    pub(crate) max_body_bytes: usize,
}

pub(crate) async fn cancel_on_hang_up(State(hang_ups): State<HangUps>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !request.headers().contains_key(SESSION) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, hang_ups.max_body_bytes).await else {
        let message = format!(
            "the request body is larger than the {} bytes this server accepts: send less, or ask the operator to raise \
             --max-body",
            hang_ups.max_body_bytes
        );
        return (StatusCode::PAYLOAD_TOO_LARGE, message).into_response();
    };
    let call_id = tool_call_id(&bytes);
    let headers = parts.headers.clone();
    let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    match call_id {
        Some(id) => {
            let (parts, body) = response.into_parts();
            let watch = Watched { body, hang_up: Some(HangUp { mcp: hang_ups.mcp, headers, id }) };
            Response::from_parts(parts, Body::new(watch))
        }
        None => response,
    }
}

/// The JSON-RPC id of a `tools/call` request.
fn tool_call_id(body: &[u8]) -> Option<Value> {
    let message: Value = serde_json::from_slice(body).ok()?;
    (message.get("method")? == "tools/call").then(|| message.get("id").cloned()).flatten()
}

/// A response body that cancels its call if it is dropped before its end.
struct Watched {
    body: Body,
    hang_up: Option<HangUp>,
}

impl http_body::Body for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.hang_up = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(hang_up) = self.hang_up.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(hang_up.cancel());
        }
    }
}

/// The call to cancel: its session's headers and its request id.
struct HangUp {
    mcp: Mcp,
    headers: HeaderMap,
    id: Value,
}

impl HangUp {
    async fn cancel(self) {
        tracing::debug!(id = %self.id, "the client hung up on a call: cancelling it");
        let notification = json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": self.id, "reason": "the client closed the connection"},
        });
        let mut request = Request::post("/mcp").body(Body::from(notification.to_string())).unwrap_or_default();
        // The same session, protocol version, Host and Origin as the call.
        for name in [SESSION, "mcp-protocol-version", "host", "origin"] {
            if let Some(value) = self.headers.get(name) {
                request.headers_mut().insert(name, value.clone());
            }
        }
        request.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        request.headers_mut().insert(header::ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        let response = self.mcp.handle(request).await;
        if !response.status().is_success() {
            tracing::debug!(status = %response.status(), "the session did not take the cancellation");
        }
    }
}
