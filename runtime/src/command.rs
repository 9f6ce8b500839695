//! Running a `wasi:cli/command` component in the sandbox of a loaded tool: what `toolcell
//! test` runs a Rust tool's test binary (`cargo test --target wasm32-wasip2`) in.
//!
//! A [`Command`] runs under the tool's [`Limits`](crate::Limits) and with exactly its grants
//! (directories, environment, HTTP hosts), each run in a fresh instance with the command line
//! it is given: what a call of that tool meets, so that a test that needs more than the tool
//! has fails as the tool would. Its stdout and stderr are captured (bounded, redacted of the
//! tool's secrets) and returned.
//!
//! ```no_run
//! # async fn demo(runtime: toolcell_runtime::Runtime, test_binary: &[u8]) -> Result<(), toolcell_runtime::command::CommandError> {
//! let command = runtime.command("word_count", test_binary)?;
//! let run = command.run(&["word_count-test".into(), "--list".into()]).await;
//! println!("exit {:?}: {}", run.exit_code, run.stdout);
//! # Ok(()) }
//! ```

use std::fmt;

use wasmtime::component::Component;
use wasmtime_wasi::p2::bindings::CommandPre;

use crate::call::Runner;
use crate::runtime::Runtime;
use crate::sandbox::Sandbox;
use crate::sandbox::execute::{Export, Returned, execute};
use crate::sandbox::nested::NestedCalls;
use crate::tool::error::CallError;

/// Why a command component cannot be prepared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// No tool of that name is loaded, so there are no limits and grants to run it with.
    #[error("no tool named `{tool}` is loaded: a command runs in the sandbox of a loaded tool")]
    UnknownTool {
        /// The name.
        tool: String,
    },
    /// The bytes are not a `wasi:cli/command` component this host can run.
    #[error("the command {0}")]
    NotACommand(String),
}

/// A `wasi:cli/command` component, compiled and linked, to run in one tool's sandbox
/// ([`Runtime::command`]).
#[derive(Clone)]
pub struct Command {
    runner: Runner,
    tool: String,
    pre: CommandPre<Sandbox>,
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Command").field("tool", &self.tool).finish_non_exhaustive()
    }
}

/// How one run of a [`Command`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommandOutput {
    /// Its exit status when it ran to its end: 0 for success (`run` returned `ok`, or it
    /// exited with success), else 1 (WASI 0.2's `exit` carries success or failure, not a code).
    /// `None` when it was stopped ([`Self::error`]).
    pub exit_code: Option<i32>,
    /// Why it was stopped before its end: a limit (fuel, time, memory), a trap (a Rust panic
    /// aborts on `wasm32-wasip2`), a host resource bound.
    pub error: Option<CallError>,
    /// What it wrote to stdout, up to the tool's capture limit, its secrets redacted.
    pub stdout: String,
    /// What it wrote to stderr, likewise.
    pub stderr: String,
    /// The trap or host error behind [`Self::error`], with its WebAssembly backtrace.
    pub detail: Option<String>,
}

impl Runtime {
    /// Compiles `bytes`, a `wasi:cli/command` component (such as a test binary built for
    /// `wasm32-wasip2`), to run in the sandbox of the loaded tool `tool`: with its limits and
    /// grants. Compiling takes as long as loading a tool of that size (seconds), on this thread.
    ///
    /// # Errors
    /// [`CommandError::UnknownTool`] when `tool` is not loaded; [`CommandError::NotACommand`]
    /// when the bytes do not compile, import what the host does not provide, or do not
    /// export `wasi:cli/run`.
    pub fn command(&self, tool: &str, bytes: &[u8]) -> Result<Command, CommandError> {
        let runner = self.runner().clone();
        let entry =
            runner.version.tools.get(tool).ok_or_else(|| CommandError::UnknownTool { tool: tool.to_owned() })?;
        let shared = &runner.version.shared;
        let component = Component::from_binary(&shared.engine, bytes)
            .map_err(|err| CommandError::NotACommand(format!("could not be compiled: {err}")))?;
        // HTTP as the tool has it: linked when granted, refused at the first use when not.
        let linker = if entry.access.egress.is_empty() {
            shared
                .linkers
                .without_http(&shared.engine, &component)
                .map_err(|err| CommandError::NotACommand(format!("cannot be linked: {err}")))?
        } else {
            shared.linkers.with_http().clone()
        };
        let instance = linker.instantiate_pre(&component).map_err(|err| {
            CommandError::NotACommand(format!(
                "cannot be linked: {err}. It may import only WASI 0.2 interfaces that toolcell provides"
            ))
        })?;
        let pre = CommandPre::new(instance).map_err(|err| {
            CommandError::NotACommand(format!("does not export `wasi:cli/run` ({err}): is it a program's component?"))
        })?;
        Ok(Command { runner, tool: tool.to_owned(), pre })
    }
}

impl Command {
    /// Runs the command in a fresh instance with the command line `args` (the first is the
    /// program's name) under its tool's limits and grants. Calls no other tool. Never fails:
    /// however it ends is in the output. Must run inside a tokio runtime.
    pub async fn run(&self, args: &[String]) -> CommandOutput {
        let Some(entry) = self.runner.version.tools.get(&self.tool) else {
            return CommandOutput {
                exit_code: None,
                error: Some(CallError::Internal { message: "the command's tool is no longer loaded".into() }),
                stdout: String::new(),
                stderr: String::new(),
                detail: None,
            };
        };
        let mut limits = entry.limits;
        if let Some(pooling) = self.runner.version.shared.pooling {
            limits.memory_bytes = limits.memory_bytes.min(pooling.max_memory_bytes);
        }
        let redactor = entry.access.redactor.clone();
        let calls = NestedCalls::NoneAllowed { tool: self.tool.clone(), refused: 0, redactor };
        let export = Export::Run { pre: &self.pre, args };
        let shared = &self.runner.version.shared;
        let execution =
            execute(&shared.engine, &limits, &entry.access, &self.runner.host.network, calls, export, None).await;
        let redactor = &entry.access.redactor;
        let mut diagnostics = execution.diagnostics;
        redactor.cut_text(&mut diagnostics.stdout);
        redactor.cut_text(&mut diagnostics.stderr);
        if let Some(detail) = &mut diagnostics.detail {
            redactor.text(detail);
        }
        let (exit_code, error) = match execution.outcome {
            Ok(Returned::Exited(code)) => (Some(code), None),
            Ok(_) => (None, Some(CallError::Internal { message: "the wrong export was called".into() })),
            Err(error) => (None, Some(error)),
        };
        CommandOutput {
            exit_code,
            error,
            stdout: diagnostics.stdout,
            stderr: diagnostics.stderr,
            detail: diagnostics.detail,
        }
    }
}
