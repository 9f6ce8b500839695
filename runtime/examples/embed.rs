//! Embedding toolcell in an agent: load the standard tools, hand their definitions to a
//! model, and run the calls it makes, feeding every output (success or error) back.
//!
//! Run with `cargo run -p toolcell-runtime --example embed`.

use std::time::Duration;

use serde_json::json;
use toolcell_runtime::{Format, LimitOverrides, Runtime, ToolCall};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The eight standard tools, built by the `toolcell-tools` crate. In an application this
    // is the folder you drop `.wasm` tools into.
    let runtime = Runtime::builder()
        .tools_dir(toolcell_tools::DIR)
        // Compiling takes seconds; the cache makes every later start take milliseconds.
        .compile_cache(std::env::temp_dir().join("toolcell-example-cache"))
        .tool_limits("regex", LimitOverrides::new().timeout(Duration::from_secs(1)))
        .build()
        .await?;
    for diagnostic in runtime.diagnostics() {
        eprintln!("not loaded: {diagnostic}");
    }

    // What to put in the `tools` field of an OpenAI request.
    let tools = Format::OpenAiChat.tools(runtime.definitions())?;
    let names: Vec<_> = runtime.definitions().map(|tool| tool.name.as_str()).collect();
    println!("{} tools for the model: {}", names.len(), names.join(", "));
    println!("the first, as OpenAI expects it: {:.200}…", tools[0].to_string());

    // Pretend the model asked for three calls at once: one good, one with a typo in the
    // tool name, one with arguments that break the schema.
    let calls = vec![
        ToolCall::new("call_1", "calculator", r#"{"expression": "2 * (3 + sqrt(16)) ^ 2"}"#),
        ToolCall::new("call_2", "calculater", r#"{"expression": "1 + 1"}"#),
        ToolCall::new("call_3", "unit_convert", json!({"value": "ten", "from": "mile", "to": "kilometer"})),
    ];
    for output in runtime.call_all(calls).await {
        // `content` is what goes back to the model as the tool message, error or not.
        println!("\n{} ({}) is_error={}", output.call_id, output.tool, output.is_error);
        println!("{}", output.content);
        if let Some(error) = &output.error {
            println!("[kind={}, retryable={}]", error.kind(), error.retryable());
        }
        println!("[{} µs, {} fuel]", output.usage.duration.as_micros(), output.usage.fuel_consumed);
    }
    Ok(())
}
