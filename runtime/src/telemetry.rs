//! Each call as a `tracing` span carrying OpenInference's attributes for a TOOL span, and
//! toolcell's own (`toolcell.*`). Exporting them (OTLP) is the process's business: an
//! embedding or the CLI installs a `tracing-opentelemetry` layer, and these fields become the
//! span's attributes (`otel.name` its name, `otel.status_code` and `otel.status_description`
//! its status, as `tracing-opentelemetry` 0.34 reads them). Numbers are recorded as `i64`:
//! that layer exports a `u64` field as a string.
//!
//! Nothing is computed for a span no subscriber records: the fields are filled in only when
//! the span is enabled.
//!
//! A call's span is a child of the caller's current `tracing` span, or of the W3C trace
//! context given with [`crate::ToolCall::with_trace_parent`] (an MCP request's
//! `_meta.traceparent`, an incoming HTTP header). Loading emits one span listing the tools
//! as OpenInference's `llm.tools.N.tool.json_schema`.

use std::fmt;

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId, TraceState};
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use crate::call::{Arguments, ToolOutput};
use crate::error::CallError;
use crate::formats::Format;
use crate::load::ToolDefinition;
use crate::redact::Redactor;
use toolcell_schema::truncated;

/// The most of an input or output value a span carries; the rest is cut, marked with `…`.
pub(crate) const MAX_VALUE_BYTES: usize = 16 * 1024;

/// The span of one call, its attributes declared so that they can be recorded as the call
/// goes.
pub(crate) fn call_span(tool: &str, call_id: &str) -> Span {
    tracing::info_span!(
        "tool_call",
        otel.name = tool,
        otel.status_code = Empty,
        otel.status_description = Empty,
        openinference.span.kind = "TOOL",
        tool.name = tool,
        tool.description = Empty,
        tool.parameters = Empty,
        tool_call.id = call_id,
        input.value = Empty,
        input.mime_type = Empty,
        output.value = Empty,
        output.mime_type = Empty,
        toolcell.tool.version = Empty,
        toolcell.tool.source = Empty,
        toolcell.error.kind = Empty,
        toolcell.error.retryable = Empty,
        toolcell.limit = Empty,
        toolcell.duration_us = Empty,
        toolcell.fuel_consumed = Empty,
        toolcell.peak_memory_bytes = Empty,
    )
}

/// Parents a call's span (not yet entered) with the caller's trace context. Without an
/// OpenTelemetry layer in the subscriber this does nothing.
pub(crate) fn set_parent(span: &Span, parent: &TraceParent) {
    let context = opentelemetry::Context::new().with_remote_span_context(SpanContext::clone(&parent.0));
    if let Err(error) = span.set_parent(context) {
        tracing::trace!(%error, "the trace parent was not applied");
    }
}

/// The span of one load (a build or a reload): how many tools, and each one's definition
/// as OpenInference's `llm.tools.N.tool.json_schema` (the OpenAI Chat Completions shape
/// OpenInference's instrumentations use).
pub(crate) fn record_load<'a>(definitions: impl ExactSizeIterator<Item = &'a ToolDefinition>, diagnostics: usize) {
    let span = tracing::info_span!(
        "load_tools",
        otel.name = "toolcell.load",
        toolcell.tools.count = signed(definitions.len()),
        toolcell.diagnostics.count = signed(diagnostics),
    );
    if span.is_disabled() {
        return;
    }
    for (index, definition) in definitions.enumerate() {
        let shape = definition
            .to_format(Format::OpenAiChat)
            .unwrap_or_else(|_| definition.to_format(Format::Mcp).unwrap_or_default());
        span.set_attribute(format!("llm.tools.{index}.tool.json_schema"), shape.to_string());
    }
}

/// The tool (when it exists) and the arguments as the caller sent them, with the secrets of
/// `redactor` replaced (the tool's, and for a nested call its callers'). Arguments that parse
/// (up to `parse_bytes` of JSON text) are recorded re-serialized from their redacted value,
/// so a secret spelled with escapes (`\u0073…`) is caught; otherwise as text, its escapes
/// decoded before redaction.
pub(crate) fn record_input(
    span: &Span,
    tool: Option<(&ToolDefinition, &str)>,
    arguments: &Arguments,
    redactor: &Redactor,
    parse_bytes: Option<u64>,
) {
    if span.is_disabled() {
        return;
    }
    if let Some((definition, source)) = tool {
        span.record("tool.description", definition.description.as_str());
        span.record("tool.parameters", definition.parameters.to_string());
        span.record("toolcell.tool.version", definition.version.as_str());
        span.record("toolcell.tool.source", source);
    }
    let input = match arguments {
        Arguments::Json(text) if redactor.is_empty() => truncated(text, MAX_VALUE_BYTES),
        Arguments::Value(value) if redactor.is_empty() => truncated(&value.to_string(), MAX_VALUE_BYTES),
        Arguments::Value(value) => redacted_value(value.clone(), redactor),
        Arguments::Json(text) => {
            let parsed = parse_bytes
                .filter(|&limit| text.len() as u64 <= limit)
                .and_then(|_| serde_json::from_str::<serde_json::Value>(text).ok());
            match parsed {
                Some(value) => redacted_value(value, redactor),
                None => redactor.json_text(text, MAX_VALUE_BYTES),
            }
        }
    };
    span.record("input.value", input);
    span.record("input.mime_type", "application/json");
}

/// `value` with secrets replaced, as JSON text cut to [`MAX_VALUE_BYTES`].
fn redacted_value(mut value: serde_json::Value, redactor: &Redactor) -> String {
    redactor.json(&mut value);
    truncated(&value.to_string(), MAX_VALUE_BYTES)
}

/// The outcome: output (already redacted by the runtime), status, usage, and for a failure
/// its kind and the limit it hit.
pub(crate) fn record_output(span: &Span, output: &ToolOutput) {
    if span.is_disabled() {
        return;
    }
    span.record("output.value", truncated(&output.content, MAX_VALUE_BYTES));
    span.record("output.mime_type", if output.is_error { "text/plain" } else { "application/json" });
    span.record("toolcell.duration_us", signed(output.usage.duration.as_micros()));
    span.record("toolcell.fuel_consumed", signed(output.usage.fuel_consumed));
    span.record("toolcell.peak_memory_bytes", signed(output.usage.peak_memory_bytes));
    match &output.error {
        None => {
            span.record("otel.status_code", "OK");
        }
        Some(error) => {
            span.record("otel.status_code", "ERROR");
            let description = format!("{}: {}", error.kind(), output.content);
            span.record("otel.status_description", truncated(&description, MAX_VALUE_BYTES));
            span.record("toolcell.error.kind", error.kind());
            span.record("toolcell.error.retryable", error.retryable());
            if let Some(limit) = limit_hit(error) {
                span.record("toolcell.limit", limit);
            }
        }
    }
}

/// A count as `i64`, saturating (no call comes near).
fn signed(count: impl TryInto<i64>) -> i64 {
    count.try_into().unwrap_or(i64::MAX)
}

/// The limit a failure hit, if it was one.
fn limit_hit(error: &CallError) -> Option<&'static str> {
    Some(match error {
        CallError::Timeout { .. } => "timeout",
        CallError::FuelExhausted { .. } => "fuel",
        CallError::MemoryLimit { .. } => "memory",
        CallError::ArgumentsTooLarge { .. } => "max_argument_bytes",
        CallError::OutputTooLarge { .. } => "max_output_bytes",
        CallError::HttpResponseTooLarge { .. } => "max_http_response_bytes",
        CallError::ResourceLimit { .. } => "resources",
        CallError::Overloaded { .. } => "max_queued_calls",
        CallError::DepthLimit { .. } => "max_call_depth",
        CallError::CallLimit { .. } => "max_nested_calls",
        _ => return None,
    })
}

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
