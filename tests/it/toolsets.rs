//! Tool sets: per-run tools, context and limits, interceptors, and retries.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use toolcell_runtime::{
    CallError, Format, LimitOverrides, ToolCall, ToolDefinition, ToolOutput,
    toolset::{BoxFuture, Interceptor, Retry, Verdict},
};

use crate::common::runtime;

fn context(pairs: &[(&str, &str)]) -> Map<String, Value> {
    pairs.iter().map(|(key, value)| ((*key).to_owned(), json!(value))).collect()
}

#[tokio::test]
async fn a_set_shows_and_calls_only_its_tools() {
    let set = runtime()
        .tool_set()
        .allow(["calculator", "unit_convert", "regex", "http_fetch"])
        .deny(["regex"])
        .filter(|tool| tool.annotations.open_world != Some(true))
        .build()
        .unwrap();
    let names: Vec<&str> = set.definitions().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["calculator", "unit_convert"]);
    let exported = Format::OpenAiChat.tools(set.definitions()).unwrap();
    assert_eq!(exported.as_array().unwrap().len(), 2, "exports show only the set");

    let output =
        set.call(ToolCall::new("c1", "regex", json!({"pattern": "a", "text": "a", "operation": "find"}))).await;
    assert_eq!(
        output.error,
        Some(CallError::UnknownTool {
            name: "regex".into(),
            closest: vec![],
            available: vec!["calculator".into(), "unit_convert".into()]
        }),
        "a tool the runtime has but the set does not is unknown to the run"
    );
    let output = set.call(ToolCall::new("c2", "calculater", json!({"expression": "1"}))).await;
    assert!(output.content.contains("Did you mean `calculator`?"), "{}", output.content);
    assert_eq!(
        set.call(ToolCall::new("c3", "calculator", json!({"expression": "6 * 7"}))).await.content,
        "{\"value\":42.0}"
    );
}

#[tokio::test]
async fn a_misspelt_name_in_allow_or_deny_is_an_error() {
    let error = runtime().tool_set().allow(["calculator"]).deny(["http_fetc"]).build().unwrap_err();
    assert_eq!(error.unknown, ["http_fetc"]);
    assert!(error.to_string().contains("not loaded: http_fetc; loaded: "), "{error}");
}

#[tokio::test]
async fn the_runs_context_and_limits_apply_to_every_call() {
    let set = runtime()
        .tool_set()
        .context(context(&[("user_id", "alice"), ("locale", "fr")]))
        .limits(LimitOverrides::new().fuel(1_000_000))
        .build()
        .unwrap();
    let call =
        ToolCall::new("c1", "echo", json!({"text": "hi", "count": 1})).with_context(context(&[("locale", "de")]));
    let output = set.call(call).await;
    assert_eq!(
        output.value().unwrap()["host_context"],
        json!({"user_id": "alice", "locale": "de"}),
        "the call's own wins"
    );

    let output = set.call(ToolCall::new("c2", "infinite_loop", json!({}))).await;
    assert_eq!(output.error, Some(CallError::FuelExhausted { limit: 1_000_000 }));
    let lower = ToolCall::new("c3", "infinite_loop", json!({})).with_limits(LimitOverrides::new().fuel(500_000));
    assert_eq!(set.call(lower).await.error, Some(CallError::FuelExhausted { limit: 500_000 }), "the lower of both");
}

/// Rewrites `echo`'s text to upper case, denies `infinite_loop`, and records every output.
#[derive(Default)]
struct Gatekeeper {
    seen: Mutex<Vec<(String, bool)>>,
}

impl Interceptor for Gatekeeper {
    fn before<'a>(&'a self, mut call: ToolCall, definition: &'a ToolDefinition) -> BoxFuture<'a, Verdict> {
        Box::pin(async move {
            if definition.name == "infinite_loop" {
                return Verdict::Deny("a person declined this call: it never ends".into());
            }
            if let toolcell_runtime::Arguments::Value(Value::Object(arguments)) = &mut call.arguments
                && let Some(Value::String(text)) = arguments.get_mut("text")
            {
                *text = text.to_uppercase();
            }
            Verdict::Run(call)
        })
    }

    fn after<'a>(&'a self, call: &'a ToolCall, output: &'a ToolOutput) -> BoxFuture<'a, ()> {
        Box::pin(async move { self.seen.lock().unwrap().push((call.name.clone(), output.is_error)) })
    }
}

#[tokio::test]
async fn interceptors_rewrite_deny_and_record() {
    let gatekeeper = Arc::new(Gatekeeper::default());
    let set = runtime().tool_set().intercept(gatekeeper.clone()).build().unwrap();
    let outputs = set
        .call_all([
            ToolCall::new("c1", "echo", json!({"text": "quiet", "count": 1})),
            ToolCall::new("c2", "infinite_loop", json!({})),
            ToolCall::new("c3", "echo", json!({"text": "", "count": 1})),
        ])
        .await;
    assert_eq!(outputs[0].value().unwrap()["text"], "QUIET");
    let denied = &outputs[1];
    assert_eq!(denied.error, Some(CallError::Denied { reason: "a person declined this call: it never ends".into() }));
    assert!(denied.content.starts_with("This call was not run: a person declined this call: it never ends."));
    assert_eq!(denied.usage.fuel_consumed, 0, "the tool never ran");
    assert_eq!(
        outputs[2].error.as_ref().map(CallError::kind),
        Some("invalid_arguments"),
        "rewritten calls are validated"
    );
    let mut seen = gatekeeper.seen.lock().unwrap().clone();
    seen.sort();
    assert_eq!(seen, [("echo".into(), false), ("echo".into(), true), ("infinite_loop".into(), true)]);
}

#[tokio::test]
async fn only_transient_failures_are_retried_within_the_bounds() {
    let retry = Retry { retries: 2, backoff: Duration::from_millis(1), within: Duration::from_secs(30) };
    let set = runtime().tool_set().retry(retry).build().unwrap();
    let transient = set.call(ToolCall::new("c1", "fails_retryably", json!({"transient": true}))).await;
    assert_eq!(transient.error.as_ref().map(CallError::kind), Some("tool_failed"));
    assert_eq!(transient.diagnostics.retries, 2, "retried twice, then given up");
    let terminal = set.call(ToolCall::new("c2", "fails_retryably", json!({"transient": false}))).await;
    assert_eq!(terminal.diagnostics.retries, 0, "a failure that would repeat is not retried");
    let models = set.call(ToolCall::new("c3", "fails_retryably", json!({"transient": "yes"}))).await;
    assert_eq!(
        (models.error.as_ref().map(CallError::kind), models.diagnostics.retries),
        (Some("invalid_arguments"), 0)
    );

    let slow = Retry { retries: 5, backoff: Duration::from_secs(60), within: Duration::from_secs(1) };
    let set = runtime().tool_set().retry(slow).build().unwrap();
    let output = set.call(ToolCall::new("c4", "fails_retryably", json!({"transient": true}))).await;
    assert_eq!(output.diagnostics.retries, 0, "no retry starts past `within`");
    let off = runtime().tool_set().build().unwrap();
    assert_eq!(
        off.call(ToolCall::new("c5", "fails_retryably", json!({"transient": true}))).await.diagnostics.retries,
        0
    );
}

#[tokio::test]
async fn a_set_answers_a_providers_message_with_its_own_tools() {
    let set = runtime().tool_set().allow(["calculator"]).build().unwrap();
    let message = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "calculator", "input": {"expression": "2 + 2"}},
        {"type": "tool_use", "id": "t2", "name": "unit_convert", "input": {"value": 1, "from": "mile", "to": "kilometer"}}
    ]});
    let reply = set.respond(Format::Anthropic, &message).await.unwrap();
    let blocks = reply[0]["content"].as_array().unwrap();
    assert_eq!((blocks[0]["is_error"].clone(), blocks[1]["is_error"].clone()), (json!(false), json!(true)));
    assert!(blocks[1]["content"].as_str().unwrap().contains("There is no tool named `unit_convert`"));
}
