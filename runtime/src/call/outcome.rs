//! A call's outcome: how the run ended, turned into the result or the error a model reads.

use super::output::check_output;
use crate::bindings::ToolError;
use crate::load::ToolEntry;
use crate::redact::Redactor;
use crate::sandbox::execute::{Execution, Returned};
use crate::sandbox::files::Bound;
use crate::sandbox::http::HttpEvents;
use crate::tool::error::CallError;
use crate::tool::io::{Diagnostics, ToolCall, ToolOutput, Usage};
use crate::tool::limits::Limits;
use toolcell_schema::words::truncated;

/// Turns how the run ended into the result for the model, or the error that explains it;
/// the result is checked as redacted with `redactor`.
pub(super) fn classify(
    entry: &ToolEntry,
    limits: &Limits,
    execution: Execution,
    redactor: &Redactor,
) -> (Result<String, CallError>, Diagnostics) {
    let Execution { outcome, mut diagnostics, http, files_refused, .. } = execution;
    let result = match outcome {
        Ok(Returned::Invoke(Ok(result))) => {
            check_output(result, entry.tool.output.as_deref(), limits.max_output_bytes, redactor)
        }
        Ok(Returned::Invoke(Err(ToolError::InvalidArguments(message)))) => {
            Err(CallError::RejectedArguments { message })
        }
        Ok(Returned::Invoke(Err(ToolError::Failed(failure)))) => {
            Err(CallError::ToolFailed { message: failure.message, retryable: failure.retryable })
        }
        Ok(Returned::Metadata(_) | Returned::Capabilities(_) | Returned::Annotations(_) | Returned::Exited(_)) => {
            Err(CallError::Internal { message: "the wrong export was called".into() })
        }
        Err(error) => Err(error),
    };
    let result = result
        .map_err(|error| explain_http_failure(error, entry, limits, &http, &mut diagnostics))
        .map_err(|error| explain_open_files_failure(error, files_refused, &mut diagnostics));
    (result, diagnostics)
}

/// When the tool failed (or crashed) after the host refused to let it open another file,
/// the bound explains the failure; the tool's own account goes to the diagnostics.
fn explain_open_files_failure(error: CallError, refused: Option<Bound>, diagnostics: &mut Diagnostics) -> CallError {
    let Some(bound) = refused else { return error };
    if !matches!(error, CallError::RejectedArguments { .. } | CallError::ToolFailed { .. } | CallError::Crashed { .. })
    {
        return error;
    }
    let detail = diagnostics.detail.take().map(|detail| format!("\n{detail}")).unwrap_or_default();
    diagnostics.detail = Some(format!("the tool's own outcome: {error}{detail}"));
    let (resource, limit) = bound.describe();
    CallError::ResourceLimit { resource, limit }
}

/// When the tool gave up after the host refused one of its requests or capped a response,
/// the refusal explains the failure better than the tool's own account (which goes to the
/// diagnostics). Limits the host enforced (time, fuel, memory, crashes) stand as they are.
fn explain_http_failure(
    error: CallError,
    entry: &ToolEntry,
    limits: &Limits,
    http: &HttpEvents,
    diagnostics: &mut Diagnostics,
) -> CallError {
    if !matches!(error, CallError::RejectedArguments { .. } | CallError::ToolFailed { .. }) {
        return error;
    }
    let cause = match http.first_denied() {
        Some(denied) => CallError::HttpDenied {
            request: Some(denied.request),
            reason: denied.reason,
            grant: denied.grant,
            rule: denied.rule,
            allowed: entry.access.egress.in_words(),
        },
        None if http.response_capped() => {
            CallError::HttpResponseTooLarge { limit_bytes: limits.max_http_response_bytes }
        }
        None => return error,
    };
    let detail = diagnostics.detail.take().map(|detail| format!("\n{detail}")).unwrap_or_default();
    diagnostics.detail = Some(format!("the tool's own outcome: {error}{detail}"));
    cause
}

/// Replaces secrets in the error and the diagnostics, then holds the tool's own messages to
/// the output limit (cut after redaction, so a cut never splits a secret).
pub(super) fn redact(
    redactor: &Redactor,
    limits: &Limits,
    mut result: Result<String, CallError>,
    mut diagnostics: Diagnostics,
) -> (Result<String, CallError>, Diagnostics) {
    if !redactor.is_empty() {
        let cut = diagnostics.dropped_stdio_bytes > 0;
        for text in [&mut diagnostics.stdout, &mut diagnostics.stderr] {
            if cut { redactor.cut_text(text) } else { redactor.text(text) }
        }
        if let Some(detail) = &mut diagnostics.detail {
            redactor.text(detail);
        }
        if let Err(error) = &mut result {
            error.redact(redactor);
        }
    }
    if let Err(CallError::RejectedArguments { message } | CallError::ToolFailed { message, .. }) = &mut result {
        *message = truncated(message, usize::try_from(limits.max_output_bytes).unwrap_or(usize::MAX));
    }
    (result, diagnostics)
}

/// The output, logged.
pub(super) fn finish(
    call: &ToolCall,
    result: Result<String, CallError>,
    usage: Usage,
    diagnostics: Diagnostics,
) -> ToolOutput {
    match result {
        Ok(content) => ToolOutput::success(call, content, usage, diagnostics),
        Err(error) => {
            if error.is_caller_error() {
                tracing::debug!(kind = error.kind(), "tool rejected the call");
            } else {
                tracing::warn!(
                    kind = error.kind(),
                    detail = diagnostics.detail.as_deref().unwrap_or(""),
                    stderr = %diagnostics.stderr,
                    "tool call failed"
                );
            }
            ToolOutput::failure(call, error, usage, diagnostics)
        }
    }
}
