//! Over stdio, with `rmcp`'s client and with raw JSON-RPC lines.

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::ErrorCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::common::{ToolsDir, call, error_kind, serve_command, stderr_until_ready, stdio_client, text};

const UNAVAILABLE: &str = "Unavailable on this server: ";
const NOT_GRANTED: &str = "which the operator has not granted it, so every call fails.";

#[tokio::test]
async fn tools_granted_what_they_need_on_the_command_line_are_listed_as_available_and_work() {
    let dir = ToolsDir::with("granted", &[]);
    std::fs::write(dir.path().join("notes.txt"), "granted on the command line\n").unwrap();
    let grant_dir = format!("files={}:/workspace", dir.path().display());
    let client = stdio_client(&["--dir", &grant_dir, "--allow-host", "http_fetch=127.0.0.1"]).await;
    let tools = client.list_all_tools().await.unwrap();
    for tool in &tools {
        let description = tool.description.as_deref().unwrap_or_default();
        assert!(!description.starts_with(UNAVAILABLE), "{}: {description}", tool.name);
    }
    let read =
        client.call_tool(call("files", json!({"operation": "read", "path": "/workspace/notes.txt"}))).await.unwrap();
    assert_eq!(read.is_error, Some(false), "{read:?}");
    assert!(text(&read).contains("granted on the command line"), "{read:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_operator_is_told_which_tools_miss_a_grant_and_the_flag_that_grants_it() {
    let mut child =
        serve_command(&[]).stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let said = stderr_until_ready(&mut child).await;
    child.kill().await.unwrap();
    let files = said.iter().find(|line| line.contains("`files`")).unwrap_or_else(|| panic!("{said:#?}"));
    assert!(files.contains("--dir files=HOST_DIR:/workspace"), "{files}");
    let fetch = said.iter().find(|line| line.contains("`http_fetch`")).unwrap_or_else(|| panic!("{said:#?}"));
    assert!(fetch.contains("--allow-host http_fetch=HOST"), "{fetch}");
    assert_eq!(said.iter().filter(|line| line.contains("listed as unavailable")).count(), 2, "{said:#?}");
}

#[tokio::test]
async fn a_tools_folder_is_served_beside_the_builtin_tools() {
    let dir = ToolsDir::with("beside", &[toolcell_tests::ECHO]);
    let client = stdio_client(&["--tools-dir", dir.path().to_str().unwrap()]).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        ["calculator", "datetime", "echo", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"]
    );
    let echoed = client.call_tool(call("echo", json!({"text": "mine", "count": 2}))).await.unwrap();
    assert_eq!(echoed.is_error, Some(false), "{echoed:?}");
    let computed = client.call_tool(call("calculator", json!({"expression": "6 * 7"}))).await.unwrap();
    assert_eq!(computed.structured_content, Some(json!({"value": 42.0})));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn lists_every_tool_in_name_order_with_the_standard_form_of_its_schemas() {
    let client = stdio_client(&[]).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        ["calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"]
    );

    let list = |args: &[&str]| -> Value {
        let listed = std::process::Command::new(crate::common::TOOLCELL)
            .arg("list")
            .args(args)
            .env_remove("TOOLCELL_TOOLS_DIR")
            .env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"))
            .output()
            .unwrap();
        serde_json::from_slice(&listed.stdout).unwrap()
    };
    let (listed, mcp) = (list(&["--json"]), list(&["--format", "mcp"]));
    for ((tool, definition), mcp) in tools.iter().zip(listed["tools"].as_array().unwrap()).zip(mcp.as_array().unwrap())
    {
        // The schemas as `list --format mcp` prints them: the tool's own, in standard JSON
        // Schema (see `schemas.rs`).
        assert_eq!(Value::Object((*tool.input_schema).clone()), mcp["inputSchema"], "{}", tool.name);
        assert_eq!(definition["parameters"]["required"], mcp["inputSchema"]["required"], "{}", tool.name);
        // Granted nothing here, `files` and `http_fetch` say first that they cannot run.
        let description = definition["description"].as_str().unwrap();
        let expected = match tool.name.as_ref() {
            "files" => format!("{UNAVAILABLE}it needs a directory at /workspace, {NOT_GRANTED} {description}"),
            "http_fetch" => {
                format!("{UNAVAILABLE}it needs a host to send HTTP requests to, {NOT_GRANTED} {description}")
            }
            _ => description.to_owned(),
        };
        assert_eq!(tool.description.as_deref(), Some(expected.as_str()));
        assert_eq!(tool.title.as_deref(), definition["title"].as_str(), "{}", tool.name);
        let annotations = serde_json::to_value(tool.annotations.as_ref().unwrap()).unwrap();
        assert_eq!(annotations, definition["annotations"], "{}", tool.name);
        // Every standard tool returns objects; `files` declares a union of them, which MCP
        // gets with `"type": "object"` added at the root.
        assert_eq!(mcp["outputSchema"]["type"], "object", "{}", tool.name);
        let output_schema = tool.output_schema.as_ref().map(|schema| Value::Object((**schema).clone()));
        assert_eq!(output_schema.as_ref(), Some(&mcp["outputSchema"]), "{}", tool.name);
    }
    let calculator = serde_json::to_value(&tools[0]).unwrap();
    assert_eq!(calculator["title"], "Calculator");
    assert_eq!(
        calculator["annotations"],
        json!({"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(tools[3].annotations.as_ref().unwrap().open_world_hint, Some(true), "http_fetch reaches the web");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_success_is_text_plus_structured_content() {
    let client = stdio_client(&[]).await;
    let result = client.call_tool(call("calculator", json!({"expression": "2 * (3 + 4)"}))).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(serde_json::from_str::<Value>(&text(&result)).unwrap(), json!({"value": 14.0}));
    assert_eq!(result.structured_content, Some(json!({"value": 14.0})));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_failure_a_model_or_tool_causes_is_a_result_with_the_runtimes_message() {
    let dir = ToolsDir::with(
        "failures",
        &[
            toolcell_tests::ECHO,
            toolcell_tests::REJECTS_ARGUMENTS,
            toolcell_tests::FAILS_RETRYABLY,
            toolcell_tests::PANIC,
            toolcell_tests::MEMORY_BOMB,
            toolcell_tests::NON_JSON_OUTPUT,
            toolcell_tests::BIG_OUTPUT,
            toolcell_tests::STACK_OVERFLOW,
        ],
    );
    let client = stdio_client(&["--tools-dir", dir.path().to_str().unwrap()]).await;
    let cases = [
        (call("echo", json!({"text": "hi"})), "invalid_arguments", "`count` is missing"),
        (call("echo", json!({"text": "hi", "count": 99})), "invalid_arguments", "/count"),
        (call("rejects_arguments", json!({"number": 7})), "rejected_arguments", "`number` must be 42"),
        (call("fails_retryably", json!({"transient": true})), "tool_failed", "calling again may succeed"),
        (call("panic", json!({})), "crashed", "panicked"),
        (call("memory_bomb", json!({})), "memory_limit", "more memory than its limit"),
        (call("non_json_output", json!({})), "invalid_output", "invalid result"),
        (call("big_output", json!({"bytes": 2_000_000})), "output_too_large", "over the limit"),
        (call("stack_overflow", json!({})), "crashed", "overflowed its stack"),
    ];
    for (request, kind, says) in cases {
        let tool = request.name.clone();
        let result = client.call_tool(request).await.unwrap_or_else(|err| panic!("{tool}: not a result: {err}"));
        assert_eq!(error_kind(&result), kind, "{tool}");
        let message = text(&result);
        assert!(message.contains(says), "{tool}: {message}");
        assert!(result.structured_content.is_none(), "{tool}: an error has no structured content");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unknown_tool_is_an_invalid_params_error_that_suggests_the_right_name() {
    let client = stdio_client(&[]).await;
    let error = client.call_tool(call("calculater", json!({}))).await.unwrap_err();
    let rmcp::ServiceError::McpError(error) = error else { panic!("a JSON-RPC error, not {error:?}") };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(error.message.contains("Did you mean `calculator`?"), "{}", error.message);
    assert_eq!(error.data.unwrap()["kind"], "unknown_tool");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_json_rpc_request_id_is_the_call_id() {
    let dir = ToolsDir::with("call-id", &[toolcell_tests::ECHO]);
    let client = stdio_client(&["--tools-dir", dir.path().to_str().unwrap()]).await;
    let first = client.call_tool(call("echo", json!({"text": "a", "count": 1}))).await.unwrap();
    let second = client.call_tool(call("echo", json!({"text": "b", "count": 1}))).await.unwrap();
    let id = |result: &rmcp::model::CallToolResult| {
        result.structured_content.as_ref().unwrap()["call_id"].as_str().unwrap().parse::<u64>().unwrap()
    };
    assert_eq!(id(&second), id(&first) + 1, "rmcp numbers its requests 1, 2, 3...");
    client.cancel().await.unwrap();
}

/// Raw lines, so nothing in a client library can hide a stray byte on stdout.
#[tokio::test]
async fn stdout_carries_only_protocol_messages_and_the_server_exits_when_stdin_closes() {
    let dir = ToolsDir::with("stdout", &[toolcell_tests::CHATTY]);
    let mut child = serve_command(&["--tools-dir", dir.path().to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "chatty", "arguments": {}}}),
    ];
    for message in messages {
        stdin.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut replies = Vec::new();
    while replies.len() < 2 {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line()).await.unwrap().unwrap().unwrap();
        let reply: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON-RPC on stdout: {line}"));
        assert_eq!(reply["jsonrpc"], "2.0", "{line}");
        replies.push(reply);
    }
    assert_eq!(replies[0]["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(replies[1]["result"]["content"][0]["text"], "\"done\"");

    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.expect("exits on EOF").unwrap();
    assert!(status.success(), "{status}");
    assert_eq!(lines.next_line().await.unwrap(), None, "nothing after the replies");
}

/// The server's replies to `requests` (after the handshake) read from a file, in the order it
/// wrote them, once it exits at the file's end.
async fn replies_from_a_file(name: &str, requests: &[Value]) -> Vec<Value> {
    let file = std::env::temp_dir().join(format!("toolcell-stdio-{name}-{}.jsonl", std::process::id()));
    let handshake = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "file", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    let lines: Vec<String> = handshake.iter().chain(requests).map(Value::to_string).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let child = serve_command(&[])
        .stdin(std::fs::File::open(&file).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output()).await.unwrap().unwrap();
    std::fs::remove_file(&file).unwrap();
    assert!(output.status.success(), "{}", output.status);
    String::from_utf8(output.stdout).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

/// Requests from a file (not a pipe) are all answered before the server exits at its end.
#[tokio::test]
async fn requests_from_a_file_are_all_answered_before_the_server_exits() {
    let replies = replies_from_a_file(
        "requests",
        &[
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "calculator", "arguments": {"expression": "1 + 1"}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "calculator", "arguments": {"expression": "2 + 2"}}}),
        ],
    )
    .await;
    let mut values: Vec<(i64, Value)> = replies
        .iter()
        .map(|reply| (reply["id"].as_i64().unwrap(), reply["result"]["structuredContent"]["value"].clone()))
        .collect();
    values.sort_by_key(|(id, _)| *id);
    assert_eq!(values, [(1, Value::Null), (2, json!(2.0)), (3, json!(4.0))]);
}

#[tokio::test]
async fn an_unknown_method_is_answered_with_what_the_server_serves() {
    let replies = replies_from_a_file(
        "unknown",
        &[
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/lisst"}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "resources/list"}),
        ],
    )
    .await;
    let error = |id: i64| replies.iter().find(|reply| reply["id"] == id).unwrap()["error"].clone();
    assert_eq!(error(2)["code"], -32601);
    assert_eq!(
        error(2)["message"],
        "`tools/lisst` is not a method of this server: toolcell serves tools, through `initialize`, `ping`, \
         `tools/list`, `tools/call`. Did you mean `tools/list`?"
    );
    assert_eq!(error(2)["data"], json!({"method": "tools/lisst"}));
    assert_eq!(error(3)["code"], -32601);
    assert!(error(3)["message"].as_str().unwrap().starts_with("`resources/list` is not a method of this server"));
}

/// The server reads and writes pipes without blocking threads, which needs `O_NONBLOCK` on
/// them; the flag belongs to the pipe's file description, which the process that started
/// the server may share, so the server puts it back when it exits.
#[cfg(unix)]
#[tokio::test]
async fn the_server_leaves_its_pipes_as_it_found_them() {
    use std::io::Write as _;

    use rustix::fs::{OFlags, fcntl_getfl};

    let (stdin_reader, mut stdin_writer) = std::io::pipe().unwrap();
    let (stdout_reader, stdout_writer) = std::io::pipe().unwrap();
    // Copies of the ends the server gets: the same file descriptions, so the same flags.
    let (servers_stdin, servers_stdout) = (stdin_reader.try_clone().unwrap(), stdout_writer.try_clone().unwrap());
    let mut child = serve_command(&[]).stdin(stdin_reader).stdout(stdout_writer).stderr(Stdio::null()).spawn().unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pipes", "version": "0"}}});
    writeln!(stdin_writer, "{initialize}").unwrap();
    let mut replies = std::io::BufReader::new(stdout_reader);
    let mut reply = String::new();
    std::io::BufRead::read_line(&mut replies, &mut reply).unwrap();
    assert!(reply.contains("\"protocolVersion\""), "{reply}");
    assert!(fcntl_getfl(&servers_stdin).unwrap().contains(OFlags::NONBLOCK), "served without blocking threads");

    drop(stdin_writer);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.expect("exits on EOF").unwrap();
    assert!(status.success(), "{status}");
    assert!(!fcntl_getfl(&servers_stdin).unwrap().contains(OFlags::NONBLOCK), "stdin is blocking again");
    assert!(!fcntl_getfl(&servers_stdout).unwrap().contains(OFlags::NONBLOCK), "stdout is blocking again");
}

/// rmcp logs every request at `debug`, arguments and all, and its responses: with
/// `TOOLCELL_LOG=debug` no line carries the secret granted to a tool, plain or escaped.
#[tokio::test]
async fn debug_logs_carry_no_granted_secret() {
    let secret = "log-secret-5e8a1f";
    let dir = ToolsDir::with("debug-log", &[toolcell_tests::ENV_READER]);
    std::fs::write(
        dir.path().join("toolcell.toml"),
        format!("[tools.env_reader.env]\nAPI_TOKEN = {{ secret = \"{secret}\" }}\n"),
    )
    .unwrap();
    // `\u006c` is `l`: the second call's arguments carry the secret, though not its text.
    let escaped = format!("\\u006c{}", &secret[1..]);
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "file", "version": "0"}}})
        .to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "env_reader", "arguments": {"name": secret}}})
        .to_string(),
        format!(
            r#"{{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {{"name": "env_reader", "arguments": {{"name": "{escaped}", "fail": true}}}}}}"#
        ),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
               "params": {"name": "env_reader", "arguments": {"name": "API_TOKEN"}}})
        .to_string(),
    ];
    let requests = dir.path().join("requests.jsonl");
    std::fs::write(&requests, lines.join("\n") + "\n").unwrap();
    let child = serve_command(&["--tools-dir", dir.path().to_str().unwrap()])
        .env("TOOLCELL_LOG", "debug")
        .stdin(std::fs::File::open(&requests).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output()).await.unwrap().unwrap();
    assert!(output.status.success(), "{}", output.status);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.lines().count(), 4, "every request answered: {stdout}");
    assert!(stdout.contains("token=[REDACTED]"), "{stdout}");
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(log.contains("received request"), "the debug log is on: {log}");
    assert!(log.contains("[REDACTED]"), "{log}");
    assert!(!log.contains(&secret[1..]), "neither plain nor escaped: {log}");
}

/// A call whose request carries a progress token hears each line its tool prints while it
/// runs, as `notifications/progress` before the result; a call without one hears nothing.
#[tokio::test]
async fn a_call_with_a_progress_token_streams_what_the_program_prints_before_its_result() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

    let code = "print('step 1')\nprint('step 2', flush=True)\n6 * 7";
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "python", "arguments": {"code": code}, "_meta": {"progressToken": "p-1"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "python", "arguments": {"code": code}}}),
    ];
    let mut child =
        serve_command(&[]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for request in &requests {
        stdin.write_all(format!("{request}\n").as_bytes()).await.unwrap();
    }
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut replies: Vec<Value> = Vec::new();
    let answered = |replies: &[Value]| [2, 3].iter().all(|id| replies.iter().any(|reply| reply["id"] == *id));
    while !answered(&replies) {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line()).await.unwrap().unwrap().unwrap();
        replies.push(serde_json::from_str(&line).unwrap());
    }
    drop(stdin);
    child.kill().await.unwrap();

    let progress: Vec<(usize, &Value)> = replies
        .iter()
        .enumerate()
        .filter(|(_, reply)| reply["method"] == "notifications/progress")
        .map(|(at, reply)| (at, &reply["params"]))
        .collect();
    let said: Vec<(&Value, &Value, &Value)> = progress
        .iter()
        .map(|(_, params)| (&params["progressToken"], &params["progress"], &params["message"]))
        .collect();
    assert_eq!(
        said,
        [(&json!("p-1"), &json!(1.0), &json!("step 1")), (&json!("p-1"), &json!(2.0), &json!("step 2"))],
        "only the call with a token hears its progress: {replies:#?}"
    );
    let result = replies.iter().position(|reply| reply["id"] == 2).unwrap();
    assert!(progress.iter().all(|(at, _)| *at < result), "progress comes before the result: {replies:#?}");
    assert_eq!(replies[result]["result"]["structuredContent"]["stdout"], "step 1\nstep 2\n");
}

/// `serve --denials FILE`: a refused request is written there, and logged at `warn` with the
/// narrowest rule that would allow it; the secret the host sends for the tool is in neither.
#[tokio::test]
async fn a_refused_request_is_logged_with_the_rule_that_would_allow_it_and_written_to_the_denials_file() {
    let secret = "denials-secret-4c1e9b";
    let dir = ToolsDir::with("denials", &[]);
    std::fs::write(
        dir.path().join("toolcell.toml"),
        format!(
            "[tools.http_fetch.secrets]\nTOKEN = {{ secret = \"{secret}\" }}\n[[tools.http_fetch.http]]\nhost = \
             \"http://127.0.0.1:9\"\nmethods = [\"GET\"]\npaths = [\"/api/**\"]\nheaders = {{ Authorization = \
             \"Bearer {{secret:TOKEN}}\" }}\n"
        ),
    )
    .unwrap();
    let denials = dir.path().join("../denials-serve.jsonl");
    let _ = std::fs::remove_file(&denials);
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "file", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "http_fetch", "arguments": {"url": "http://127.0.0.1:9/admin/users"}}}),
    ];
    let requests = dir.path().join("../denials-requests.jsonl");
    std::fs::write(&requests, lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n") + "\n").unwrap();
    let child = serve_command(&["--tools-dir", dir.path().to_str().unwrap(), "--denials", denials.to_str().unwrap()])
        .env("TOOLCELL_LOG", "warn")
        .stdin(std::fs::File::open(&requests).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output()).await.unwrap().unwrap();
    assert!(output.status.success(), "{}", output.status);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("http_denied"), "{stdout}");
    let log = String::from_utf8_lossy(&output.stderr);
    let rule = r#"{ host = \"127.0.0.1:9\", methods = [\"GET\"], paths = [\"/admin/users\"] }"#;
    assert!(log.contains("HTTP request denied") && log.contains(&format!("add {rule}")), "{log}");
    let written = std::fs::read_to_string(&denials).unwrap();
    let denial: Value = serde_json::from_str(written.lines().next().unwrap()).unwrap();
    assert_eq!(denial["tool"], "http_fetch");
    assert_eq!(denial["rule"], r#"{ host = "127.0.0.1:9", methods = ["GET"], paths = ["/admin/users"] }"#);
    for said in [&*stdout, &*log, &written] {
        assert!(!said.contains(secret), "{said}");
    }
    let _ = std::fs::remove_file(&denials);
    let _ = std::fs::remove_file(&requests);
}
