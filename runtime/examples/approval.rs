//! A person approves risky calls: an interceptor asks on the terminal before running any tool
//! whose annotations say it may destroy something or reach the outside world. A declined
//! call reaches the model as a `denied` error saying so.
//!
//! Run with `cargo run -p toolcell-runtime --example approval` and answer `y` or `n`.

use std::io::{BufRead, Write};

use serde_json::json;
use toolcell_runtime::{
    Arguments, Runtime, ToolCall, ToolDefinition,
    toolset::{BoxFuture, Interceptor, Verdict},
};

/// Asks before calls to destructive or open-world tools; lets the others through.
struct AskFirst;

impl Interceptor for AskFirst {
    fn before<'a>(&'a self, call: ToolCall, tool: &'a ToolDefinition) -> BoxFuture<'a, Verdict> {
        Box::pin(async move {
            let hints = &tool.annotations;
            // MCP's defaults: a tool that does not say is assumed destructive and open-world.
            let destructive = hints.read_only != Some(true) && hints.destructive != Some(false);
            let open_world = hints.open_world != Some(false);
            if !destructive && !open_world {
                return Verdict::Run(call);
            }
            let why = if destructive { "may change or delete things" } else { "reaches the internet" };
            let arguments = match &call.arguments {
                Arguments::Json(text) => text.clone(),
                Arguments::Value(value) => value.to_string(),
            };
            let question = format!("`{}` {why}. Run it with {arguments}? [y/N] ", tool.name);
            // Reading the terminal blocks: off the async threads.
            let answer = tokio::task::spawn_blocking(move || {
                print!("{question}");
                let _ = std::io::stdout().flush();
                let mut line = String::new();
                let _ = std::io::stdin().lock().read_line(&mut line);
                line
            })
            .await
            .unwrap_or_default();
            if answer.trim().eq_ignore_ascii_case("y") {
                Verdict::Run(call)
            } else {
                Verdict::Deny(format!("a person declined this call to `{}`", tool.name))
            }
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = Runtime::builder()
        .tools_dir(toolcell_tools::DIR)
        .compile_cache(std::env::temp_dir().join("toolcell-example-cache"))
        .build()
        .await?;
    let tools = runtime.tool_set().intercept(AskFirst).build()?;
    let calls = [
        ToolCall::new("call_1", "calculator", json!({"expression": "2 ^ 10"})),
        ToolCall::new("call_2", "http_fetch", json!({"url": "https://example.com/"})),
    ];
    for call in calls {
        // One at a time, so the questions do not interleave.
        let output = tools.call(call).await;
        println!("{} -> {}\n", output.tool, output.content);
    }
    Ok(())
}
