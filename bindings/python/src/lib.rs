//! toolcell for Python: the runtime in process (`toolcell.Runtime`), tool sets, code mode and
//! the provider formats, as the `toolcell._toolcell` extension module. The framework adapters
//! are plain Python beside it (`python/toolcell/`), over this module's API.
//!
//! Every call runs on one tokio runtime the module starts, with the GIL released while it
//! runs; a Python callable (an interceptor, a filter) runs on a blocking thread, never on a
//! tokio worker.

#![deny(clippy::unwrap_used, clippy::expect_used)]

mod builtins;
mod convert;
mod errors;
mod intercept;
mod output;
mod questions;
mod runtime;
mod tools;
mod toolset;
mod wait;

use pyo3::prelude::*;

/// The extension module. `toolcell/__init__.py` re-exports what users import.
#[pymodule]
fn _toolcell(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add_class::<tools::Tools>()?;
    module.add_class::<runtime::PyRuntime>()?;
    module.add_class::<toolset::PyToolSet>()?;
    module.add_class::<tools::PyCodeMode>()?;
    module.add_class::<output::PyToolOutput>()?;
    module.add_class::<output::PyUsage>()?;
    module.add_class::<intercept::Deny>()?;
    module.add_class::<intercept::Defer>()?;
    module.add_class::<wait::Pending>()?;
    module.add_function(wrap_pyfunction!(convert::repair, module)?)?;
    module.add_function(wrap_pyfunction!(convert::formats, module)?)?;
    module.add_function(wrap_pyfunction!(questions::explain_policy, module)?)?;
    module.add_function(wrap_pyfunction!(questions::check_policy, module)?)?;
    module.add_function(wrap_pyfunction!(questions::suggest_rules, module)?)?;
    // Before the interpreter finalizes, our threads stop entering it and those inside leave.
    let exiting = wrap_pyfunction!(wait::_exiting, module)?;
    module.py().import("atexit")?.call_method1("register", (exiting,))?;
    errors::add(module)
}
