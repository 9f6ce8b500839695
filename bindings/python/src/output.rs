//! `ToolOutput` and `Usage` as Python sees them: every call's outcome, success or not.

use pyo3::prelude::*;
use serde_json::Value;
use toolcell_runtime::ToolOutput;

use crate::convert;

/// The outcome of a call, success or not: what to give the model (`content`), whether it
/// failed, the error's kind and whether the model should fix its call, and what it used.
#[pyclass(name = "ToolOutput", module = "toolcell", frozen)]
pub(crate) struct PyToolOutput {
    /// The call's id.
    #[pyo3(get)]
    call_id: String,
    /// The tool's name, as called.
    #[pyo3(get)]
    tool: String,
    /// What to give the model: the result JSON on success, the error's message otherwise.
    #[pyo3(get)]
    content: String,
    /// Whether the call failed.
    #[pyo3(get)]
    is_error: bool,
    /// The error's kind (`invalid_arguments`, `timeout`, ...), when the call failed.
    #[pyo3(get)]
    error_kind: Option<String>,
    /// Whether calling again may succeed (the model can fix the call, or the failure is transient).
    #[pyo3(get)]
    retryable: bool,
    /// Whether the model caused the error with its call and should fix it, as opposed to the
    /// tool or the host failing.
    #[pyo3(get)]
    is_caller_error: bool,
    /// What the call used.
    #[pyo3(get)]
    usage: Py<PyUsage>,
    /// What the tool wrote to stdout (operator detail, never for the model).
    #[pyo3(get)]
    stdout: String,
    /// What the tool wrote to stderr (operator detail, never for the model).
    #[pyo3(get)]
    stderr: String,
    /// The trap or host error behind a failure (operator detail, never for the model).
    #[pyo3(get)]
    detail: Option<String>,
    /// The error as serialized (read through the `error` getter).
    error_json: Option<Value>,
}

/// What a call used.
#[pyclass(name = "Usage", module = "toolcell", frozen, get_all)]
pub(crate) struct PyUsage {
    /// Wall-clock time of the whole call, validation included, in microseconds.
    duration_us: u64,
    /// Fuel the guest consumed, the calls it made included.
    fuel_consumed: u64,
    /// The most linear memory and table storage the instance held, in bytes.
    peak_memory_bytes: u64,
    /// Calls the tool asked the host to make to other tools (code mode).
    nested_calls: u32,
}

impl PyToolOutput {
    pub(crate) fn new(py: Python<'_>, output: ToolOutput) -> PyResult<Self> {
        let usage = PyUsage {
            duration_us: u64::try_from(output.usage.duration.as_micros()).unwrap_or(u64::MAX),
            fuel_consumed: output.usage.fuel_consumed,
            peak_memory_bytes: output.usage.peak_memory_bytes,
            nested_calls: output.usage.nested_calls,
        };
        // The error as the runtime serializes it (`kind`, `retryable` and its fields, such as
        // an approval's resume token).
        let error = serde_json::to_value(&output).ok().and_then(|mut value| value.get_mut("error").map(Value::take));
        Ok(Self {
            error_kind: output.error.as_ref().map(|error| error.kind().to_owned()),
            retryable: output.error.as_ref().is_some_and(|error| error.retryable()),
            is_caller_error: output.error.as_ref().is_some_and(|error| error.is_caller_error()),
            usage: Py::new(py, usage)?,
            stdout: output.diagnostics.stdout,
            stderr: output.diagnostics.stderr,
            detail: output.diagnostics.detail,
            call_id: output.call_id,
            tool: output.tool,
            content: output.content,
            is_error: output.is_error,
            error_json: error,
        })
    }
}

#[pymethods]
impl PyToolOutput {
    /// The result as parsed JSON, when the call succeeded; `None` when it failed.
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if self.is_error {
            return Ok(None);
        }
        match serde_json::from_str::<Value>(&self.content) {
            Ok(value) => convert::to_python(py, &value).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// The error as the runtime reports it (`kind`, `retryable` and the kind's fields), when
    /// the call failed.
    #[getter]
    fn error<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.error_json.as_ref().map(|error| convert::to_python(py, error)).transpose()
    }

    fn __repr__(&self) -> String {
        match &self.error_kind {
            Some(kind) => format!(
                "ToolOutput(tool={:?}, is_error=True, error_kind={kind:?}, content={:?})",
                self.tool, self.content
            ),
            None => format!("ToolOutput(tool={:?}, content={:?})", self.tool, self.content),
        }
    }
}

#[pymethods]
impl PyUsage {
    fn __repr__(&self) -> String {
        format!(
            "Usage(duration_us={}, fuel_consumed={}, peak_memory_bytes={}, nested_calls={})",
            self.duration_us, self.fuel_consumed, self.peak_memory_bytes, self.nested_calls
        )
    }
}
