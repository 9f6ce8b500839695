//! Code mode's two tools over the standard tools: `search` shows each tool exactly as a
//! program sees it, and `execute` runs a program that may call exactly code mode's tools.

use serde_json::{Value, json};
use toolcell_runtime::code_mode::{CodeMode, CodeModeError, EXECUTE, SEARCH};
use toolcell_runtime::formats::python_function;
use toolcell_runtime::policy::{CodeModePolicy, Grants};
use toolcell_runtime::{Runtime, ToolCall};

use crate::common::{runtime, standard_tools, value};

async fn code_mode(settings: CodeModePolicy) -> CodeMode {
    let runtime = standard_tools().code_mode(settings).build().await.expect("runtime builds");
    runtime.code_mode().expect("code mode is on")
}

fn names(result: &Value) -> Vec<&str> {
    result["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn search_shows_every_tool_as_the_program_sees_it() {
    let code_mode = code_mode(CodeModePolicy::new()).await;
    // Each callable tool's signature and docstring, from inside the program.
    let program =
        "import inspect\n{name: [str(inspect.signature(tools[name])), tools[name].__doc__] for name in tools}";
    let output = code_mode.call(ToolCall::new("1", EXECUTE, json!({"code": program}))).await;
    assert_eq!(output.tool, "execute");
    let seen = value(&output)["value"].clone();
    let callable = code_mode.tools().callable();
    assert_eq!(callable.len(), 7, "every standard tool but python");
    assert_eq!(seen.as_object().map(|tools| tools.len()), Some(7), "{seen:#}");
    for tool in callable {
        let function = python_function(tool);
        assert_eq!(seen[&tool.name][0], function.parameters, "{}'s signature", tool.name);
        assert_eq!(seen[&tool.name][1], function.docstring, "{}'s docstring", tool.name);
    }
    let unit_convert = python_function(code_mode.runtime().definition("unit_convert").unwrap());
    assert!(unit_convert.parameters.ends_with(", **more)"), "`from` is a keyword: {}", unit_convert.parameters);
}

#[tokio::test]
async fn search_finds_tools_by_what_they_do() {
    let code_mode = code_mode(CodeModePolicy::new()).await;
    let search = |query: &str, limit: u64| {
        let output =
            code_mode.tools().search_call(&ToolCall::new("s", SEARCH, json!({"query": query, "limit": limit})));
        value(&output)
    };
    assert_eq!(names(&search("convert miles to kilometers", 3))[0], "unit_convert");
    assert_eq!(names(&search("evaluate an arithmetic expression", 3))[0], "calculator");
    assert_eq!(names(&search("match a regular expression pattern", 3))[0], "regex");
    assert_eq!(names(&search("fetch a web page over https", 3))[0], "http_fetch");
    let found = search("query json", 1);
    assert_eq!(names(&found), ["json_query"]);
    let hit = &found["tools"][0];
    assert!(hit["signature"].as_str().unwrap().starts_with("tools.json_query("), "{hit:#}");
    assert!(hit["doc"].as_str().unwrap().contains("Args:"), "{hit:#}");
    assert_eq!(names(&search("", 50)).len(), 7, "an empty query lists them all");
    assert!(!names(&search("", 50)).contains(&"python"), "the program tool is not its own callee");
}

#[tokio::test]
async fn execute_may_call_exactly_code_modes_tools_whatever_the_program_tools_grants() {
    // python's own policy lets it call nothing; code mode lets programs call two tools.
    let code_mode = code_mode(CodeModePolicy::new().tools(["calculator", "unit_convert"])).await;
    let code = r#"
miles = tools.calculator(expression="26.2 * 1")["value"]
km = tools.unit_convert(value=miles, to="kilometer", **{"from": "mile"})["value"]
try:
    tools.regex(operation="find", pattern="a", text="a")
except AttributeError as err:
    refused = str(err)
print(tools)
{"km": round(km, 1), "refused": refused}
"#;
    let output = code_mode.call(ToolCall::new("2", EXECUTE, json!({"code": code}))).await;
    let run = value(&output);
    assert_eq!(run["value"]["km"], 42.2, "{run:#}");
    assert_eq!(run["value"]["refused"], "no tool `regex` may be called here; these may: calculator, unit_convert");
    assert_eq!(run["stdout"], "<tools: calculator, unit_convert>\n");
    assert_eq!(output.usage.nested_calls, 2);

    // Past the `tools` object, the host refuses too.
    let bypass = "from toolcell_tool.calls import call_tool\ncall_tool('regex', {'operation': 'find', 'pattern': 'a', 'text': 'a'})";
    let run = value(&code_mode.call(ToolCall::new("3", EXECUTE, json!({"code": bypass}))).await);
    assert_eq!(run["error"]["type"], "ToolCallError", "{run:#}");
    assert!(run["error"]["message"].as_str().unwrap().contains("regex"), "{run:#}");

    // The same program through python directly gets python's own grants: none.
    let direct = code_mode.runtime().call(ToolCall::new("4", "python", json!({"code": "print(tools)"}))).await;
    assert_eq!(value(&direct)["stdout"], "<tools: none may be called here>\n");

    let unknown = code_mode.call(ToolCall::new("5", "python", json!({"code": "1"}))).await;
    assert!(unknown.content.contains("`search`") && unknown.content.contains("`execute`"), "{}", unknown.content);
}

#[tokio::test]
async fn code_mode_is_off_unless_a_policy_turns_it_on() {
    assert_eq!(runtime().code_mode().unwrap_err(), CodeModeError::Off);
    let without_python = Runtime::builder()
        .component_file(toolcell_tools::DIR.to_owned() + "/calculator.wasm")
        .compile_cache(crate::common::COMPILE_CACHE)
        .code_mode(CodeModePolicy::new())
        .grant("calculator", Grants::new())
        .build()
        .await
        .unwrap();
    let error = without_python.code_mode().unwrap_err();
    assert_eq!(error, CodeModeError::ProgramNotLoaded { program: "python".into() });
    let diagnostics: Vec<String> = without_python.diagnostics().iter().map(ToString::to_string).collect();
    assert!(diagnostics.iter().any(|d| d.contains("code mode runs programs in tool `python`")), "{diagnostics:?}");
}
