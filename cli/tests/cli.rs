//! The `toolcell` binary end to end.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};

fn toolcell() -> Command {
    let mut command = Command::cargo_bin("toolcell").unwrap();
    command.env_remove("TOOLCELL_TOOLS_DIR");
    command.env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"));
    command
}

/// Runs `toolcell invoke ...` and returns (exit code, printed ToolOutput).
fn invoke(args: &[&str]) -> (i32, Value) {
    let output = toolcell().arg("invoke").args(args).output().unwrap();
    let printed: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("stdout is a ToolOutput ({err}): {}", String::from_utf8_lossy(&output.stdout)));
    (output.status.code().unwrap(), printed)
}

#[test]
fn list_shows_the_built_in_tools() {
    toolcell()
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("NAME"))
        .stdout(predicate::str::contains("calculator"))
        .stdout(predicate::str::contains("unit_convert"));
}

#[test]
fn list_json_has_definitions_and_diagnostics() {
    let output = toolcell().args(["list", "--json"]).output().unwrap();
    assert!(output.status.success());
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> =
        listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["calculator", "datetime", "json_query", "regex", "unit_convert"]);
    assert_eq!(listed["diagnostics"], json!([]));
}

#[test]
fn list_warns_about_components_that_did_not_load() {
    let dir = std::env::temp_dir().join(format!("toolcell-cli-list-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(toolcell_tests::ECHO, dir.join("echo.wasm")).unwrap();
    std::fs::write(dir.join("broken.wasm"), b"nope").unwrap();
    toolcell()
        .args(["list", "--tools-dir"])
        .arg(&dir)
        .assert()
        .success()
        .stdout(predicate::str::contains("echo"))
        .stderr(predicate::str::contains("warning: not loaded:").and(predicate::str::contains("broken.wasm")));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn schema_prints_the_definition() {
    let output = toolcell().args(["schema", "calculator", "--json"]).output().unwrap();
    assert!(output.status.success());
    let definition: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(definition["name"], "calculator");
    assert_eq!(definition["parameters"]["type"], "object");

    toolcell()
        .args(["schema", "calculator"])
        .assert()
        .success()
        .stdout(predicate::str::contains("expression (string, required)"));
}

#[test]
fn schema_of_an_unknown_tool_is_a_usage_error() {
    toolcell()
        .args(["schema", "calculater"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no tool named `calculater`").and(predicate::str::contains("calculator")));
}

#[test]
fn invoke_prints_the_output_and_exits_zero() {
    let (code, output) = invoke(&["calculator", r#"{"expression": "2 * (3 + 4)"}"#]);
    assert_eq!(code, 0);
    assert_eq!(output["is_error"], false);
    assert_eq!(serde_json::from_str::<Value>(output["content"].as_str().unwrap()).unwrap()["value"], json!(14.0));
    assert_eq!(output["call_id"], "cli");
    assert!(output["usage"]["fuel_consumed"].as_u64().unwrap() > 0);
}

#[test]
fn invoke_a_failing_call_exits_one_with_the_error() {
    let (code, output) = invoke(&["calculator", r#"{"expresion": "1"}"#]);
    assert_eq!(code, 1);
    assert_eq!(output["is_error"], true);
    assert_eq!(output["error"]["kind"], "invalid_arguments");
    assert_eq!(output["error"]["retryable"], true);
}

#[test]
fn invoke_an_unknown_tool_shows_what_the_model_would_get() {
    let (code, output) = invoke(&["calculater", r#"{"expression": "1"}"#]);
    assert_eq!(code, 1);
    assert_eq!(output["error"]["kind"], "unknown_tool");
    assert_eq!(output["error"]["closest"], json!(["calculator"]));
}

#[test]
fn invoke_reads_arguments_from_stdin_and_from_a_file() {
    let output =
        toolcell().args(["invoke", "calculator", "-"]).write_stdin(r#"{"expression": "10 / 4"}"#).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("2.5"));

    let file = std::env::temp_dir().join(format!("toolcell-cli-args-{}.json", std::process::id()));
    std::fs::write(&file, r#"{"expression": "sqrt(16)"}"#).unwrap();
    let (code, output) = invoke(&["calculator", "--args-file", file.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(output["content"].as_str().unwrap().contains('4'));
    std::fs::remove_file(file).unwrap();
}

#[test]
fn invoke_a_component_file_with_context_and_id() {
    let (code, output) = invoke(&[
        toolcell_tests::ECHO,
        r#"{"text": "hi", "count": 1}"#,
        "--context",
        r#"{"user": "ada"}"#,
        "--id",
        "c7",
    ]);
    assert_eq!(code, 0, "{output:#}");
    let result: Value = serde_json::from_str(output["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["call_id"], "c7");
    assert_eq!(result["host_context"], json!({"user": "ada"}));
}

#[test]
fn invoke_applies_limits_from_the_command_line() {
    let (code, output) = invoke(&[toolcell_tests::INFINITE_LOOP, "--timeout", "200ms", "--fuel", "1000000000000"]);
    assert_eq!(code, 1);
    assert_eq!(output["error"], json!({"kind": "timeout", "limit_ms": 200, "retryable": false}));

    let (_, output) = invoke(&[toolcell_tests::INFINITE_LOOP, "--fuel", "1000000", "--timeout", "30s"]);
    assert_eq!(output["error"]["kind"], "fuel_exhausted");

    let (_, output) = invoke(&[toolcell_tests::MEMORY_BOMB, "--memory", "8MiB"]);
    assert_eq!(output["error"]["kind"], "memory_limit");
    assert_eq!(output["error"]["limit_bytes"], 8 << 20);
}

#[test]
fn arguments_that_are_not_utf8_are_a_usage_error() {
    toolcell()
        .args(["invoke", "calculator", "-"])
        .write_stdin(b"{\"expression\": \"\xff\xfe\"}".to_vec())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("UTF-8"));
}

#[test]
fn usage_errors_exit_two() {
    toolcell().args(["invoke", "calculator", "--timeout", "soon"]).assert().code(2);
    toolcell()
        .args(["invoke", "calculator", "--context", "[1]"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--context"));
    toolcell().args(["invoke", "missing.wasm"]).assert().code(2).stderr(predicate::str::contains("missing.wasm"));
    toolcell()
        .args(["list", "--tools-dir", "/nonexistent/toolcell"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/toolcell"));
    toolcell().arg("frobnicate").assert().code(2);
}
