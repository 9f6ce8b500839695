//! `toolcell serve --code-mode`: `search` and `execute` in place of the tools, or beside them,
//! over stdio with `rmcp`'s client.

use serde_json::json;

use crate::common::{call, serve_command, stdio_client, text};

fn names(tools: &[rmcp::model::Tool]) -> Vec<&str> {
    tools.iter().map(|tool| tool.name.as_ref()).collect()
}

#[tokio::test]
async fn code_mode_only_lists_two_tools_and_reaches_the_others_through_programs() {
    let client = stdio_client(&["--code-mode"]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(names(&tools), ["search", "execute"]);
    let execute = tools.iter().find(|tool| tool.name == "execute").unwrap();
    assert!(execute.description.as_deref().unwrap().contains("7 tools may be called"), "{execute:?}");
    assert_eq!(execute.input_schema.get("required"), Some(&json!(["code"])), "python's parameters");

    let found = client.call_tool(call("search", json!({"query": "arithmetic expression", "limit": 1}))).await.unwrap();
    let hit = &found.structured_content.as_ref().unwrap()["tools"][0];
    assert_eq!(hit["name"], "calculator", "{found:?}");
    assert!(hit["signature"].as_str().unwrap().starts_with("tools.calculator(expression: str"), "{hit}");

    let program = "r = tools.calculator(expression='6 * 7')['value']\nprint(tools)\nr";
    let ran = client.call_tool(call("execute", json!({"code": program}))).await.unwrap();
    let run = ran.structured_content.clone().unwrap();
    assert_eq!((&run["ok"], &run["value"]), (&json!(true), &json!(42.0)), "{ran:?}");
    assert!(run["stdout"].as_str().unwrap().starts_with("<tools: calculator, datetime, files, http_fetch"), "{run}");
    assert!(!run["stdout"].as_str().unwrap().contains("python"), "the program tool does not call itself: {run}");

    // The folder's tools are not callable by name: a client cannot step around code mode.
    let refused = client.call_tool(call("calculator", json!({"expression": "1"}))).await.unwrap_err();
    assert!(refused.to_string().contains("Available tools: `search`, `execute`"), "{refused}");
    let refused = client.call_tool(call("python", json!({"code": "1"}))).await.unwrap_err();
    assert!(refused.to_string().contains("no tool named `python`"), "{refused}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn code_mode_also_lists_the_tools_too_and_the_policy_says_what_programs_may_call() {
    let policy = std::env::temp_dir().join(format!("toolcell-code-mode-policy-{}.toml", std::process::id()));
    std::fs::write(&policy, "[code_mode]\ntools = [\"calculator\", \"unit_convert\"]\n").unwrap();
    let client = stdio_client(&["--code-mode", "also", "--policy", policy.to_str().unwrap()]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(names(&tools).len(), 10, "eight tools and code mode's two: {:?}", names(&tools));
    let marked: Vec<&str> = tools
        .iter()
        .filter(|tool| meta(tool, "toolcell/allowedCallers") == Some(json!(["direct", "programmatic"])))
        .map(|tool| tool.name.as_ref())
        .collect();
    assert_eq!(marked, ["calculator", "unit_convert"], "exactly what programs may call");
    assert!(tools.iter().all(|tool| meta(tool, "toolcell/deferLoading").is_none()), "nothing deferred unless asked");
    let listed = client.call_tool(call("search", json!({"query": "", "limit": 50}))).await.unwrap();
    let found: Vec<String> = listed.structured_content.unwrap()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(found, ["calculator", "unit_convert"]);
    let program = "try:\n    tools.regex(operation='find', pattern='a', text='a')\nexcept AttributeError as err:\n    said = str(err)\nsaid";
    let ran = client.call_tool(call("execute", json!({"code": program}))).await.unwrap();
    assert_eq!(
        ran.structured_content.unwrap()["value"],
        "no tool `regex` may be called here; these may: calculator, unit_convert"
    );
    // Called directly, the tools keep their own grants.
    let direct =
        client.call_tool(call("regex", json!({"operation": "find", "pattern": "a", "text": "a"}))).await.unwrap();
    assert_eq!(direct.is_error, Some(false), "{direct:?}");
    client.cancel().await.unwrap();
    let _ = std::fs::remove_file(policy);
}

/// The `_meta` entry `key` of a listed tool.
fn meta(tool: &rmcp::model::Tool, key: &str) -> Option<serde_json::Value> {
    tool.meta.as_ref()?.0.get(key).cloned()
}

#[tokio::test]
async fn deferred_tools_are_marked_and_code_modes_own_never_are() {
    let client = stdio_client(&["--code-mode", "also", "--defer-loading"]).await;
    let tools = client.list_all_tools().await.unwrap();
    let deferred: Vec<&str> = tools
        .iter()
        .filter(|tool| meta(tool, "toolcell/deferLoading") == Some(json!(true)))
        .map(|tool| tool.name.as_ref())
        .collect();
    assert_eq!(
        deferred,
        ["calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"]
    );
    let execute = tools.iter().find(|tool| tool.name == "execute").unwrap();
    assert_eq!(
        execute.meta.as_ref().map(|meta| json!(meta.0)),
        Some(json!({"anthropic/alwaysLoad": true})),
        "search and execute are how a model finds the rest: kept loaded where a client defers by default"
    );
    let python = tools.iter().find(|tool| tool.name == "python").unwrap();
    assert_eq!(meta(python, "toolcell/allowedCallers"), None, "programs do not call the program tool");
    client.cancel().await.unwrap();

    let client = stdio_client(&["--defer-loading", "regex,files"]).await;
    let tools = client.list_all_tools().await.unwrap();
    let marks: Vec<(&str, Option<serde_json::Value>)> =
        tools.iter().map(|tool| (tool.name.as_ref(), tool.meta.as_ref().map(|meta| json!(meta.0)))).collect();
    let (deferred, loaded) =
        (Some(json!({"toolcell/deferLoading": true})), Some(json!({"anthropic/alwaysLoad": true})));
    let expected: Vec<(&str, Option<serde_json::Value>)> = marks
        .iter()
        .map(|(name, _)| (*name, if ["files", "regex"].contains(name) { deferred.clone() } else { loaded.clone() }))
        .collect();
    assert_eq!(marks, expected, "no code mode, no allowedCallers");
    client.cancel().await.unwrap();

    let client = stdio_client(&[]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|tool| tool.meta.is_none()), "nothing asked, nothing marked");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn with_strict_schemas_execute_takes_its_inputs_as_json_text() {
    let client = stdio_client(&["--code-mode", "--schemas", "strict"]).await;
    let tools = client.list_all_tools().await.unwrap();
    let execute = tools.iter().find(|tool| tool.name == "execute").unwrap();
    assert_eq!(execute.input_schema.get("required"), Some(&json!(["code", "inputs"])), "strict: every property");
    let arguments = json!({"code": "inputs['a'] + 1", "inputs": "{\"a\": 41}"});
    let ran = client.call_tool(call("execute", arguments)).await.unwrap();
    assert_eq!(ran.structured_content.as_ref().unwrap()["value"], 42, "{}", text(&ran));
    let search =
        client.call_tool(call("search", json!({"query": "regex", "limit": null, "detail": null}))).await.unwrap();
    assert_eq!(search.structured_content.unwrap()["tools"][0]["name"], "regex");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_operator_is_told_what_code_mode_serves() {
    use std::process::Stdio;
    let mut child = serve_command(&["--code-mode"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said = crate::common::stderr_until_ready(&mut child).await;
    child.kill().await.unwrap();
    let line = said.iter().find(|line| line.contains("code mode:")).unwrap_or_else(|| panic!("{said:#?}"));
    assert!(line.contains("programs run in `python` and may call 7 tools: calculator, datetime"), "{line}");
}
