//! Between Python values and the runtime's: JSON values, arguments, host context, limits and
//! format names.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Value};
use toolcell_runtime::{Arguments, Format, LimitOverrides, ToolCall};

use crate::errors;

/// The deepest nesting taken from Python: serde_json's limit for JSON text, which the runtime
/// parses arguments with. Converting walks Python objects recursively, so the bound is also
/// what keeps a deep or self-containing dict from overflowing the stack.
pub(crate) const MAX_DEPTH: usize = 128;

/// Why a Python value is not JSON data.
pub(crate) enum NotJson {
    /// Nested deeper than [`MAX_DEPTH`] (or containing itself).
    TooDeep,
    /// Something JSON has no form for.
    Other(PyErr),
}

/// A JSON value from a Python one (dict, list, tuple, str, int, float, bool, None).
pub(crate) fn to_json(value: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    json_within(value, MAX_DEPTH).map_err(|err| match err {
        NotJson::TooDeep => PyValueError::new_err(format!(
            "{what} nests deeper than {MAX_DEPTH} levels (or contains itself): JSON data that deep is not taken"
        )),
        NotJson::Other(err) => {
            PyTypeError::new_err(format!("{what} must be JSON data (dict, list, str, number, bool, None): {err}"))
        }
    })
}

/// [`to_json`], at most `depth` levels deep.
pub(crate) fn json_within(value: &Bound<'_, PyAny>, depth: usize) -> Result<Value, NotJson> {
    let other = |message: String| NotJson::Other(PyTypeError::new_err(message));
    if value.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(flag) = value.cast::<PyBool>() {
        return Ok(Value::Bool(flag.is_true()));
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(Value::String(text.to_str().map_err(NotJson::Other)?.to_owned()));
    }
    if value.is_instance_of::<PyInt>() {
        if let Ok(n) = value.extract::<i64>() {
            return Ok(Value::from(n));
        }
        return value.extract::<u64>().map(Value::from).map_err(|_| other(format!("the integer {value} is too large")));
    }
    if let Ok(float) = value.cast::<PyFloat>() {
        return serde_json::Number::from_f64(float.value())
            .map(Value::Number)
            .ok_or_else(|| other(format!("{value} is not a JSON number")));
    }
    let Some(inner) = depth.checked_sub(1) else { return Err(NotJson::TooDeep) };
    if let Ok(dict) = value.cast::<PyDict>() {
        let mut map = Map::new();
        for (key, item) in dict.iter() {
            let key = key.cast::<PyString>().map_err(|_| other(format!("a dict key must be a str, not {key:?}")))?;
            map.insert(key.to_str().map_err(NotJson::Other)?.to_owned(), json_within(&item, inner)?);
        }
        return Ok(Value::Object(map));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items = value.try_iter().map_err(NotJson::Other)?;
        return items
            .map(|item| json_within(&item.map_err(NotJson::Other)?, inner))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    let kind = value.get_type().name().map(|name| name.to_string()).unwrap_or_default();
    Err(other(format!("a {kind} is not JSON data")))
}

/// A Python value from a JSON one.
pub(crate) fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|err| PyValueError::new_err(err.to_string()))
}

/// A call's arguments: a dict as a value, a str as the JSON text a provider sent.
///
/// They are the model's, so a problem with them is the model's to fix, in the call's output,
/// never an exception: arguments nested too deeply (or containing themselves) go to the runtime
/// as JSON text just as deep, which it refuses (`malformed_arguments`) as it refuses such text
/// from a provider.
pub(crate) fn arguments(value: Option<&Bound<'_, PyAny>>) -> PyResult<Arguments> {
    match value {
        None => Ok(Arguments::Value(Value::Object(Map::new()))),
        Some(text) if text.is_instance_of::<PyString>() => Ok(Arguments::Json(text.extract()?)),
        Some(value) => match json_within(value, MAX_DEPTH) {
            Ok(value) => Ok(Arguments::Value(value)),
            Err(NotJson::TooDeep) => Ok(Arguments::Json("[".repeat(MAX_DEPTH + 1))),
            Err(NotJson::Other(err)) => Err(PyTypeError::new_err(format!(
                "arguments must be JSON data (dict, list, str, number, bool, None) or JSON text: {err}"
            ))),
        },
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
