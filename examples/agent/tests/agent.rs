//! The agent (`src/main.rs`) run as a user runs it, over real HTTP against a local Chat Completions
//! endpoint that replays a model: it first sends wrong arguments, then corrects them after
//! reading the runtime's error. Nothing in toolcell is mocked; the spans go to an OTLP
//! receiver.

use std::sync::{Arc, Mutex, PoisonError};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use toolcell_tests::otlp::OtlpReceiver;

/// Every request the model received.
type Requests = Arc<Mutex<Vec<Value>>>;

/// A model that answers by script: each turn checks what the agent sent and answers a 400
/// (which the agent reports and fails on) when it is not what a correct agent sends.
async fn scripted_model(
    State(requests): State<Requests>,
    headers: HeaderMap,
    Json(request): Json<Value>,
) -> (StatusCode, Json<Value>) {
    let turn = {
        let mut requests = requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests.push(request.clone());
        requests.len()
    };
    match answer(turn, &headers, &request) {
        Ok(message) => (
            StatusCode::OK,
            Json(json!({
                "id": format!("chatcmpl-{turn}"), "object": "chat.completion", "model": "scripted",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100 * turn, "completion_tokens": 10, "total_tokens": 100 * turn + 10},
            })),
        ),
        Err(problem) => {
            (StatusCode::BAD_REQUEST, Json(json!({"error": {"message": format!("turn {turn}: {problem}")}})))
        }
    }
}

fn answer(turn: usize, headers: &HeaderMap, request: &Value) -> Result<Value, String> {
    let expect = |ok: bool, what: &str| match ok {
        true => Ok(()),
        false => Err(format!("expected {what}; got {:.2000}", request.to_string())),
    };
    expect(headers.get("authorization").is_some_and(|key| key == "Bearer test-key"), "the API key")?;
    expect(request["model"] == "scripted-model", "the model name")?;
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let tool_result = |id: &str| {
        messages.iter().find(|m| m["role"] == "tool" && m["tool_call_id"] == id).and_then(|m| m["content"].as_str())
    };
    match turn {
        1 => {
            let tools = request["tools"].as_array().cloned().unwrap_or_default();
            expect(
                tools.iter().any(|tool| tool["function"]["name"] == "calculator"),
                "the calculator among the tools",
            )?;
            // Two calls at once; the first with a wrong parameter name.
            Ok(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "calculator", "arguments": "{\"expr\": \"42.195 * 2\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "unit_convert",
                    "arguments": "{\"value\": 42.195, \"from\": \"kilometer\", \"to\": \"mile\"}"}},
            ]}))
        }
        2 => {
            let error = tool_result("call_1").unwrap_or_default();
            expect(error.contains("did you mean `expression`?"), "the calculator's error naming `expression`")?;
            expect(tool_result("call_2").is_some_and(|r| r.contains("26.21875")), "the conversion's result")?;
            Ok(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_3", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\": \"42.195 * 2\"}"}},
            ]}))
        }
        3 => {
            expect(tool_result("call_3") == Some(r#"{"value":84.39}"#), "the corrected call's result")?;
            Ok(json!({"role": "assistant", "content": "A marathon is 26.22 miles; two are 84.39 km."}))
        }
        _ => Err("no fourth turn in the script".into()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_corrects_its_arguments_from_the_error_and_traces_the_run() {
    let requests = Requests::default();
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(scripted_model))
        .with_state(requests.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let receiver = OtlpReceiver::start().await;

    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(["--base-url", &base_url, "--model", "scripted-model", "How far are two marathons?"])
        .env("OPENAI_API_KEY", "test-key")
        .env("TOOLCELL_TOOLS_DIR", toolcell_tools::DIR)
        // The test suite's compile cache: the example compiles nothing the suite has compiled.
        .env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_MODEL")
        .kill_on_drop(true)
        .output()
        .await
        .unwrap();
    server.abort();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the agent failed: {stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "A marathon is 26.22 miles; two are 84.39 km.");
    assert_eq!(requests.lock().unwrap().len(), 3, "three turns: {stderr}");
    assert!(stderr.contains(r#"tool "calculator"({"expr": "42.195 * 2"}) -> The arguments do not match"#), "{stderr}");

    // The run's trace: one AGENT span; three LLM spans and three TOOL spans beneath it.
    let spans = receiver.spans();
    let agent = spans.iter().find(|span| span.name == "agent").expect("the agent's span");
    assert_eq!(agent.attributes["openinference.span.kind"], "AGENT");
    assert_eq!(agent.attributes["output.value"], "A marathon is 26.22 miles; two are 84.39 km.");
    let children = |kind: &str| -> Vec<_> {
        spans
            .iter()
            .filter(|span| span.attributes.get("openinference.span.kind") == Some(&json!(kind)))
            .filter(|span| span.parent_span_id == agent.span_id && span.trace_id == agent.trace_id)
            .collect()
    };
    let llm = children("LLM");
    assert_eq!(llm.len(), 3, "{spans:#?}");
    assert!(llm.iter().all(|span| span.attributes["llm.model_name"] == "scripted-model"));
    let mut tools: Vec<_> = children("TOOL")
        .iter()
        .map(|span| {
            (
                span.attributes["tool_call.id"].as_str().unwrap().to_owned(),
                span.attributes.get("toolcell.error.kind").cloned(),
            )
        })
        .collect();
    tools.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        tools,
        [
            ("call_1".to_owned(), Some(json!("invalid_arguments"))),
            ("call_2".to_owned(), None),
            ("call_3".to_owned(), None),
        ]
    );
}

#[test]
fn without_a_key_the_agent_says_how_to_set_one_and_calls_nothing() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_agent"))
        .arg("What is 15% of 2,340?")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        // Were it to load the tools, it would find none here.
        .env("TOOLCELL_TOOLS_DIR", "/nonexistent/toolcell-tools")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(output.stdout.is_empty());
    assert_eq!(
        stderr.trim(),
        "error: no API key for api.openai.com: set OPENAI_API_KEY or pass --api-key (a local \
         OpenAI-compatible server needs none: set OPENAI_BASE_URL or --base-url)"
    );
}
