//! Calling other tools of the host ("code mode"), through the `toolcell:tool/calls` import.
//!
//! A tool may call only the tools its operator's policy names for it (`call_tools` in
//! `toolcell.toml`); by default none. Each call runs the way any call does: the callee's
//! schema checks the arguments, and it runs in a fresh instance under its own limits and
//! grants. The time and fuel it takes come out of this call's.
//!
//! A component that never calls these functions does not import the interface, so it runs
//! on hosts that predate it.

use serde_json::Value;

/// A tool this tool may call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallableTool {
    /// Its name, as [`call_tool`] takes it.
    pub name: String,
    /// What it does, written for a model.
    pub description: String,
    /// The JSON Schema of its arguments.
    pub parameters_schema: Value,
}

/// Why a call to another tool produced no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFailure {
    /// The host's kind of failure: `invalid_arguments`, `tool_failed`, `timeout`, ...,
    /// `not_allowed`, `depth_limit` or `call_limit`.
    pub kind: String,
    /// What went wrong and what to do, written for a model.
    pub message: String,
    /// Whether calling again unchanged may succeed.
    pub retryable: bool,
}

impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CallFailure {}

/// The tools this tool may call here. Empty unless the operator's policy names some, and
/// outside a toolcell host (a native test).
pub fn callable_tools() -> Vec<CallableTool> {
    host::callable()
}

/// Calls the tool named `name` with `arguments` (a JSON object) and returns its result.
///
/// # Errors
/// A [`CallFailure`] when the callee failed or was not run: its arguments did not match its
/// schema, it failed or hit a limit, or the host refused the call (not allowed, nested too
/// deep, too many calls). Outside a toolcell host, every call fails as `not_allowed`.
pub fn call_tool(name: &str, arguments: &Value) -> Result<Value, CallFailure> {
    let result = host::call(name, &arguments.to_string())?;
    serde_json::from_str(&result).map_err(|err| CallFailure {
        kind: "invalid_output".into(),
        message: format!("tool `{name}` returned a result that is not JSON: {err}"),
        retryable: false,
    })
}

#[cfg(target_arch = "wasm32")]
mod host {
    use super::{CallFailure, CallableTool};
    use crate::__private::bindings::toolcell::tool::calls;

    pub(super) fn callable() -> Vec<CallableTool> {
        calls::callable()
            .into_iter()
            .map(|tool| CallableTool {
                name: tool.name,
                description: tool.description,
                parameters_schema: serde_json::from_str(&tool.parameters_schema).unwrap_or_default(),
            })
            .collect()
    }

    pub(super) fn call(name: &str, arguments: &str) -> Result<String, CallFailure> {
        calls::call(name, arguments).map_err(|error| CallFailure {
            kind: error.kind,
            message: error.message,
            retryable: error.retryable,
        })
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod host {
    use super::{CallFailure, CallableTool};

    pub(super) fn callable() -> Vec<CallableTool> {
        Vec::new()
    }

    pub(super) fn call(name: &str, _arguments: &str) -> Result<String, CallFailure> {
        Err(CallFailure {
            kind: "not_allowed".into(),
            message: format!(
                "`{name}` was not called: calling other tools needs a toolcell host, and this is a native build"
            ),
            retryable: false,
        })
    }
}
