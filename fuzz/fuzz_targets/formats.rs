//! A tool's parameters schema (the tool author's) through every provider format, and a
//! model's arguments (anyone's) through `repair`: neither may panic, hang or overflow the
//! stack, whatever the JSON.
//!
//! The input is JSON: `[schema, arguments]`; anything else is skipped.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolcell_runtime::{Format, ToolDefinition, formats::repair};

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Array(parts)) = serde_json::from_slice::<Value>(data) else { return };
    let [schema, arguments] = parts.as_slice() else { return };
    let definition =
        json!({"name": "fuzzed", "description": "A fuzzed tool.", "version": "1.0.0", "parameters": schema});
    let Ok(definition) = serde_json::from_value::<ToolDefinition>(definition) else { return };
    for format in Format::ALL {
        let _ = definition.to_format(format);
        let _ = repair(format, schema, arguments.clone());
    }
});
