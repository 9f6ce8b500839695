//! OAuth at the HTTP layer: the `401` a request without a good token gets, the `403` scope
//! challenge for a call its token does not grant, and the metadata document.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::{Caller, Refusal, Verifier};

/// `401` with the challenge that says where the metadata is and, for a bad token, what was
/// wrong. The body of the request is never read, so the connection closes after it.
pub(crate) fn unauthorized(verifier: &Verifier, refusal: &Refusal) -> Response {
    if let Refusal::KeysUnavailable(err) = refusal {
        // The server's own trouble, not the client's: retrying later may work.
        tracing::warn!(%err, "refused a request: the issuer's keys are unavailable");
        let message = "the server cannot check access tokens now (its authorization server's keys are unavailable): \
                       retry in a moment";
        let mut response = (StatusCode::SERVICE_UNAVAILABLE, axum::Json(json!({ "error": message }))).into_response();
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return response;
    }
    tracing::debug!(%refusal, "refused a request's token");
    let mut response = (StatusCode::UNAUTHORIZED, axum::Json(json!({ "error": refusal.to_string() }))).into_response();
    let headers = response.headers_mut();
    if let Ok(challenge) = HeaderValue::from_str(&verifier.challenge(refusal)) {
        headers.insert(header::WWW_AUTHENTICATE, challenge);
    }
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Refuses a `tools/call` of a tool some scope grants but not the caller's token's, with MCP's
/// scope challenge (`403`, `insufficient_scope`, the scopes that would), so the client can ask
/// for them. Anything else goes on; the handler keeps the caller to its tools regardless.
pub(crate) async fn require_scope(
    State(verifier): State<Option<Arc<Verifier>>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(verifier) = verifier else { return next.run(request).await };
    let Some(caller) = request.extensions().get::<Caller>().cloned() else { return next.run(request).await };
    let (parts, body) = request.into_parts();
    // The body was read whole already (`body::receive`): this only takes the bytes.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return (StatusCode::BAD_REQUEST, axum::Json(json!({ "error": "the request body could not be read" })))
            .into_response();
    };
    if let Some(tool) = called_tool(&bytes)
        && !verifier.permit(&caller).allows(&tool)
        && !verifier.scopes_granting(&tool).is_empty()
    {
        let message = format!("the token's scopes do not grant the tool `{tool}`: ask for one of the scopes named");
        let mut response = (StatusCode::FORBIDDEN, axum::Json(json!({ "error": message }))).into_response();
        if let Ok(challenge) = HeaderValue::from_str(&verifier.insufficient_scope(&tool)) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
        }
        return response;
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// The tool a JSON-RPC `tools/call` request names, if the body is one.
fn called_tool(body: &[u8]) -> Option<String> {
    let message: Value = serde_json::from_slice(body).ok()?;
    if message.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    Some(message.get("params")?.get("name")?.as_str()?.to_owned())
}

/// Adds the Protected Resource Metadata (RFC 9728) at its well-known path for the resource,
/// and at the bare well-known path clients try first when they know only the host.
pub(crate) fn serve_metadata(router: Router, verifier: &Arc<Verifier>) -> Router {
    let document = Arc::new(verifier.metadata());
    let answer = move || {
        let document = document.clone();
        async move {
            let headers = [
                (header::CACHE_CONTROL, HeaderValue::from_static("max-age=300")),
                (header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*")),
            ];
            (headers, axum::Json((*document).clone())).into_response()
        }
    };
    let mut router = router.route("/.well-known/oauth-protected-resource", get(answer.clone()));
    let path = verifier.metadata_path();
    if path != "/.well-known/oauth-protected-resource" {
        router = router.route(&path, get(answer));
    }
    router
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tool_calls_name_a_tool() {
        assert_eq!(
            called_tool(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"files"}}"#).as_deref(),
            Some("files")
        );
        assert_eq!(called_tool(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#), None);
        assert_eq!(called_tool(br#"[{"method":"tools/call","params":{"name":"files"}}]"#), None);
        assert_eq!(called_tool(b"not json"), None);
    }
}
