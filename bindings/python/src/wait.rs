//! Where calls run: one tokio runtime for the module, and the two ways Python waits on it.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::sync::PyOnceLock;
use tokio_util::sync::CancellationToken;

use pyo3::prelude::*;

/// How often a blocking wait looks for a signal (Ctrl-C) while a call runs.
const SIGNAL_CHECK_EVERY: Duration = Duration::from_millis(100);

/// Whether the interpreter is exiting: no thread of ours may enter it any more.
static EXITING: AtomicBool = AtomicBool::new(false);
/// How many threads of ours are in the interpreter, or waiting to enter it, now.
static INSIDE: AtomicUsize = AtomicUsize::new(0);
/// How long the interpreter's exit waits for our threads to leave it.
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// Runs `work` in the interpreter from a thread of ours (a tokio worker or blocking thread),
/// unless the interpreter is exiting: a thread that enters it while it finalizes aborts the
/// process (`PyGILState_Release: thread state must be current`), as a call settling just as
/// `asyncio.run` returned and the script ended once did. `None`: it is exiting.
pub(crate) fn attach<R>(work: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    // Counted before the check, so the exit either sees this thread inside, or this thread
    // sees the exit (both orders are sequentially consistent).
    INSIDE.fetch_add(1, Ordering::SeqCst);
    let result = if EXITING.load(Ordering::SeqCst) { None } else { Some(Python::attach(work)) };
    INSIDE.fetch_sub(1, Ordering::SeqCst);
    result
}

/// Called by `atexit` before the interpreter finalizes: no thread of ours enters it from now
/// on, and those inside are waited for (with the GIL released, so they can finish).
#[pyfunction]
pub(crate) fn _exiting(py: Python<'_>) {
    EXITING.store(true, Ordering::SeqCst);
    py.detach(|| {
        let started = std::time::Instant::now();
        while INSIDE.load(Ordering::SeqCst) > 0 && started.elapsed() < EXIT_WAIT {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

/// The module's tokio runtime (pyo3-async-runtimes' multi-threaded one).
pub(crate) fn tokio() -> &'static tokio::runtime::Runtime {
    pyo3_async_runtimes::tokio::get_runtime()
}

/// Runs `future` to its end with the GIL released, so other Python threads (and other calls)
/// go on meanwhile. A signal's exception (Ctrl-C's `KeyboardInterrupt`) drops the future,
/// which stops its sandbox, and is raised.
pub(crate) fn block_on<F>(py: Python<'_>, future: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    py.detach(|| {
        tokio().block_on(async {
            let mut future = std::pin::pin!(future);
            loop {
                tokio::select! {
                    out = &mut future => return Ok(out),
                    () = tokio::time::sleep(SIGNAL_CHECK_EVERY) => Python::attach(|py| py.check_signals())?,
                }
            }
        })
    })
}

/// Makes a call's result into a Python object, on a thread that may take the GIL (not a
/// tokio worker).
pub(crate) type ToPython = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

type Started = Pin<Box<dyn Future<Output = PyResult<ToPython>> + Send>>;

/// A call not started yet, as a Python awaitable: awaiting it starts it (so
/// `asyncio.run(runtime.call(...))` works, as with a coroutine). A `Pending` never awaited never
/// runs.
///
/// The call runs on a thread of the runtime's blocking pool, which then hands the result to the
/// event loop itself: two thread hand-offs per call, the least a call that must not block the
/// loop can make (pyo3-async-runtimes' bridge makes three: a worker, a blocking thread to take
/// the GIL, the loop). Cancelling the awaiting task cancels the call's token, which drops the
/// call's future and so stops its sandbox (as MCP's cancellation does).
#[pyclass(module = "toolcell", frozen)]
pub(crate) struct Pending {
    future: Mutex<Option<Started>>,
}

#[pymethods]
impl Pending {
    fn __await__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let future = self
            .future
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this call was awaited already: call again for another run"))?;
        let locals = pyo3_async_runtimes::tokio::get_current_locals(py)?;
        let event_loop = locals.event_loop(py);
        let settled = event_loop.call_method0("create_future")?;
        let cancelled = CancellationToken::new();
        settled.call_method1("add_done_callback", (CancelOnDone { token: cancelled.clone() },))?;
        let (to_settle, on_loop) = (settled.clone().unbind(), event_loop.unbind());
        let locals = Arc::new(locals);
        let runtime = tokio().handle().clone();
        // Dropped (the task ended) without a result only when cancelled: nothing to settle.
        drop(tokio().spawn_blocking(move || {
            let run = crate::intercept::on_loop(locals, async move {
                tokio::select! {
                    result = future => Some(result),
                    () = cancelled.cancelled() => None,
                }
            });
            if let Some(result) = runtime.block_on(run) {
                attach(|py| settle(py, &on_loop, &to_settle, result));
            }
        }));
        settled.call_method0("__await__")
    }
}

/// Cancels a call when the asyncio future it settles is cancelled (its awaiting task was).
#[pyclass(module = "toolcell", frozen)]
struct CancelOnDone {
    token: CancellationToken,
}

#[pymethods]
impl CancelOnDone {
    fn __call__(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        if future.call_method0("cancelled")?.is_truthy()? {
            self.token.cancel();
        }
        Ok(())
    }
}

/// Hands a call's result to the future its task awaits, on the future's event loop (a future
/// is settled only from its loop's thread). An error making the result is the future's
/// exception; a loop already closed has no one left to tell.
fn settle(py: Python<'_>, event_loop: &Py<PyAny>, future: &Py<PyAny>, result: PyResult<ToPython>) {
    let (ok, value) = match result.and_then(|to_python| to_python(py)) {
        Ok(value) => (true, value),
        Err(err) => (false, err.into_value(py).into_any()),
    };
    let settled = helpers(py).and_then(|helpers| {
        let settle = helpers.getattr("settle")?;
        event_loop.bind(py).call_method1("call_soon_threadsafe", (settle, future, ok, value))
    });
    if let Err(err) = settled
        && !event_loop.bind(py).call_method0("is_closed").and_then(|closed| closed.is_truthy()).unwrap_or(false)
    {
        err.print(py);
    }
}

/// `future` as a coroutine (awaiting a [`Pending`]), which `asyncio.run` and `create_task`
/// take as they take any `async def`'s.
pub(crate) fn awaitable<F>(py: Python<'_>, future: F) -> PyResult<Bound<'_, PyAny>>
where
    F: Future<Output = PyResult<ToPython>> + Send + 'static,
{
    let pending = Bound::new(py, Pending { future: Mutex::new(Some(Box::pin(future))) })?;
    helpers(py)?.getattr("run")?.call1((pending,))
}

/// The module's Python helpers, made once: `run(pending)`, the coroutine every call returns,
/// and `settle(future, ok, value)`, which settles a future unless its task was cancelled.
fn helpers(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static HELPERS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    HELPERS
        .get_or_try_init(py, || {
            let code = c"async def run(pending):
    return await pending


def settle(future, ok, value):
    if not future.done():
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
";
            Ok(PyModule::from_code(py, code, c"toolcell/_pending.py", c"toolcell._pending")?.unbind())
        })
        .map(|helpers| helpers.bind(py))
}
