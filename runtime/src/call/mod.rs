//! One call, from where it enters to its output: (for a nested call: may it be made?) →
//! arguments parsed and validated ([`arguments`]) → a place to run ([`admission`]) → the
//! tool run in a fresh sandbox ([`crate::sandbox`]; an instance made ready before the call,
//! [`crate::sandbox::ready`], when there is one) → its outcome, one classification
//! ([`outcome`]) with the output checked ([`output`]) → redaction. Each call runs in its span
//! and is counted ([`crate::observe`]).

pub(crate) mod admission;
pub(crate) mod arguments;
mod outcome;
pub(crate) mod output;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use tracing::instrument::WithSubscriber as _;

use self::admission::Admission;
use self::outcome::{classify, finish, redact};
use crate::bindings::CallContext;
use crate::load::{ToolEntry, Version};
use crate::observe::denials::DenialLog;
use crate::observe::spans;
use crate::policy::{Access, OpenDir};
use crate::questions::Denial;
use crate::redact::Redactor;
use crate::sandbox::Network;
use crate::sandbox::execute::{Export, execute, millis};
use crate::sandbox::journal::Journal;
use crate::sandbox::nested::{CallBudget, Callee, Caller, NestedCalls, Nesting};
use crate::sandbox::ready::{self, Binding, Made, Used};
use crate::tool::definition::ToolDefinition;
use crate::tool::error::CallError;
use crate::tool::intercept::Interceptors;
use crate::tool::io::{Arguments, Diagnostics, ToolCall, ToolOutput, Usage, cut_name};
use crate::tool::limits::{LimitOverrides, Limits};
use toolcell_schema::words::closest;

/// How long the runtime must have had no call running before a tool's next instance is made
/// ready ([`Runner::make_ready`]).
const IDLE_BEFORE_MAKING_READY: std::time::Duration = std::time::Duration::from_millis(1);

/// What every call of every version of a runtime shares: the places to run, the network's
/// bounds, how deep calls may nest.
pub(crate) struct Host {
    pub(crate) admission: Admission,
    pub(crate) network: Network,
    pub(crate) max_call_depth: u32,
    /// Where refused HTTP requests are written, if anywhere.
    pub(crate) denials: Option<DenialLog>,
}

/// A call from outside that is recorded or replayed ([`crate::record`]).
#[derive(Clone, Copy)]
pub(crate) struct Journaled<'a> {
    pub(crate) journal: &'a Journal,
    /// The limits it runs under, whatever its tool's are now: a replay's are the record's.
    pub(crate) limits: Option<&'a Limits>,
    /// The directories it is granted, whatever its tool's are now: a replay's are the
    /// record's, written out.
    pub(crate) dirs: Option<&'a [OpenDir]>,
    /// The embedding's interceptors around each call it makes (a tool set's code mode,
    /// whose programs are journaled so that one can pause them).
    pub(crate) interceptors: Option<&'a Interceptors>,
}

/// One version of the tools with the host that runs their calls: what a call runs on.
#[derive(Clone)]
pub(crate) struct Runner {
    pub(crate) version: Arc<Version>,
    pub(crate) host: Arc<Host>,
}

impl Callee for Runner {
    fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.version.tools.get(name).map(|entry| &entry.tool.definition)
    }

    /// Runs a call a tool made to another (see [`crate::sandbox::nested`]), in a span that is a
    /// child of the caller's. Cancelling the caller drops it.
    fn call_nested(&self, call: ToolCall, nesting: Nesting) -> Pin<Box<dyn Future<Output = ToolOutput> + Send + '_>> {
        Box::pin(self.run_in_span(call, None, Some(nesting), None))
    }
}

impl Runner {
    /// One call in its span (see [`crate::observe::spans`]) and its metrics. Where a call
    /// enters: its name and id are cut here, before anything records them, and everything
    /// it reports is redacted with its tool's secrets and, for a nested call, its callers'.
    pub(crate) async fn run_in_span(
        &self,
        mut call: ToolCall,
        cancel: Option<&CancellationToken>,
        nesting: Option<Nesting>,
        journaled: Option<Journaled<'_>>,
    ) -> ToolOutput {
        let entry = self.version.tools.get(&call.name);
        let redactor = call_redactor(entry, nesting.as_ref());
        call.bound(entry.is_some(), nesting.is_none(), &redactor);
        let span = spans::call_span(&call.name, &call.id);
        if let Some(parent) = &call.trace_parent {
            spans::set_parent(&span, parent);
        }
        spans::record_principal(&span, call.principal.as_ref());
        let record = self.version.shared.metrics.start(entry.map(|entry| &entry.counters));
        let tool = entry.map(|entry| (&entry.tool.definition, entry.tool.source.as_str()));
        let parse_bytes =
            entry.map(|entry| self.call_limits(entry, &call.limits, nesting.is_some()).max_argument_bytes);
        spans::record_input(&span, tool, &call.arguments, &redactor, parse_bytes);
        let output = self.run(call, cancel, nesting, journaled, &redactor).instrument(span.clone()).await;
        spans::record_output(&span, &output);
        let error_kind = output.error.as_ref().map(CallError::kind);
        record.finish(error_kind, output.usage.duration, output.usage.fuel_consumed);
        output
    }

    /// One call: (for a nested call: may it be made?) → parse → validate → admit → execute →
    /// classify → redact.
    async fn run(
        &self,
        mut call: ToolCall,
        cancel: Option<&CancellationToken>,
        nesting: Option<Nesting>,
        journaled: Option<Journaled<'_>>,
        redactor: &Redactor,
    ) -> ToolOutput {
        let started = Instant::now();
        // Owned from here on, so the call holds one copy of its arguments.
        let arguments = std::mem::replace(&mut call.arguments, Arguments::Json(String::new()));
        let refused = |mut error: CallError| {
            tracing::debug!(kind = error.kind(), "call refused");
            // It may quote the arguments (a value the schema refused) or the name.
            error.redact(redactor);
            ToolOutput::failure(
                &call,
                error,
                Usage { duration: started.elapsed(), ..Usage::default() },
                Diagnostics::default(),
            )
        };
        if let Some(nesting) = &nesting
            && let Err(error) = self.may_nest(&call.name, nesting)
        {
            return refused(error);
        }
        let Some(entry) = self.version.tools.get(&call.name) else {
            let error = match &nesting {
                // A tool learns only of the tools it may call.
                Some(nesting) => unknown_tool(&call.name, self.loaded(&nesting.allowed)),
                None => self.unknown_tool_error(&call.name),
            };
            return refused(error);
        };
        let limits = match journaled.and_then(|journaled| journaled.limits) {
            Some(limits) => *limits,
            None => self.call_limits(entry, &call.limits, nesting.is_some()),
        };
        let arguments = match arguments::parse_and_validate(arguments, &entry.tool.parameters, &limits) {
            // What the guest gets, and all a waiting call holds: compact text, not the
            // parsed tree (which can take tens of times the bytes).
            Ok(arguments) => arguments.to_string(),
            Err(error) => return refused(error),
        };
        // A nested call runs in its caller's place: its caller holds a slot and waits for it,
        // so making it queue for another could deadlock a full runtime.
        let _admitted = if nesting.is_some() {
            None
        } else {
            match self.admit(cancel, started, arguments.len()).await {
                Ok(permit) => Some(permit),
                Err(error) => return refused(error),
            }
        };
        let from_outside = nesting.is_none();
        let interceptors = journaled.and_then(|journaled| journaled.interceptors);
        let nested_calls = self.nested_calls(entry, &call, &limits, nesting, interceptors, redactor);
        // The tool runs on exactly the arguments that were validated.
        let context =
            CallContext { call_id: call.id.clone(), host_context: Value::Object(call.context.clone()).to_string() };
        // Only the call from outside streams: a nested call's stdout is its caller's business.
        let stdout_lines = if from_outside { call.stdout_lines.as_ref() } else { None };
        let journal = journaled.as_ref().map(|journaled| journaled.journal);
        let replayed_access = journaled
            .as_ref()
            .and_then(|journaled| journaled.dirs)
            .map(|dirs| Access { dirs: dirs.to_vec(), ..Access::clone(&entry.access) });
        let access = replayed_access.as_ref().unwrap_or(&entry.access);
        // A recorded or replayed call observes through its journal from its first
        // instruction: it makes its own instance, as does a call with limits of its own.
        let ready = if journal.is_none() { entry.ready.take(&limits) } else { None };
        let (execution, used) = match ready {
            Some(ready) => {
                entry.counters.ran_ready();
                let binding =
                    Binding { calls: nested_calls, redactor, stdout_lines, arguments: &arguments, context: &context };
                let (execution, used) = ready.invoke(binding, cancel).await;
                (execution, Some(used))
            }
            None => {
                let pre = match entry.tool.pre(&self.version.shared.linkers).await {
                    Ok(pre) => pre,
                    Err(reason) => return refused(code_unavailable(&call.name, &reason)),
                };
                let export = Export::Invoke {
                    pre: &pre,
                    arguments: &arguments,
                    context: &context,
                    redactor,
                    stdout_lines,
                    journal,
                };
                let engine = &self.version.shared.engine;
                (execute(engine, &limits, access, &self.host.network, nested_calls, export, cancel).await, None)
            }
        };
        if journal.is_none() {
            self.make_ready(entry, used, _admitted.is_some());
        }
        let usage = Usage {
            duration: started.elapsed(),
            fuel_consumed: execution.fuel_consumed,
            peak_memory_bytes: execution.peak_memory_bytes,
            nested_calls: execution.nested_calls,
            nested_fuel: execution.nested_fuel,
        };
        if let Some(log) = &self.host.denials {
            let (denied, _) = execution.http.denied();
            log.record(denied.into_iter().map(|denied| {
                let denial = Denial::new(call.name.clone(), denied.request, denied.reason);
                match denied.rule {
                    Some(rule) => denial.rule(rule),
                    None => denial,
                }
            }));
        }
        let (result, diagnostics) = classify(entry, &limits, execution, redactor);
        let (result, diagnostics) = redact(redactor, &limits, result, diagnostics);
        finish(&call, result, usage, diagnostics)
    }

    /// After a call of `entry`, off the call's path: drops the instance it used, if it was
    /// made ready for it (resetting the pool slot is the drop's work), then, once no call is
    /// running, makes the tool's next instances ready, unless enough are ready or being made.
    /// `admitted`: this call still holds a place to run (a call from outside does).
    fn make_ready(&self, entry: &ToolEntry, used: Option<Used>, admitted: bool) {
        // While other calls run, nothing would be made (see below): back to back, a call
        // that claimed would cost a task and a timer for nothing.
        let others_running = self.host.admission.in_flight().running > usize::from(admitted);
        let claim = if others_running || !self.version.shared.ready.is_open() { None } else { entry.ready.claim() };
        if used.is_none() && claim.is_none() {
            return;
        }
        // (A call that ran without a ready instance linked its tool's code.)
        let next = claim.and_then(|claim| {
            let pre = entry.tool.code.linked_now(&self.version.shared.linkers, entry.tool.http)?.ok()?;
            let limits = self.call_limits(entry, &LimitOverrides::default(), false);
            Some((claim, pre, entry.access.clone(), limits))
        });
        // `shared` held by the task keeps the epoch moving while the guest's start-up runs.
        let (shared, host) = (self.version.shared.clone(), self.host.clone());
        tokio::spawn(async move {
            if let Some(used) = used {
                let _ = tokio::task::spawn_blocking(move || drop(used)).await;
            }
            let Some((claim, pre, access, limits)) = next else { return };
            tokio::time::sleep(IDLE_BEFORE_MAKING_READY).await;
            loop {
                // Beside a running call, making an instance cost more than it saved: back to
                // back on two cores, 5-7 ms of CPU per `python` call against 3.4-3.9 ms, at
                // the same latency (their address-space changes and page faults contend).
                let made = if host.admission.in_flight().running > 0 {
                    Made::NoRoom
                } else {
                    ready::prepare(&shared.ready, &shared.engine, limits, &access, &host.network, &pre).await
                };
                if !claim.keep(made) {
                    break;
                }
            }
        });
    }

    /// Refuses a nested call to `tool` the caller may not make: a tool it may not call, or
    /// too deep. (It took its share of the call tree's budget where it entered, in
    /// [`crate::sandbox::nested`], refused or not.)
    fn may_nest(&self, tool: &str, nesting: &Nesting) -> Result<(), CallError> {
        if !nesting.allowed.iter().any(|allowed| allowed == tool) {
            let allowed = self.loaded(&nesting.allowed);
            return Err(CallError::NotAllowed { caller: nesting.caller.clone(), tool: tool.to_owned(), allowed });
        }
        let limit = self.host.max_call_depth;
        if nesting.depth > limit {
            return Err(CallError::DepthLimit { limit });
        }
        Ok(())
    }

    /// Those of `tools` that are loaded.
    fn loaded(&self, tools: &[String]) -> Vec<String> {
        tools.iter().filter(|name| self.version.tools.contains_key(*name)).cloned().collect()
    }

    /// Waits for a place to run, unless `cancel` fires first.
    async fn admit(
        &self,
        cancel: Option<&CancellationToken>,
        started: Instant,
        bytes: usize,
    ) -> Result<OwnedSemaphorePermit, CallError> {
        match cancel {
            None => self.host.admission.admit(bytes).await,
            Some(cancel) => tokio::select! {
                admitted = self.host.admission.admit(bytes) => admitted,
                () = cancel.cancelled() => Err(CallError::Cancelled { after_ms: millis(started.elapsed()) }),
            },
        }
    }

    /// What the call's guest may call through the `calls` import: the tools its policy
    /// names, within the budget of calls of the call tree it belongs to, redacted with the
    /// call's `redactor` (its tool's secrets and its callers'), each put first to the
    /// embedding's `interceptors` if it has any.
    fn nested_calls(
        &self,
        entry: &ToolEntry,
        call: &ToolCall,
        limits: &Limits,
        nesting: Option<Nesting>,
        interceptors: Option<&Interceptors>,
        redactor: &Redactor,
    ) -> NestedCalls {
        // A program code mode runs may call code mode's tools, not its tool's `call_tools`.
        let (allowed, approve) = match &call.program {
            Some(program) => (program.may_call.clone(), program.must_approve.clone()),
            None => (entry.call_tools.clone(), Arc::from([])),
        };
        // A caller limited to some tools reaches no others through the tools it calls.
        let allowed: Arc<[String]> = match &call.reach {
            Some(reach) => allowed.iter().filter(|tool| reach.contains(tool)).cloned().collect(),
            None => allowed,
        };
        let interceptors = interceptors.cloned().unwrap_or_default();
        if allowed.is_empty() {
            return NestedCalls::NoneAllowed { tool: call.name.clone(), refused: 0, redactor: redactor.clone() };
        }
        let (depth, budget) = match nesting {
            Some(nesting) => (nesting.depth, nesting.budget),
            None => (0, CallBudget::new(limits.max_nested_calls)),
        };
        NestedCalls::Allowed(Caller {
            callee: Arc::new(self.clone()),
            tool: call.name.clone(),
            allowed,
            approve,
            interceptors,
            depth,
            budget,
            call_id: call.id.clone(),
            context: call.context.clone(),
            principal: call.principal.clone(),
            reach: call.reach.clone(),
            made: 0,
            fuel: 0,
            redactor: redactor.clone(),
        })
    }

    /// The tool's limits with the call's overrides: lowering only, unless the embedding
    /// allowed raising (never for a nested call); never past the pool's memory slots.
    pub(crate) fn call_limits(&self, entry: &ToolEntry, overrides: &LimitOverrides, nested: bool) -> Limits {
        let mut limits = if self.version.recipe.raise_limits_per_call && !nested {
            entry.limits.with(overrides)
        } else {
            entry.limits.with_at_most(overrides)
        };
        if let Some(pooling) = self.version.shared.pooling {
            limits.memory_bytes = limits.memory_bytes.min(pooling.max_memory_bytes);
        }
        limits
    }

    fn unknown_tool_error(&self, name: &str) -> CallError {
        let compiling = self.version.compiling.iter().filter(|name| !self.version.tools.contains_key(*name));
        let mut available: Vec<String> = self.version.tools.keys().cloned().chain(compiling.cloned()).collect();
        available.sort();
        available.dedup();
        unknown_tool(name, available)
    }
}

/// Runs each call on a task of its own with `run`, and returns the outputs in the calls'
/// order; a task that ends abnormally becomes an `internal` failure of its call.
pub(crate) async fn call_concurrently<F, Fut>(calls: impl IntoIterator<Item = ToolCall>, run: F) -> Vec<ToolOutput>
where
    F: Fn(ToolCall) -> Fut,
    Fut: Future<Output = ToolOutput> + Send + 'static,
{
    let tasks: Vec<_> = calls
        .into_iter()
        .map(|call| {
            let fallback = ToolCall::new(call.id.clone(), call.name.clone(), Value::Null);
            // In the caller's span and subscriber, so that each call's span is its child (as
            // with `call`), even under a subscriber set only for the caller's thread.
            let traced = run(call).instrument(tracing::Span::current()).with_current_subscriber();
            (fallback, tokio::spawn(traced))
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

/// The error for a call to `name`, which is not among `available`; it quotes the name cut
/// as where a call enters (a runtime's calls were cut there already).
pub(crate) fn unknown_tool(name: &str, available: Vec<String>) -> CallError {
    let name = cut_name(name, &Redactor::default());
    let closest = closest(&name, available.iter().map(String::as_str), 3).into_iter().map(str::to_owned).collect();
    CallError::UnknownTool { name, closest, available }
}

/// What a call is redacted with: its tool's secrets (none for a tool not loaded) and, for a
/// nested call, those of every call above it.
fn call_redactor(entry: Option<&ToolEntry>, nesting: Option<&Nesting>) -> Redactor {
    let own = entry.map(|entry| &entry.access.redactor);
    match (own, nesting) {
        (Some(own), Some(nesting)) => own.union(&nesting.redactor),
        (Some(own), None) => own.clone(),
        (None, Some(nesting)) => nesting.redactor.clone(),
        (None, None) => Redactor::default(),
    }
}

/// The error for a call to `name` whose code could not be linked at its first call (its
/// compiled code left the cache, and its bytes no longer compile here).
fn code_unavailable(name: &str, reason: &str) -> CallError {
    CallError::Internal {
        message: format!(
            "tool `{name}` could not be started: its code {reason}. This is the host's fault, not the call's: \
             the operator should restart the runtime (or reload after changing the tool's file) to load it again"
        ),
    }
}
