//! [`Runtime`]: a set of loaded tools and the one entry point for calling them.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::call::{Runner, call_concurrently};
use crate::formats::{Format, MessageError, replies, tool_calls};
use crate::load::{self, Announcement, LoadDiagnostic, RuntimeError};
use crate::observe::metrics::{CallsInFlight, Metrics};
use crate::policy::{Grants, MissingGrant, RequestedCapabilities};
use crate::sandbox::engine::portable_engine;
use crate::tool::definition::ToolDefinition;
use crate::tool::io::{ToolCall, ToolOutput};
use crate::tool::limits::Limits;

/// A set of loaded tools. Cheap to clone; every clone shares the tools.
///
/// Every call runs in a fresh instance under its tool's [`Limits`], with no filesystem,
/// network, environment or arguments beyond the tool's grants, and stdout/stderr captured
/// into bounded buffers.
#[derive(Clone)]
pub struct Runtime {
    runner: Runner,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("tools", &self.runner.version.tools.keys().collect::<Vec<_>>())
            .field("diagnostics", &self.runner.version.diagnostics)
            .finish()
    }
}

impl Runtime {
    pub(crate) fn new(runner: Runner) -> Self {
        Self { runner }
    }

    /// The version of the tools and the host its calls run on.
    pub(crate) fn runner(&self) -> &Runner {
        &self.runner
    }

    /// Compiles `component` ahead of time, for a program to ship and hand to
    /// [`crate::RuntimeBuilder::precompiled`]: a runtime built with the same wasmtime and
    /// settings then loads it without compiling, on a machine whose CPU has the features of
    /// this one (elsewhere wasmtime refuses the code, and the component is compiled as if none
    /// were shipped). The artifact names the component by digest, so it is used for those
    /// exact bytes only. Blocking: it takes as long as compiling (seconds for a big component).
    ///
    /// # Errors
    /// When the bytes do not compile, as a load would say.
    pub fn precompile(&self, component: &[u8]) -> Result<Vec<u8>, String> {
        precompile_with(&self.runner.version.shared.engine, component)
    }

    /// As [`Runtime::precompile`], for any CPU of this architecture and operating system: the
    /// code uses none of the features this CPU has beyond the architecture's baseline (SSE4.1,
    /// AVX, BMI...), for a release built on one machine and run on others. On the machine
    /// that compiled it, the `python` tool's 10^6-iteration loop ran 2-5% slower than with
    /// [`Runtime::precompile`]'s code.
    ///
    /// # Errors
    /// As [`Runtime::precompile`].
    pub fn precompile_portable(&self, component: &[u8]) -> Result<Vec<u8>, String> {
        let engine = portable_engine(self.runner.version.shared.pooling)
            .map_err(|err| format!("no engine to compile it with: {err}"))?;
        precompile_with(&engine, component)
    }

    /// Loads the tools again from the same folders, files and bytes, with the policy files
    /// read again, as a new version of this runtime. The policy files and the components are
    /// read as one snapshot (the policy files again after the components, until they agree),
    /// so a version never pairs a component with grants from another moment. Only components
    /// whose bytes changed are compiled; one that no longer loads stays at its current
    /// version (with a diagnostic saying why), unless the policy changed its grants: then it
    /// is not served until it loads. Calls in flight finish on the version they started
    /// with. The new version shares this one's engine, concurrency limit and network bounds.
    ///
    /// Returns the new version and the sources it compiled (or took from the compile cache), in
    /// the order of the sources. When nothing it reads changed since this version was built
    /// (the policy files' bytes, each component's bytes, by digest or by a file identity that
    /// vouches for them), returns this version itself ([`Runtime::same_version`]): nothing is
    /// compiled, loaded or logged.
    ///
    /// # Errors
    /// When a tools folder cannot be read, a policy file is invalid or keeps changing while
    /// the components are read, or (with pooling) the policy raises a memory limit above the
    /// pool's slots: then nothing changes, and this version stays the one to use.
    pub async fn reload(&self) -> Result<(Runtime, Vec<String>), RuntimeError> {
        let (version, compiled) = load::reload(&self.runner.version).await?;
        let runner = Runner { version, host: self.runner.host.clone() };
        Ok((Runtime { runner }, compiled))
    }

    /// Whether `other` is this very version (a clone of it, or what [`Runtime::reload`]
    /// returned when nothing had changed).
    pub fn same_version(&self, other: &Runtime) -> bool {
        Arc::ptr_eq(&self.runner.version, &other.runner.version)
    }

    /// Every loaded tool's definition, by name, ready to give a model.
    pub fn definitions(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        self.runner.version.tools.values().map(|entry| &entry.tool.definition)
    }

    /// One tool's definition.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.runner.version.tools.get(name).map(|entry| &entry.tool.definition)
    }

    /// Where a tool was loaded from.
    pub fn source(&self, name: &str) -> Option<&str> {
        self.runner.version.tools.get(name).map(|entry| entry.tool.source.as_str())
    }

    /// The limits a tool's calls run under (before per-call overrides).
    pub fn limits(&self, name: &str) -> Option<Limits> {
        self.runner.version.tools.get(name).map(|entry| entry.limits)
    }

    /// What the operator granted a tool (without secret values).
    pub fn grants(&self, name: &str) -> Option<&Grants> {
        self.runner.version.tools.get(name).map(|entry| &entry.grants)
    }

    /// What a tool asks to be granted (asking grants nothing).
    pub fn requested(&self, name: &str) -> Option<&RequestedCapabilities> {
        self.runner.version.tools.get(name).map(|entry| &entry.tool.requested)
    }

    /// What a tool needs and is not granted: a directory it expects, a host for a tool that
    /// makes HTTP requests, a variable it reads. Empty when it has all it asks for (or is not
    /// loaded). A tool missing any can only fail; `toolcell serve` does not list it.
    pub fn missing_grants(&self, name: &str) -> Vec<MissingGrant> {
        self.runner.version.tools.get(name).map_or_else(Vec::new, |entry| {
            crate::policy::missing_grants(&entry.tool.requested, entry.tool.uses_http, &entry.grants)
        })
    }

    /// What tool `name`'s component should announce of it: the payload of the
    /// `toolcell-metadata` section that lets a server list the tool before compiling it
    /// ([`crate::RuntimeBuilder::start`]). `toolcell build` writes it into the component with
    /// `toolcell_guest_build::with_metadata_section`.
    pub fn announcement(&self, name: &str) -> Option<Vec<u8>> {
        self.runner.version.tools.get(name).map(|entry| Announcement::of(&entry.tool).to_payload())
    }

    /// The components that were not loaded, and why.
    pub fn diagnostics(&self) -> &[LoadDiagnostic] {
        &self.runner.version.diagnostics
    }

    /// Links the code of every tool whose code is not linked yet, and waits for it. A warm
    /// start lists a tool from the compile cache's record of it and links its code at its
    /// first call or in the background (docs/src/loading.md): this is for a program that
    /// wants every tool's code ready before it serves, and for `toolcell warm`. A tool whose compiled code is gone or refused by now is compiled
    /// (reported to [`crate::RuntimeBuilder::on_load_progress`]). Returns a diagnostic for
    /// each tool whose code could not be linked; its calls fail with an `internal` error.
    /// Must run inside a tokio runtime.
    pub async fn link_code(&self) -> Vec<LoadDiagnostic> {
        let version = &self.runner.version;
        let mut diagnostics = Vec::new();
        for entry in version.tools.values() {
            if let Err(reason) = entry.tool.pre(&version.shared.linkers).await {
                let name = &entry.tool.definition.name;
                let reason = format!("the code of tool `{name}` could not be linked: {reason}");
                diagnostics.push(LoadDiagnostic { source: entry.tool.source.clone(), reason });
            }
        }
        diagnostics
    }

    /// How many calls are running and waiting right now, and how many may run at once.
    pub fn calls_in_flight(&self) -> CallsInFlight {
        self.runner.host.admission.in_flight()
    }

    /// Calls, errors by kind, latency and fuel per tool since the runtime was built (counts
    /// survive reloads), and the calls in flight now. The same numbers go to an
    /// OpenTelemetry meter provider when the process installed one before building the
    /// runtime (see [`METER_NAME`](crate::metrics::METER_NAME)).
    pub fn metrics(&self) -> Metrics {
        self.runner.version.shared.metrics.snapshot(self.calls_in_flight())
    }

    /// Runs one call. Never fails: whatever the model sent and however the tool behaves,
    /// the outcome is a [`ToolOutput`] (with [`ToolOutput::is_error`] and a typed
    /// [`CallError`](crate::CallError) when it failed). Must run inside a tokio runtime.
    pub async fn call(&self, call: ToolCall) -> ToolOutput {
        self.runner.run_in_span(call, None, None, None).await
    }

    /// Runs one call, as [`Self::call`], and stops it when `cancel` is cancelled: a call
    /// waiting for a slot leaves the queue, and a running tool is stopped within one epoch
    /// tick (10 ms) whether it computes or waits in a host call. The output is then a
    /// [`CallError::Cancelled`](crate::CallError::Cancelled), and the call's slot is free for the next one.
    pub async fn call_cancellable(&self, call: ToolCall, cancel: &CancellationToken) -> ToolOutput {
        self.runner.run_in_span(call, Some(cancel), None, None).await
    }

    /// Runs several calls concurrently (as a model's parallel tool calls), returning their
    /// outputs in the same order. Calls beyond the runtime's concurrency limit wait.
    pub async fn call_all(&self, calls: impl IntoIterator<Item = ToolCall>) -> Vec<ToolOutput> {
        let runtime = self.clone();
        call_concurrently(calls, move |call| {
            let runtime = runtime.clone();
            async move { runtime.call(call).await }
        })
        .await
    }

    /// Runs every tool call in a model's `message` (in `format`'s shape, see [`tool_calls`])
    /// at once, and returns the message(s) that answer them, in order (see
    /// [`replies`]): append them to the conversation and ask the model again.
    ///
    /// # Errors
    /// When `message` is not in the format's shape. Every failure of a call is in its result.
    pub async fn respond(&self, format: Format, message: &Value) -> Result<Vec<Value>, MessageError> {
        let calls = tool_calls(format, message, |name| self.definition(name))?;
        let outputs = self.call_all(calls).await;
        Ok(replies(format, message, &outputs))
    }
}

/// `component` compiled by `engine`, as an artifact ([`crate::load::Precompiled`]).
fn precompile_with(engine: &wasmtime::Engine, component: &[u8]) -> Result<Vec<u8>, String> {
    let serialized = engine.precompile_component(component).map_err(|err| format!("could not be compiled: {err}"))?;
    Ok(load::artifact(&load::cache::digest(component), &serialized))
}
