//! Checking JSON against a tool's JSON Schema, and explaining every violation in words a
//! model can act on: "`/count`: must be at least 1", with a pointer to the offending value.
//!
//! The toolcell host checks every call's arguments with it before a tool runs; the guest
//! SDK checks them with it too when a tool is tested natively, so that a native test sees
//! the same refusals, in the same words, as a model would.
//!
//! Inside, `explain` picks which violations a model is told about from jsonschema's errors;
//! `messages` writes their sentences, with [`words`] for values, names and counts, reading the
//! schema through `view`; [`formats`] is the one table of the standard string formats. The
//! expected explanations, shared with the Python and JavaScript SDKs, are in `corpus/`.

#![deny(clippy::unwrap_used, clippy::expect_used)]

mod compiled;
mod explain;
pub mod formats;
mod messages;
mod view;
pub mod words;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use compiled::CompiledSchema;
pub use words::{closest, nearest, truncated};

/// One way a JSON value breaks a schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// JSON Pointer to the offending value in the arguments (`""` is the whole object).
    pub pointer: String,
    /// What was expected there.
    pub message: String,
}

/// The message a model reads when its arguments break the parameters schema: each
/// violation on its own line, then what to do.
#[derive(Debug, Clone, Copy)]
pub struct ArgumentsReport<'a>(pub &'a [Violation]);

impl fmt::Display for ArgumentsReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.0.len();
        let problems = if count == 1 { "1 problem" } else { &format!("{count} problems") };
        write!(f, "The arguments do not match the tool's parameters schema ({problems}):")?;
        for violation in self.0 {
            let at = if violation.pointer.is_empty() { "(top level)" } else { &violation.pointer };
            write!(f, "\n- {at}: {}", violation.message)?;
        }
        write!(f, "\nFix these and call the tool again.")
    }
}

/// Why a result breaks the tool's output schema, as the end of a sentence: "it does not
/// match the tool's output schema (at `/total`: must be a number and 2 more)".
#[derive(Debug, Clone, Copy)]
pub struct OutputReport<'a>(pub &'a [Violation]);

impl fmt::Display for OutputReport<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(first) = self.0.first() else { return write!(f, "it matches the tool's output schema") };
        let at = if first.pointer.is_empty() { "the top level".to_owned() } else { format!("`{}`", first.pointer) };
        write!(f, "it does not match the tool's output schema (at {at}: {}", first.message)?;
        match self.0.len() {
            1 => write!(f, ")"),
            n => write!(f, " and {} more)", n - 1),
        }
    }
}
