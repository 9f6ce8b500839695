//! The exceptions of setup problems (loading, policy, formats, tool sets). A failed *call* is
//! never one of these: it is a `ToolOutput` with `is_error`, for the model to read.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use toolcell_runtime::{RuntimeError, code_mode, formats, toolset};

create_exception!(toolcell, ToolcellError, PyException, "The base of toolcell's setup errors.");
create_exception!(
    toolcell,
    LoadError,
    ToolcellError,
    "The runtime could not be made: a tools folder that cannot be read, an engine or pool that cannot start."
);
create_exception!(toolcell, PolicyError, ToolcellError, "A policy file that cannot be read or used.");
create_exception!(
    toolcell,
    FormatError,
    ToolcellError,
    "A definition that has no form in the asked provider format, or a format name that is not one."
);
create_exception!(toolcell, MessageError, ToolcellError, "A model's message that is not in the format's shape.");
create_exception!(toolcell, ToolSetError, ToolcellError, "A tool set that names tools the runtime has not loaded.");
create_exception!(
    toolcell,
    ResumeError,
    ToolcellError,
    "A paused program could not resume: its token is not authentic, expired or used, or the run diverged."
);
create_exception!(
    toolcell,
    CodeModeError,
    ToolcellError,
    "Code mode is off, or the tool that runs its programs is not loaded."
);

pub(crate) fn add(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add("ToolcellError", py.get_type::<ToolcellError>())?;
    module.add("LoadError", py.get_type::<LoadError>())?;
    module.add("PolicyError", py.get_type::<PolicyError>())?;
    module.add("FormatError", py.get_type::<FormatError>())?;
    module.add("MessageError", py.get_type::<MessageError>())?;
    module.add("ToolSetError", py.get_type::<ToolSetError>())?;
    module.add("CodeModeError", py.get_type::<CodeModeError>())?;
    module.add("ResumeError", py.get_type::<ResumeError>())?;
    Ok(())
}

pub(crate) fn runtime_error(err: RuntimeError) -> PyErr {
    match err {
        RuntimeError::Policy(err) => PolicyError::new_err(err.to_string()),
        err => LoadError::new_err(err.to_string()),
    }
}

pub(crate) fn format_error(err: formats::FormatError) -> PyErr {
    FormatError::new_err(err.to_string())
}

pub(crate) fn message_error(err: formats::MessageError) -> PyErr {
    MessageError::new_err(err.to_string())
}

pub(crate) fn tool_set_error(err: toolset::ToolSetError) -> PyErr {
    ToolSetError::new_err(err.to_string())
}

pub(crate) fn code_mode_error(err: code_mode::CodeModeError) -> PyErr {
    match err {
        code_mode::CodeModeError::Off => CodeModeError::new_err(
            "code mode is off: add a `[code_mode]` table to the policy (toolcell.toml), or make the runtime with \
             toolcell.Runtime(code_mode=True)",
        ),
        err => CodeModeError::new_err(err.to_string()),
    }
}

pub(crate) fn resume_error(err: code_mode::ResumeError) -> PyErr {
    ResumeError::new_err(err.to_string())
}
