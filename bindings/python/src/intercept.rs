//! Interceptors written in Python: a callable (sync or async) run before each call of a tool
//! set, or an object with `before` and/or `after` methods. Python runs on a blocking thread,
//! never on a tokio worker; a coroutine runs on the event loop of the `await` that made the
//! call, or, for a blocking call, in `asyncio.run` on that thread.
//!
//! `before(call)` gets the call as a dict (`id`, `name`, `arguments`, `context`) and returns
//! None or True to run it, a dict to run it rewritten (its `arguments` and `context`),
//! `toolcell.Deny(reason)` or False to refuse it, `toolcell.Defer(reason)` to wait for a
//! person. An interceptor that raises refuses the call (the model reads only that the host
//! refused it; the traceback goes to stderr). `after(call, output)` sees every output.

use std::future::Future;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyTuple};
use pyo3_async_runtimes::TaskLocals;
use serde_json::Value;
use toolcell_runtime::toolset::{BoxFuture, Interceptor, Verdict};
use toolcell_runtime::{Arguments, ToolCall, ToolDefinition, ToolOutput};

use crate::convert;
use crate::output::PyToolOutput;

tokio::task_local! {
    /// The event loop of the `await` a call came from, for async interceptors.
    static EVENT_LOOP: Arc<TaskLocals>;
}

/// The event loop of the `await` the current task serves, if any.
pub(crate) fn event_loop() -> Option<Arc<TaskLocals>> {
    EVENT_LOOP.try_with(Arc::clone).ok()
}

/// `future`, knowing the event loop it was awaited from.
pub(crate) fn on_loop<F: Future>(event_loop: Arc<TaskLocals>, future: F) -> impl Future<Output = F::Output> {
    EVENT_LOOP.scope(event_loop, future)
}

/// What the model reads when an interceptor raised.
const INTERCEPTOR_FAILED: &str = "the host could not decide about this call (an interceptor failed): do not retry it";

/// Refuse a call: return `Deny(reason)` from an interceptor's `before`. The reason reaches the model.
#[pyclass(module = "toolcell", frozen, get_all)]
pub(crate) struct Deny {
    reason: String,
}

#[pymethods]
impl Deny {
    #[new]
    fn new(reason: String) -> Self {
        Self { reason }
    }

    fn __repr__(&self) -> String {
        format!("Deny({:?})", self.reason)
    }
}

/// Wait for a person: return `Defer(reason)` from an interceptor's `before`. A code mode
/// program pauses there with a resume token; any other call ends `approval_required`.
#[pyclass(module = "toolcell", frozen, get_all)]
pub(crate) struct Defer {
    reason: String,
}

#[pymethods]
impl Defer {
    #[new]
    fn new(reason: String) -> Self {
        Self { reason }
    }

    fn __repr__(&self) -> String {
        format!("Defer({:?})", self.reason)
    }
}

/// A Python interceptor.
pub(crate) struct PyInterceptor {
    before: Option<Arc<Py<PyAny>>>,
    after: Option<Arc<Py<PyAny>>>,
}

impl PyInterceptor {
    /// From a callable (its `before`) or an object with `before` and/or `after`.
    pub(crate) fn new(object: &Bound<'_, PyAny>) -> PyResult<Self> {
        let method = |name: &str| -> PyResult<Option<Arc<Py<PyAny>>>> {
            Ok(match object.getattr_opt(name)? {
                Some(method) if method.is_callable() => Some(Arc::new(method.unbind())),
                _ => None,
            })
        };
        let (before, after) = (method("before")?, method("after")?);
        if before.is_some() || after.is_some() {
            return Ok(Self { before, after });
        }
        if object.is_callable() {
            return Ok(Self { before: Some(Arc::new(object.clone().unbind())), after: None });
        }
        Err(pyo3::exceptions::PyTypeError::new_err(
            "an interceptor is a callable (run before each call) or an object with `before` and/or `after` methods",
        ))
    }
}

impl Interceptor for PyInterceptor {
    fn before<'a>(&'a self, call: ToolCall, _definition: &'a ToolDefinition) -> BoxFuture<'a, Verdict> {
        let Some(before) = self.before.clone() else {
            return Box::pin(async move { Verdict::Run(call) });
        };
        Box::pin(async move {
            let event_loop = event_loop();
            let argument = call_dict(&call);
            match run_python(before, event_loop, move |py| {
                Ok(PyTuple::new(py, [convert::to_python(py, &argument)?])?.unbind())
            })
            .await
            {
                Ok(returned) => verdict(call, returned),
                Err(err) => {
                    report(err).await;
                    Verdict::Deny(INTERCEPTOR_FAILED.to_owned())
                }
            }
        })
    }

    fn after<'a>(&'a self, call: &'a ToolCall, output: &'a ToolOutput) -> BoxFuture<'a, ()> {
        let Some(after) = self.after.clone() else {
            return Box::pin(async {});
        };
        let argument = call_dict(call);
        let output = output.clone();
        Box::pin(async move {
            let event_loop = event_loop();
            let arguments = move |py: Python<'_>| -> PyResult<Py<PyTuple>> {
                let output = Bound::new(py, PyToolOutput::new(py, output)?)?.into_any();
                Ok(PyTuple::new(py, [convert::to_python(py, &argument)?, output])?.unbind())
            };
            if let Err(err) = run_python(after, event_loop, arguments).await {
                report(err).await;
            }
        })
    }
}

/// The call as a dict for Python.
fn call_dict(call: &ToolCall) -> Value {
    let arguments = match &call.arguments {
        Arguments::Value(value) => value.clone(),
        Arguments::Json(text) => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())),
    };
    serde_json::json!({ "id": call.id, "name": call.name, "arguments": arguments, "context": call.context })
}

/// Calls `callable` with the arguments `arguments` makes, on a blocking thread, and awaits
/// what it returns when that is awaitable. Returns what it returned, or raised.
async fn run_python<A>(callable: Arc<Py<PyAny>>, event_loop: Option<Arc<TaskLocals>>, arguments: A) -> PyResult<Value>
where
    A: FnOnce(Python<'_>) -> PyResult<Py<PyTuple>> + Send + 'static,
{
    let joined = tokio::task::spawn_blocking(move || {
        crate::wait::attach(|py| -> PyResult<Returned> {
            let returned = callable.bind(py).call1(arguments(py)?.bind(py))?;
            if !is_awaitable(&returned)? {
                return Ok(Returned::Value(returned_value(&returned)?));
            }
            match &event_loop {
                Some(locals) => {
                    Ok(Returned::Pending(Box::pin(pyo3_async_runtimes::into_future_with_locals(locals, returned)?)))
                }
                None => {
                    let finished = py.import("asyncio")?.call_method1("run", (returned,))?;
                    Ok(Returned::Value(returned_value(&finished)?))
                }
            }
        })
        .unwrap_or_else(|| Err(exiting()))
    })
    .await
    .map_err(|err| pyo3::exceptions::PyRuntimeError::new_err(err.to_string()))??;
    match joined {
        Returned::Value(value) => Ok(value),
        Returned::Pending(future) => {
            let finished = future.await?;
            tokio::task::spawn_blocking(move || {
                crate::wait::attach(|py| returned_value(finished.bind(py))).unwrap_or_else(|| Err(exiting()))
            })
            .await
            .map_err(|err| pyo3::exceptions::PyRuntimeError::new_err(err.to_string()))?
        }
    }
}

/// Prints an interceptor's exception with its traceback on stderr, for the operator.
async fn report(err: PyErr) {
    let _ = tokio::task::spawn_blocking(move || crate::wait::attach(|py| err.print(py))).await;
}

/// The error of a Python callable not called because the interpreter is exiting.
fn exiting() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("the Python interpreter is exiting")
}

/// What a Python callable gave back: a value, or a coroutine running on the event loop.
enum Returned {
    Value(Value),
    Pending(std::pin::Pin<Box<dyn Future<Output = PyResult<Py<PyAny>>> + Send>>),
}

fn is_awaitable(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let inspect = value.py().import("inspect")?;
    inspect.call_method1("isawaitable", (value,))?.extract()
}

/// What an interceptor returned, as JSON: `Deny`/`Defer` become `{"$deny": reason}` and
/// `{"$defer": reason}`, which no JSON a dict converts to can be confused with (a dict's
/// keys are checked below).
fn returned_value(value: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(deny) = value.cast::<Deny>() {
        return Ok(serde_json::json!({ "$deny": deny.get().reason }));
    }
    if let Ok(defer) = value.cast::<Defer>() {
        return Ok(serde_json::json!({ "$defer": defer.get().reason }));
    }
    if value.is_none() || value.is_instance_of::<PyBool>() || value.is_instance_of::<PyDict>() {
        let json = convert::to_json(value, "an interceptor's return value")?;
        if json.get("$deny").is_some() || json.get("$defer").is_some() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "an interceptor's dict may not have `$deny` or `$defer` keys",
            ));
        }
        return Ok(json);
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "an interceptor's `before` returns None or True (run), a dict (run it rewritten), toolcell.Deny(reason) or False \
         (refuse), or toolcell.Defer(reason); it returned a {}",
        value.get_type().name()?
    )))
}

fn verdict(mut call: ToolCall, returned: Value) -> Verdict {
    match returned {
        Value::Null | Value::Bool(true) => Verdict::Run(call),
        Value::Bool(false) => Verdict::Deny("the host refused this call".to_owned()),
        Value::Object(mut rewritten) => {
            if let Some(Value::String(reason)) = rewritten.remove("$deny") {
                return Verdict::Deny(reason);
            }
            if let Some(Value::String(reason)) = rewritten.remove("$defer") {
                return Verdict::Defer(reason);
            }
            if let Some(arguments) = rewritten.remove("arguments") {
                call.arguments = Arguments::Value(arguments);
            }
            if let Some(Value::Object(context)) = rewritten.remove("context") {
                call.context = context;
            }
            Verdict::Run(call)
        }
        _ => Verdict::Run(call),
    }
}
