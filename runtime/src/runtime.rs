//! [`Runtime`]: a set of loaded tools and the one entry point for calling them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::Semaphore;
use tracing::Instrument;
use wasmtime::Engine;
use wasmtime::component::Linker;

use crate::arguments;
use crate::bindings::{CallContext, ToolError};
use crate::cache::CompileCache;
use crate::call::{Diagnostics, ToolCall, ToolOutput, Usage};
use crate::engine::{EpochTicker, Pooling, new_engine};
use crate::error::CallError;
use crate::execute::{Export, Returned, execute};
use crate::limits::{LimitOverrides, Limits};
use crate::load::{self, LoadDiagnostic, LoadedTool, ToolDefinition};
use crate::policy::{Access, Grants, POLICY_FILE, Policy, PolicyError, RequestedCapabilities};
use crate::redact::Redactor;
use crate::sandbox::Sandbox;
use crate::schema::truncate_chars;

/// Why a [`Runtime`] could not be built. Problems with individual components are not
/// errors: they become [`LoadDiagnostic`]s and the other tools load.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// A tools folder could not be read.
    #[error("cannot read the tools folder {}: {source}. Create it, or pass a folder that exists", path.display())]
    ToolsDir {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The WebAssembly engine could not be created.
    #[error("cannot create the WebAssembly engine: {0}")]
    Engine(String),
    /// The epoch ticker thread could not be started.
    #[error("cannot start the epoch ticker thread: {0}")]
    Ticker(#[source] std::io::Error),
    /// A policy file is invalid. Nothing is loaded: a tool must not run with less, or more,
    /// than its operator meant to grant.
    #[error(transparent)]
    Policy(#[from] PolicyError),
}

/// Where components come from, in the order they were added.
enum Source {
    Dir(PathBuf),
    File(PathBuf),
    Bytes { label: String, bytes: Vec<u8> },
}

/// Configures and builds a [`Runtime`].
#[must_use]
pub struct RuntimeBuilder {
    sources: Vec<Source>,
    limits: Limits,
    policy: Policy,
    cache: Option<CompileCache>,
    max_concurrent_calls: Option<u32>,
}

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("sources", &self.sources.len())
            .field("limits", &self.limits)
            .field("policy", &self.policy)
            .field("cache", &self.cache)
            .field("max_concurrent_calls", &self.max_concurrent_calls)
            .finish()
    }
}

impl RuntimeBuilder {
    /// Loads every `*.wasm` file in `dir` (not recursively), in file-name order, with the
    /// grants of the folder's policy file, `toolcell.toml`, if it has one.
    pub fn tools_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.sources.push(Source::Dir(dir.into()));
        self
    }

    /// Loads one component file.
    pub fn component_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.sources.push(Source::File(path.into()));
        self
    }

    /// Loads a component from memory; `label` names it in diagnostics.
    pub fn component_bytes(mut self, label: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.sources.push(Source::Bytes { label: label.into(), bytes: bytes.into() });
        self
    }

    /// The limits of every tool without its own. Default: [`Limits::default`].
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Limits for one tool, on top of the default limits.
    pub fn tool_limits(self, tool: impl Into<String>, overrides: LimitOverrides) -> Self {
        self.grant(tool, Grants::new().limits(overrides))
    }

    /// Grants capabilities (and limits) to the tool named `tool`, on top of what it has.
    pub fn grant(mut self, tool: impl Into<String>, grants: Grants) -> Self {
        self.policy.grant(tool, grants);
        self
    }

    /// Adds every grant of `policy`.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy.merge(policy);
        self
    }

    /// Keeps compiled components in `dir` (created if needed), so the next load of the same
    /// component skips compilation. Off by default. The folder must be writable only by the
    /// user running toolcell: its entries are loaded as trusted machine code.
    pub fn compile_cache(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache = Some(CompileCache::new(dir.into()));
        self
    }

    /// Pre-allocates instance slots for `max_concurrent_calls` calls at once (wasmtime's
    /// pooling allocator) and queues calls beyond that. Off by default.
    ///
    /// Faster per call and much faster under concurrency (see the README's figures), at the
    /// cost of resident memory (about 2 MiB per warm slot) and a ceiling on memory: no call
    /// may use more than the largest memory limit known at build time (the default limits
    /// and every tool's), so a per-call memory override above it is lowered to it.
    pub fn pooling(mut self, max_concurrent_calls: u32) -> Self {
        self.max_concurrent_calls = Some(max_concurrent_calls.max(1));
        self
    }

    /// Compiles and checks every component. Must run inside a tokio runtime.
    ///
    /// # Errors
    /// When a tools folder cannot be read, its policy file is invalid, or the engine cannot
    /// start. A component that cannot be loaded (corrupt, a core module, another world, bad
    /// metadata, a duplicate name, grants that cannot be resolved) becomes a
    /// [`LoadDiagnostic`] instead.
    pub async fn build(mut self) -> Result<Runtime, RuntimeError> {
        for source in &self.sources {
            if let Source::Dir(dir) = source {
                let file = dir.join(POLICY_FILE);
                if file.is_file() {
                    // The folder's file first; grants made in code add to it.
                    let mut combined = Policy::from_file(&file)?;
                    combined.merge(std::mem::take(&mut self.policy));
                    self.policy = combined;
                }
            }
        }
        let pooling = self
            .max_concurrent_calls
            .map(|max_concurrent_calls| Pooling { max_concurrent_calls, max_memory_bytes: self.max_memory_bytes() });
        let engine = new_engine(pooling).map_err(|err| RuntimeError::Engine(err.to_string()))?;
        let ticker = EpochTicker::start(&engine).map_err(RuntimeError::Ticker)?;
        let mut linker = Linker::<Sandbox>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(|err| RuntimeError::Engine(err.to_string()))?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)
            .map_err(|err| RuntimeError::Engine(err.to_string()))?;

        let mut diagnostics = Vec::new();
        let mut inputs = Vec::new();
        for source in self.sources {
            match source {
                Source::Dir(dir) => inputs.extend(read_tools_dir(&dir, &mut diagnostics)?),
                Source::File(path) => match std::fs::read(&path) {
                    Ok(bytes) => inputs.push((path.display().to_string(), bytes)),
                    Err(err) => diagnostics.push(LoadDiagnostic {
                        source: path.display().to_string(),
                        reason: format!("cannot be read: {err}"),
                    }),
                },
                Source::Bytes { label, bytes } => inputs.push((label, bytes)),
            }
        }

        // Compile in parallel on the blocking pool; read metadata as each finishes.
        let compiling: Vec<_> = inputs
            .into_iter()
            .map(|(source, bytes)| {
                let (engine, linker, cache) = (engine.clone(), linker.clone(), self.cache.clone());
                let compile = move || {
                    let started = Instant::now();
                    let prepared = load::prepare(&engine, &linker, cache.as_ref(), &bytes);
                    tracing::debug!(bytes = bytes.len(), elapsed_ms = started.elapsed().as_millis(), "prepared");
                    prepared
                };
                (source, tokio::task::spawn_blocking(compile))
            })
            .collect();
        let mut tools: BTreeMap<String, LoadedTool> = BTreeMap::new();
        for (source, compiling) in compiling {
            let prepared = compiling.await.unwrap_or_else(|err| Err(format!("compilation panicked: {err}")));
            let loaded = match prepared {
                Ok(pre) => load::load(&engine, source.clone(), pre, &self.limits).await,
                Err(reason) => Err(reason),
            };
            match loaded {
                Ok(tool) => match tools.get(&tool.definition.name) {
                    Some(first) => diagnostics.push(LoadDiagnostic {
                        reason: format!(
                            "defines tool `{}`, which {} already defines; rename one of them (this file was not loaded)",
                            tool.definition.name, first.source
                        ),
                        source,
                    }),
                    None => {
                        tools.insert(tool.definition.name.clone(), tool);
                    }
                },
                Err(reason) => diagnostics.push(LoadDiagnostic { source, reason }),
            }
        }
        for (name, _) in self.policy.tools().filter(|(name, _)| !tools.contains_key(*name)) {
            diagnostics.push(LoadDiagnostic {
                source: "policy".into(),
                reason: format!("grants or limits are set for tool `{name}`, but no loaded tool has that name"),
            });
        }

        let mut entries = BTreeMap::new();
        for (name, tool) in tools {
            let grants = self.policy.grants(&name).cloned().unwrap_or_default();
            match Access::resolve(&grants, |variable| std::env::var(variable).ok()) {
                Ok(access) => {
                    let limits = self.limits.with(&grants.limits);
                    entries.insert(name, ToolEntry { tool, limits, grants, access });
                }
                Err(reason) => diagnostics.push(LoadDiagnostic {
                    reason: format!("tool `{name}` was not loaded: {reason}"),
                    source: tool.source,
                }),
            }
        }
        for diagnostic in &diagnostics {
            tracing::warn!(source = %diagnostic.source, reason = %diagnostic.reason, "component not loaded");
        }
        let tools = entries;
        let slots = pooling.map(|pooling| (Arc::new(Semaphore::new(pooling.max_concurrent_calls as usize)), pooling));
        Ok(Runtime { inner: Arc::new(Inner { engine, tools, diagnostics, slots, _ticker: ticker }) })
    }

    /// The largest memory limit any tool has: the size of every pooled memory slot.
    fn max_memory_bytes(&self) -> u64 {
        let overrides = self.policy.tools().map(|(_, grants)| self.limits.with(&grants.limits).memory_bytes);
        overrides.fold(self.limits.memory_bytes, u64::max)
    }
}

/// `*.wasm` files of a folder, sorted by path so duplicate names resolve the same way on
/// every run.
fn read_tools_dir(dir: &Path, diagnostics: &mut Vec<LoadDiagnostic>) -> Result<Vec<(String, Vec<u8>)>, RuntimeError> {
    let entries = std::fs::read_dir(dir).map_err(|source| RuntimeError::ToolsDir { path: dir.to_owned(), source })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wasm") && path.is_file())
        .collect();
    paths.sort();
    let mut files = Vec::new();
    for path in paths {
        match std::fs::read(&path) {
            Ok(bytes) => files.push((path.display().to_string(), bytes)),
            Err(err) => diagnostics
                .push(LoadDiagnostic { source: path.display().to_string(), reason: format!("cannot be read: {err}") }),
        }
    }
    Ok(files)
}

struct ToolEntry {
    tool: LoadedTool,
    limits: Limits,
    grants: Grants,
    access: Access,
}

struct Inner {
    engine: Engine,
    tools: BTreeMap<String, ToolEntry>,
    diagnostics: Vec<LoadDiagnostic>,
    /// With pooling: one permit per pooled instance slot, and the pool's sizes.
    slots: Option<(Arc<Semaphore>, Pooling)>,
    _ticker: EpochTicker,
}

/// A set of loaded tools. Cheap to clone; every clone shares the tools.
///
/// Every call runs in a fresh instance under its tool's [`Limits`], with no filesystem,
/// network, environment or arguments, and stdout/stderr captured into bounded buffers.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("tools", &self.inner.tools.keys().collect::<Vec<_>>())
            .field("diagnostics", &self.inner.diagnostics)
            .finish()
    }
}

impl Runtime {
    /// Starts configuring a runtime.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder {
            sources: Vec::new(),
            limits: Limits::default(),
            policy: Policy::new(),
            cache: None,
            max_concurrent_calls: None,
        }
    }

    /// Every loaded tool's definition, by name, ready to give a model.
    pub fn definitions(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        self.inner.tools.values().map(|entry| &entry.tool.definition)
    }

    /// One tool's definition.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.inner.tools.get(name).map(|entry| &entry.tool.definition)
    }

    /// Where a tool was loaded from.
    pub fn source(&self, name: &str) -> Option<&str> {
        self.inner.tools.get(name).map(|entry| entry.tool.source.as_str())
    }

    /// The limits a tool's calls run under (before per-call overrides).
    pub fn limits(&self, name: &str) -> Option<Limits> {
        self.inner.tools.get(name).map(|entry| entry.limits)
    }

    /// What the operator granted a tool (without secret values).
    pub fn grants(&self, name: &str) -> Option<&Grants> {
        self.inner.tools.get(name).map(|entry| &entry.grants)
    }

    /// What a tool asks to be granted (asking grants nothing).
    pub fn requested(&self, name: &str) -> Option<&RequestedCapabilities> {
        self.inner.tools.get(name).map(|entry| &entry.tool.requested)
    }

    /// The components that were not loaded, and why.
    pub fn diagnostics(&self) -> &[LoadDiagnostic] {
        &self.inner.diagnostics
    }

    /// Runs one call. Never fails: whatever the model sent and however the tool behaves,
    /// the outcome is a [`ToolOutput`] (with [`ToolOutput::is_error`] and a typed
    /// [`CallError`] when it failed). Must run inside a tokio runtime.
    pub async fn call(&self, call: ToolCall) -> ToolOutput {
        let span = tracing::info_span!("tool_call", tool.name = %call.name, tool_call.id = %call.id);
        self.run(call).instrument(span).await
    }

    /// Runs several calls concurrently (as a model's parallel tool calls), returning their
    /// outputs in the same order.
    pub async fn call_all(&self, calls: impl IntoIterator<Item = ToolCall>) -> Vec<ToolOutput> {
        let tasks: Vec<_> = calls
            .into_iter()
            .map(|call| {
                let runtime = self.clone();
                let fallback = ToolCall::new(call.id.clone(), call.name.clone(), Value::Null);
                (fallback, tokio::spawn(async move { runtime.call(call).await }))
            })
            .collect();
        let mut outputs = Vec::with_capacity(tasks.len());
        for (fallback, task) in tasks {
            outputs.push(task.await.unwrap_or_else(|err| {
                let error = CallError::Internal { message: "the call's task ended abnormally".into() };
                let diagnostics = Diagnostics { detail: Some(err.to_string()), ..Diagnostics::default() };
                ToolOutput::failure(&fallback, error, Usage::default(), diagnostics)
            }));
        }
        outputs
    }

    async fn run(&self, call: ToolCall) -> ToolOutput {
        let started = Instant::now();
        let Some(entry) = self.inner.tools.get(&call.name) else {
            let error = self.unknown_tool(&call.name);
            tracing::debug!(kind = error.kind(), "call refused");
            return ToolOutput::failure(&call, error, usage(started, 0, 0), Diagnostics::default());
        };
        let mut limits = entry.limits.with(&call.limits);

        let arguments = match arguments::parse(&call.arguments, limits.max_argument_bytes) {
            Ok(arguments) => arguments,
            Err(error) => {
                tracing::debug!(kind = error.kind(), "call refused");
                return ToolOutput::failure(&call, error, usage(started, 0, 0), Diagnostics::default());
            }
        };
        let violations = entry.tool.parameters.violations(&arguments);
        if !violations.is_empty() {
            let error = CallError::InvalidArguments { violations };
            tracing::debug!(kind = error.kind(), "call refused");
            return ToolOutput::failure(&call, error, usage(started, 0, 0), Diagnostics::default());
        }

        // With pooling, wait for a free instance slot rather than fail for lack of one.
        let _slot = match &self.inner.slots {
            Some((slots, pooling)) => {
                limits.memory_bytes = limits.memory_bytes.min(pooling.max_memory_bytes);
                match slots.clone().acquire_owned().await {
                    Ok(permit) => Some(permit),
                    Err(_) => {
                        let error = CallError::Internal { message: "the instance pool is closed".into() };
                        return ToolOutput::failure(&call, error, usage(started, 0, 0), Diagnostics::default());
                    }
                }
            }
            None => None,
        };

        // The tool receives exactly the value that was validated.
        let arguments = arguments.to_string();
        let context =
            CallContext { call_id: call.id.clone(), host_context: Value::Object(call.context.clone()).to_string() };
        let export = Export::Invoke { pre: &entry.tool.pre, arguments: &arguments, context: &context };
        let mut execution = execute(&self.inner.engine, &limits, &entry.access, export).await;
        let usage = usage(started, execution.fuel_consumed, execution.peak_memory_bytes);
        let max_message_bytes = usize::try_from(limits.max_output_bytes).unwrap_or(usize::MAX);
        let redactor = &entry.access.redactor;
        let result = match execution.outcome {
            Ok(Returned::Invoke(Ok(result))) => check_output(&entry.tool, result, &limits, redactor),
            Ok(Returned::Invoke(Err(ToolError::InvalidArguments(message)))) => {
                Err(CallError::RejectedArguments { message: truncate_bytes(message, max_message_bytes) })
            }
            Ok(Returned::Invoke(Err(ToolError::Failed(failure)))) => Err(CallError::ToolFailed {
                message: truncate_bytes(failure.message, max_message_bytes),
                retryable: failure.retryable,
            }),
            Ok(Returned::Metadata(_) | Returned::Capabilities(_)) => {
                Err(CallError::Internal { message: "the wrong export was called".into() })
            }
            Err(error) => Err(error),
        };
        // A refused request or a capped response that ends the call explains the failure
        // better than whatever the tool made of it; the tool's own account goes to detail.
        let result = result.map_err(|error| {
            let cause = match execution.denied.first() {
                Some(denied) => CallError::HttpDenied {
                    request: denied.request.clone(),
                    grant: denied.grant.clone(),
                    allowed: entry.grants.allow_hosts.iter().map(ToString::to_string).collect(),
                },
                None if execution.response_capped => {
                    CallError::HttpResponseTooLarge { limit_bytes: limits.max_http_response_bytes }
                }
                None => return error,
            };
            let detail = execution.diagnostics.detail.take().map(|detail| format!("\n{detail}")).unwrap_or_default();
            execution.diagnostics.detail = Some(format!("the tool's own outcome: {error}{detail}"));
            cause
        });
        let mut diagnostics = execution.diagnostics;
        if !redactor.is_empty() {
            for text in [&mut diagnostics.stdout, &mut diagnostics.stderr] {
                redactor.text(text);
            }
            if let Some(detail) = &mut diagnostics.detail {
                redactor.text(detail);
            }
        }
        let result = result.map_err(|mut error| {
            error.redact(redactor);
            error
        });
        match result {
            Ok(content) => ToolOutput::success(&call, content, usage, diagnostics),
            Err(error) => {
                if error.is_caller_error() {
                    tracing::debug!(kind = error.kind(), "tool rejected the call");
                } else {
                    tracing::warn!(
                        kind = error.kind(),
                        detail = diagnostics.detail.as_deref().unwrap_or(""),
                        stderr = %diagnostics.stderr,
                        "tool call failed"
                    );
                }
                ToolOutput::failure(&call, error, usage, diagnostics)
            }
        }
    }

    fn unknown_tool(&self, name: &str) -> CallError {
        let available: Vec<String> = self.inner.tools.keys().cloned().collect();
        let mut scored: Vec<(usize, &String)> = available
            .iter()
            .map(|candidate| (load::name_distance(name, candidate), candidate))
            .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(2))
            .collect();
        scored.sort();
        let closest = scored.into_iter().take(3).map(|(_, candidate)| candidate.clone()).collect();
        CallError::UnknownTool { name: truncate_chars(name, 100), closest, available }
    }
}

/// A tool's message held to the output limit (a tool cannot flood the model's context
/// through its errors either), cut at a character boundary.
fn truncate_bytes(mut message: String, max: usize) -> String {
    if message.len() > max {
        let mut cut = max.saturating_sub('…'.len_utf8());
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        message.truncate(cut);
        message.push('…');
    }
    message
}

fn usage(started: Instant, fuel_consumed: u64, peak_memory_bytes: u64) -> Usage {
    Usage { duration: started.elapsed(), fuel_consumed, peak_memory_bytes }
}

/// Holds a result to the output limit, JSON, and the tool's output schema, and redacts
/// secrets from it.
fn check_output(tool: &LoadedTool, result: String, limits: &Limits, redactor: &Redactor) -> Result<String, CallError> {
    let size = result.len() as u64;
    if size > limits.max_output_bytes {
        return Err(CallError::OutputTooLarge { size, limit: limits.max_output_bytes });
    }
    let mut value: Value = serde_json::from_str(&result)
        .map_err(|err| CallError::InvalidOutput { reason: format!("it is not JSON ({err})") })?;
    if let Some(schema) = &tool.output {
        let violations = schema.violations(&value);
        if let Some(first) = violations.first() {
            let at = if first.pointer.is_empty() { "the top level".to_owned() } else { format!("`{}`", first.pointer) };
            let more = match violations.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            return Err(CallError::InvalidOutput {
                reason: format!("it does not match the tool's output schema (at {at}: {}{more})", first.message),
            });
        }
    }
    if !redactor.is_empty() && redactor.json(&mut value) {
        return Ok(value.to_string());
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_bytes_cuts_at_a_character_boundary() {
        assert_eq!(truncate_bytes("short".into(), 10), "short");
        let cut = truncate_bytes("ééééé".into(), 6); // 2 bytes each; '…' takes 3
        assert_eq!(cut, "é…");
        assert!(cut.len() <= 6);
    }
}
