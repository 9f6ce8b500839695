//! A W3C trace context a call's span continues.

use std::fmt;

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};

/// A W3C trace context (`traceparent`, optionally `tracestate`) a call's span continues.
#[derive(Clone, PartialEq)]
pub struct TraceParent(Box<SpanContext>);

impl TraceParent {
    /// Reads a `traceparent` header value (`00-<32 hex trace id>-<16 hex span id>-<2 hex
    /// flags>`) and an optional `tracestate`.
    ///
    /// # Errors
    /// When `traceparent` is not a valid version-00 value, or names the all-zero trace or
    /// span id; or when `tracestate` is malformed.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Result<Self, TraceParentError> {
        let invalid = || {
            TraceParentError(format!(
                "`{traceparent}` is not a W3C traceparent: expected `00-<32 hex digits>-<16 hex digits>-<2 hex digits>`"
            ))
        };
        let parts: Vec<&str> = traceparent.trim().split('-').collect();
        let [version, trace_id, span_id, flags] = parts[..] else {
            return Err(invalid());
        };
        let lower_hex =
            |text: &str, len: usize| text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if version != "00" || !lower_hex(trace_id, 32) || !lower_hex(span_id, 16) || !lower_hex(flags, 2) {
            return Err(invalid());
        }
        let trace_id = TraceId::from_hex(trace_id).map_err(|_| invalid())?;
        let span_id = SpanId::from_hex(span_id).map_err(|_| invalid())?;
        let flags = u8::from_str_radix(flags, 16).map_err(|_| invalid())?;
        if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
            return Err(TraceParentError(format!(
                "`{traceparent}` names an all-zero trace or span id, which W3C reserves as invalid"
            )));
        }
        let state = match tracestate.map(str::trim).filter(|state| !state.is_empty()) {
            None => TraceState::NONE,
            Some(state) => state.parse().map_err(|_| {
                TraceParentError(format!(
                    "`{state}` is not a W3C tracestate: expected `key=value` pairs separated by commas"
                ))
            })?,
        };
        Ok(Self(Box::new(SpanContext::new(trace_id, span_id, TraceFlags::new(flags), true, state))))
    }

    /// The trace id, as 32 lowercase hex digits.
    pub fn trace_id(&self) -> String {
        self.0.trace_id().to_string()
    }

    /// The span context the call's span continues.
    pub(crate) fn span_context(&self) -> &SpanContext {
        &self.0
    }

    /// The parent span id, as 16 lowercase hex digits.
    pub fn span_id(&self) -> String {
        self.0.span_id().to_string()
    }
}

impl fmt::Debug for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TraceParent(00-{}-{}-{:02x})", self.0.trace_id(), self.0.span_id(), self.0.trace_flags().to_u8())
    }
}

/// A `traceparent` or `tracestate` that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TraceParentError(String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_w3c_traceparent_is_read_and_a_malformed_one_is_refused() {
        let parent =
            TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", Some("congo=t61rcWkgMzE"))
                .unwrap();
        assert_eq!(parent.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(parent.span_id(), "00f067aa0ba902b7");
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert!(TraceParent::parse(bad, None).is_err(), "{bad:?} was accepted");
        }
    }
}
