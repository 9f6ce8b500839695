//! Provider formats end to end: every standard tool exports in every format, and a strict
//! model's calls reach the tool in the tool's own shape.

use serde_json::{Value, json};
use toolcell_runtime::Format;

use crate::common::runtime;

const STANDARD_TOOLS: [&str; 8] =
    ["calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"];

#[test]
fn every_standard_tool_exports_in_every_format() {
    for name in STANDARD_TOOLS {
        let definition = runtime().definition(name).unwrap();
        for format in Format::ALL {
            let exported = definition.to_format(format).unwrap_or_else(|err| panic!("{err}"));
            assert!(exported.to_string().contains(&format!("\"{name}\"")), "{format}: {exported}");
        }
    }
}

/// A strict model sends a map as entries, `null` for what it leaves out, and any-typed values
/// as JSON text; the tools get what they asked for.
#[tokio::test]
async fn a_strict_models_calls_are_repaired_before_validation() {
    let message = json!({"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "calculator",
            "arguments": "{\"expression\": \"x * rate\", \"variables\": [{\"key\": \"x\", \"value\": 200}, {\"key\": \"rate\", \"value\": 0.5}]}"}},
        {"id": "call_2", "type": "function", "function": {"name": "json_query",
            "arguments": "{\"document\": \"{\\\"a\\\": [1, 2, 3]}\", \"query\": \"$.a[1]\", \"limit\": null}"}},
        {"id": "call_3", "type": "function", "function": {"name": "http_fetch",
            "arguments": "{\"url\": \"not a url\", \"headers\": null, \"max_bytes\": null, \"follow_redirects\": null}"}}
    ]});
    let replies = runtime().respond(Format::OpenAiChatStrict, &message).await.unwrap();
    let contents: Vec<Value> = replies
        .iter()
        .map(|reply| serde_json::from_str(reply["content"].as_str().unwrap()).unwrap_or(Value::Null))
        .collect();
    assert_eq!(contents[0], json!({"value": 100.0}));
    assert_eq!(contents[1]["matches"][0]["value"], 2, "{}", replies[1]);
    // `null` for `max_bytes` (an integer with a default) means "not given", so the call gets
    // past validation to the tool, which has no network granted here.
    let fetch = replies[2]["content"].as_str().unwrap();
    assert!(!fetch.contains("max_bytes") && !fetch.contains("null"), "{fetch}");

    // The same message, read as plain (non-strict) OpenAI, is refused where it breaks the schema.
    let replies = runtime().respond(Format::OpenAiChat, &message).await.unwrap();
    assert!(replies[0]["content"].as_str().unwrap().contains("variables"), "{}", replies[0]);
}
