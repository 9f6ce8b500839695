//! Running one export of a tool in a fresh store and instance, under limits, and turning
//! however that ends into a result or a [`CallError`].

use std::time::Instant;

use wasmtime::{Engine, Store, Trap, UpdateDeadline};

use crate::bindings::capabilities::{CapabilityRequest, CapabilityRequestsPre};
use crate::bindings::{CallContext, ToolCorePre, ToolError, ToolMetadata};
use crate::call::Diagnostics;
use crate::error::{CallError, CrashReason};
use crate::http::DeniedRequest;
use crate::limits::Limits;
use crate::policy::Access;
use crate::sandbox::Sandbox;

/// Which export to call, of which prepared component.
pub(crate) enum Export<'a> {
    Metadata(&'a ToolCorePre<Sandbox>),
    Capabilities(&'a CapabilityRequestsPre<Sandbox>),
    Invoke { pre: &'a ToolCorePre<Sandbox>, arguments: &'a str, context: &'a CallContext },
}

/// What the export returned.
pub(crate) enum Returned {
    Metadata(ToolMetadata),
    Capabilities(CapabilityRequest),
    Invoke(Result<String, ToolError>),
}

/// How one run ended, and what it used.
pub(crate) struct Execution {
    pub(crate) outcome: Result<Returned, CallError>,
    pub(crate) fuel_consumed: u64,
    pub(crate) peak_memory_bytes: u64,
    pub(crate) diagnostics: Diagnostics,
    /// HTTP requests the allow-list refused.
    pub(crate) denied: Vec<DeniedRequest>,
    /// Whether an HTTP response body went past its cap.
    pub(crate) response_capped: bool,
}

impl Execution {
    fn failed(error: CallError, detail: String) -> Self {
        Self {
            outcome: Err(error),
            fuel_consumed: 0,
            peak_memory_bytes: 0,
            diagnostics: Diagnostics { detail: Some(detail), ..Diagnostics::default() },
            denied: Vec::new(),
            response_capped: false,
        }
    }
}

/// Instantiates the component in a new store granting `access` and calls `export`, stopping
/// the guest when it runs out of fuel, memory or time. Must run inside a tokio runtime (the
/// timeout uses its timer).
pub(crate) async fn execute(engine: &Engine, limits: &Limits, access: &Access, export: Export<'_>) -> Execution {
    let deadline = Instant::now() + limits.timeout;
    let sandbox = match Sandbox::new(limits, access, deadline) {
        Ok(sandbox) => sandbox,
        Err(detail) => {
            let error = CallError::Internal { message: "a directory granted to the tool is unavailable".into() };
            return Execution::failed(error, detail);
        }
    };
    let mut store = Store::new(engine, sandbox);
    store.limiter(|sandbox| &mut sandbox.memory);
    if let Err(err) = store.set_fuel(limits.fuel) {
        let error = CallError::Internal { message: "the fuel limit could not be set".into() };
        return Execution::failed(error, format!("{err:?}"));
    }
    // Check the deadline on every epoch tick; between checks, yield so that one busy guest
    // cannot starve other calls on the same thread.
    store.epoch_deadline_callback(|context| {
        Ok(if Instant::now() >= context.data().deadline { UpdateDeadline::Interrupt } else { UpdateDeadline::Yield(1) })
    });
    store.set_epoch_deadline(1);

    let run = async {
        match export {
            Export::Metadata(pre) => {
                let tool = pre.instantiate_async(&mut store).await?;
                tool.call_metadata(&mut store).await.map(Returned::Metadata)
            }
            Export::Capabilities(pre) => {
                let tool = pre.instantiate_async(&mut store).await?;
                tool.call_capabilities(&mut store).await.map(Returned::Capabilities)
            }
            Export::Invoke { pre, arguments, context } => {
                let tool = pre.instantiate_async(&mut store).await?;
                tool.call_invoke(&mut store, arguments, context).await.map(Returned::Invoke)
            }
        }
    };
    // The epoch callback stops a guest that computes; this stops one blocked in a host call.
    let finished = tokio::time::timeout(limits.timeout, run).await;

    let fuel_consumed = limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0));
    let sandbox = store.data();
    let (stdout, dropped_stdout) = sandbox.stdout.take();
    let (stderr, dropped_stderr) = sandbox.stderr.take();
    let mut diagnostics =
        Diagnostics { stdout, stderr, dropped_stdio_bytes: dropped_stdout + dropped_stderr, detail: None };
    let outcome = match finished {
        Ok(Ok(returned)) => Ok(returned),
        Ok(Err(err)) => {
            diagnostics.detail = Some(match err.downcast_ref::<wasmtime_wasi::I32Exit>() {
                Some(exit) => format!("the tool called wasi:cli/exit with code {}", exit.0),
                None => format!("{err:?}"),
            });
            Err(classify(&err, sandbox, &diagnostics.stderr, limits))
        }
        Err(_elapsed) => {
            diagnostics.detail = Some("stopped by the wall-clock timeout while waiting in a host call".into());
            Err(timeout(limits))
        }
    };
    let peak_memory_bytes = sandbox.memory.peak;
    let response_capped = sandbox.gate.response_capped.load(std::sync::atomic::Ordering::Relaxed);
    let denied = std::mem::take(&mut store.data_mut().gate.denied);
    Execution { outcome, fuel_consumed, peak_memory_bytes, diagnostics, denied, response_capped }
}

/// Names the limit or fault behind a failed instantiation or call.
fn classify(err: &wasmtime::Error, sandbox: &Sandbox, stderr: &str, limits: &Limits) -> CallError {
    let trap = err.downcast_ref::<Trap>().copied();
    // A Rust guest whose allocation is refused aborts (an `unreachable` trap); an instance
    // whose initial memory is refused fails to instantiate. Either way the limiter knows.
    if let Some(requested) = sandbox.memory.refused
        && matches!(trap, None | Some(Trap::UnreachableCodeReached))
    {
        return CallError::MemoryLimit { limit_bytes: limits.memory_bytes, requested_bytes: requested };
    }
    match trap {
        Some(Trap::Interrupt) => timeout(limits),
        Some(Trap::OutOfFuel) => CallError::FuelExhausted { limit: limits.fuel },
        Some(Trap::StackOverflow) => CallError::Crashed { reason: CrashReason::StackOverflow },
        Some(Trap::UnreachableCodeReached) if stderr.contains("panicked at") => {
            CallError::Crashed { reason: CrashReason::Panic }
        }
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

fn timeout(limits: &Limits) -> CallError {
    CallError::Timeout { limit_ms: u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX) }
}
