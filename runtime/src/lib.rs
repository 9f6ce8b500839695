//! Run WebAssembly tool components for LLM agents: sandboxed, under limits, and with every
//! failure turned into something a model can read and correct from.
//!
//! A tool is a `wasm32-wasip2` component exporting the `toolcell:tool/tool` world (see
//! `wit/tool.wit`). A [`Runtime`] loads tools from folders, files or bytes, checks each
//! one's metadata once, and then runs every [`ToolCall`] in a fresh instance:
//!
//! 1. the arguments are parsed (JSON text or a value) and held to a size limit;
//! 2. they are validated against the tool's JSON Schema before the tool runs;
//! 3. the tool runs under fuel, a deadline, a memory cap and an output cap, with no
//!    filesystem, network, environment or arguments;
//! 4. the outcome, whatever it is, becomes a [`ToolOutput`]: content for the model, a typed
//!    [`CallError`] when it failed, and [`Usage`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), toolcell_runtime::RuntimeError> {
//! use toolcell_runtime::{Runtime, ToolCall};
//!
//! let runtime = Runtime::builder().tools_dir("tools").build().await?;
//! for diagnostic in runtime.diagnostics() {
//!     eprintln!("not loaded: {diagnostic}");
//! }
//! let output = runtime.call(ToolCall::new("call_1", "calculator", r#"{"expression": "2 + 2"}"#)).await;
//! println!("{}", output.content); // {"value":4.0}, or an error message for the model
//! # Ok(()) }
//! ```

#![deny(unsafe_code)]

mod bindings;
mod builder;
mod call;
mod formats;
mod load;
mod observe;
mod policy;
mod redact;
mod runtime;
mod sandbox;
mod tool;
mod toolset;

pub use builder::{DEFAULT_MAX_CALL_DEPTH, RuntimeBuilder};
pub use call::admission::{
    DEFAULT_MAX_QUEUED_BYTES, QUEUED_CALLS_PER_SLOT, default_max_concurrent_calls, default_max_queued_calls,
};
pub use formats::{Format, FormatError, MessageError, repair, result_messages, tool_calls};
pub use load::RuntimeError;
pub use load::{LoadDiagnostic, LoadEvent};
pub use observe::metrics::{CallsInFlight, Histogram, METER_NAME, Metrics, ToolMetrics};
pub use policy::{
    DirGrant, EnvGrant, EnvValue, Grants, HostPattern, MIN_SECRET_CHARS, POLICY_FILE, Policy, PolicyError, REDACTED,
    RESERVED_HOST_VARIABLES, RequestedCapabilities, RequestedDirectory,
};
pub use redact::RedactingWriter;
pub use runtime::Runtime;
/// Cancels a call started with [`Runtime::call_cancellable`] (re-exported from `tokio-util`).
pub use tokio_util::sync::CancellationToken;
pub use tool::definition::{MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_TITLE_CHARS, ToolAnnotations, ToolDefinition};
pub use tool::error::{CallError, CrashReason, Violation};
pub use tool::io::{Arguments, Diagnostics, MAX_CALL_ID_BYTES, ToolCall, ToolOutput, Usage};
pub use tool::limits::{LimitOverrides, Limits};
pub use tool::trace::{TraceParent, TraceParentError};
pub use toolset::{BoxFuture, Interceptor, Retry, ToolSet, ToolSetBuilder, ToolSetError, Verdict};
