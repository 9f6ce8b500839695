//! What a tool, a call and an outcome are, as data: a tool's [`ToolDefinition`] and the rules
//! for its name, a [`ToolCall`] and the [`ToolOutput`] it becomes, and why a call failed
//! ([`CallError`]). Nothing here runs anything.

pub(crate) mod definition;
pub(crate) mod error;
pub(crate) mod intercept;
pub(crate) mod io;
pub(crate) mod limits;
pub(crate) mod trace;

pub use self::definition::{MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_TITLE_CHARS, ToolAnnotations, ToolDefinition};
pub use self::error::{CallError, CrashReason, Violation};
pub use self::intercept::{BoxFuture, Interceptor, Verdict};
pub use self::io::{
    Arguments, Diagnostics, MAX_CALL_ID_BYTES, MAX_STREAMED_LINE_BYTES, MAX_STREAMED_LINES, Principal, StdoutLines,
    ToolCall, ToolOutput, Usage,
};
