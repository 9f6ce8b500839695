//! Record a call, and run it again exactly: for evals, debugging and (planned) approvals that
//! resume a program.
//!
//! [`Runtime::call_recorded`] runs a call as [`Runtime::call`] does and keeps what it observed
//! of the host beyond its input ([`Observed`]): every clock reading, every random byte, the
//! tools it could call and each nested call's answer and fuel. [`Runtime::replay`] runs the
//! same component on the same arguments, host context and limits, answering each of those
//! from the record: no other tool runs, and the guest executes the same instructions, so the
//! result and the fuel are the same. A record of another component (another digest) is
//! refused, and a run that asks the host for anything the record does not have has diverged:
//! the replay says where.
//!
//! Not covered yet: HTTP responses and granted directories' files are read live on replay
//! (a tool using them replays only while they are unchanged), and environment variables are
//! the replaying runtime's grants (a record never holds a secret).

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

mod files;

pub use self::files::{RecordedDir, RecordedEntry};
use crate::call::Journaled;
use crate::runtime::Runtime;
pub use crate::sandbox::journal::{CallableTool, HttpAnswer, HttpExchange, NestedAnswer, NestedCall, Observed};
use crate::sandbox::journal::{Journal, to_hex};
use crate::tool::io::{ToolCall, ToolOutput};
use crate::tool::limits::{LimitOverrides, Limits};

/// The `format` of the records this version writes and reads.
pub const RECORD_FORMAT: &str = "toolcell-record/1";

/// One call, with everything it observed: JSON, see [`Record::to_json`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Record {
    /// [`RECORD_FORMAT`].
    pub format: String,
    /// The tool called.
    pub tool: String,
    /// The component's digest (BLAKE3 of its bytes, as hex): a replay needs the same one.
    pub digest: String,
    /// The call's id.
    pub call_id: String,
    /// The arguments, as sent.
    pub arguments: String,
    /// The host context.
    #[serde(default)]
    pub context: Map<String, Value>,
    /// The limits it ran under.
    pub limits: Limits,
    /// What it observed of the host.
    pub observed: Observed,
    /// Its granted directories, as it found them when it started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<RecordedDir>,
    /// How it ended.
    pub output: RecordedOutput,
}

/// How a recorded call ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RecordedOutput {
    /// The output's `content`.
    pub content: String,
    /// Whether the call failed.
    pub is_error: bool,
    /// The error's kind, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// The fuel it used, its nested calls' included.
    pub fuel_consumed: u64,
}

impl RecordedOutput {
    fn of(output: &ToolOutput) -> Self {
        Self {
            content: output.content.clone(),
            is_error: output.is_error,
            error_kind: output.error.as_ref().map(|error| error.kind().to_owned()),
            fuel_consumed: output.usage.fuel_consumed,
        }
    }
}

impl Record {
    /// The record as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads a record from JSON text.
    ///
    /// # Errors
    /// When the text is not a record of this format.
    pub fn from_json(text: &str) -> Result<Self, ReplayError> {
        let record: Record = serde_json::from_str(text).map_err(|err| ReplayError::Unreadable(err.to_string()))?;
        if record.format != RECORD_FORMAT {
            return Err(ReplayError::Unreadable(format!(
                "its format is `{}`; this toolcell reads `{RECORD_FORMAT}`",
                record.format
            )));
        }
        Ok(record)
    }
}

/// Why a call could not be recorded (its output is still the call's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// No loaded tool has the call's name.
    #[error("there is no tool named `{tool}` to record")]
    UnknownTool {
        /// The name called.
        tool: String,
    },
    /// The call observed more than a record keeps.
    #[error("the call was not recorded: {0}")]
    TooMuch(String),
}

/// Why a record could not be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The record is not JSON of this format.
    #[error("the record cannot be read: {0}")]
    Unreadable(String),
    /// The recorded tool is not loaded.
    #[error("tool `{tool}` is not loaded here: load the component the record was made with")]
    ToolNotLoaded {
        /// The recorded tool.
        tool: String,
    },
    /// The loaded tool is another component than the recorded one.
    #[error(
        "tool `{tool}` has changed since the record was made (recorded digest {recorded}, loaded {loaded}): a replay \
         runs only the component that was recorded"
    )]
    ToolChanged {
        /// The tool.
        tool: String,
        /// The recorded digest.
        recorded: String,
        /// The loaded one.
        loaded: String,
    },
    /// The run asked the host for something the record does not have.
    #[error("the replay diverged from the record: {0}")]
    Diverged(String),
    /// The record holds HTTP requests, and the tool here is not linked with `wasi:http`.
    #[error(
        "the record of `{tool}` holds HTTP requests, but here `{tool}` has no HTTP grant, so it is not linked with \
         wasi:http: grant it any host (the record answers every request; nothing is sent), e.g. \
         `Grants::new().allow_host(\"replay.invalid\".parse()?)`; `toolcell replay` does"
    )]
    NeedsHttp {
        /// The tool.
        tool: String,
    },
}

/// A replay's outcome.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Replayed {
    /// The replayed call's output.
    pub output: ToolOutput,
    /// Whether it has the recorded content and outcome.
    pub same_result: bool,
    /// Whether it used the recorded fuel.
    pub same_fuel: bool,
    /// Whether it ran under lower limits than recorded (a replay never raises a tool's limits
    /// above what this runtime gives it).
    pub limits_lowered: bool,
}

impl Runtime {
    /// Runs `call` as [`Runtime::call`] does, and records it ([`crate::record`]).
    ///
    /// # Errors
    /// The output is the call's whatever happens; the record is `Err` when the tool is not
    /// loaded or the call observed more than a record keeps.
    pub async fn call_recorded(&self, call: ToolCall) -> (ToolOutput, Result<Record, RecordError>) {
        let runner = self.runner();
        let Some(entry) = runner.version.tools.get(&call.name) else {
            let tool = call.name.clone();
            return (self.call(call).await, Err(RecordError::UnknownTool { tool }));
        };
        let limits = runner.call_limits(entry, &call.limits, false);
        let (tool, digest) = (call.name.clone(), to_hex(&entry.tool.digest));
        let (call_id, context) = (call.id.clone(), call.context.clone());
        let arguments = call.arguments.to_text();
        // As the call finds them: what it writes is its own business.
        let files = files::snapshot(&entry.access.dirs);
        let journal = Journal::record();
        let journaled = Journaled { journal: &journal, limits: Some(&limits), dirs: None, interceptors: None };
        let output = runner.run_in_span(call, None, None, Some(journaled)).await;
        let record = journal.recorded().and_then(|observed| Ok((observed, files?))).map_err(RecordError::TooMuch);
        let record = record.map(|(observed, files)| Record {
            format: RECORD_FORMAT.to_owned(),
            tool,
            digest,
            call_id,
            arguments,
            context,
            limits,
            observed,
            files,
            output: RecordedOutput::of(&output),
        });
        (output, record)
    }

    /// Runs a recorded call again, answering what it observes from the record.
    ///
    /// # Errors
    /// When the recorded tool is not loaded or is another component, or the run diverged
    /// from the record.
    pub async fn replay(&self, record: &Record) -> Result<Replayed, ReplayError> {
        let runner = self.runner();
        let entry = runner
            .version
            .tools
            .get(&record.tool)
            .ok_or_else(|| ReplayError::ToolNotLoaded { tool: record.tool.clone() })?;
        let loaded = to_hex(&entry.tool.digest);
        if loaded != record.digest {
            return Err(ReplayError::ToolChanged {
                tool: record.tool.clone(),
                recorded: record.digest.clone(),
                loaded,
            });
        }
        // The recorded limits, never above what this runtime gives the tool.
        if !record.observed.http.is_empty() && !entry.grants.sends_http() {
            return Err(ReplayError::NeedsHttp { tool: record.tool.clone() });
        }
        let limits = runner.call_limits(entry, &LimitOverrides::all_of(&record.limits), false);
        let journal = Journal::replay(record.observed.clone()).map_err(ReplayError::Unreadable)?;
        let call = ToolCall::new(record.call_id.clone(), record.tool.clone(), record.arguments.as_str())
            .with_context(record.context.clone());
        let started = Instant::now();
        // The recorded files, never the host's (none, when the call had no directory).
        let written = files::write_out(&record.files).map_err(ReplayError::Unreadable)?;
        let journaled =
            Journaled { journal: &journal, limits: Some(&limits), dirs: Some(&written.dirs), interceptors: None };
        let output = runner.run_in_span(call, None, None, Some(journaled)).await;
        drop(written);
        tracing::debug!(tool = %record.tool, elapsed_us = started.elapsed().as_micros(), "replayed");
        if let Some(diverged) = journal.divergence() {
            return Err(ReplayError::Diverged(diverged));
        }
        let replayed = RecordedOutput::of(&output);
        Ok(Replayed {
            same_result: replayed.content == record.output.content
                && replayed.is_error == record.output.is_error
                && replayed.error_kind == record.output.error_kind,
            same_fuel: replayed.fuel_consumed == record.output.fuel_consumed,
            limits_lowered: limits != record.limits,
            output,
        })
    }
}
