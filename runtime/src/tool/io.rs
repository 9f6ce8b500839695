//! What goes into a call and what comes out of it.

use std::time::Duration;

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::redact::Redactor;
use crate::tool::definition::MAX_NAME_CHARS;
use crate::tool::error::CallError;
use crate::tool::limits::LimitOverrides;
use crate::tool::trace::TraceParent;

/// The most of a call id the runtime keeps: a longer id is cut (a `…` marks the cut) where
/// the call enters, so its span, the ids of the calls it makes (`<id>.1`), its output and
/// its log lines carry the cut id. Providers' ids are a few dozen bytes.
pub const MAX_CALL_ID_BYTES: usize = 128;

/// The most of a tool name no tool has that the runtime keeps: no tool's name is longer than
/// [`MAX_NAME_CHARS`], so a longer one is cut to that, plus a `…`.
const MAX_UNKNOWN_NAME_BYTES: usize = MAX_NAME_CHARS + '…'.len_utf8();

/// One call a model asked for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The call id the model's provider issued; echoed in the output and given to the tool.
    pub id: String,
    /// The tool to call.
    pub name: String,
    /// The arguments, as the provider delivered them.
    pub arguments: Arguments,
    /// Values from the host application for the tool (a user id, a locale), never part of
    /// the schema and never seen by the model.
    pub context: Map<String, Value>,
    /// Limits for this call only, on top of the tool's.
    pub limits: LimitOverrides,
    /// The caller's W3C trace context, which the call's span continues (else the span is a
    /// child of the current `tracing` span).
    pub trace_parent: Option<TraceParent>,
    /// Where the tool's stdout goes while it runs, a line at a time
    /// ([`ToolCall::on_stdout_line`]).
    pub stdout_lines: Option<StdoutLines>,
    /// Who is calling, as the embedding authenticated them (an OAuth token's subject and
    /// client): recorded on the call's span (and on the spans of the calls it makes), never
    /// given to the model.
    pub principal: Option<Principal>,
    /// The only tools this call's tree of nested calls may reach, whatever the tools' own
    /// `call_tools` say ([`ToolCall::limited_to`]); `None`: no limit beyond theirs.
    pub(crate) reach: Option<std::sync::Arc<[String]>>,
    /// For a program code mode runs ([`crate::code_mode`]): what it may call, in place of its
    /// tool's `call_tools`. Only code mode sets it, on a call from outside.
    pub(crate) program: Option<ProgramGrant>,
}

/// Who made a call, as the embedding authenticated them: OpenInference's `user.id` (the
/// subject) and `toolcell.client_id` on the call's span.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Principal {
    /// Whom the credentials are about: a user, or the client itself.
    pub subject: Option<String>,
    /// The client (application) that presented them.
    pub client_id: Option<String>,
}

impl Principal {
    /// A principal with this subject and client.
    pub fn new(subject: Option<String>, client_id: Option<String>) -> Self {
        Self { subject, client_id }
    }
}

/// What a program code mode runs may call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProgramGrant {
    /// The tools it may call.
    pub(crate) may_call: std::sync::Arc<[String]>,
    /// Those of them a person must approve each call of first.
    pub(crate) must_approve: std::sync::Arc<[String]>,
}

/// The longest line of a tool's stdout handed to [`ToolCall::on_stdout_line`]; a longer one
/// is cut, with a `…`.
pub const MAX_STREAMED_LINE_BYTES: usize = 1024;

/// The most lines of a tool's stdout one call hands to [`ToolCall::on_stdout_line`]; later
/// ones are only in the output's diagnostics (and, if the tool returns them, its result).
pub const MAX_STREAMED_LINES: usize = 1000;

/// A sink for the lines a tool writes to stdout while it runs ([`ToolCall::on_stdout_line`]).
#[derive(Clone)]
pub struct StdoutLines(pub(crate) std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl StdoutLines {
    /// Calls `sink` with each line.
    pub fn new(sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(sink))
    }
}

impl std::fmt::Debug for StdoutLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StdoutLines")
    }
}

impl PartialEq for StdoutLines {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl ToolCall {
    /// A call with no host context and the tool's own limits.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<Arguments>) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            context: Map::new(),
            limits: LimitOverrides::default(),
            trace_parent: None,
            stdout_lines: None,
            principal: None,
            reach: None,
            program: None,
        }
    }

    /// Lets this call, and every call it makes in turn, call only `tools` (of those their
    /// `call_tools` allow): for a caller entitled to some tools only, such as an MCP client
    /// whose OAuth scopes grant them, calling a tool that may call others.
    #[must_use]
    pub fn limited_to<S: Into<String>>(mut self, tools: impl IntoIterator<Item = S>) -> Self {
        self.reach = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Records who is calling on the call's span (see [`ToolCall::principal`]).
    #[must_use]
    pub fn with_principal(mut self, principal: Principal) -> Self {
        self.principal = Some(principal);
        self
    }

    /// Gives the tool these host values (see [`ToolCall::context`]).
    #[must_use]
    pub fn with_context(mut self, context: Map<String, Value>) -> Self {
        self.context = context;
        self
    }

    /// Runs this call under these limits, on top of the tool's.
    #[must_use]
    pub fn with_limits(mut self, limits: LimitOverrides) -> Self {
        self.limits = limits;
        self
    }

    /// Calls `sink` with each line the tool writes to stdout while it runs (a long-running
    /// tool's progress, such as the `python` tool's `print`s), without its line break. Each
    /// line is redacted with the tool's secrets and cut to [`MAX_STREAMED_LINE_BYTES`], at
    /// most [`MAX_STREAMED_LINES`] per call, and a last line without a line break is not
    /// handed on. `sink` runs while the tool waits: it must return at once (hand the line to
    /// a channel, dropping it when full). Calls the tool makes to other tools stream nothing.
    #[must_use]
    pub fn on_stdout_line(mut self, sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.stdout_lines = Some(StdoutLines::new(sink));
        self
    }

    /// Continues the caller's trace: the call's span becomes a child of this context.
    #[must_use]
    pub fn with_trace_parent(mut self, parent: TraceParent) -> Self {
        self.trace_parent = Some(parent);
        self
    }

    /// Cuts what the caller sized, where the call enters: a name no loaded tool has to
    /// [`MAX_NAME_CHARS`] and, for a call from outside, the id to [`MAX_CALL_ID_BYTES`], both
    /// redacted with the call's redactor (a caller may name a tool, or a call, by its
    /// secret). A nested call's id is its caller's, cut already, with `.N` appended.
    pub(crate) fn bound(&mut self, known_tool: bool, from_outside: bool, redactor: &Redactor) {
        if !known_tool {
            self.name = cut_name(&self.name, redactor);
        }
        if from_outside && (self.id.len() > MAX_CALL_ID_BYTES || !redactor.is_empty()) {
            self.id = redactor.cut(&self.id, MAX_CALL_ID_BYTES);
        }
    }
}

/// A name no tool has, cut (see [`ToolCall::bound`]).
pub(crate) fn cut_name(name: &str, redactor: &Redactor) -> String {
    redactor.cut(name, MAX_UNKNOWN_NAME_BYTES)
}

/// A call's arguments: JSON text (as OpenAI sends them) or an already-parsed value (as
/// Anthropic sends them). Either way they must form a JSON object; empty text counts as `{}`.
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments {
    /// JSON text.
    Json(String),
    /// A parsed JSON value.
    Value(Value),
}

impl Arguments {
    /// The arguments as JSON text, as they were sent (a value written compactly).
    pub(crate) fn to_text(&self) -> String {
        match self {
            Self::Json(text) => text.clone(),
            Self::Value(value) => value.to_string(),
        }
    }
}

impl From<String> for Arguments {
    fn from(json: String) -> Self {
        Self::Json(json)
    }
}

impl From<&str> for Arguments {
    fn from(json: &str) -> Self {
        Self::Json(json.to_owned())
    }
}

impl From<Value> for Arguments {
    fn from(value: Value) -> Self {
        Self::Value(value)
    }
}

/// The outcome of a call, success or not. [`Runtime::call`](crate::Runtime::call) always
/// returns one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolOutput {
    /// The call's id.
    pub call_id: String,
    /// The tool's name, as called.
    pub tool: String,
    /// What to give the model: the result JSON on success, the error's message otherwise.
    pub content: String,
    /// Whether the call failed.
    pub is_error: bool,
    /// The error, when the call failed, with its `retryable` flag.
    #[serde(serialize_with = "serialize_error", skip_serializing_if = "Option::is_none", default)]
    pub error: Option<CallError>,
    /// What the call used.
    pub usage: Usage,
    /// Operator detail: guest output and trap text. Never part of `content`.
    #[serde(skip_serializing_if = "Diagnostics::is_empty", default)]
    pub diagnostics: Diagnostics,
}

impl ToolOutput {
    /// The result as JSON, when the call succeeded.
    pub fn value(&self) -> Option<Value> {
        if self.is_error { None } else { serde_json::from_str(&self.content).ok() }
    }

    pub(crate) fn success(call: &ToolCall, content: String, usage: Usage, diagnostics: Diagnostics) -> Self {
        Self {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            content,
            is_error: false,
            error: None,
            usage,
            diagnostics,
        }
    }

    /// The output of `call` failing with `error`, as the runtime reports its own failures: for
    /// an embedding that must answer a call it could not run (its task lost), so that no call
    /// goes unanswered.
    pub fn from_error(call: &ToolCall, error: CallError) -> Self {
        Self::failure(call, error, Usage::default(), Diagnostics::default())
    }

    pub(crate) fn failure(call: &ToolCall, error: CallError, usage: Usage, diagnostics: Diagnostics) -> Self {
        Self {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            content: error.to_string(),
            is_error: true,
            error: Some(error),
            usage,
            diagnostics,
        }
    }
}

fn serialize_error<S: Serializer>(error: &Option<CallError>, serializer: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct WithRetryable<'a> {
        #[serde(flatten)]
        error: &'a CallError,
        retryable: bool,
    }
    match error {
        // It carries its own `retryable` (the tool's judgement); a second key would duplicate it.
        Some(error @ CallError::ToolFailed { .. }) => error.serialize(serializer),
        Some(error) => WithRetryable { error, retryable: error.retryable() }.serialize(serializer),
        None => serializer.serialize_none(),
    }
}

/// What a call used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Wall-clock time of the whole call, validation included.
    #[serde(rename = "duration_us", with = "duration_us")]
    pub duration: Duration,
    /// Fuel the guest consumed (0 when it never ran), including `nested_fuel`.
    pub fuel_consumed: u64,
    /// The most linear memory and table storage the instance held, in bytes.
    pub peak_memory_bytes: u64,
    /// Calls the tool's guest asked the host to make to other tools (code mode) in this call,
    /// refused ones included; not the calls those tools made in turn. With `call_tools`,
    /// each of them, refused or not, took one of the call tree's `max_nested_calls` until none
    /// was left (those after are refused as `call_limit` and counted here too); without it,
    /// every one is refused as `not_allowed`.
    #[serde(skip_serializing_if = "is_zero_u32", default)]
    pub nested_calls: u32,
    /// Fuel those calls consumed, and the calls they made in turn. The caller pays it: it is
    /// part of `fuel_consumed` and of the caller's fuel limit.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub nested_fuel: u64,
}

/// Operator detail about a call: for logs and people, never for the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Diagnostics {
    /// What the guest wrote to stdout, up to the capture limit.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub stdout: String,
    /// What the guest wrote to stderr (a panic message lands here), up to the capture limit.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub stderr: String,
    /// Bytes written beyond the capture limit and dropped, stdout and stderr together.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub dropped_stdio_bytes: u64,
    /// The trap or host error behind a failure, with its WebAssembly backtrace.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<String>,
    /// Attempts that failed transiently before this one, when a [`ToolSet`](crate::ToolSet)
    /// retried the call.
    #[serde(skip_serializing_if = "is_zero_u32", default)]
    pub retries: u32,
}

impl Diagnostics {
    /// Whether there is nothing to report.
    pub fn is_empty(&self) -> bool {
        self.stdout.is_empty()
            && self.stderr.is_empty()
            && self.dropped_stdio_bytes == 0
            && self.detail.is_none()
            && self.retries == 0
    }
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

mod duration_us {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(u64::try_from(duration.as_micros()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        u64::deserialize(deserializer).map(Duration::from_micros)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_serializes_its_retryable_flag_once() {
        let call = ToolCall::new("1", "t", "{}");
        for (error, retryable) in [
            (CallError::ToolFailed { message: "down".into(), retryable: true }, true),
            (CallError::ToolFailed { message: "bad".into(), retryable: false }, false),
            (CallError::RejectedArguments { message: "no".into() }, true),
        ] {
            let output = ToolOutput::failure(&call, error, Usage::default(), Diagnostics::default());
            let text = serde_json::to_string(&output).unwrap();
            assert_eq!(text.matches("\"retryable\"").count(), 1, "{text}");
            let value: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(value["error"]["retryable"], retryable, "{text}");
        }
    }
}
