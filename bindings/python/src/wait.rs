//! Where calls run: one tokio runtime for the module, and the two ways Python waits on it.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::sync::PyOnceLock;

use pyo3::prelude::*;

/// How often a blocking wait looks for a signal (Ctrl-C) while a call runs.
const SIGNAL_CHECK_EVERY: Duration = Duration::from_millis(100);

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

/// A call not started yet, as a Python awaitable: awaiting it starts it on the event loop that
/// awaits (so `asyncio.run(runtime.call(...))` works, as with a coroutine). Cancelling the
/// awaiting task drops the call's future, which stops its sandbox (as MCP's cancellation
/// does); a `Pending` never awaited never runs.
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
        let event_loop = Arc::new(pyo3_async_runtimes::tokio::get_current_locals(py)?);
        let started = pyo3_async_runtimes::tokio::future_into_py(
            py,
            crate::intercept::on_loop(event_loop, async move { future.await.map(Converted) }),
        )?;
        started.call_method0("__await__")
    }
}

/// A result made into a Python object where pyo3-async-runtimes does that (with the GIL, off
/// the tokio workers).
struct Converted(ToPython);

impl<'py> IntoPyObject<'py> for Converted {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok((self.0)(py)?.into_bound(py))
    }
}

/// `future` as a coroutine (awaiting a [`Pending`]), which `asyncio.run` and `create_task`
/// take as they take any `async def`'s.
pub(crate) fn awaitable<F>(py: Python<'_>, future: F) -> PyResult<Bound<'_, PyAny>>
where
    F: Future<Output = PyResult<ToPython>> + Send + 'static,
{
    let pending = Bound::new(py, Pending { future: Mutex::new(Some(Box::pin(future))) })?;
    coroutine(py)?.call1((pending,))
}

/// `async def run(pending): return await pending`, made once.
fn coroutine(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static RUN: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    RUN.get_or_try_init(py, || {
        let code = c"async def run(pending):\n    return await pending\n";
        let module = PyModule::from_code(py, code, c"toolcell/_pending.py", c"toolcell._pending")?;
        Ok(module.getattr("run")?.unbind())
    })
    .map(|run| run.bind(py))
}
