//! What a request carries into its call besides the arguments. Host context from HTTP
//! headers: `--context-header X-User-Id=user_id` copies a request header into each call's
//! host context (never into the schema), so one server can tell its users apart. And the
//! caller's trace context, which the call's span continues.

use std::str::FromStr;

use http::{HeaderMap, HeaderName};
use serde_json::{Map, Value};
use toolcell_runtime::trace::TraceParent;

/// One header copied into the host context, under `key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextHeader {
    /// The request header.
    pub header: HeaderName,
    /// The host-context key the tool reads.
    pub key: String,
}

/// Why a `HEADER=key` mapping is not usable.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a context header mapping: write HEADER=key, e.g. X-User-Id=user_id")]
pub struct ContextHeaderError(String);

impl FromStr for ContextHeader {
    type Err = ContextHeaderError;

    fn from_str(mapping: &str) -> Result<Self, Self::Err> {
        let invalid = || ContextHeaderError(mapping.to_owned());
        let (header, key) = mapping.split_once('=').ok_or_else(invalid)?;
        let header = HeaderName::from_str(header.trim()).map_err(|_| invalid())?;
        let key = key.trim();
        if key.is_empty() {
            return Err(invalid());
        }
        Ok(Self { header, key: key.to_owned() })
    }
}

/// The host context for one request: each mapped header that is present and is text.
pub(crate) fn from_headers(mappings: &[ContextHeader], headers: &HeaderMap) -> Map<String, Value> {
    mappings
        .iter()
        .filter_map(|mapping| {
            let value = headers.get(&mapping.header)?.to_str().ok()?;
            Some((mapping.key.clone(), Value::String(value.to_owned())))
        })
        .collect()
}

/// The W3C trace context a request continues: its `_meta.traceparent` (and `tracestate`),
/// else, over HTTP, its `traceparent` header. A malformed one is ignored, as W3C Trace
/// Context asks: the call then starts its own trace.
pub(crate) fn trace_parent(meta: &rmcp::model::MetaObject, headers: Option<&HeaderMap>) -> Option<TraceParent> {
    let header = |name: &str| headers?.get(name)?.to_str().ok();
    let (traceparent, tracestate) = match meta.get_traceparent() {
        Some(traceparent) => (traceparent, meta.get_tracestate()),
        None => (header("traceparent")?, header("tracestate")),
    };
    TraceParent::parse(traceparent, tracestate)
        .inspect_err(|error| tracing::debug!(%error, "trace context ignored"))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_header_to_key_mappings() {
        let mapping: ContextHeader = "X-User-Id=user_id".parse().unwrap();
        assert_eq!(mapping.header, HeaderName::from_static("x-user-id"));
        assert_eq!(mapping.key, "user_id");
        for bad in ["X-User-Id", "X-User-Id=", "bad header=key", "=key"] {
            assert!(bad.parse::<ContextHeader>().is_err(), "{bad}");
        }
    }

    #[test]
    fn copies_only_mapped_text_headers() {
        let mappings = ["X-User-Id=user_id".parse().unwrap(), "X-Locale=locale".parse().unwrap()];
        let mut headers = HeaderMap::new();
        headers.insert("x-user-id", "alice".parse().unwrap());
        headers.insert("authorization", "Bearer secret".parse().unwrap());
        let context = from_headers(&mappings, &headers);
        assert_eq!(Value::Object(context), serde_json::json!({"user_id": "alice"}));
    }
}
