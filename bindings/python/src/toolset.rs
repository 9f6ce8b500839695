//! `toolcell.ToolSet`: some of a runtime's tools for one run, with host context, limits,
//! retries and Python interceptors.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;
use toolcell_runtime::toolset::Retry;
use toolcell_runtime::{Runtime, ToolSet};

use crate::intercept::PyInterceptor;
use crate::tools::{PyCodeMode, Source, Tools};
use crate::{convert, errors};

/// Some of a runtime's tools, for one run: allowed or denied by name or by a filter, with
/// host context the model never sees, limits, retries of transient failures and interceptors.
#[pyclass(name = "ToolSet", module = "toolcell", extends = Tools, frozen)]
pub(crate) struct PyToolSet {
    set: ToolSet,
}

/// What `Runtime.tool_set` takes.
pub(crate) struct Options<'py> {
    pub(crate) allow: Option<Vec<String>>,
    pub(crate) deny: Option<Vec<String>>,
    pub(crate) filter: Option<Bound<'py, PyAny>>,
    pub(crate) context: Option<Bound<'py, PyAny>>,
    pub(crate) limits: Option<Bound<'py, PyAny>>,
    pub(crate) retry: Option<Bound<'py, PyAny>>,
    pub(crate) interceptors: Vec<Bound<'py, PyAny>>,
}

impl PyToolSet {
    pub(crate) fn build(runtime: &Runtime, options: Options<'_>) -> PyResult<PyClassInitializer<Self>> {
        let mut builder = runtime.tool_set();
        if let Some(allow) = options.allow {
            builder = builder.allow(allow);
        }
        if let Some(deny) = options.deny {
            builder = builder.deny(deny);
        }
        builder = builder.context(convert::context(options.context.as_ref())?);
        builder = builder.limits(convert::limits(options.limits.as_ref())?);
        if let Some(retry) = retry(options.retry.as_ref())? {
            builder = builder.retry(retry);
        }
        for interceptor in &options.interceptors {
            builder = builder.intercept(PyInterceptor::new(interceptor)?);
        }
        // The filter runs here, on this thread, once per tool; its first exception is raised.
        let failed: Arc<Mutex<Option<PyErr>>> = Arc::default();
        if let Some(filter) = options.filter {
            let (filter, failed) = (filter.unbind(), failed.clone());
            builder = builder.filter(move |definition| {
                Python::attach(|py| {
                    let kept = serde_json::to_value(definition)
                        .map_err(|err| pyo3::exceptions::PyValueError::new_err(err.to_string()))
                        .and_then(|value| convert::to_python(py, &value))
                        .and_then(|value| filter.bind(py).call1((value,)))
                        .and_then(|kept| kept.is_truthy());
                    kept.unwrap_or_else(|err| {
                        failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(err);
                        false
                    })
                })
            });
        }
        let set = builder.build().map_err(errors::tool_set_error)?;
        if let Some(err) = failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            return Err(err);
        }
        Ok(PyClassInitializer::from(Tools { source: Source::Set(set.clone()) }).add_subclass(Self { set }))
    }
}

/// `retry=True` (two retries after 100 ms and 200 ms, within 5 s), an int (that many
/// retries), or None/False (none).
fn retry(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Retry>> {
    let Some(value) = value else { return Ok(None) };
    if let Ok(on) = value.cast::<pyo3::types::PyBool>() {
        return Ok(on.is_true().then(Retry::default));
    }
    if value.is_none() {
        return Ok(None);
    }
    let retries: u32 = value.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("retry is True, False or a number of retries (e.g. retry=3)")
    })?;
    Ok(Some(Retry { retries, backoff: Duration::from_millis(100), ..Retry::default() }))
}

#[pymethods]
impl PyToolSet {
    /// Code mode over this set: `search` and `execute`, whose programs call the set's tools
    /// through its interceptors. Raises CodeModeError when the policy does not turn it on.
    fn code_mode(&self, py: Python<'_>) -> PyResult<Py<PyCodeMode>> {
        let code_mode = self.set.code_mode().map_err(errors::code_mode_error)?;
        Py::new(py, PyCodeMode::new(code_mode))
    }

    fn __repr__(&self) -> String {
        let names: Vec<&str> = self.set.definitions().map(|tool| tool.name.as_str()).collect();
        format!("ToolSet({names:?})")
    }
}
