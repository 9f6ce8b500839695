use std::fmt;

use crate::__private::bindings;

/// Why a tool call did not produce a result: the `tool-error` variant of the WIT world.
///
/// `?` converts any ordinary error into [`ToolError::failed`] with its message, so a tool can
/// propagate errors without ceremony. Use [`ToolError::invalid_arguments`] when the model
/// should change its arguments, [`ToolError::retryable`] when the same call may succeed
/// later, and [`ToolError::unavailable`] when the host has not granted what the tool needs.
///
/// How the host reports each to the model (the `kind` of its `CallError`):
///
/// | returned | host `kind` | the model is told |
/// |---|---|---|
/// | `invalid_arguments` | `rejected_arguments` | change the arguments and call again |
/// | `failed`, `unavailable` | `tool_failed`, not retryable | the same call will fail the same way |
/// | `retryable` | `tool_failed`, retryable | calling again may succeed |
///
/// (The host's own `invalid_arguments` kind is different: the arguments broke the tool's
/// JSON Schema and the tool never ran.)
///
/// Like `anyhow::Error`, this type does not implement [`std::error::Error`]: that is what lets
/// `?` convert every other error into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// The arguments are well-formed but unusable; the message says what to change.
    InvalidArguments(String),
    /// The tool could not do its work for a reason other than the arguments.
    Failed {
        /// What went wrong, written for the model.
        message: String,
        /// Whether calling again with the same arguments may succeed.
        retryable: bool,
    },
}

impl ToolError {
    /// The arguments cannot be used: the model should fix them and call again. Say what to
    /// change, e.g. "`expression`: unexpected `)` at column 7".
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::InvalidArguments(message.into())
    }

    /// The work failed and calling again with the same arguments will fail the same way.
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed { message: message.into(), retryable: false }
    }

    /// The work failed for a transient reason: the same call may succeed later.
    pub fn retryable(message: impl Into<String>) -> Self {
        Self::Failed { message: message.into(), retryable: true }
    }

    /// The tool cannot do this here because the host has not granted something it needs (a
    /// directory, an HTTP host, a secret): not a problem with the arguments, and calling again
    /// will not help until an operator changes the grants. Say what is missing, e.g. "no
    /// directory is granted to this tool, so it cannot read files here". Reported like
    /// [`ToolError::failed`] (not retryable), without telling the model to change its
    /// arguments.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::Failed { message: message.into(), retryable: false }
    }

    /// The message for the model.
    pub fn message(&self) -> &str {
        match self {
            Self::InvalidArguments(message) | Self::Failed { message, .. } => message,
        }
    }

    pub(crate) fn into_wit(self) -> bindings::ToolError {
        match self {
            Self::InvalidArguments(message) => bindings::ToolError::InvalidArguments(message),
            Self::Failed { message, retryable } => {
                bindings::ToolError::Failed(bindings::Failure { message, retryable })
            }
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidArguments(message) => write!(f, "invalid arguments: {message}"),
            Self::Failed { message, retryable: true } => write!(f, "failed (retryable): {message}"),
            Self::Failed { message, retryable: false } => write!(f, "failed: {message}"),
        }
    }
}

impl<E: std::error::Error> From<E> for ToolError {
    fn from(error: E) -> Self {
        Self::failed(error.to_string())
    }
}
