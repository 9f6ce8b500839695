//! Everything that can go wrong in a call, as data a model can act on.

use std::fmt;

use serde::{Deserialize, Serialize};
pub use toolcell_schema::Violation;
use toolcell_schema::words::{code_list, human_bytes};

/// Why a call did not produce a result.
///
/// Every kind has a default [`retryable`](Self::retryable) flag and a model-facing message
/// ([`Display`](fmt::Display)) that says what happened and what to do next. Nothing in the
/// message comes from a trap, a backtrace or the guest's stderr: those are operator detail,
/// kept in [`Diagnostics`](crate::tool::Diagnostics) and logged with `tracing`.
///
/// Serialized with a `kind` tag, e.g. `{"kind": "timeout", "limit_ms": 5000}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallError {
    /// No loaded tool has this name.
    UnknownTool {
        /// The name the model asked for.
        name: String,
        /// Loaded tool names close to it, closest first.
        closest: Vec<String>,
        /// Every loaded tool name.
        available: Vec<String>,
    },
    /// The arguments are not JSON.
    MalformedArguments {
        /// The JSON parser's message.
        error: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
    },
    /// The arguments are JSON but do not match the tool's parameters schema.
    InvalidArguments {
        /// Every violation found.
        violations: Vec<Violation>,
    },
    /// The arguments are larger than the call's limit.
    ArgumentsTooLarge {
        /// Size of the arguments JSON in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The tool looked at the arguments and rejected them (`invalid-arguments`).
    RejectedArguments {
        /// The tool's explanation.
        message: String,
    },
    /// The tool reported a failure (`failed`).
    ToolFailed {
        /// The tool's explanation.
        message: String,
        /// The tool's judgement: may the same call succeed later?
        retryable: bool,
    },
    /// The call ran past its wall-clock timeout and was stopped.
    Timeout {
        /// The timeout in milliseconds.
        limit_ms: u64,
    },
    /// The call used up its fuel and was stopped.
    FuelExhausted {
        /// The fuel limit.
        limit: u64,
    },
    /// The tool tried to use more memory than its limit and was stopped.
    MemoryLimit {
        /// The limit in bytes.
        limit_bytes: u64,
        /// The total the tool asked for when it was refused.
        requested_bytes: u64,
    },
    /// The tool crashed: a bug in the tool.
    Crashed {
        /// How it crashed.
        reason: CrashReason,
    },
    /// The result is larger than the call's limit and was discarded.
    OutputTooLarge {
        /// Size of the result in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The result is not JSON, or does not match the tool's output schema.
    InvalidOutput {
        /// What is wrong with it.
        reason: String,
    },
    /// The host refused an HTTP request of the tool (not on its allow-list, a resolved
    /// address a name may not reach, too many requests in flight, or no HTTP grant at all),
    /// and the call did not succeed.
    HttpDenied {
        /// The refused request (`GET https://example.com/path`, cut to 200 bytes); absent
        /// when the tool has no HTTP grant and was stopped at its first `wasi:http` call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request: Option<String>,
        /// Which rule refused it, in words.
        reason: String,
        /// The `allow_hosts` entry that would allow it, when no rule names its host.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grant: Option<String>,
        /// For the operator: the narrowest `http` rule that would allow it, an inline table
        /// such as `{ host = "api.github.com", methods = ["DELETE"], paths = ["/repos/*/issues/*"] }`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
        /// What the tool may reach, one entry per rule (`example.com`, or
        /// `GET, POST api.github.com under /repos/*/issues`).
        allowed: Vec<String>,
    },
    /// An HTTP response body was larger than the tool may read, and the call did not succeed.
    HttpResponseTooLarge {
        /// The limit in bytes.
        limit_bytes: u64,
    },
    /// The tool made the host hold more for it than one call may (open handles to files,
    /// streams and HTTP requests; bytes in one set of HTTP header fields), and was stopped.
    ResourceLimit {
        /// What was limited, e.g. `open handles (files, streams, HTTP requests and headers)`.
        resource: String,
        /// The most of it one call may hold.
        limit: u64,
    },
    /// The caller cancelled the call before it finished (an MCP client's
    /// `notifications/cancelled`, or an embedding's cancellation token); the tool was stopped.
    Cancelled {
        /// How long the call had run, in milliseconds, when it was stopped.
        after_ms: u64,
    },
    /// Every place to run was taken and the queue of calls waiting for one was full; the
    /// tool did not run.
    Overloaded {
        /// Calls running when this one arrived.
        running: usize,
        /// Calls waiting then: the most the runtime queues.
        waiting: usize,
    },
    /// A tool called another tool (code mode) that the operator's policy does not let it
    /// call (`call_tools`); the callee did not run.
    NotAllowed {
        /// The calling tool.
        caller: String,
        /// The tool it called.
        tool: String,
        /// The tools it may call.
        allowed: Vec<String>,
    },
    /// A tool called another tool from a call that was itself made by a tool, deeper than
    /// the host lets calls nest; the callee did not run.
    DepthLimit {
        /// How deep calls may nest: 1 lets a tool call others, which may not call further.
        limit: u32,
    },
    /// A call has made as many calls to other tools as one call may (its own and those of
    /// the tools it called, together); this one did not run.
    CallLimit {
        /// The most calls to other tools one call may make.
        limit: u64,
    },
    /// An interceptor of the embedding (e.g. a person asked to approve the call) declined
    /// it; the tool did not run.
    Denied {
        /// Why, in the interceptor's words, for the model.
        reason: String,
    },
    /// A program code mode runs stopped at a call that waits for a person's approval
    /// ([`crate::code_mode`]); it resumes with [`resume_token`](Self::ApprovalRequired::resume_token)
    /// once they decide. A call an interceptor deferred ([`crate::toolset::Verdict::Defer`]) outside a
    /// program did not run, and has no token: it is made again once they decide.
    ApprovalRequired {
        /// The tool the program called.
        tool: String,
        /// Its arguments (secrets redacted).
        arguments: String,
        /// The opaque, authenticated token that resumes the program; empty for a call that
        /// is not a program's.
        resume_token: String,
    },
    /// The host could not run the call, for a reason that is neither the model's nor the
    /// tool's.
    Internal {
        /// What failed.
        message: String,
    },
}

/// How a tool crashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CrashReason {
    /// The tool panicked.
    Panic,
    /// The tool aborted or reached an `unreachable` instruction.
    Abort,
    /// The tool recursed too deeply.
    StackOverflow,
    /// The tool accessed memory or a table out of bounds, or a similar fault.
    Fault,
    /// The tool called `wasi:cli/exit` instead of returning (the code is in the diagnostics).
    Exit,
}

impl CallError {
    /// The kind, as in the serialized `kind` tag (`"timeout"`, `"invalid_arguments"`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownTool { .. } => "unknown_tool",
            Self::MalformedArguments { .. } => "malformed_arguments",
            Self::InvalidArguments { .. } => "invalid_arguments",
            Self::ArgumentsTooLarge { .. } => "arguments_too_large",
            Self::RejectedArguments { .. } => "rejected_arguments",
            Self::ToolFailed { .. } => "tool_failed",
            Self::Timeout { .. } => "timeout",
            Self::FuelExhausted { .. } => "fuel_exhausted",
            Self::MemoryLimit { .. } => "memory_limit",
            Self::Crashed { .. } => "crashed",
            Self::OutputTooLarge { .. } => "output_too_large",
            Self::InvalidOutput { .. } => "invalid_output",
            Self::HttpDenied { .. } => "http_denied",
            Self::HttpResponseTooLarge { .. } => "http_response_too_large",
            Self::ResourceLimit { .. } => "resource_limit",
            Self::Cancelled { .. } => "cancelled",
            Self::Overloaded { .. } => "overloaded",
            Self::NotAllowed { .. } => "not_allowed",
            Self::DepthLimit { .. } => "depth_limit",
            Self::CallLimit { .. } => "call_limit",
            Self::Denied { .. } => "denied",
            Self::ApprovalRequired { .. } => "approval_required",
            Self::Internal { .. } => "internal",
        }
    }

    /// Whether calling again may succeed: `true` when the model can fix the call (the
    /// message says how) or the condition is transient; `false` when the same call would
    /// fail the same way.
    pub fn retryable(&self) -> bool {
        match self {
            Self::UnknownTool { .. }
            | Self::MalformedArguments { .. }
            | Self::InvalidArguments { .. }
            | Self::ArgumentsTooLarge { .. }
            | Self::RejectedArguments { .. }
            | Self::OutputTooLarge { .. }
            | Self::HttpResponseTooLarge { .. }
            | Self::Cancelled { .. }
            | Self::Overloaded { .. }
            | Self::Internal { .. } => true,
            Self::ToolFailed { retryable, .. } => *retryable,
            // Another URL may be allowed; with nothing allowed, no call can succeed.
            Self::HttpDenied { allowed, .. } | Self::NotAllowed { allowed, .. } => !allowed.is_empty(),
            Self::Timeout { .. }
            | Self::ApprovalRequired { .. }
            | Self::DepthLimit { .. }
            | Self::CallLimit { .. }
            | Self::FuelExhausted { .. }
            | Self::MemoryLimit { .. }
            | Self::Crashed { .. }
            | Self::ResourceLimit { .. }
            | Self::Denied { .. }
            | Self::InvalidOutput { .. } => false,
        }
    }

    /// Whether the failure is transient and nobody's to fix: the tool said a retry may
    /// succeed, or the host could not run the call. What a tool set may retry by itself.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::ToolFailed { retryable: true, .. } | Self::Overloaded { .. } | Self::Internal { .. })
    }

    /// Whether the model caused the error with its call (and should fix it), as opposed to
    /// the tool or the host failing.
    pub fn is_caller_error(&self) -> bool {
        matches!(
            self,
            Self::UnknownTool { .. }
                | Self::MalformedArguments { .. }
                | Self::InvalidArguments { .. }
                | Self::ArgumentsTooLarge { .. }
                | Self::RejectedArguments { .. }
        )
    }
}

impl CallError {
    /// Replaces secrets in every text the tool or a request supplied.
    pub(crate) fn redact(&mut self, redactor: &crate::redact::Redactor) {
        if redactor.is_empty() {
            return;
        }
        match self {
            Self::RejectedArguments { message } | Self::ToolFailed { message, .. } | Self::Internal { message } => {
                redactor.text(message);
            }
            Self::InvalidOutput { reason } => redactor.text(reason),
            // A caller may name a tool by a secret, and a schema's message may quote a value.
            Self::UnknownTool { name: text, .. }
            | Self::NotAllowed { tool: text, .. }
            | Self::MalformedArguments { error: text, .. } => redactor.text(text),
            Self::InvalidArguments { violations } => {
                for violation in violations {
                    redactor.text(&mut violation.pointer);
                    redactor.text(&mut violation.message);
                }
            }
            Self::HttpDenied { request, reason, grant, rule, .. } => {
                for text in request.iter_mut().chain(grant.iter_mut()).chain(rule.iter_mut()).chain([reason]) {
                    redactor.text(text);
                }
            }
            _ => {}
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownTool { name, closest, available } => {
                write!(f, "There is no tool named `{name}`.")?;
                if let Some(best) = closest.first() {
                    write!(f, " Did you mean `{best}`?")?;
                }
                if available.is_empty() {
                    write!(f, " No tools are available.")
                } else {
                    write!(f, " Available tools: {}. Call one of them by its exact name.", code_list(available))
                }
            }
            Self::MalformedArguments { error, line, column } => write!(
                f,
                "The arguments are not valid JSON (line {line}, column {column}): {error}. \
                 Send the arguments as a single JSON object, e.g. {{\"name\": \"value\"}}."
            ),
            Self::InvalidArguments { violations } => {
                write!(f, "{}", toolcell_schema::ArgumentsReport(violations))
            }
            Self::ArgumentsTooLarge { size, limit } => write!(
                f,
                "The arguments are {size} bytes; this tool accepts at most {limit}. \
                 Send less data, for example by splitting the work into several calls."
            ),
            Self::RejectedArguments { message } => {
                write!(f, "The tool rejected the arguments: {message}\nChange the arguments and call the tool again.")
            }
            Self::ToolFailed { message, retryable: true } => {
                write!(f, "The tool failed: {message}\nThis may be temporary: calling again may succeed.")
            }
            Self::ToolFailed { message, retryable: false } => write!(
                f,
                "The tool failed: {message}\nCalling it again with the same arguments will fail the same way."
            ),
            Self::Timeout { limit_ms } => write!(
                f,
                "The tool did not finish within its time limit of {limit_ms} ms and was stopped. \
                 Do not retry the same call; a smaller or simpler input may finish in time."
            ),
            Self::FuelExhausted { limit } => write!(
                f,
                "The tool used up its compute budget ({limit} fuel units) and was stopped. \
                 Do not retry the same call; a smaller or simpler input may fit the budget."
            ),
            Self::MemoryLimit { limit_bytes, .. } => write!(
                f,
                "The tool needed more memory than its limit of {} and was stopped. \
                 Do not retry the same call; a smaller input may fit.",
                human_bytes(*limit_bytes)
            ),
            Self::Crashed { reason } => {
                const BUG: &str = "This is a bug in the tool, not a problem with your arguments; \
                                   try a different approach or another tool.";
                match reason {
                    CrashReason::Panic => write!(f, "The tool crashed (it panicked). {BUG}"),
                    CrashReason::Abort => write!(f, "The tool crashed (it aborted). {BUG}"),
                    CrashReason::Fault => write!(f, "The tool crashed (it hit a memory fault). {BUG}"),
                    CrashReason::Exit => {
                        write!(f, "The tool crashed (it exited the process instead of returning a result). {BUG}")
                    }
                    // Deep recursion may be driven by the arguments: deeply nested data, or a
                    // program (for a tool that runs code) that recurses.
                    CrashReason::StackOverflow => write!(
                        f,
                        "The tool crashed (it overflowed its stack): it recursed too deeply. If your \
                         arguments nest deeply (data, or a program that recurses), make them shallower \
                         and call again; otherwise this is a bug in the tool: try a different approach \
                         or another tool."
                    ),
                }
            }
            Self::OutputTooLarge { size, limit } => write!(
                f,
                "The tool's result was {size} bytes, over the limit of {limit}, and was discarded. \
                 Ask for less, for example a narrower query or a smaller limit."
            ),
            Self::InvalidOutput { reason } => write!(
                f,
                "The tool returned an invalid result: {reason}. This is a bug in the tool; \
                 try a different approach or another tool."
            ),
            Self::HttpDenied { request, reason, grant, allowed, .. } => {
                match request {
                    Some(request) => write!(f, "The host refused the tool's request `{request}`: {reason}.")?,
                    None => write!(f, "The tool tried to make an HTTP request, but {reason}.")?,
                }
                if allowed.is_empty() {
                    write!(
                        f,
                        " This is a setting of the host, not something your arguments can change: do not call this \
                         tool for HTTP again; tell the user or use another tool."
                    )?;
                } else {
                    let next =
                        if grant.is_some() { "use a URL there" } else { "use a URL and method one of them allows" };
                    write!(f, " This tool may reach {}; {next}.", code_list(allowed))?;
                }
                match grant {
                    Some(grant) => write!(
                        f,
                        " (An operator can allow it with the grant `allow_hosts = [\"{grant}\"]` for this tool.)"
                    ),
                    None if allowed.is_empty() => {
                        write!(f, " (An operator can grant hosts with `allow_hosts` for this tool.)")
                    }
                    None => Ok(()),
                }
            }
            Self::HttpResponseTooLarge { limit_bytes } => write!(
                f,
                "An HTTP response was larger than the {} this tool may read. \
                 Ask for a smaller resource, for example a narrower query or a page of results.",
                human_bytes(*limit_bytes)
            ),
            Self::ResourceLimit { resource, limit } => write!(
                f,
                "The tool was stopped: it needed more than the host allows one call, which is at most {limit} \
                 {resource}. Do not retry the same call; a smaller input may fit."
            ),
            Self::Cancelled { after_ms } => write!(
                f,
                "The call was cancelled after {after_ms} ms, before the tool finished; it returned nothing. \
                 Call the tool again if you still need its result."
            ),
            Self::Overloaded { running, waiting } => write!(
                f,
                "The tool was not run: the host is at capacity, with {running} {} running and {waiting} \
                 waiting for a place, the most it queues. This is not caused by your arguments; try again in a moment.",
                if *running == 1 { "call" } else { "calls" }
            ),
            Self::NotAllowed { caller, tool, allowed } if allowed.is_empty() => write!(
                f,
                "Tool `{caller}` may not call other tools here, so `{tool}` was not run. This is a setting of the \
                 host, not something the arguments can change: call `{tool}` directly. (An operator can allow it \
                 with `call_tools = [\"{tool}\"]` for `{caller}`.)"
            ),
            Self::NotAllowed { caller, tool, allowed } => write!(
                f,
                "Tool `{caller}` may not call `{tool}`, so it was not run; it may call {}. Use one of those, or call \
                 `{tool}` directly. (An operator can allow it by adding \"{tool}\" to `call_tools` for `{caller}`.)",
                code_list(allowed)
            ),
            Self::DepthLimit { limit } => write!(
                f,
                "The call was not run: calls from one tool to another may nest at most {limit} deep here, and this \
                 one would go deeper. Call the tool directly, or from the outermost program."
            ),
            Self::CallLimit { limit } => write!(
                f,
                "The call was not run: one call may make at most {limit} calls to other tools, and this one has \
                 made them all. Do the rest in another call, or make fewer calls (e.g. one call with more data)."
            ),
            Self::Denied { reason } => write!(
                f,
                "This call was not run: {reason}. Do not make the same call again; continue without it, \
                 or ask the user how to proceed."
            ),
            Self::ApprovalRequired { tool, arguments, resume_token } if resume_token.is_empty() => write!(
                f,
                "The call to `{tool}` with {arguments} waits for the user's approval, so it did not run. Tell the \
                 user what you want to do, and make the call again once they have decided."
            ),
            Self::ApprovalRequired { tool, arguments, .. } => write!(
                f,
                "The program paused before calling `{tool}` with {arguments}: that call needs the user's approval. \
                 It resumes from there once they decide: approved, the call runs; denied, the program gets \
                 ToolCallError(kind=\"denied\") and may carry on."
            ),
            Self::Internal { message } => write!(
                f,
                "The tool could not be run: {message}. This is not caused by your arguments; try again later."
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_with_a_kind_tag() {
        let error = CallError::Timeout { limit_ms: 5000 };
        assert_eq!(serde_json::to_value(&error).unwrap(), serde_json::json!({"kind": "timeout", "limit_ms": 5000}));
        assert_eq!(error.kind(), "timeout");
    }
}
