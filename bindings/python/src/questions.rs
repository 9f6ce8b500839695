//! `toolcell.explain_policy`, `check_policy` and `suggest_rules`: questions about the policy
//! the tools would run under, as `toolcell policy` answers them, without loading a tool.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use serde_json::{Value, json};
use toolcell_runtime::policy::Assertion;
use toolcell_runtime::questions::{Denial, Scope, suggest};
use toolcell_runtime::{Limits, Policy, Runtime};

use crate::convert::to_python;
use crate::{builtins, errors};

/// The policy (the standard tools', the folder's `toolcell.toml`, `policy`), read without
/// its `from_host` variables, and the tools it is about.
fn read(
    tools_dir: Option<&Path>,
    policy: Option<&Path>,
    with_builtins: bool,
    code_mode: bool,
) -> PyResult<(Policy, Scope)> {
    let mut builder = Runtime::builder();
    if let Some(path) = policy {
        let policy = Policy::from_file_unresolved(path).map_err(|err| errors::PolicyError::new_err(err.to_string()))?;
        builder = builder.policy(policy);
    }
    if with_builtins {
        builder = builtins::add(builder, tools_dir);
    }
    if let Some(dir) = tools_dir {
        builder = builder.tools_dir(dir);
    }
    let read = builder.read_policy().map_err(errors::runtime_error)?;
    let mut names: Vec<String> = Vec::new();
    if with_builtins {
        names.extend(toolcell_tools::ALL.iter().filter_map(|(file, _)| file.strip_suffix(".wasm")).map(str::to_owned));
    }
    if let Some(dir) = tools_dir {
        let files = std::fs::read_dir(dir).into_iter().flatten().flatten();
        names.extend(files.filter_map(|entry| entry.file_name().to_str()?.strip_suffix(".wasm").map(str::to_owned)));
    }
    let scope = Scope::new(names);
    Ok((read, if code_mode { scope.with_code_mode() } else { scope }))
}

/// What each tool can do (directories, HTTP rules, environment with secrets masked, the
/// secrets the host sends for it and where, limits, what it reaches through the tools it may
/// call), as dicts; `tool` for one. `code_mode=True` answers for a server with code mode on.
#[pyfunction]
#[pyo3(signature = (tools_dir = None, *, policy = None, builtins = true, code_mode = false, tool = None))]
pub(crate) fn explain_policy<'py>(
    py: Python<'py>,
    tools_dir: Option<PathBuf>,
    policy: Option<PathBuf>,
    builtins: bool,
    code_mode: bool,
    tool: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let (policy, scope) = read(tools_dir.as_deref(), policy.as_deref(), builtins, code_mode)?;
    let mut explained = policy.explain(&scope, &Limits::default());
    if let Some(tool) = &tool {
        explained.retain(|explained| &explained.tool == tool);
        if explained.is_empty() {
            return Err(pyo3::exceptions::PyKeyError::new_err(format!(
                "no tool named `{tool}` is loaded or named by the policy"
            )));
        }
    }
    to_python(py, &serde_json::to_value(&explained).unwrap_or(Value::Null))
}

/// Proves the policy's `assertions` and these (`'deny write "/home/**"'`, ...) over every tool
/// and chain of calls: a dict per assertion with `holds` and the grants that break it
/// (`broken_by`). Raises `PolicyError` for an assertion that does not parse.
#[pyfunction]
#[pyo3(signature = (assertions = Vec::new(), *, tools_dir = None, policy = None, builtins = true, code_mode = false))]
pub(crate) fn check_policy<'py>(
    py: Python<'py>,
    assertions: Vec<String>,
    tools_dir: Option<PathBuf>,
    policy: Option<PathBuf>,
    builtins: bool,
    code_mode: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let (policy, scope) = read(tools_dir.as_deref(), policy.as_deref(), builtins, code_mode)?;
    let mut all: Vec<Assertion> = policy.assertions().to_vec();
    for text in &assertions {
        all.push(text.parse().map_err(|reason: String| errors::PolicyError::new_err(reason))?);
    }
    let outcomes = policy.check(&all, &scope);
    to_python(py, &serde_json::to_value(&outcomes).unwrap_or(Value::Null))
}

/// The narrowest rules that would have allowed the refused requests of a denials file
/// (`invoke --denials`, `serve --denials`): `{"rules": [...], "unallowable": [...]}`, each rule
/// with its `toml` to review and paste. Never applies them. Lines that are not refusals are
/// skipped.
#[pyfunction]
pub(crate) fn suggest_rules(py: Python<'_>, denials: PathBuf) -> PyResult<Bound<'_, PyAny>> {
    let text = std::fs::read_to_string(&denials).map_err(|err| {
        pyo3::exceptions::PyOSError::new_err(format!("cannot read the denials file {}: {err}", denials.display()))
    })?;
    let read: Vec<Denial> = text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    let suggested = suggest(&read);
    let rules: Vec<Value> = suggested
        .rules
        .iter()
        .map(|rule| {
            let mut value = serde_json::to_value(rule).unwrap_or(Value::Null);
            value["toml"] = json!(rule.to_string());
            value
        })
        .collect();
    to_python(py, &json!({ "rules": rules, "unallowable": suggested.unallowable }))
}
