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

use opentelemetry::trace::TraceContextExt as _;
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use crate::formats::Format;
use crate::redact::Redactor;
use crate::tool::definition::ToolDefinition;
use crate::tool::error::CallError;
use crate::tool::io::{Arguments, ToolOutput};
use crate::tool::trace::TraceParent;
use toolcell_schema::words::truncated;

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
        user.id = Empty,
        toolcell.client_id = Empty,
        input.value = Empty,
        input.mime_type = Empty,
        output.value = Empty,
        output.mime_type = Empty,
        toolcell.tool.version = Empty,
        toolcell.tool.source = Empty,
        toolcell.error.kind = Empty,
        toolcell.error.retryable = Empty,
        toolcell.limit = Empty,
        toolcell.http.suggested_rule = Empty,
        toolcell.duration_us = Empty,
        toolcell.fuel_consumed = Empty,
        toolcell.peak_memory_bytes = Empty,
    )
}

/// Who is calling, when the embedding said (an OAuth token's subject and client).
pub(crate) fn record_principal(span: &Span, principal: Option<&crate::tool::io::Principal>) {
    let Some(principal) = principal else { return };
    if let Some(subject) = &principal.subject {
        span.record("user.id", truncated(subject, MAX_PRINCIPAL_BYTES).as_str());
    }
    if let Some(client_id) = &principal.client_id {
        span.record("toolcell.client_id", truncated(client_id, MAX_PRINCIPAL_BYTES).as_str());
    }
}

/// The most of a subject or client id a span carries.
const MAX_PRINCIPAL_BYTES: usize = 256;

/// Parents a call's span (not yet entered) with the caller's trace context. Without an
/// OpenTelemetry layer in the subscriber this does nothing.
pub(crate) fn set_parent(span: &Span, parent: &TraceParent) {
    let context = opentelemetry::Context::new().with_remote_span_context(parent.span_context().clone());
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
            if let CallError::HttpDenied { rule: Some(rule), .. } = error {
                span.record("toolcell.http.suggested_rule", format!("add {rule}"));
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
