//! `toolcell.Runtime`: the tools of a folder and the standard tools, loaded as the CLI loads
//! them, with the operator's policy and the compile cache.

use std::path::PathBuf;

use pyo3::prelude::*;
use toolcell_runtime::policy::CodeModePolicy;
use toolcell_runtime::{Policy, Runtime, RuntimeBuilder};

use crate::tools::{PyCodeMode, Source, Tools};
use crate::toolset::{Options, PyToolSet};
use crate::wait::ToPython;
use crate::{builtins, errors, wait};

/// The runtime: loaded tools, each call in a fresh sandbox under its limits. Calls and
/// definitions are `Tools`' (its base class).
#[pyclass(name = "Runtime", module = "toolcell", extends = Tools, frozen)]
pub(crate) struct PyRuntime {
    runtime: Runtime,
}

/// What the constructor and `Runtime.load` take.
struct Setup {
    tools_dir: Option<PathBuf>,
    policy: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    cache: bool,
    builtins: bool,
    code_mode: bool,
}

impl Setup {
    /// The builder, once the policy file is read.
    fn builder(self) -> PyResult<RuntimeBuilder> {
        let mut builder = Runtime::builder();
        if let Some(path) = &self.policy {
            let policy = Policy::from_file(path).map_err(|err| errors::PolicyError::new_err(err.to_string()))?;
            builder = builder.policy(policy);
        }
        if self.code_mode {
            builder = builder.code_mode(CodeModePolicy::default());
        }
        if self.cache
            && let Some(cache) = self.cache_dir.or_else(default_cache_dir)
        {
            builder = builder.compile_cache(cache);
        }
        if self.builtins {
            builder = builtins::add(builder, self.tools_dir.as_deref());
        }
        if let Some(dir) = self.tools_dir {
            builder = builder.tools_dir(dir);
        }
        Ok(builder)
    }
}

/// The compile cache the CLI uses too: `$TOOLCELL_CACHE_DIR`, else `$XDG_CACHE_HOME/toolcell`,
/// else `~/.cache/toolcell`.
fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TOOLCELL_CACHE_DIR").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("toolcell"))
}

fn initializer(runtime: Runtime) -> PyClassInitializer<PyRuntime> {
    PyClassInitializer::from(Tools { source: Source::Runtime(runtime.clone()) }).add_subclass(PyRuntime { runtime })
}

#[pymethods]
impl PyRuntime {
    /// Loads the tools of `tools_dir` (with its `toolcell.toml`) and the standard tools, with
    /// the grants of the `policy` file, keeping compiled tools in `cache_dir` (default: the
    /// CLI's, `~/.cache/toolcell`; `cache=False` for none). Waits for every tool to compile
    /// (tens of seconds on a cold cache, milliseconds from the cache), with the GIL released.
    #[new]
    #[pyo3(signature = (tools_dir = None, *, policy = None, cache_dir = None, cache = true, builtins = true, code_mode = false))]
    fn new(
        py: Python<'_>,
        tools_dir: Option<PathBuf>,
        policy: Option<PathBuf>,
        cache_dir: Option<PathBuf>,
        cache: bool,
        builtins: bool,
        code_mode: bool,
    ) -> PyResult<PyClassInitializer<Self>> {
        let builder = Setup { tools_dir, policy, cache_dir, cache, builtins, code_mode }.builder()?;
        let runtime = wait::block_on(py, builder.build())?.map_err(errors::runtime_error)?;
        Ok(initializer(runtime))
    }

    /// As the constructor, awaitable: `runtime = await toolcell.Runtime.load(...)`.
    #[staticmethod]
    #[pyo3(signature = (tools_dir = None, *, policy = None, cache_dir = None, cache = true, builtins = true, code_mode = false))]
    fn load(
        py: Python<'_>,
        tools_dir: Option<PathBuf>,
        policy: Option<PathBuf>,
        cache_dir: Option<PathBuf>,
        cache: bool,
        builtins: bool,
        code_mode: bool,
    ) -> PyResult<Bound<'_, PyAny>> {
        let builder = Setup { tools_dir, policy, cache_dir, cache, builtins, code_mode }.builder()?;
        wait::awaitable(py, async move {
            let runtime = builder.build().await.map_err(errors::runtime_error)?;
            Ok(Box::new(move |py: Python<'_>| Ok(Py::new(py, initializer(runtime))?.into_any())) as ToPython)
        })
    }

    /// Why a file of the tools folder did not load (one line each), for the operator.
    #[getter]
    fn diagnostics(&self) -> Vec<String> {
        self.runtime.diagnostics().iter().map(ToString::to_string).collect()
    }

    /// Some of the tools for one run (see `ToolSet`). `allow`/`deny` name tools (an unknown
    /// name raises ToolSetError); `filter(definition) -> bool` keeps tools; `context` is host
    /// data given to every call and never shown to the model; `limits` uses the policy
    /// file's keys; `retry` retries transient failures; `interceptors` run around each call.
    #[pyo3(signature = (*, allow = None, deny = None, filter = None, context = None, limits = None, retry = None, interceptors = Vec::new()))]
    #[expect(clippy::too_many_arguments, reason = "Python's keyword arguments")]
    fn tool_set<'py>(
        &self,
        py: Python<'py>,
        allow: Option<Vec<String>>,
        deny: Option<Vec<String>>,
        filter: Option<Bound<'py, PyAny>>,
        context: Option<Bound<'py, PyAny>>,
        limits: Option<Bound<'py, PyAny>>,
        retry: Option<Bound<'py, PyAny>>,
        interceptors: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Py<PyToolSet>> {
        let options = Options { allow, deny, filter, context, limits, retry, interceptors };
        Py::new(py, PyToolSet::build(&self.runtime, options)?)
    }

    /// Code mode over every tool: `search` and `execute`. Raises CodeModeError when the policy
    /// does not turn it on (a `[code_mode]` table, or `Runtime(code_mode=True)`).
    fn code_mode(&self, py: Python<'_>) -> PyResult<Py<PyCodeMode>> {
        let code_mode = self.runtime.code_mode().map_err(errors::code_mode_error)?;
        Py::new(py, PyCodeMode::new(code_mode))
    }

    /// Calls running or queued right now.
    #[getter]
    fn calls_in_flight(&self) -> usize {
        let calls = self.runtime.calls_in_flight();
        calls.running + calls.waiting
    }

    fn __repr__(&self) -> String {
        let names: Vec<&str> = self.runtime.definitions().map(|tool| tool.name.as_str()).collect();
        format!("Runtime({names:?})")
    }
}
