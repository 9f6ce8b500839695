//! `add` as an Extism plugin: the same JSON in and out as toolcell's `add` tool.

use extism_pdk::{FnResult, Json, plugin_fn};

#[derive(serde::Deserialize)]
struct Arguments {
    a: f64,
    b: f64,
}

/// Adds two numbers: `{"a": 1.5, "b": 2.25}` in, `3.75` out.
#[plugin_fn]
pub fn add(Json(arguments): Json<Arguments>) -> FnResult<String> {
    Ok(serde_json::to_string(&(arguments.a + arguments.b))?)
}
