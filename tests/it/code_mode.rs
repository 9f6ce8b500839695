//! Code mode: a tool calling other tools through the `calls` import. Every nested call goes
//! the way of any call (the callee's schema, limits and grants), only where the policy
//! allows it, within the caller's time and fuel, and within bounds on depth and count.

use serde_json::{Value, json};
use toolcell_runtime::{
    LimitOverrides, Runtime, RuntimeBuilder, ToolCall, ToolOutput,
    policy::{EnvGrant, Grants},
};

use crate::common::{COMPILE_CACHE, call, kind, value};
use crate::containment::benign_call_is_correct;
use crate::spans::tool_call_spans;

/// The tools `caller` may call in [`runtime`], one of them (`ghost`) not loaded.
const ALLOWED: [&str; 8] =
    ["calculator", "json_query", "echo", "panic", "env_reader", "sleeper", "infinite_loop", "ghost"];

fn builder() -> RuntimeBuilder {
    let guests = [
        toolcell_tests::CALLER,
        toolcell_tests::ECHO,
        toolcell_tests::PANIC,
        toolcell_tests::ENV_READER,
        toolcell_tests::SLEEPER,
        toolcell_tests::INFINITE_LOOP,
    ];
    let builder = Runtime::builder().compile_cache(COMPILE_CACHE).component_file(toolcell_tools::CALCULATOR);
    let builder = builder.component_file(toolcell_tools::JSON_QUERY).component_file(toolcell_tools::FILES);
    guests.iter().fold(builder, |builder, guest| builder.component_file(guest))
}

/// A runtime where `caller` may call [`ALLOWED`], with a secret of its own.
async fn runtime() -> Runtime {
    let grants = ALLOWED.iter().fold(Grants::new(), |grants, tool| grants.call_tool(*tool));
    let grants = grants.env(EnvGrant::secret("API_TOKEN", "caller-secret-7d1f"));
    builder().grant("caller", grants).build().await.expect("runtime builds")
}

/// Calls `caller` on `runtime`, making `calls` (each `[tool, arguments]`).
async fn call_tools(runtime: &Runtime, id: &str, calls: &[(&str, Value)]) -> ToolOutput {
    runtime.call(caller_call(id, calls)).await
}

fn caller_call(id: &str, calls: &[(&str, Value)]) -> ToolCall {
    let calls: Vec<Value> =
        calls.iter().map(|(tool, arguments)| json!({"tool": tool, "arguments": arguments})).collect();
    ToolCall::new(id, "caller", json!({ "calls": calls }))
}

/// The outcome of each nested call: `{"ok": result}` or `{"error": {kind, message, retryable}}`.
fn outcomes(output: &ToolOutput) -> Vec<Value> {
    value(output)["outcomes"].as_array().expect("outcomes").clone()
}

fn error_kind(outcome: &Value) -> &str {
    outcome["error"]["kind"].as_str().unwrap_or_else(|| panic!("expected an error, got {outcome}"))
}

#[tokio::test]
async fn a_tool_may_call_no_tool_unless_its_policy_names_it() {
    let output = call("caller", json!({"calls": [{"tool": "calculator", "arguments": {"expression": "1 + 1"}}]})).await;
    let result = value(&output);
    assert_eq!(result["callable"], json!([]), "nothing is callable by default");
    let outcome = &result["outcomes"][0];
    assert_eq!(error_kind(outcome), "not_allowed");
    let message = outcome["error"]["message"].as_str().unwrap();
    assert!(message.contains("`caller` may not call other tools"), "{message}");
    assert!(message.contains("call_tools"), "says what the operator can change: {message}");
    assert_eq!(outcome["error"]["retryable"], false);
    assert_eq!(output.usage.nested_calls, 1);
    assert_eq!(output.usage.nested_fuel, 0, "the callee never ran");
}

#[tokio::test]
async fn nested_calls_run_under_the_callees_schema_and_report_each_outcome() {
    let runtime = runtime().await;
    let diagnostics: Vec<&str> = runtime.diagnostics().iter().map(|d| d.reason.as_str()).collect();
    assert_eq!(diagnostics, ["tool `caller` may call `ghost` (`call_tools`), but no loaded tool has that name"]);

    let document = json!({"items": [{"price": 3}, {"price": 12}]});
    let output = call_tools(
        &runtime,
        "nested-1",
        &[
            ("calculator", json!({"expression": "6 * 7"})),
            ("json_query", json!({"document": document, "query": "$.items[?@.price < 10].price"})),
            ("echo", json!({"text": "", "count": 1})),
            ("files", json!({"operation": "list", "path": "."})),
            ("panic", json!({})),
            ("ghost", json!({})),
        ],
    )
    .await;
    let result = value(&output);
    let loaded: Vec<&str> = ALLOWED.iter().copied().filter(|tool| *tool != "ghost").collect();
    assert_eq!(result["callable"], json!(loaded), "the allowed tools that are loaded, in policy order");
    let outcomes = outcomes(&output);
    assert_eq!(outcomes[0]["ok"]["value"], json!(42.0), "{}", outcomes[0]);
    assert_eq!(outcomes[1]["ok"]["matches"][0]["value"], json!(3), "{}", outcomes[1]);
    assert_eq!(outcomes[1]["ok"]["count"], json!(1), "{}", outcomes[1]);

    assert_eq!(error_kind(&outcomes[2]), "invalid_arguments", "the callee's schema checks the arguments");
    assert!(outcomes[2]["error"]["message"].as_str().unwrap().contains("text"), "{}", outcomes[2]);
    assert_eq!(outcomes[2]["error"]["retryable"], true);

    assert_eq!(error_kind(&outcomes[3]), "not_allowed");
    let message = outcomes[3]["error"]["message"].as_str().unwrap();
    assert!(message.contains("may not call `files`") && message.contains("`calculator`"), "{message}");

    assert_eq!(error_kind(&outcomes[4]), "crashed", "{}", outcomes[4]);
    assert!(!outcomes[4]["error"]["message"].as_str().unwrap().contains("panicked at"), "no operator detail");
    assert_eq!(error_kind(&outcomes[5]), "unknown_tool");

    assert_eq!(output.usage.nested_calls, 6);
    assert!(
        output.usage.nested_fuel > 0 && output.usage.fuel_consumed > output.usage.nested_fuel,
        "{:?}",
        output.usage
    );
}

#[tokio::test]
async fn the_caller_pays_exactly_the_fuel_its_nested_calls_use() {
    let runtime = runtime().await;
    let expression = json!({"expression": "2 ^ 10 + sqrt(16)"});
    let alone = runtime.call(ToolCall::new("alone", "calculator", expression.clone())).await;
    value(&alone);
    let output =
        call_tools(&runtime, "fuel-1", &[("calculator", expression.clone()), ("calculator", expression)]).await;
    assert_eq!(output.usage.nested_fuel, 2 * alone.usage.fuel_consumed, "fuel is deterministic: {:?}", output.usage);
}

#[tokio::test]
async fn the_callers_fuel_bounds_its_nested_calls() {
    let runtime = runtime().await;
    // The busy loop has 10^10 fuel of its own, but its caller only 20 million in all.
    let call =
        caller_call("fuel-2", &[("infinite_loop", json!({}))]).with_limits(LimitOverrides::new().fuel(20_000_000));
    let output = runtime.call(call).await;
    assert_eq!(kind(&output), "fuel_exhausted", "{output:#?}");
    assert!(output.usage.nested_fuel > 0 && output.usage.fuel_consumed <= 20_000_000, "{:?}", output.usage);
    benign_call_is_correct(&runtime).await;
}

#[tokio::test]
async fn a_call_tree_makes_at_most_its_budget_of_calls() {
    let limits = LimitOverrides::new().max_nested_calls(3);
    let grants = Grants::new().call_tool("calculator").limits(limits);
    let runtime = builder().grant("caller", grants).build().await.expect("runtime builds");
    let calls = vec![("calculator", json!({"expression": "1"})); 5];
    let output = call_tools(&runtime, "budget", &calls).await;
    let outcomes = outcomes(&output);
    let kinds: Vec<&str> = outcomes.iter().map(|o| if o["ok"].is_null() { error_kind(o) } else { "ok" }).collect();
    assert_eq!(kinds, ["ok", "ok", "ok", "call_limit", "call_limit"]);
    let message = outcomes[3]["error"]["message"].as_str().unwrap();
    assert!(message.contains("at most 3 calls to other tools"), "{message}");
    benign_call_is_correct(&runtime).await;
}

#[tokio::test]
async fn calls_nest_only_as_deep_as_the_runtime_allows() {
    let grants = Grants::new().call_tool("caller").call_tool("calculator");
    let inner = json!({"calls": [{"tool": "calculator", "arguments": {"expression": "1 + 2"}}]});
    let middle = json!({"calls": [{"tool": "caller", "arguments": inner}]});

    // Depth 1: caller -> caller is allowed, the inner caller's call to calculator is not.
    let shallow = builder().grant("caller", grants.clone()).max_call_depth(1).build().await.expect("runtime builds");
    let output = call_tools(&shallow, "depth-1", &[("caller", inner.clone())]).await;
    let nested = &outcomes(&output)[0]["ok"]["outcomes"][0];
    assert_eq!(error_kind(nested), "depth_limit", "{output:#?}");
    assert!(nested["error"]["message"].as_str().unwrap().contains("at most 1 deep"), "{nested}");

    // The default depth (2) allows that, but not one level more.
    let deep = builder().grant("caller", grants).build().await.expect("runtime builds");
    let output = call_tools(&deep, "depth-2", &[("caller", inner)]).await;
    assert_eq!(outcomes(&output)[0]["ok"]["outcomes"][0]["ok"]["value"], json!(3.0), "{output:#?}");
    let output = call_tools(&deep, "depth-3", &[("caller", middle)]).await;
    let innermost = &outcomes(&output)[0]["ok"]["outcomes"][0]["ok"]["outcomes"][0];
    assert_eq!(error_kind(innermost), "depth_limit", "{output:#?}");
    benign_call_is_correct(&deep).await;
}

#[tokio::test]
async fn time_spent_in_nested_calls_counts_against_the_callers_deadline() {
    // The sleeper sleeps 60 s under a 120 s limit of its own; its caller has 500 ms.
    let sleeper = Grants::new().limits(LimitOverrides::new().timeout(std::time::Duration::from_secs(120)));
    let caller =
        Grants::new().call_tool("sleeper").limits(LimitOverrides::new().timeout(std::time::Duration::from_millis(500)));
    let runtime = builder().grant("caller", caller).grant("sleeper", sleeper).build().await.expect("runtime builds");
    let output = call_tools(&runtime, "deadline", &[("sleeper", json!({}))]).await;
    assert_eq!(output.error, Some(toolcell_runtime::CallError::Timeout { limit_ms: 500 }), "{output:#?}");
    assert!(output.usage.duration.as_secs() < 30, "stopped long before the sleeper would wake: {:?}", output.usage);
    benign_call_is_correct(&runtime).await;
}

#[tokio::test]
async fn a_callee_gets_its_own_grants_never_its_callers() {
    let runtime = runtime().await;
    let output = call_tools(&runtime, "grants", &[("env_reader", json!({"name": "API_TOKEN"}))]).await;
    let outcome = &outcomes(&output)[0];
    assert_eq!(error_kind(outcome), "tool_failed", "{outcome}");
    assert!(outcome["error"]["message"].as_str().unwrap().contains("API_TOKEN"), "{outcome}");
    assert!(!output.content.contains("caller-secret-7d1f"), "{}", output.content);
    benign_call_is_correct(&runtime).await;
}

#[tokio::test]
async fn the_host_context_passes_on_and_nested_call_ids_extend_the_callers() {
    let runtime = runtime().await;
    let context = json!({"user": "u-17"}).as_object().unwrap().clone();
    let call = caller_call("ctx", &[("echo", json!({"text": "hi", "count": 1}))]).with_context(context.clone());
    let output = runtime.call(call).await;
    let echoed = &outcomes(&output)[0]["ok"];
    assert_eq!(echoed["host_context"], Value::Object(context), "{output:#?}");
    assert_eq!(echoed["call_id"], "ctx.1");
}

#[tokio::test]
async fn nested_spans_are_children_of_the_callers_span() {
    let runtime = runtime().await;
    let call = caller_call("span-parent", &[("calculator", json!({"expression": "1"}))]);
    let (output, spans) = tool_call_spans("span-parent", runtime.call(call)).await;
    value(&output);
    let nested = spans.iter().find(|span| span["tool_call.id"] == "span-parent.1").expect("the nested call's span");
    assert_eq!(nested["tool.name"], "calculator");
    assert_eq!(nested["parent.tool_call.id"], "span-parent", "{spans:#?}");
}

/// Who called (an MCP server's OAuth caller) is on the call's span and on the spans of the
/// calls it makes, never in its arguments.
#[tokio::test]
async fn the_principal_is_on_the_calls_span_and_its_nested_calls_spans() {
    let runtime = runtime().await;
    let principal = toolcell_runtime::Principal::new(Some("alice".into()), Some("agent-7".into()));
    let call = caller_call("span-principal", &[("calculator", json!({"expression": "1"}))]).with_principal(principal);
    let (output, spans) = tool_call_spans("span-principal", runtime.call(call)).await;
    value(&output);
    assert_eq!(spans.len(), 2, "{spans:#?}");
    for span in &spans {
        assert_eq!(span["user.id"], "alice", "{span:#?}");
        assert_eq!(span["toolcell.client_id"], "agent-7", "{span:#?}");
        assert!(!span["input.value"].contains("alice"), "{span:#?}");
    }
    let (_, anonymous) = tool_call_spans("span-anonymous", runtime.call(caller_call("span-anonymous", &[]))).await;
    assert!(!anonymous[0].contains_key("user.id"), "no principal, no user: {anonymous:#?}");
}

#[test]
fn a_tool_that_calls_no_tools_does_not_import_the_interface() {
    let imports_calls = |path: &str| {
        std::fs::read(path).unwrap().windows(b"toolcell:tool/calls".len()).any(|w| w == b"toolcell:tool/calls")
    };
    assert!(imports_calls(toolcell_tests::CALLER), "the check finds the import where it is");
    assert!(!imports_calls(toolcell_tools::CALCULATOR), "so tools that do not call run on hosts that predate it");
    assert!(!imports_calls(toolcell_tests::ECHO));
}

#[tokio::test]
async fn refused_nested_calls_count_toward_the_budget_of_calls() {
    let limits = LimitOverrides::new().max_nested_calls(3);
    let grants = Grants::new().call_tool("calculator").limits(limits);
    let runtime = builder().grant("caller", grants).build().await.expect("runtime builds");
    // Three calls refused (a tool it may not call), then one it may make: the budget is spent.
    let calls = [
        ("files", json!({"operation": "list", "path": "."})),
        ("echo", json!({"text": "x", "count": 1})),
        ("no_such_tool", json!({})),
        ("calculator", json!({"expression": "1"})),
    ];
    let output = call_tools(&runtime, "refused-budget", &calls).await;
    let outcomes = outcomes(&output);
    let kinds: Vec<&str> = outcomes.iter().map(error_kind).collect();
    assert_eq!(kinds, ["not_allowed", "not_allowed", "not_allowed", "call_limit"], "{output:#?}");
    assert_eq!(output.usage.nested_calls, 4, "every call the tool asked for, refused ones included");
    benign_call_is_correct(&runtime).await;
}

#[tokio::test]
async fn huge_tool_names_and_call_ids_are_cut_before_spans_errors_and_nested_ids() {
    let runtime = runtime().await;
    let huge_name = "n".repeat(1 << 20);
    let huge_id = format!("huge-{}", "i".repeat(1 << 20));
    let max_name = toolcell_runtime::tool::MAX_NAME_CHARS + '…'.len_utf8();
    let max_id = toolcell_runtime::tool::MAX_CALL_ID_BYTES;
    let calls = async {
        // From outside: a tool that does not exist, and a nested call to one (half as long, to
        // fit the caller's arguments limit) from a call with a huge id.
        let unknown = runtime.call(ToolCall::new(huge_id.clone(), huge_name.clone(), json!({}))).await;
        let nested = runtime.call(caller_call(&huge_id, &[(&huge_name[..1 << 19], json!({}))])).await;
        (unknown, nested)
    };
    let ((unknown, nested), spans) = tool_call_spans("huge-", calls).await;
    assert_eq!(kind(&unknown), "unknown_tool");
    assert!(unknown.content.len() < 4096, "{}", unknown.content.len());
    let echoed = (unknown.tool.len(), unknown.call_id.len());
    assert!(echoed.0 <= max_name && echoed.1 <= max_id, "{echoed:?}");
    let outcome = &outcomes(&nested)[0];
    assert_eq!(error_kind(outcome), "not_allowed", "{outcome}");
    assert!(outcome["error"]["message"].as_str().unwrap().len() < 4096, "{outcome}");

    assert_eq!(spans.len(), 3, "the unknown tool's, the caller's and the nested call's");
    for span in &spans {
        for name in ["otel.name", "tool.name"] {
            assert!(span[name].len() <= max_name, "{name}: {} bytes", span[name].len());
        }
        assert!(span["tool_call.id"].len() <= max_id + ".1".len(), "{} bytes", span["tool_call.id"].len());
        let total: usize = span.values().map(String::len).sum();
        assert!(total < 64 * 1024, "a span of {total} bytes");
    }
    let child = spans.iter().find(|span| span.contains_key("parent.tool_call.id")).expect("the nested call's span");
    assert!(child["tool_call.id"].ends_with("….1"), "a cut id, extended: {}", child["tool_call.id"]);
    benign_call_is_correct(&runtime).await;
}
