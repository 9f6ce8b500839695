//! Calls from one tool to others ("code mode"): the host side of the `toolcell:tool/calls`
//! import.
//!
//! Every tool is linked with the import; what it may do through it is decided per call. A
//! call whose tool has no `call_tools` grant carries no [`Caller`], so `callable` lists
//! nothing and `call` is refused, at no cost to calls that never use it. Otherwise a nested call is an ordinary call of the
//! runtime (validation, the callee's limits and grants, a fresh instance, its own span and
//! metrics) with these differences, all here or in `crate::call`: every call takes one of
//! the call tree's budget of calls first, whatever becomes of it, and is refused without a
//! span once none is left; it is refused unless the caller may call the callee and calls do
//! not nest too deep; it gets no more time than the caller has left and no more fuel, and
//! its fuel is charged to the caller; it takes no admission slot (its caller holds one and
//! waits for it); and it is redacted with its callers' secrets as well as its tool's (a
//! caller's secret passed to a tool it calls is as secret there).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde_json::{Map, Value};
use wasmtime::StoreContextMut;
use wasmtime::component::{ComponentType, Linker, Lower};

use super::journal::{self, Answer, Journal, PendingCall};
use crate::redact::Redactor;
use crate::tool::definition::ToolDefinition;
use crate::tool::intercept::{Interceptors, Verdict};
use crate::tool::io::{ToolCall, ToolOutput, cut_name};
use crate::tool::limits::LimitOverrides;

/// The import's name, as components built against `wit/tool.wit` ask for it.
const INTERFACE: &str = "toolcell:tool/calls@0.1.3";

/// What nested calls need of the runtime: the same version of the tools as the calling call's,
/// so nested calls see the tools their caller saw.
pub(crate) trait Callee: Send + Sync {
    /// A tool's definition.
    fn definition(&self, name: &str) -> Option<&ToolDefinition>;
    /// Runs a nested call, in a span that is a child of the caller's.
    fn call_nested(&self, call: ToolCall, nesting: Nesting) -> Pin<Box<dyn Future<Output = ToolOutput> + Send + '_>>;
}

/// What the `calls` import needs of a store's data.
pub(crate) trait CallsView: Send + 'static {
    /// What the running guest may call.
    fn nested_calls(&mut self) -> &mut NestedCalls;
    /// When the running call must end.
    fn deadline(&self) -> Instant;
    /// Recording or replaying what the call observes, if it is.
    fn journal(&self) -> Option<&Journal>;
}

/// What a running guest may do through the `calls` import: in its store's data.
pub(crate) enum NestedCalls {
    /// Not a call (the tool is being loaded): nothing may be called.
    Loading,
    /// A call of a tool whose policy lets it call no tool; `refused` counts its attempts.
    /// `redactor` holds the tool's secrets (and its callers').
    NoneAllowed { tool: String, refused: u32, redactor: Redactor },
    /// A call of a tool that may call some.
    Allowed(Caller),
}

/// A call of a tool that may call others.
pub(crate) struct Caller {
    /// The version of the runtime the call runs on: nested calls see the same tools.
    pub(crate) callee: Arc<dyn Callee>,
    /// The calling tool.
    pub(crate) tool: String,
    /// The tools it may call (its `call_tools` grant).
    pub(crate) allowed: Arc<[String]>,
    /// Those of them a person must approve each call of first (code mode's approvals).
    pub(crate) approve: Arc<[String]>,
    /// The embedding's interceptors around each call it makes (a tool set's code mode).
    pub(crate) interceptors: Interceptors,
    /// How deep the calling call is: 0 for a call from outside, 1 for one a tool made.
    pub(crate) depth: u32,
    /// Nested calls left to the whole tree of calls this one belongs to.
    pub(crate) budget: Arc<CallBudget>,
    /// The calling call's id (cut where it entered) and host context, which nested calls
    /// carry on.
    pub(crate) call_id: String,
    pub(crate) context: Map<String, Value>,
    /// Who made the call from outside, whom its nested calls are on behalf of too.
    pub(crate) principal: Option<crate::tool::io::Principal>,
    /// The tools the whole call tree is limited to, if it is (`ToolCall::limited_to`).
    pub(crate) reach: Option<Arc<[String]>>,
    /// Nested calls this call has made, and the fuel they used.
    pub(crate) made: u32,
    pub(crate) fuel: u64,
    /// The secrets of the calling tool and of every call above it.
    pub(crate) redactor: Redactor,
}

/// How a nested call came to be, for the runtime that runs it.
pub(crate) struct Nesting {
    pub(crate) caller: String,
    pub(crate) allowed: Arc<[String]>,
    /// The nested call's own depth (its caller's plus one).
    pub(crate) depth: u32,
    pub(crate) budget: Arc<CallBudget>,
    /// The secrets of the caller and of every call above it: the nested call is redacted with
    /// them as well as its tool's.
    pub(crate) redactor: Redactor,
}

/// The nested calls one call from outside, and every call under it, may still make.
#[derive(Debug)]
pub(crate) struct CallBudget {
    limit: u64,
    used: AtomicU64,
}

impl CallBudget {
    pub(crate) fn new(limit: u64) -> Arc<Self> {
        Arc::new(Self { limit, used: AtomicU64::new(0) })
    }

    /// Takes one call, or says the limit when none is left.
    pub(crate) fn take(&self) -> Result<(), u64> {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| (used < self.limit).then_some(used + 1))
            .map(|_| ())
            .map_err(|_| self.limit)
    }
}

/// A tool the caller may call, as `callable` returns it.
#[derive(ComponentType, Lower)]
#[component(record)]
struct CallableTool {
    name: String,
    description: String,
    #[component(name = "parameters-schema")]
    parameters_schema: String,
}

impl CallableTool {
    fn recorded(&self) -> journal::CallableTool {
        journal::CallableTool {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters_schema: self.parameters_schema.clone(),
        }
    }
}

impl From<journal::CallableTool> for CallableTool {
    fn from(tool: journal::CallableTool) -> Self {
        Self { name: tool.name, description: tool.description, parameters_schema: tool.parameters_schema }
    }
}

/// Why a nested call produced no result, as `call` returns it.
#[derive(ComponentType, Lower)]
#[component(record)]
struct CallError {
    kind: String,
    message: String,
    retryable: bool,
}

/// Defines the `calls` import in `linker`.
pub(crate) fn add_to_linker<T: CallsView>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    let mut calls = linker.instance(INTERFACE)?;
    calls.func_wrap("callable", |mut store: StoreContextMut<'_, T>, (): ()| {
        let journal = store.data().journal().cloned();
        if let Some(replayed) = journal.as_ref().and_then(Journal::replayed_callable) {
            return Ok((replayed.into_iter().map(CallableTool::from).collect(),));
        }
        let tools = callable(store.data_mut().nested_calls());
        if let Some(journal) = &journal {
            journal.record_callable(&tools.iter().map(CallableTool::recorded).collect::<Vec<_>>());
        }
        Ok((tools,))
    })?;
    calls.func_wrap_async("call", |store, (name, arguments): (String, String)| {
        Box::new(async move { call(store, name, arguments).await.map(|answer| (answer,)) })
    })?;
    Ok(())
}

/// The tools the running call may call that are loaded.
fn callable(calls: &NestedCalls) -> Vec<CallableTool> {
    let NestedCalls::Allowed(caller) = calls else { return Vec::new() };
    caller
        .allowed
        .iter()
        .filter_map(|name| caller.callee.definition(name))
        .map(|definition| CallableTool {
            name: definition.name.clone(),
            description: definition.description.clone(),
            parameters_schema: definition.parameters.to_string(),
        })
        .collect()
}

/// Runs one nested call for the guest in `store`, charging the fuel it used to the caller.
/// Recorded, every call the guest asks for is kept with its answer (refusals included);
/// replayed, every one is answered from the record, whatever this runtime would answer. A
/// call that waits for a person's approval stops the guest ([`Suspended`]).
async fn call<T: CallsView>(
    mut store: StoreContextMut<'_, T>,
    name: String,
    arguments: String,
) -> wasmtime::Result<Result<String, CallError>> {
    let journal = store.data().journal().cloned();
    // A record never holds a secret the guest passes on: the arguments are kept redacted,
    // and a replay compares them redacted. (A call that is not journaled copies nothing.)
    let kept = journal.as_ref().map(|_| redacted(store.data_mut().nested_calls(), &arguments));
    let answer = journal.as_ref().zip(kept.as_deref()).map(|(journal, kept)| journal.answer(&name, kept));
    let approved = match answer {
        Some(Answer::Replayed(recorded)) => {
            count_attempt(store.data_mut().nested_calls());
            let fuel_left = store.get_fuel().unwrap_or(0);
            return Ok(replay_call(store, Ok(recorded), fuel_left));
        }
        Some(Answer::Diverged(how)) => {
            count_attempt(store.data_mut().nested_calls());
            let fuel_left = store.get_fuel().unwrap_or(0);
            return Ok(replay_call(store, Err(how), fuel_left));
        }
        Some(Answer::Live { approved }) => approved,
        None => false,
    };
    if !approved && needs_approval(store.data_mut().nested_calls(), &name) {
        let arguments = kept.unwrap_or_else(|| redacted(store.data_mut().nested_calls(), &arguments));
        return Err(wasmtime::Error::new(Suspended(PendingCall { tool: name, arguments })));
    }
    // The embedding's interceptors decide each call not decided already (by a person, on resume).
    let arguments = match intercepted(&mut store, &name, &arguments, approved).await {
        Intercepted::Run(arguments) => arguments,
        Intercepted::Deny(reason) => {
            count_attempt(store.data_mut().nested_calls());
            let answer = Err(refused(&crate::tool::error::CallError::Denied { reason }));
            if let (Some(journal), Some(arguments)) = (&journal, kept) {
                journal.record_call(journal::NestedCall { name, arguments, answer: recorded_answer(&answer), fuel: 0 });
            }
            return Ok(answer);
        }
        Intercepted::Defer => {
            let arguments = kept.unwrap_or_else(|| redacted(store.data_mut().nested_calls(), &arguments));
            return Err(wasmtime::Error::new(Suspended(PendingCall { tool: name, arguments })));
        }
    };
    let recorded_name = journal.as_ref().map(|_| name.clone());
    let (answer, spent) = call_live(store, name, arguments).await;
    if let (Some(journal), Some(name), Some(arguments)) = (journal, recorded_name, kept) {
        journal.record_call(journal::NestedCall { name, arguments, answer: recorded_answer(&answer), fuel: spent });
    }
    Ok(answer)
}

/// What the embedding's interceptors decided about a nested call.
enum Intercepted {
    /// Run it, with these arguments (theirs, when they rewrote them).
    Run(String),
    Deny(String),
    Defer,
}

/// The interceptors' verdict on calling `name` with `arguments`; a call a person approved
/// already, of a tool that is not loaded, or with no interceptors, runs as it is.
async fn intercepted<T: CallsView>(
    store: &mut StoreContextMut<'_, T>,
    name: &str,
    arguments: &str,
    approved: bool,
) -> Intercepted {
    let as_called = || Intercepted::Run(arguments.to_owned());
    let NestedCalls::Allowed(caller) = store.data_mut().nested_calls() else { return as_called() };
    if approved || caller.interceptors.is_empty() {
        return as_called();
    }
    let (interceptors, callee) = (caller.interceptors.clone(), caller.callee.clone());
    let Some(definition) = callee.definition(name) else { return as_called() };
    let id = format!("{}.{}", caller.call_id, caller.made + 1);
    let call = ToolCall::new(id, name, arguments).with_context(caller.context.clone());
    match interceptors.before(call, definition).await {
        // The tool stays the one the program called; only the arguments may change.
        Verdict::Run(call) => Intercepted::Run(call.arguments.to_text()),
        Verdict::Deny(reason) => Intercepted::Deny(reason),
        Verdict::Defer(_) => Intercepted::Defer,
    }
}

/// Whether the running call's caller must have a person approve a call of `tool` first.
fn needs_approval(calls: &NestedCalls, tool: &str) -> bool {
    matches!(calls, NestedCalls::Allowed(caller) if caller.approve.iter().any(|name| name == tool))
}

/// The error that stops a guest at a call waiting for a person's approval: the run ends, and
/// is resumed by replay once someone decides ([`crate::code_mode`]).
#[derive(Debug)]
pub(crate) struct Suspended(pub(crate) PendingCall);

impl std::fmt::Display for Suspended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the program stopped at a call of `{}`, which waits for approval", self.0.tool)
    }
}

impl std::error::Error for Suspended {}

/// `arguments` with the calling tool's secrets (and its callers') redacted.
fn redacted(calls: &NestedCalls, arguments: &str) -> String {
    let mut arguments = arguments.to_owned();
    match calls {
        NestedCalls::Allowed(Caller { redactor, .. }) | NestedCalls::NoneAllowed { redactor, .. } => {
            redactor.text(&mut arguments);
        }
        NestedCalls::Loading => {}
    }
    arguments
}

/// Counts a call the guest asked for, as a live call would have.
fn count_attempt(calls: &mut NestedCalls) {
    match calls {
        NestedCalls::Allowed(caller) => caller.made += 1,
        NestedCalls::NoneAllowed { refused, .. } => *refused += 1,
        NestedCalls::Loading => {}
    }
}

/// Runs one nested call: its answer, and the fuel it used.
async fn call_live<T: CallsView>(
    mut store: StoreContextMut<'_, T>,
    name: String,
    arguments: String,
) -> (Result<String, CallError>, u64) {
    let fuel_left = store.get_fuel().unwrap_or(0);
    let data = store.data_mut();
    let time_left = data.deadline().saturating_duration_since(Instant::now());
    let caller = match data.nested_calls() {
        NestedCalls::Allowed(caller) => caller,
        NestedCalls::NoneAllowed { tool, refused: attempts, .. } => {
            *attempts += 1;
            let name = cut_name(&name, &Redactor::default());
            let error =
                crate::tool::error::CallError::NotAllowed { caller: tool.clone(), tool: name, allowed: Vec::new() };
            return (Err(refused(&error)), 0);
        }
        NestedCalls::Loading => {
            let message = "a tool cannot call other tools while it is being loaded (in metadata, capabilities or \
                           annotations)";
            return (Err(refused(&crate::tool::error::CallError::Internal { message: message.into() })), 0);
        }
    };
    caller.made += 1;
    // First, whatever becomes of the call: a refused call spends the budget too, and past it
    // calls are refused here, before they cost a span.
    if let Err(limit) = caller.budget.take() {
        return (Err(refused(&crate::tool::error::CallError::CallLimit { limit })), 0);
    }
    let id = format!("{}.{}", caller.call_id, caller.made);
    // No more time than the caller has left, nor more fuel: a nested call spends the
    // caller's budget. Lowering only: the callee's own limits stay a ceiling.
    let limits = LimitOverrides::new().fuel(fuel_left).timeout(time_left);
    let mut call = ToolCall::new(id, name, arguments).with_context(caller.context.clone()).with_limits(limits);
    call.principal = caller.principal.clone();
    call.reach = caller.reach.clone();
    let nesting = Nesting {
        caller: caller.tool.clone(),
        allowed: caller.allowed.clone(),
        depth: caller.depth + 1,
        budget: caller.budget.clone(),
        redactor: caller.redactor.clone(),
    };
    let (callee, interceptors) = (caller.callee.clone(), caller.interceptors.clone());
    let seen = (!interceptors.is_empty()).then(|| call.clone());
    let output = callee.call_nested(call, nesting).await;
    if let Some(call) = &seen {
        interceptors.after(call, &output).await;
    }

    let spent = output.usage.fuel_consumed;
    charge(&mut store, fuel_left, spent);
    (outcome(output), spent)
}

/// Charges a nested call's fuel to its caller: fuel runs out for the caller where it would
/// have run out for one guest doing both.
fn charge<T: CallsView>(store: &mut StoreContextMut<'_, T>, fuel_left: u64, spent: u64) {
    if let NestedCalls::Allowed(caller) = store.data_mut().nested_calls() {
        caller.fuel = caller.fuel.saturating_add(spent);
    }
    let _ = store.set_fuel(fuel_left.saturating_sub(spent));
}

/// A nested call answered from the record: its answer, and its fuel charged as it was. A call
/// the record does not have (the run diverged) is refused, and the replay reports it.
fn replay_call<T: CallsView>(
    mut store: StoreContextMut<'_, T>,
    replayed: Result<journal::NestedCall, String>,
    fuel_left: u64,
) -> Result<String, CallError> {
    match replayed {
        Ok(recorded) => {
            charge(&mut store, fuel_left, recorded.fuel);
            match recorded.answer {
                journal::NestedAnswer::Result(result) => Ok(result),
                journal::NestedAnswer::Error { kind, message, retryable } => {
                    Err(CallError { kind, message, retryable })
                }
            }
        }
        Err(diverged) => {
            let message = format!("the replay diverged from the record: {diverged}");
            Err(refused(&crate::tool::error::CallError::Internal { message }))
        }
    }
}

fn recorded_answer(answer: &Result<String, CallError>) -> journal::NestedAnswer {
    match answer {
        Ok(result) => journal::NestedAnswer::Result(result.clone()),
        Err(error) => journal::NestedAnswer::Error {
            kind: error.kind.clone(),
            message: error.message.clone(),
            retryable: error.retryable,
        },
    }
}

fn refused(error: &crate::tool::error::CallError) -> CallError {
    CallError { kind: error.kind().to_owned(), message: error.to_string(), retryable: error.retryable() }
}

/// The nested call's output as the guest sees it: the result, or the model-facing error.
fn outcome(output: ToolOutput) -> Result<String, CallError> {
    match output.error {
        None => Ok(output.content),
        Some(error) => {
            Err(CallError { kind: error.kind().to_owned(), message: output.content, retryable: error.retryable() })
        }
    }
}
