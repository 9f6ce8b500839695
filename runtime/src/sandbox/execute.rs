//! Running one export of a tool in a fresh store and instance, under limits, and turning
//! however that ends into a result or a [`CallError`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use wasmtime::component::ResourceTableError;
use wasmtime::{Engine, PoolConcurrencyLimitError, Store, Trap, UpdateDeadline};
use wasmtime_wasi::p2::bindings::CommandPre;
use wasmtime_wasi_http::FieldMapError;

use crate::bindings::annotations::{AnnotationsExportPre, ToolAnnotations};
use crate::bindings::capabilities::{CapabilityRequest, CapabilityRequestsPre};
use crate::bindings::{CallContext, ToolCorePre, ToolError, ToolMetadata};
use crate::policy::Access;
use crate::redact::Redactor;
use crate::sandbox::engine::BACKTRACE_FRAMES;
use crate::sandbox::files::Bound;
use crate::sandbox::http::HttpEvents;
use crate::sandbox::journal::Journal;
use crate::sandbox::link::HttpNotGranted;
use crate::sandbox::nested::{NestedCalls, Suspended};
use crate::sandbox::{Given, MAX_HEADER_FIELDS_BYTES, MAX_RESOURCE_HANDLES, Network, Sandbox};
use crate::tool::error::{CallError, CrashReason};
use crate::tool::io::Diagnostics;
use crate::tool::io::StdoutLines;
use crate::tool::limits::Limits;

/// Which export to call, of which prepared component.
pub(crate) enum Export<'a> {
    Metadata(&'a ToolCorePre<Sandbox>),
    Capabilities(&'a CapabilityRequestsPre<Sandbox>),
    Annotations(&'a AnnotationsExportPre<Sandbox>),
    /// A call, redacted (its HTTP refusals as logged) with `redactor`: its tool's secrets and,
    /// for a nested call, its callers'.
    Invoke {
        pre: &'a ToolCorePre<Sandbox>,
        arguments: &'a str,
        context: &'a CallContext,
        redactor: &'a Redactor,
        /// Where its stdout goes, a line at a time, while it runs.
        stdout_lines: Option<&'a StdoutLines>,
        /// Recording or replaying what it observes.
        journal: Option<&'a Journal>,
    },
    /// A `wasi:cli/command`'s `run`, with its command line (see [`crate::command`]).
    Run {
        pre: &'a CommandPre<Sandbox>,
        args: &'a [String],
    },
}

/// What the export returned.
pub(crate) enum Returned {
    Metadata(ToolMetadata),
    Capabilities(CapabilityRequest),
    Annotations(ToolAnnotations),
    Invoke(Result<String, ToolError>),
    /// A command's exit status: 0 when `run` returned `ok`, 1 for `err`, else what `exit`
    /// carried (in WASI 0.2, 0 or 1).
    Exited(i32),
}

/// How one run ended, and what it used.
pub(crate) struct Execution {
    pub(crate) outcome: Result<Returned, CallError>,
    pub(crate) fuel_consumed: u64,
    pub(crate) peak_memory_bytes: u64,
    pub(crate) diagnostics: Diagnostics,
    /// What the call's HTTP requests ran into: refusals, capped bodies.
    pub(crate) http: Arc<HttpEvents>,
    /// The bound on open files that refused one of the guest's opens, if one did.
    pub(crate) files_refused: Option<Bound>,
    /// Calls the guest made to other tools, and the fuel they used (in `fuel_consumed` too).
    pub(crate) nested_calls: u32,
    pub(crate) nested_fuel: u64,
}

impl Execution {
    fn failed(error: CallError, detail: String) -> Self {
        Self {
            outcome: Err(error),
            fuel_consumed: 0,
            peak_memory_bytes: 0,
            diagnostics: Diagnostics { detail: Some(detail), ..Diagnostics::default() },
            http: Arc::default(),
            files_refused: None,
            nested_calls: 0,
            nested_fuel: 0,
        }
    }
}

/// Instantiates the component in a new store granting `access` (and the tool calls of
/// `calls`) and calls `export`, stopping the guest when it runs out of fuel, memory or time,
/// or when `cancel` fires. Must run inside a tokio runtime (the timeout uses its timer).
pub(crate) async fn execute(
    engine: &Engine,
    limits: &Limits,
    access: &Access,
    network: &Network,
    calls: NestedCalls,
    export: Export<'_>,
    cancel: Option<&CancellationToken>,
) -> Execution {
    let started = Instant::now();
    let deadline = deadline_after(limits.timeout);
    let redactor = match &export {
        Export::Invoke { redactor, .. } => redactor,
        Export::Metadata(_) | Export::Capabilities(_) | Export::Annotations(_) | Export::Run { .. } => &access.redactor,
    };
    let given = match &export {
        Export::Invoke { stdout_lines, journal, .. } => {
            Given { args: &[], stdout_lines: *stdout_lines, journal: *journal }
        }
        Export::Run { args, .. } => Given { args, stdout_lines: None, journal: None },
        Export::Metadata(_) | Export::Capabilities(_) | Export::Annotations(_) => Given::default(),
    };
    let sandbox = match Sandbox::new(limits, access, redactor, network, calls, deadline, given) {
        Ok(sandbox) => sandbox,
        Err(detail) => {
            let error = CallError::Internal { message: "a directory granted to the tool is unavailable".into() };
            return Execution::failed(error, detail);
        }
    };
    let mut store = match new_store(engine, limits, sandbox) {
        Ok(store) => store,
        Err(err) => {
            let error = CallError::Internal { message: "the fuel limit could not be set".into() };
            return Execution::failed(error, format!("{err:?}"));
        }
    };
    let finished = supervise(run(&mut store, export), limits, cancel).await;
    conclude(&store, finished, limits, started)
}

/// A store for one run in `sandbox`: its memory limited, its fuel set, and the guest stopped
/// at the sandbox's deadline.
///
/// # Errors
/// When the fuel cannot be set (an engine without fuel).
pub(crate) fn new_store(engine: &Engine, limits: &Limits, sandbox: Sandbox) -> wasmtime::Result<Store<Sandbox>> {
    let mut store = Store::new(engine, sandbox);
    store.limiter(|sandbox| &mut sandbox.memory);
    store.set_fuel(limits.fuel)?;
    // Check the deadline on every epoch tick; between checks, yield so that one busy guest
    // cannot starve other calls on the same thread.
    store.epoch_deadline_callback(|context| {
        Ok(if Instant::now() >= context.data().deadline { UpdateDeadline::Interrupt } else { UpdateDeadline::Yield(1) })
    });
    store.set_epoch_deadline(1);
    Ok(store)
}

/// Runs `running` (the guest) until it finishes, its timeout passes or `cancel` fires.
///
/// The epoch callback stops a guest that computes; the timeout stops one blocked in a host
/// call. Cancellation drops the run wherever it is: a computing guest yields at every epoch
/// tick, so it is stopped within one tick.
pub(crate) async fn supervise<T>(
    running: impl Future<Output = T>,
    limits: &Limits,
    cancel: Option<&CancellationToken>,
) -> Result<T, Stopped> {
    let running = tokio::time::timeout(limits.timeout, running);
    match cancel {
        None => running.await.map_err(|_elapsed| Stopped::Timeout),
        Some(cancel) => tokio::select! {
            finished = running => finished.map_err(|_elapsed| Stopped::Timeout),
            () = cancel.cancelled() => Err(Stopped::Cancelled),
        },
    }
}

/// How the run in `store` that started at `started` ended, and what it used.
pub(crate) fn conclude(
    store: &Store<Sandbox>,
    finished: Result<Result<Returned, Failure>, Stopped>,
    limits: &Limits,
    started: Instant,
) -> Execution {
    let fuel_consumed = limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0));
    let sandbox = store.data();
    let (stdout, dropped_stdout) = sandbox.stdout.take();
    let (stderr, dropped_stderr) = sandbox.stderr.take();
    let mut diagnostics =
        Diagnostics { stdout, stderr, dropped_stdio_bytes: dropped_stdout + dropped_stderr, ..Diagnostics::default() };
    let outcome = match finished {
        Ok(Ok(returned)) => Ok(returned),
        Ok(Err(failure)) => {
            diagnostics.detail = Some(match failure.error.downcast_ref::<wasmtime_wasi::I32Exit>() {
                Some(exit) => format!("the tool called wasi:cli/exit with code {}", exit.0),
                // The error and its causes (the wasm backtrace among them), without the host
                // backtrace `{:?}` would resolve: with RUST_BACKTRACE set, symbolizing it held
                // the first trapping call in a process for 150-270 ms.
                None => format!("{:#}", failure.error),
            });
            Err(call_error(&failure, sandbox, &diagnostics.stderr, limits))
        }
        Err(Stopped::Timeout) => {
            diagnostics.detail = Some("stopped by the wall-clock timeout while waiting in a host call".into());
            Err(timeout(limits))
        }
        Err(Stopped::Cancelled) => {
            diagnostics.detail = Some("stopped because the caller cancelled the call".into());
            Err(CallError::Cancelled { after_ms: millis(started.elapsed()) })
        }
    };
    let peak_memory_bytes = sandbox.memory.peak;
    let (nested_calls, nested_fuel) = match &sandbox.calls {
        NestedCalls::Allowed(caller) => (caller.made, caller.fuel),
        NestedCalls::NoneAllowed { refused, .. } => (*refused, 0),
        NestedCalls::Loading => (0, 0),
    };
    Execution {
        outcome,
        fuel_consumed,
        peak_memory_bytes,
        diagnostics,
        http: sandbox.gate.events.clone(),
        files_refused: sandbox.files.refused,
        nested_calls,
        nested_fuel,
    }
}

/// Why a run was stopped from outside the guest.
pub(crate) enum Stopped {
    Timeout,
    Cancelled,
}

/// When a call that starts now must end; far in the future rather than overflowing for an
/// enormous timeout.
pub(crate) fn deadline_after(timeout: Duration) -> Instant {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
    let now = Instant::now();
    now.checked_add(timeout).or_else(|| now.checked_add(CENTURY)).unwrap_or(now)
}

/// A run that failed, and whether it failed while instantiating (before the export ran).
pub(crate) struct Failure {
    pub(crate) error: wasmtime::Error,
    pub(crate) instantiating: bool,
}

/// Instantiates and calls the export.
async fn run(store: &mut Store<Sandbox>, export: Export<'_>) -> Result<Returned, Failure> {
    let instantiated = |error| Failure { error, instantiating: true };
    let called = |error| Failure { error, instantiating: false };
    match export {
        Export::Metadata(pre) => {
            let tool = pre.instantiate_async(&mut *store).await.map_err(instantiated)?;
            tool.call_metadata(&mut *store).await.map(Returned::Metadata).map_err(called)
        }
        Export::Capabilities(pre) => {
            let tool = pre.instantiate_async(&mut *store).await.map_err(instantiated)?;
            tool.call_capabilities(&mut *store).await.map(Returned::Capabilities).map_err(called)
        }
        Export::Annotations(pre) => {
            let tool = pre.instantiate_async(&mut *store).await.map_err(instantiated)?;
            tool.call_annotations(&mut *store).await.map(Returned::Annotations).map_err(called)
        }
        Export::Invoke { pre, arguments, context, .. } => {
            let tool = pre.instantiate_async(&mut *store).await.map_err(instantiated)?;
            tool.call_invoke(&mut *store, arguments, context).await.map(Returned::Invoke).map_err(called)
        }
        Export::Run { pre, .. } => {
            let command = pre.instantiate_async(&mut *store).await.map_err(instantiated)?;
            match command.wasi_cli_run().call_run(&mut *store).await {
                Ok(Ok(())) => Ok(Returned::Exited(0)),
                Ok(Err(())) => Ok(Returned::Exited(1)),
                // For a command, exiting is how it ends, not a crash.
                Err(error) => match error.downcast_ref::<wasmtime_wasi::I32Exit>() {
                    Some(exit) => Ok(Returned::Exited(exit.0)),
                    None => Err(called(error)),
                },
            }
        }
    }
}

/// Names the limit or fault behind a failed instantiation or call.
fn call_error(failure: &Failure, sandbox: &Sandbox, stderr: &str, limits: &Limits) -> CallError {
    let err = &failure.error;
    if let Some(host) = host_failure(err) {
        return host;
    }
    let trap = err.downcast_ref::<Trap>().copied();
    let panicked = stderr.contains("panicked at");
    // A refused memory.grow is legal wasm that a guest may handle; the failure follows from
    // it only when instantiation needed the memory, or when the guest then aborted the way
    // an allocation failure does (an `unreachable` trap without a panic).
    if let Some(requested) = sandbox.memory.refused {
        let follows = failure.instantiating || (trap == Some(Trap::UnreachableCodeReached) && !panicked);
        if follows {
            return CallError::MemoryLimit { limit_bytes: limits.memory_bytes, requested_bytes: requested };
        }
    }
    match trap {
        Some(Trap::Interrupt) => timeout(limits),
        Some(Trap::OutOfFuel) => CallError::FuelExhausted { limit: limits.fuel },
        Some(Trap::StackOverflow) => CallError::Crashed { reason: CrashReason::StackOverflow },
        Some(Trap::MemoryOutOfBounds) if runaway_recursion(err) => {
            CallError::Crashed { reason: CrashReason::StackOverflow }
        }
        Some(Trap::UnreachableCodeReached) if panicked => CallError::Crashed { reason: CrashReason::Panic },
        Some(Trap::UnreachableCodeReached) => CallError::Crashed { reason: CrashReason::Abort },
        // Exiting, even with status 0, ends the call without a result.
        None if err.downcast_ref::<wasmtime_wasi::I32Exit>().is_some() => {
            CallError::Crashed { reason: CrashReason::Exit }
        }
        // Other traps, and errors that are not traps (a result that breaks the canonical
        // ABI when lifted): the instance did something invalid.
        Some(_) | None => CallError::Crashed { reason: CrashReason::Fault },
    }
}

/// Whether a trap's backtrace is a runaway recursion: as deep as wasmtime records (20
/// frames), all of them a cycle of at most four functions. A guest whose own stack is in
/// linear memory (Rust, C) overflows it before the native stack when its frames are small
/// there: the stack pointer runs below address 0 and the next write is out of bounds, so the
/// trap is a memory fault, not [`Trap::StackOverflow`].
fn runaway_recursion(err: &wasmtime::Error) -> bool {
    const MAX_CYCLE: usize = 4;
    let Some(backtrace) = err.downcast_ref::<wasmtime::WasmBacktrace>() else {
        return false;
    };
    let frames = backtrace.frames();
    let function = |i: usize| (frames[i].module().name(), frames[i].func_index());
    frames.len() >= BACKTRACE_FRAMES
        && (1..=MAX_CYCLE).any(|cycle| (cycle..frames.len()).all(|i| function(i) == function(i - cycle)))
}

/// Failures the host raised rather than the guest: a capability the tool lacks, a host
/// resource bound, an exhausted instance pool.
fn host_failure(err: &wasmtime::Error) -> Option<CallError> {
    if let Some(Suspended(pending)) = err.downcast_ref::<Suspended>() {
        // Code mode seals the paused run into the token.
        let (tool, arguments) = (pending.tool.clone(), pending.arguments.clone());
        return Some(CallError::ApprovalRequired { tool, arguments, resume_token: String::new() });
    }
    if err.downcast_ref::<HttpNotGranted>().is_some() {
        return Some(CallError::HttpDenied {
            request: None,
            reason: "this tool has no HTTP access here: the operator has not granted it any hosts".into(),
            grant: None,
            rule: None,
            allowed: Vec::new(),
        });
    }
    if err.chain().any(|cause| matches!(cause.downcast_ref::<ResourceTableError>(), Some(ResourceTableError::Full))) {
        return Some(CallError::ResourceLimit {
            resource: "open handles (files, streams, HTTP requests, responses and headers)".into(),
            limit: MAX_RESOURCE_HANDLES as u64,
        });
    }
    let fields_too_big = |cause: &(dyn std::error::Error + 'static)| {
        matches!(
            cause.downcast_ref::<FieldMapError>(),
            Some(FieldMapError::TotalSizeTooBig | FieldMapError::TooManyFields)
        )
    };
    if err.chain().any(fields_too_big) {
        return Some(CallError::ResourceLimit {
            resource: "bytes in one set of HTTP header fields".into(),
            limit: MAX_HEADER_FIELDS_BYTES as u64,
        });
    }
    if err.chain().any(|cause| cause.downcast_ref::<PoolConcurrencyLimitError>().is_some()) {
        return Some(CallError::Internal {
            message: "no instance slot was free in the host's pool of pre-allocated instances".into(),
        });
    }
    None
}

fn timeout(limits: &Limits) -> CallError {
    CallError::Timeout { limit_ms: millis(limits.timeout) }
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
