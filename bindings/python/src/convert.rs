//! Between Python values and the runtime's: JSON values, arguments, host context, limits and
//! format names.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::{Map, Value};
use toolcell_runtime::{Arguments, Format, LimitOverrides, ToolCall};

use crate::errors;

/// A JSON value from a Python one (dict, list, str, int, float, bool, None).
pub(crate) fn to_json(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    pythonize::depythonize(value).map_err(|err| {
        PyTypeError::new_err(format!("{what} must be JSON data (dict, list, str, number, bool, None): {err}"))
    })
}

/// A Python value from a JSON one.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|err| PyValueError::new_err(err.to_string()))
}

/// A call's arguments: a dict as a value, a str as the JSON text a provider sent.
pub(crate) fn arguments(value: Option<&Bound<'_, PyAny>>) -> PyResult<Arguments> {
    match value {
        None => Ok(Arguments::Value(Value::Object(Map::new()))),
        Some(text) if text.is_instance_of::<PyString>() => Ok(Arguments::Json(text.extract()?)),
        Some(value) => Ok(Arguments::Value(to_json(value, "arguments")?)),
    }
}

/// Host context: a dict of JSON values.
pub(crate) fn context(value: Option<&Bound<'_, PyAny>>) -> PyResult<Map<String, Value>> {
    match value.map(|value| to_json(value, "context")).transpose()? {
        None => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(_) => Err(PyTypeError::new_err("context must be a dict of JSON values, e.g. {\"user_id\": \"u-42\"}")),
    }
}

/// Limits for a call or a set, with the policy file's keys (`fuel`, `timeout_ms`, ...).
pub(crate) fn limits(value: Option<&Bound<'_, PyAny>>) -> PyResult<LimitOverrides> {
    let Some(value) = value else { return Ok(LimitOverrides::default()) };
    let value = to_json(value, "limits")?;
    // The keys, as the limits serialize (each one, `null` when not set).
    let known = serde_json::to_value(LimitOverrides::default()).unwrap_or_default();
    let keys: Vec<&str> = known.as_object().map(|keys| keys.keys().map(String::as_str).collect()).unwrap_or_default();
    let wrong = |problem: String| {
        PyValueError::new_err(format!("{problem}: limits takes the policy file's limit keys ({})", keys.join(", ")))
    };
    let Value::Object(given) = &value else { return Err(wrong("limits must be a dict".to_owned())) };
    if let Some(unknown) = given.keys().find(|key| !keys.contains(&key.as_str())) {
        return Err(wrong(format!("`{unknown}` is not a limit")));
    }
    serde_json::from_value(value).map_err(|err| wrong(err.to_string()))
}

/// A format from its name (`openai-strict`, `anthropic`, ...).
pub(crate) fn format(name: &str) -> PyResult<Format> {
    name.parse().map_err(|_| {
        let names: Vec<&str> = Format::ALL.iter().map(|format| format.name()).collect();
        errors::FormatError::new_err(format!("`{name}` is not a format; the formats are: {}", names.join(", ")))
    })
}

/// A call from what Python passes.
pub(crate) fn call(
    name: String,
    arguments: Option<&Bound<'_, PyAny>>,
    id: Option<String>,
    context: Option<&Bound<'_, PyAny>>,
    limits: Option<&Bound<'_, PyAny>>,
) -> PyResult<ToolCall> {
    let id = id.unwrap_or_else(|| format!("py-{}", next_call_number()));
    Ok(ToolCall::new(id, name, self::arguments(arguments)?)
        .with_context(self::context(context)?)
        .with_limits(self::limits(limits)?))
}

/// A process-wide counter for the ids of calls made without one.
fn next_call_number() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The names of the provider formats, as `definitions(format=...)` takes them.
#[pyfunction]
pub(crate) fn formats() -> Vec<&'static str> {
    Format::ALL.iter().map(|format| format.name()).collect()
}

/// A model's arguments for a strict export, back in the tool's own shape (a map sent as a
/// list of entries, any JSON sent as text, `None` meaning "not given"). An adapter that hands
/// a framework a strict schema repairs what the model sends before calling.
#[pyfunction]
pub(crate) fn repair<'py>(
    py: Python<'py>,
    format: &str,
    parameters: &Bound<'py, PyAny>,
    arguments: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let format = self::format(format)?;
    let parameters = to_json(parameters, "parameters")?;
    let arguments = to_json(arguments, "arguments")?;
    to_python(py, &toolcell_runtime::formats::repair(format, &parameters, arguments))
}
