//! `toolcell.Tools`: what `Runtime`, `ToolSet` and `CodeMode` have in common, as one base
//! class. Its definitions in every provider format, calls (awaited or blocking) and answers
//! to a model's message. The framework adapters take any `Tools`.

use pyo3::prelude::*;
use pyo3::types::PyList;
use serde_json::Value;
use toolcell_runtime::code_mode::{CodeMode, Decision};
use toolcell_runtime::formats::{replies, tool_calls};
use toolcell_runtime::{CallError, Format, Runtime, ToolCall, ToolDefinition, ToolOutput, ToolSet};

use crate::output::PyToolOutput;
use crate::wait::ToPython;
use crate::{convert, errors, intercept, wait};

/// Where a `Tools` object's tools come from.
#[derive(Clone)]
pub(crate) enum Source {
    Runtime(Runtime),
    Set(ToolSet),
    CodeMode(CodeMode),
}

impl Source {
    fn definitions(&self) -> Vec<&ToolDefinition> {
        match self {
            Self::Runtime(runtime) => runtime.definitions().collect(),
            Self::Set(set) => set.definitions().collect(),
            Self::CodeMode(code_mode) => code_mode.tools().definitions().iter().collect(),
        }
    }

    fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        match self {
            Self::Runtime(runtime) => runtime.definition(name),
            Self::Set(set) => set.definition(name),
            Self::CodeMode(code_mode) => code_mode.tools().definitions().iter().find(|tool| tool.name == name),
        }
    }

    pub(crate) async fn call(&self, call: ToolCall) -> ToolOutput {
        match self {
            Self::Runtime(runtime) => runtime.call(call).await,
            Self::Set(set) => set.call(call).await,
            Self::CodeMode(code_mode) => code_mode.call(call).await,
        }
    }

    /// The answers to the calls in a model's message, made at once, each on a task of its own
    /// (so they run on every core), with the event loop of the `await` that asked, for Python
    /// interceptors. Dropping the answer's future stops every call.
    async fn respond(
        &self,
        format: Format,
        message: Value,
    ) -> Result<Vec<Value>, toolcell_runtime::formats::MessageError> {
        let calls = tool_calls(format, &message, |name| self.definition(name))?;
        let event_loop = intercept::event_loop();
        let tasks: Vec<AbortOnDrop> = calls
            .into_iter()
            .map(|call| {
                let (source, fallback) = (self.clone(), ToolCall::new(call.id.clone(), call.name.clone(), Value::Null));
                let run = async move { source.call(call).await };
                let task = match event_loop.clone() {
                    Some(event_loop) => tokio::spawn(intercept::on_loop(event_loop, run)),
                    None => tokio::spawn(run),
                };
                AbortOnDrop { task, fallback }
            })
            .collect();
        let mut outputs = Vec::with_capacity(tasks.len());
        for mut task in tasks {
            let output = (&mut task.task).await;
            outputs.push(output.unwrap_or_else(|err| lost(&task.fallback, &err)));
        }
        Ok(replies(format, &message, &outputs))
    }
}

/// A call's task, stopped (and its sandbox with it) when the answer it is part of is dropped.
struct AbortOnDrop {
    task: tokio::task::JoinHandle<ToolOutput>,
    /// The call, for an output if its task panicked.
    fallback: ToolCall,
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The output of a call whose task ended abnormally: the runtime's answer is never lost
/// silently; the model reads that the host failed.
fn lost(call: &ToolCall, err: &tokio::task::JoinError) -> ToolOutput {
    let error = CallError::Internal { message: "the call's task ended abnormally".to_owned() };
    let mut output = ToolOutput::from_error(call, error);
    output.diagnostics.detail = Some(err.to_string());
    output
}

/// Tools a model can call: their definitions in every provider format, and calls. The base
/// of `Runtime`, `ToolSet` and `CodeMode`.
#[pyclass(name = "Tools", module = "toolcell", subclass, frozen)]
pub(crate) struct Tools {
    pub(crate) source: Source,
}

#[pymethods]
impl Tools {
    /// The tools' names, in name order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.source.definitions().into_iter().map(|tool| tool.name.clone()).collect()
    }

    /// The definitions: toolcell's own (name, description, version, parameters, ...) when
    /// `format` is None, else in that provider format (`openai`, `openai-strict`,
    /// `anthropic`, `gemini`, `mcp`, ...; `toolcell.formats()` lists them).
    #[pyo3(signature = (format = None))]
    fn definitions<'py>(&self, py: Python<'py>, format: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
        let definitions = self.source.definitions();
        let value = match format {
            None => serde_json::to_value(&definitions).map_err(|err| errors::FormatError::new_err(err.to_string()))?,
            Some(name) => convert::format(name)?.tools(definitions).map_err(errors::format_error)?,
        };
        convert::to_python(py, &value)
    }

    /// One tool's definition in `format` (toolcell's own when None), or None when no tool has
    /// that name.
    #[pyo3(signature = (name, format = None))]
    fn definition<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        format: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(definition) = self.source.definition(name) else { return Ok(None) };
        let value = match format {
            None => serde_json::to_value(definition).map_err(|err| errors::FormatError::new_err(err.to_string()))?,
            Some(format) => definition.to_format(convert::format(format)?).map_err(errors::format_error)?,
        };
        convert::to_python(py, &value).map(Some)
    }

    /// Calls a tool; awaitable. Never raises for a failed call: the output says what went
    /// wrong, for the model. Cancelling the awaiting task stops the sandbox.
    #[pyo3(signature = (name, arguments = None, *, id = None, context = None, limits = None))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        name: String,
        arguments: Option<&Bound<'py, PyAny>>,
        id: Option<String>,
        context: Option<&Bound<'py, PyAny>>,
        limits: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let call = convert::call(name, arguments, id, context, limits)?;
        let source = self.source.clone();
        wait::awaitable(py, async move {
            let output = source.call(call).await;
            Ok(Box::new(move |py: Python<'_>| Ok(Py::new(py, PyToolOutput::new(py, output)?)?.into_any())) as ToPython)
        })
    }

    /// Calls a tool and waits for its output, with the GIL released meanwhile (other threads'
    /// calls run in parallel). Ctrl-C stops the sandbox.
    #[pyo3(signature = (name, arguments = None, *, id = None, context = None, limits = None))]
    fn call_sync(
        &self,
        py: Python<'_>,
        name: String,
        arguments: Option<&Bound<'_, PyAny>>,
        id: Option<String>,
        context: Option<&Bound<'_, PyAny>>,
        limits: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyToolOutput> {
        let call = convert::call(name, arguments, id, context, limits)?;
        let source = self.source.clone();
        let output = wait::block_on(py, async move { source.call(call).await })?;
        PyToolOutput::new(py, output)
    }

    /// The messages that answer every tool call in a model's `message` (a response in
    /// `format`'s shape), the calls made at once; awaitable.
    fn respond<'py>(&self, py: Python<'py>, format: &str, message: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let format = convert::format(format)?;
        let message = convert::to_json(message, "message")?;
        let source = self.source.clone();
        wait::awaitable(py, async move {
            let replies = source.respond(format, message).await.map_err(errors::message_error)?;
            Ok(Box::new(move |py: Python<'_>| Ok(to_list(py, &replies)?.into_any())) as ToPython)
        })
    }

    /// As `respond`, waiting for the answers.
    fn respond_sync<'py>(&self, py: Python<'py>, format: &str, message: &Bound<'py, PyAny>) -> PyResult<Py<PyList>> {
        let format = convert::format(format)?;
        let message = convert::to_json(message, "message")?;
        let source = self.source.clone();
        let replies = wait::block_on(py, async move { source.respond(format, message).await })?;
        to_list(py, &replies.map_err(errors::message_error)?)
    }

    fn __len__(&self) -> usize {
        self.source.definitions().len()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.source.definition(name).is_some()
    }
}

fn to_list(py: Python<'_>, values: &[Value]) -> PyResult<Py<PyList>> {
    let items = values.iter().map(|value| convert::to_python(py, value)).collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.unbind())
}

/// Code mode: the model writes one Python program that calls the tools (`tools.*`), run by
/// the `python` tool under one budget. Two tools, `search` and `execute`.
#[pyclass(name = "CodeMode", module = "toolcell", extends = Tools, frozen)]
pub(crate) struct PyCodeMode {
    code_mode: CodeMode,
}

impl PyCodeMode {
    pub(crate) fn new(code_mode: CodeMode) -> PyClassInitializer<Self> {
        PyClassInitializer::from(Tools { source: Source::CodeMode(code_mode.clone()) }).add_subclass(Self { code_mode })
    }
}

#[pymethods]
impl PyCodeMode {
    /// The tools a program may call, as `tools.<name>(...)`.
    #[getter]
    fn callable(&self) -> Vec<String> {
        self.code_mode.tools().callable().iter().map(|tool| tool.name.clone()).collect()
    }

    /// The tools whose every call a person must approve first (the policy's `approve`).
    #[getter]
    fn must_approve(&self) -> Vec<String> {
        self.code_mode.must_approve().to_vec()
    }

    /// Resumes a program that paused for approval (an `approval_required` output: its
    /// `error["resume_token"]`) with a person's decision; awaitable. The program runs again to
    /// the pause from what the token recorded, then the call runs (`approved`) or is answered
    /// `denied`, and the rest runs live; it may pause again. Raises ResumeError for a token
    /// that is not authentic, expired or used, or a run that diverged.
    fn resume<'py>(
        &self,
        py: Python<'py>,
        call_id: String,
        resume_token: String,
        approved: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let code_mode = self.code_mode.clone();
        wait::awaitable(py, async move {
            let output = code_mode
                .resume(&call_id, &resume_token, decision(approved), None)
                .await
                .map_err(errors::resume_error)?;
            Ok(Box::new(move |py: Python<'_>| Ok(Py::new(py, PyToolOutput::new(py, output)?)?.into_any())) as ToPython)
        })
    }

    /// As `resume`, waiting for the output.
    fn resume_sync(
        &self,
        py: Python<'_>,
        call_id: String,
        resume_token: String,
        approved: bool,
    ) -> PyResult<PyToolOutput> {
        let code_mode = self.code_mode.clone();
        let output =
            wait::block_on(
                py,
                async move { code_mode.resume(&call_id, &resume_token, decision(approved), None).await },
            )?
            .map_err(errors::resume_error)?;
        PyToolOutput::new(py, output)
    }
}

fn decision(approved: bool) -> Decision {
    if approved { Decision::Approved } else { Decision::Denied }
}
