//! Run WebAssembly tool components for LLM agents: sandboxed, under limits, and with every
//! failure turned into something a model can read and correct from.
//!
//! A tool is a `wasm32-wasip2` component exporting the `toolcell:tool/tool` world (see
//! `wit/tool.wit`). A [`Runtime`] loads tools from folders, files or bytes, checks each
//! one's metadata once, and then runs every [`ToolCall`] in a fresh instance:
//!
//! 1. the arguments are parsed (JSON text or a value) and held to a size limit;
//! 2. they are validated against the tool's JSON Schema before the tool runs;
//! 3. the tool runs under fuel, a deadline, a memory cap and an output cap ([`Limits`]), with
//!    no filesystem, network, environment or arguments beyond what the operator's [`Policy`]
//!    grants it;
//! 4. the outcome, whatever it is, becomes a [`ToolOutput`]: content for the model, a typed
//!    [`CallError`] when it failed, and its usage.
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
//!
//! Whatever a call asks for, the answer is an output, never a panic or an `Err`: here a
//! runtime with no tools, and a model that names one anyway.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use toolcell_runtime::{CallError, Runtime, ToolCall};
//!
//! let runtime = Runtime::builder().build().await?;
//! let output = runtime.call(ToolCall::new("call_1", "calculator", r#"{"expression": "2 + 2"}"#)).await;
//! assert!(matches!(output.error, Some(CallError::UnknownTool { .. })));
//! assert!(output.content.starts_with("There is no tool named `calculator`"));
//! # Ok::<(), toolcell_runtime::RuntimeError>(())
//! # }).unwrap();
//! ```
//!
//! The root holds what every embedding names; the rest is in modules:
//! [`tool`] (definitions, calls, outputs, errors), [`limits`] (per call and per runtime),
//! [`policy`] (grants, egress rules and secrets), [`questions`] (what a policy lets each tool
//! do, assertions proved over it, rules suggested from refused requests), [`load`] (what loading reports), [`formats`] (model
//! providers' shapes), [`toolset`] (a runtime as one agent run sees it), [`metrics`] and
//! [`trace`]; [`command`] runs a `wasi:cli/command` (a test binary) in a tool's sandbox.

#![deny(clippy::unwrap_used, clippy::expect_used)]
#![deny(unsafe_code)]

mod bindings;
mod builder;
mod call;
mod observe;
mod redact;
mod runtime;
mod sandbox;

pub mod code_mode;
pub mod command;
pub mod formats;
pub mod load;
pub mod loading;
pub mod policy;
pub mod questions;
pub mod record;
pub mod tool;
pub mod toolset;

pub use builder::RuntimeBuilder;
#[doc(inline)]
pub use formats::Format;
#[doc(inline)]
pub use load::RuntimeError;
#[doc(inline)]
pub use loading::Loading;
#[doc(inline)]
pub use policy::Policy;
pub use runtime::Runtime;
/// Cancels a call started with [`Runtime::call_cancellable`] (re-exported from `tokio-util`).
pub use tokio_util::sync::CancellationToken;
pub use tool::limits::{LimitOverrides, Limits};
#[doc(inline)]
pub use tool::{Arguments, CallError, Principal, ToolCall, ToolDefinition, ToolOutput};
#[doc(inline)]
pub use toolset::ToolSet;

/// The limits of one call ([`Limits`], and [`LimitOverrides`] per tool or per call), and the
/// defaults of the bounds a whole runtime keeps.
pub mod limits {
    pub use crate::builder::DEFAULT_MAX_CALL_DEPTH;
    pub use crate::call::admission::{
        DEFAULT_MAX_QUEUED_BYTES, QUEUED_CALLS_PER_SLOT, default_max_concurrent_calls, default_max_queued_calls,
    };
    pub use crate::tool::limits::{LimitOverrides, Limits};
}

/// Calls, errors by kind, latency and fuel per tool, and calls in flight
/// ([`Runtime::metrics`]); the same numbers go to an OpenTelemetry meter provider.
pub mod metrics {
    pub use crate::observe::metrics::{CallsInFlight, Histogram, METER_NAME, Metrics, ToolMetrics};
}

/// The W3C trace context a call's span continues ([`ToolCall::with_trace_parent`]).
pub mod trace {
    pub use crate::tool::trace::{TraceParent, TraceParentError};
}

/// The book's chapters whose Rust examples embed this crate (in `docs/src/`), compiled as
/// doc tests by `cargo test`, so that none stops compiling unnoticed.
#[cfg(doctest)]
mod book {
    #[doc = include_str!("../../docs/src/embedding.md")]
    struct Embedding;

    #[doc = include_str!("../../docs/src/toolsets.md")]
    struct ToolSets;

    #[doc = include_str!("../../docs/src/observability.md")]
    struct Observability;
}

#[cfg(test)]
mod layout_tests;
