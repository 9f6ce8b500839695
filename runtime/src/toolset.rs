//! A runtime as one run of an agent sees it: some of its tools, the run's host context and
//! limits, interceptors around every call, and optional retries of transient failures.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::call::{call_concurrently, unknown_tool};
use crate::code_mode::{CodeMode, CodeModeError};
use crate::formats::{Format, MessageError, replies, tool_calls};
use crate::runtime::Runtime;
use crate::tool::definition::ToolDefinition;
use crate::tool::error::CallError;
use crate::tool::intercept::Interceptors;
pub use crate::tool::intercept::{BoxFuture, Interceptor, Verdict};
use crate::tool::io::{Diagnostics, ToolCall, ToolOutput, Usage};
use crate::tool::limits::LimitOverrides;

/// Retrying failures that are transient and nobody's to fix ([`CallError::is_transient`]:
/// a tool's retryable failure, a full queue, a host hiccup). Never a failure the model
/// should fix, nor one that would fail the same way again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Attempts after the first.
    pub retries: u32,
    /// The wait before the first retry; it doubles after each.
    pub backoff: Duration,
    /// No retry starts once this much time has passed since the first attempt.
    pub within: Duration,
}

impl Default for Retry {
    /// Two retries, after 100 ms and 200 ms, within 5 s.
    fn default() -> Self {
        Self { retries: 2, backoff: Duration::from_millis(100), within: Duration::from_secs(5) }
    }
}

/// Some of a runtime's tools, for one run. Cheap to clone.
#[derive(Clone)]
pub struct ToolSet {
    inner: Arc<SetInner>,
}

struct SetInner {
    runtime: Runtime,
    /// The names in the set, in the runtime's (name) order.
    names: Vec<String>,
    context: Map<String, Value>,
    limits: LimitOverrides,
    interceptors: Interceptors,
    retry: Option<Retry>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.inner.names)
            .field("context", &self.inner.context.keys().collect::<Vec<_>>())
            .field("limits", &self.inner.limits)
            .field("interceptors", &self.inner.interceptors)
            .field("retry", &self.inner.retry)
            .finish()
    }
}

/// A tool set naming tools the runtime does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the tool set names tools that are not loaded: {}; loaded: {}. Fix the names given to allow and deny",
    .unknown.join(", "),
    .loaded.join(", ")
)]
#[non_exhaustive]
pub struct ToolSetError {
    /// The names not loaded.
    pub unknown: Vec<String>,
    /// The names loaded.
    pub loaded: Vec<String>,
}

/// A predicate over definitions: whether a tool is in the set.
type Keep = dyn Fn(&ToolDefinition) -> bool + Send + Sync;

/// Builds a [`ToolSet`]; see [`Runtime::tool_set`].
#[must_use]
pub struct ToolSetBuilder {
    runtime: Runtime,
    allow: Option<BTreeSet<String>>,
    deny: BTreeSet<String>,
    filters: Vec<Box<Keep>>,
    context: Map<String, Value>,
    limits: LimitOverrides,
    interceptors: Vec<Arc<dyn Interceptor>>,
    retry: Option<Retry>,
}

impl std::fmt::Debug for ToolSetBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSetBuilder").field("allow", &self.allow).field("deny", &self.deny).finish_non_exhaustive()
    }
}

impl Runtime {
    /// A tool set over this runtime (this version of it): by default every tool, no context,
    /// the tools' own limits, no interceptor, no retry.
    pub fn tool_set(&self) -> ToolSetBuilder {
        ToolSetBuilder {
            runtime: self.clone(),
            allow: None,
            deny: BTreeSet::new(),
            filters: Vec::new(),
            context: Map::new(),
            limits: LimitOverrides::default(),
            interceptors: Vec::new(),
            retry: None,
        }
    }
}

impl ToolSetBuilder {
    /// Only these tools (and only those the other rules keep). Adds to earlier calls.
    pub fn allow<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.allow.get_or_insert_with(BTreeSet::new).extend(names.into_iter().map(Into::into));
        self
    }

    /// Never these tools.
    pub fn deny<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.deny.extend(names.into_iter().map(Into::into));
        self
    }

    /// Only the tools for which `keep` is true, e.g. `|tool| tool.annotations.read_only ==
    /// Some(true)` (pydantic-ai's `prepare`). Every filter must keep a tool.
    pub fn filter(mut self, keep: impl Fn(&ToolDefinition) -> bool + Send + Sync + 'static) -> Self {
        self.filters.push(Box::new(keep));
        self
    }

    /// Host context for every call of the run (a user id, a locale); a call's own context
    /// wins on the same key. Never part of a schema.
    pub fn context(mut self, context: Map<String, Value>) -> Self {
        self.context.extend(context);
        self
    }

    /// Limits for every call of the run. Like a call's own, they only lower the operator's;
    /// with both, the lower of each applies.
    pub fn limits(mut self, limits: LimitOverrides) -> Self {
        self.limits = limits;
        self
    }

    /// Adds an interceptor around every call.
    pub fn intercept(mut self, interceptor: impl Interceptor) -> Self {
        self.interceptors.push(Arc::new(interceptor));
        self
    }

    /// Retries transient failures (off by default).
    pub fn retry(mut self, retry: Retry) -> Self {
        self.retry = Some(retry);
        self
    }

    /// The tool set.
    ///
    /// # Errors
    /// When [`Self::allow`] or [`Self::deny`] names a tool the runtime has not loaded: a
    /// misspelt name would otherwise hide a tool, or fail to hide one, without a word.
    pub fn build(self) -> Result<ToolSet, ToolSetError> {
        let loaded: Vec<String> = self.runtime.definitions().map(|tool| tool.name.clone()).collect();
        let named = self.allow.iter().flatten().chain(&self.deny);
        let unknown: BTreeSet<String> = named.filter(|name| !loaded.contains(name)).cloned().collect();
        if !unknown.is_empty() {
            return Err(ToolSetError { unknown: unknown.into_iter().collect(), loaded });
        }
        let names = self
            .runtime
            .definitions()
            .filter(|tool| self.allow.as_ref().is_none_or(|allow| allow.contains(&tool.name)))
            .filter(|tool| !self.deny.contains(&tool.name))
            .filter(|tool| self.filters.iter().all(|keep| keep(tool)))
            .map(|tool| tool.name.clone())
            .collect();
        let inner = SetInner {
            runtime: self.runtime,
            names,
            context: self.context,
            limits: self.limits,
            interceptors: Interceptors::new(self.interceptors),
            retry: self.retry,
        };
        Ok(ToolSet { inner: Arc::new(inner) })
    }
}

impl ToolSet {
    /// The definitions of the set's tools, by name: what to give the model (e.g. with
    /// [`Format::tools`]).
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.inner.names.iter().filter_map(|name| self.inner.runtime.definition(name))
    }

    /// One tool's definition, if it is in the set.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.contains(name).then(|| self.inner.runtime.definition(name)).flatten()
    }

    /// Whether the set has the tool.
    pub fn contains(&self, name: &str) -> bool {
        self.inner.names.iter().any(|known| known == name)
    }

    /// Runs one call as [`Runtime::call`] does, within the set: a tool outside it is an
    /// `unknown_tool` naming only the set's tools; the run's context and limits apply; the
    /// interceptors decide, and see the output; transient failures are retried if asked.
    pub async fn call(&self, call: ToolCall) -> ToolOutput {
        let call = self.prepare(call);
        let Some(definition) = self.definition(&call.name) else {
            let output = refused(&call, unknown_tool(&call.name, self.inner.names.clone()));
            return self.after(&call, output).await;
        };
        let call = match self.before(call, definition).await {
            Ok(call) => call,
            Err((call, error)) => {
                let output = refused(&call, error);
                return self.after(&call, output).await;
            }
        };
        let output = self.run_with_retries(&call).await;
        self.after(&call, output).await
    }

    /// Code mode within the set ([`Runtime::code_mode`]): its programs may call only the set's
    /// tools (of those the policy lets them call), and each call they make goes through the
    /// set's interceptors, which see it and its output, and may rewrite its arguments, deny
    /// it (the program gets `ToolCallError(kind="denied")`) or defer it: the program pauses
    /// with `approval_required` and a resume token, for [`CodeMode::resume`] with a person's
    /// decision.
    ///
    /// # Errors
    /// When the policy does not turn code mode on, or its program tool is not loaded.
    pub fn code_mode(&self) -> Result<CodeMode, CodeModeError> {
        self.inner.runtime.code_mode_within(|name| self.contains(name), self.inner.interceptors.clone())
    }

    /// Runs several calls at once, as [`Runtime::call_all`] does, each through [`Self::call`].
    pub async fn call_all(&self, calls: impl IntoIterator<Item = ToolCall>) -> Vec<ToolOutput> {
        let set = self.clone();
        call_concurrently(calls, move |call| {
            let set = set.clone();
            async move { set.call(call).await }
        })
        .await
    }

    /// Runs every tool call in a model's `message` at once, within the set, and returns the
    /// message(s) answering them, as [`Runtime::respond`] does.
    ///
    /// # Errors
    /// When `message` is not in the format's shape.
    pub async fn respond(&self, format: Format, message: &Value) -> Result<Vec<Value>, MessageError> {
        let calls = tool_calls(format, message, |name| self.definition(name))?;
        let outputs = self.call_all(calls).await;
        Ok(replies(format, message, &outputs))
    }

    /// The call with the run's context under its own, and the tighter of both limits.
    fn prepare(&self, mut call: ToolCall) -> ToolCall {
        let mut context = self.inner.context.clone();
        context.extend(std::mem::take(&mut call.context));
        call.context = context;
        call.limits = call.limits.tightest(&self.inner.limits);
        call
    }

    /// The interceptors' verdict: the call to run, or why it does not run (the error, with
    /// the call as it was given).
    async fn before(&self, call: ToolCall, definition: &ToolDefinition) -> Result<ToolCall, (ToolCall, CallError)> {
        let given = call.clone();
        match self.inner.interceptors.before(call, definition).await {
            Verdict::Run(call) => Ok(call),
            Verdict::Deny(reason) => Err((given, CallError::Denied { reason })),
            Verdict::Defer(_) => {
                let (tool, arguments) = (given.name.clone(), given.arguments.to_text());
                Err((given, CallError::ApprovalRequired { tool, arguments, resume_token: String::new() }))
            }
        }
    }

    async fn after(&self, call: &ToolCall, output: ToolOutput) -> ToolOutput {
        self.inner.interceptors.after(call, &output).await;
        output
    }

    async fn run_with_retries(&self, call: &ToolCall) -> ToolOutput {
        let started = Instant::now();
        let mut output = self.inner.runtime.call(call.clone()).await;
        let Some(retry) = self.inner.retry else { return output };
        let mut wait = retry.backoff;
        for attempt in 1..=retry.retries {
            let transient = output.error.as_ref().is_some_and(CallError::is_transient);
            if !transient || started.elapsed() + wait > retry.within {
                break;
            }
            tracing::info!(tool = %call.name, attempt, error = output.error.as_ref().map(CallError::kind), "retrying a transient failure");
            tokio::time::sleep(wait).await;
            wait = wait.saturating_mul(2);
            output = self.inner.runtime.call(call.clone()).await;
            output.diagnostics.retries = attempt;
        }
        output
    }
}

fn refused(call: &ToolCall, error: CallError) -> ToolOutput {
    ToolOutput::failure(call, error, Usage::default(), Diagnostics::default())
}
