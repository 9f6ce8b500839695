//! Each call as a `tracing` span carrying OpenInference's attributes for a TOOL span, and
//! toolcell's own (`toolcell.*`). Exporting them (OTLP) is the process's business: an
//! embedding or the CLI installs a `tracing-opentelemetry` layer, and these fields become the
//! span's attributes (`otel.name` its name, `otel.status_code` and `otel.status_description`
//! its status, as `tracing-opentelemetry` 0.34 reads them). Numbers are recorded as `i64`:
//! that layer exports a `u64` field as a string.
//!
//! Nothing is computed for a span no subscriber records: the fields are filled in only when
//! the span is enabled.

use tracing::Span;
use tracing::field::Empty;

use crate::call::{Arguments, ToolOutput};
use crate::error::CallError;
use crate::load::ToolDefinition;
use crate::redact::Redactor;
use crate::truncate::truncated;

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

/// The tool (when it exists) and the arguments as the model sent them, with the tool's
/// secrets replaced.
pub(crate) fn record_input(span: &Span, tool: Option<(&ToolDefinition, &str, &Redactor)>, arguments: &Arguments) {
    if span.is_disabled() {
        return;
    }
    let mut input = match arguments {
        Arguments::Json(text) => text.clone(),
        Arguments::Value(value) => value.to_string(),
    };
    if let Some((definition, source, redactor)) = tool {
        span.record("tool.description", definition.description.as_str());
        span.record("tool.parameters", definition.parameters.to_string());
        span.record("toolcell.tool.version", definition.version.as_str());
        span.record("toolcell.tool.source", source);
        redactor.text(&mut input);
    }
    span.record("input.value", truncated(&input, MAX_VALUE_BYTES));
    span.record("input.mime_type", "application/json");
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
        _ => return None,
    })
}
