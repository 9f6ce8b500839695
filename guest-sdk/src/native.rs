//! What the host checks, done natively: a tool's tests see the arguments the host would
//! refuse refused, in the host's words, and results that break the output schema fail.
//! A component does none of this; its host already has.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::Value;
use toolcell_schema::{ArgumentsReport, CompiledSchema, OutputReport};

use crate::{Tool, ToolError};

/// A tool's schemas, compiled once per tool type.
struct Schemas {
    parameters: Result<CompiledSchema, String>,
    output: Option<Result<CompiledSchema, String>>,
}

fn schemas<T: Tool + 'static>() -> Arc<Schemas> {
    static COMPILED: OnceLock<Mutex<HashMap<TypeId, Arc<Schemas>>>> = OnceLock::new();
    let mut compiled = COMPILED.get_or_init(Default::default).lock().unwrap_or_else(PoisonError::into_inner);
    let schemas = compiled.entry(TypeId::of::<T>()).or_insert_with(|| {
        let metadata = T::metadata();
        let compile = |schema: &Value| CompiledSchema::compile(&schema.to_string()).map(|(_, compiled)| compiled);
        Arc::new(Schemas {
            parameters: compile(&metadata.parameters_schema),
            output: metadata.output_schema.as_ref().map(compile),
        })
    });
    Arc::clone(schemas)
}

/// Refuses arguments that are not JSON or break `T`'s parameters schema, with the message
/// the host gives a model (which it reports as `malformed_arguments` or `invalid_arguments`).
pub(crate) fn check_arguments<T: Tool + 'static>(arguments: &str) -> Result<(), ToolError> {
    let value: Value = serde_json::from_str(arguments).map_err(|err| {
        ToolError::invalid_arguments(format!(
            "The arguments are not valid JSON: {err}. Send the arguments as a single JSON object, e.g. {{\"name\": \"value\"}}."
        ))
    })?;
    let schemas = schemas::<T>();
    let schema = schemas.parameters.as_ref().map_err(|reason| {
        ToolError::failed(format!("the tool's parameters schema {reason}: a host would refuse to load this tool"))
    })?;
    let violations = schema.violations(&value);
    if violations.is_empty() {
        return Ok(());
    }
    Err(ToolError::invalid_arguments(ArgumentsReport(&violations).to_string()))
}

/// Fails a result that breaks `T`'s output schema, as the host would (`invalid_output`).
pub(crate) fn check_output<T: Tool + 'static>(output: &str) -> Result<(), ToolError> {
    let schemas = schemas::<T>();
    let Some(schema) = &schemas.output else { return Ok(()) };
    let schema = schema.as_ref().map_err(|reason| {
        ToolError::failed(format!("the tool's output schema {reason}: a host would refuse to load this tool"))
    })?;
    let value: Value = serde_json::from_str(output)
        .map_err(|err| ToolError::failed(format!("the tool's result is not JSON: {err}")))?;
    let violations = schema.violations(&value);
    if violations.is_empty() {
        return Ok(());
    }
    Err(ToolError::failed(format!(
        "the tool returned an invalid result: {}; a host would report it as `invalid_output`",
        OutputReport(&violations)
    )))
}
