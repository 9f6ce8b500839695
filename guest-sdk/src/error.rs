use std::fmt;

use crate::__private::bindings;

/// Why a tool call did not produce a result: the `tool-error` variant of the WIT world.
///
/// `?` converts any ordinary error into [`ToolError::failed`] with its message, so a tool can
/// propagate errors without ceremony. Use [`ToolError::invalid_arguments`] when the model
/// should change its arguments, and [`ToolError::retryable`] when the same call may succeed
/// later.
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
