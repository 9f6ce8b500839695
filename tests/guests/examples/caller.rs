//! Calls other tools through the host (code mode), each of `calls` in turn, and reports
//! every outcome: the code-mode tests drive the host's nested calls with it.

use toolcell_guest::__private::serde_json::{Value, json};
use toolcell_guest::{call_tool, callable_tools, tool};

/// Call tools by name, in order, and report what each returned.
#[tool]
fn caller(
    /// The calls: objects with `tool` (a name) and `arguments` (an object).
    calls: Vec<Value>,
) -> Value {
    let outcomes: Vec<Value> = calls
        .iter()
        .map(|call| {
            let name = call["tool"].as_str().unwrap_or_default();
            match call_tool(name, &call["arguments"]) {
                Ok(result) => json!({ "ok": result }),
                Err(failure) => json!({
                    "error": { "kind": failure.kind, "message": failure.message, "retryable": failure.retryable }
                }),
            }
        })
        .collect();
    let callable: Vec<String> = callable_tools().into_iter().map(|tool| tool.name).collect();
    json!({ "callable": callable, "outcomes": outcomes })
}
