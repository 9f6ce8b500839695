//! toolcell's `python` standard tool as a `wasm32-wasip2` component: CPython 3.14, built with
//! componentize-py and pre-initialized, that runs a model's program in a fresh interpreter per
//! call and, where the policy allows (`call_tools`), calls other tools as functions.
//! `toolcell-tools` puts it in the standard tools folder beside the others; this crate is
//! its own only for the size of the component.
//!
//! Its sources are the Python project in this folder (`python_tool.py`, the runner, the
//! `tools` object); `test_python_tool.py` tests them natively.

#![deny(clippy::unwrap_used, clippy::expect_used)]

/// The path of the component.
pub const PYTHON: &str = concat!(env!("OUT_DIR"), "/python.wasm");
