//! Isolation, context and stdio: what every call gets from the sandbox. Also checks that
//! every test guest is covered by a test.

use std::time::Duration;

use serde_json::{Map, json};
use toolcell_runtime::{LimitOverrides, Limits, Runtime, ToolCall};

use crate::common::{COMPILE_CACHE, call, runtime, value};

/// The test that covers each guest. `foreach_guest!` turns a guest missing here into a
/// compile error, so no guest is built without being exercised.
#[expect(non_upper_case_globals, reason = "named after the guests")]
mod covered_by {
    pub const abort: &str = "errors::an_abort_is_a_crash";
    pub const annotated: &str = "annotations::a_tool_declares_a_title_and_every_hint";
    pub const bad_output: &str = "errors::output_that_breaks_the_output_schema_is_invalid";
    pub const bad_title: &str = "annotations::a_bad_title_or_contradictory_hints_are_load_diagnostics";
    pub const big_output: &str = "errors::output_over_the_limit_is_discarded";
    pub const big_start: &str = "ready::a_tool_whose_instances_start_big_never_has_one_kept_ready";
    pub const caller: &str = "code_mode::nested_calls_run_under_the_callees_schema_and_report_each_outcome";
    pub const chatty: &str = "guests::stdout_and_stderr_are_captured_and_bounded";
    pub const cli_command: &str = "loading::each_bad_component_becomes_a_diagnostic";
    pub const contradictory_hints: &str = "annotations::a_bad_title_or_contradictory_hints_are_load_diagnostics";
    pub const counter: &str = "guests::no_state_survives_between_calls";
    pub const echo: &str = "guests::the_tool_receives_the_call_id_and_host_context";
    pub const echo_duplicate: &str = "loading::each_bad_component_becomes_a_diagnostic";
    pub const echo_v2: &str = "guests::a_second_version_of_a_tool_answers_as_that_version";
    pub const env_reader: &str = "capabilities::granted_secrets_are_redacted_from_results_errors_and_diagnostics";
    pub const exit_nonzero: &str = "containment::exiting_with_a_failure_status_is_a_crash";
    pub const exit_zero: &str = "containment::exiting_with_status_zero_is_not_a_result";
    pub const failing_job: &str =
        "toolcell-cli mcp::tasks::a_tool_that_requires_a_task_is_refused_to_clients_without_tasks";
    pub const fails_retryably: &str = "errors::tool_failures_carry_the_tools_retryable_flag";
    pub const fd_hog: &str = "containment::open_files_are_bounded_per_call_and_per_runtime";
    pub const fs_escape: &str = "capabilities::reads_outside_the_granted_directory_fail_inside_the_guest";
    pub const fs_write: &str = "capabilities::a_read_only_grant_refuses_writes_and_a_read_write_grant_allows_them";
    pub const greet: &str = "toolcell-cli mcp::tasks::a_quick_call_is_answered_inline_and_a_long_one_becomes_a_task";
    pub const http_fields_bomb: &str = "containment::header_fields_are_bounded_per_set_and_per_call";
    pub const http_flood: &str = "capabilities::requests_in_flight_per_call_are_bounded";
    pub const http_huge_response: &str = "capabilities::a_huge_http_response_is_cut_at_the_cap";
    pub const http_retry_loop: &str = "capabilities::a_loop_of_refused_requests_that_runs_out_of_time_is_a_timeout";
    pub const http_to_loopback: &str = "capabilities::ip_literals_and_localhost_need_an_exact_grant";
    pub const http_unlisted_host: &str = "capabilities::http_to_an_unlisted_host_is_denied_before_it_leaves";
    pub const infinite_loop: &str = "errors::a_busy_loop_is_stopped_by_the_deadline";
    pub const invalid_name: &str = "loading::each_bad_component_becomes_a_diagnostic";
    pub const invalid_schema: &str = "loading::each_bad_component_becomes_a_diagnostic";
    pub const leaky_output: &str = "capabilities::secrets_never_reach_output_schema_violations_in_any_spelling";
    pub const long_description: &str = "loading::each_bad_component_becomes_a_diagnostic";
    pub const many_memories: &str = "pooling::a_tool_needing_more_than_one_slots_share_of_the_pool_is_refused_at_load";
    pub const memory_bomb: &str = "errors::a_memory_bomb_hits_the_memory_limit";
    pub const memory_fault: &str = "errors::a_memory_fault_outside_a_recursion_is_not_taken_for_a_stack_overflow";
    pub const memory_grow_bomb: &str = "containment::growing_memory_directly_hits_the_memory_limit";
    pub const metadata_panics: &str = "loading::each_bad_component_becomes_a_diagnostic";
    pub const non_json_output: &str = "errors::output_that_is_not_json_is_invalid";
    pub const non_object_schema: &str = "loading::each_bad_component_becomes_a_diagnostic";
    pub const panic: &str = "errors::a_panic_is_a_crash_and_its_message_stays_with_the_operator";
    pub const probe: &str = "guests::the_sandbox_grants_nothing";
    pub const refused_then_fails: &str =
        "containment::a_handled_allocation_failure_does_not_turn_a_later_failure_into_memory_limit";
    pub const secret_thief: &str = "egress::the_host_sends_the_secret_on_covered_requests_and_the_tool_never_sees_it";
    pub const rejects_arguments: &str = "errors::a_tool_can_reject_valid_arguments";
    pub const residue: &str = "pooling::no_state_survives_a_reused_slot_under_any_allocator";
    pub const sleeper: &str = "errors::a_guest_blocked_in_a_host_call_is_stopped_by_the_wall_clock";
    pub const slow_compute: &str = "toolcell-cli mcp::tasks::cancelling_a_task_stops_its_sandbox";
    pub const socket_open: &str = "capabilities::sockets_and_name_lookups_are_refused";
    pub const stack_overflow: &str = "errors::stack_overflow_is_a_crash";
    pub const table_bomb: &str = "containment::growing_a_table_hits_the_memory_limit";
    pub const wrong_annotations: &str = "annotations::an_annotations_export_of_the_wrong_type_is_a_load_diagnostic";
}

macro_rules! require_test {
    ($guest:ident) => {
        const _: &str = covered_by::$guest;
    };
}
toolcell_tests::foreach_guest!(require_test);

#[tokio::test]
async fn no_state_survives_between_calls() {
    for _ in 0..5 {
        assert_eq!(value(&call("counter", json!({})).await), json!(1), "a fresh instance for every call");
    }
    let outputs = runtime().call_all((0..6).map(|i| ToolCall::new(format!("c{i}"), "counter", "{}"))).await;
    assert!(outputs.iter().all(|output| value(output) == json!(1)), "{outputs:#?}");
}

#[tokio::test]
async fn the_tool_receives_the_call_id_and_host_context() {
    let mut context = Map::new();
    context.insert("user".into(), json!("ada"));
    context.insert("tenant".into(), json!(7));
    let call =
        ToolCall::new("call_abc", "echo", r#"{"text": "hi", "count": 2, "volume": "loud"}"#).with_context(context);
    let output = runtime().call(call).await;
    let result = value(&output);
    assert_eq!(result["call_id"], "call_abc");
    assert_eq!(result["host_context"], json!({"user": "ada", "tenant": 7}));
    assert_eq!(result["volume"], "loud");
    assert_eq!(result["tags"], json!([]), "an omitted optional argument is its default");
    assert!(output.usage.fuel_consumed > 0);
    assert!(output.usage.peak_memory_bytes > 0);
}

/// `echo_v2` is `echo` (name and the parameters a caller sends) answering otherwise: the
/// replica tests tell versions apart by it.
#[tokio::test]
async fn a_second_version_of_a_tool_answers_as_that_version() {
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::ECHO_V2)
        .compile_cache(crate::common::COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    let output = runtime.call(ToolCall::new("call-1", "echo", r#"{"text": "hi", "count": 2}"#)).await;
    assert_eq!(output.content, r#""echo 2: hihi""#, "a string result, as JSON: {output:?}");
    let v1 = crate::common::runtime().call(ToolCall::new("call-1", "echo", r#"{"text": "hi", "count": 2}"#)).await;
    assert!(v1.error.is_none() && v1.content != output.content, "{v1:?}");
}

#[tokio::test]
async fn the_context_is_not_part_of_the_schema() {
    let definition = runtime().definition("echo").unwrap();
    let properties = definition.parameters["properties"].as_object().unwrap();
    let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["count", "tags", "text", "volume"]);
    assert_eq!(definition.parameters["required"], json!(["text", "count"]));
    assert_eq!(definition.parameters["additionalProperties"], json!(false));
}

#[tokio::test]
async fn stdout_and_stderr_are_captured_and_bounded() {
    // Twenty thousand writes through the host take a fraction of a second, but on a loaded
    // machine they once took past the default 5 s: this test is about the capture's bounds,
    // not its speed, so it has time to spare.
    let limits = Limits::default().with(&LimitOverrides::new().timeout(Duration::from_secs(120)));
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::CHATTY)
        .compile_cache(COMPILE_CACHE)
        .limits(limits)
        .build()
        .await
        .unwrap();
    let call = ToolCall::new("call-1", "chatty", json!({})).with_limits(LimitOverrides::new().max_stdio_bytes(1000));
    let output = runtime.call(call).await;
    assert_eq!(value(&output), json!("done"), "writing past the capture limit does not fail the tool");
    assert_eq!(output.diagnostics.stdout.len(), 1000);
    assert_eq!(output.diagnostics.stderr.len(), 1000);
    assert!(output.diagnostics.stdout.starts_with("stdout line 0\n"));
    assert!(output.diagnostics.stderr.starts_with("stderr line 0\n"));
    assert!(output.diagnostics.dropped_stdio_bytes > 200_000, "{}", output.diagnostics.dropped_stdio_bytes);
    assert!(!output.content.contains("line"), "guest output never reaches the model");
}

#[tokio::test]
async fn the_sandbox_grants_nothing() {
    let seen = value(&call("probe", json!({})).await);
    assert_eq!(seen["env"], json!([]), "no environment variables");
    assert_eq!(seen["args"], json!([]), "no arguments");
    assert_eq!(seen["stdin"], "", "stdin is closed");
    for reach in ["read_root_dir", "read_file", "tcp_connect", "dns_lookup"] {
        assert!(seen[reach].as_str().unwrap().starts_with("denied"), "{reach}: {}", seen[reach]);
    }
}
