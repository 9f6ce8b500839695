//! Code mode's approvals: a program stops at a call that waits for a person, and resumes by
//! replay once they decide: the calls before the pause are answered from the token (they ran
//! once), the approved call runs once, a denied one is an exception the program may catch.

use serde_json::json;
use toolcell_runtime::code_mode::{CodeMode, Decision, EXECUTE, ResumeError};
use toolcell_runtime::policy::{CodeModePolicy, EnvGrant, Grants};
use toolcell_runtime::toolset::{BoxFuture, Interceptor, Verdict};
use toolcell_runtime::{Arguments, CallError, Runtime, RuntimeBuilder, ToolCall, ToolDefinition, ToolOutput};

use crate::common::{standard_tools, value};

/// Three calls; the second (calculator) waits for approval.
const PROGRAM: &str = "first = tools.json_query(document={'a': 1}, query='$.a')['matches'][0]['value']\n\
    try:\n    second = tools.calculator(expression=f'{first} + 1')['value']\n\
    except ToolCallError as err:\n    second = err.kind\n\
    third = tools.json_query(document={'b': 2}, query='$.b')['matches'][0]['value']\n\
    [first, second, third]";

const KEY: [u8; 32] = [7; 32];

fn builder(approve_calculator: bool) -> RuntimeBuilder {
    standard_tools()
        .code_mode(CodeModePolicy::new().tools(["json_query", "calculator"]))
        .grant("calculator", Grants::new().approve(approve_calculator))
        .resume_key(KEY)
}

async fn code_mode(approve_calculator: bool) -> CodeMode {
    builder(approve_calculator).build().await.expect("runtime builds").code_mode().expect("code mode")
}

fn calls(runtime: &Runtime, tool: &str) -> u64 {
    runtime.metrics().tools.get(tool).map_or(0, |tool| tool.calls)
}

/// Runs PROGRAM to its pause: the resume token.
async fn paused(code_mode: &CodeMode, code: &str) -> String {
    let output = code_mode.call(ToolCall::new("exec-1", EXECUTE, json!({"code": code}))).await;
    match output.error {
        Some(CallError::ApprovalRequired { tool, arguments, resume_token }) => {
            assert_eq!((tool.as_str(), arguments.as_str()), ("calculator", "{\"expression\": \"1 + 1\"}"));
            assert!(output.content.starts_with("The program paused before calling `calculator`"), "{}", output.content);
            resume_token
        }
        other => panic!("{other:?}: {}", output.content),
    }
}

#[tokio::test]
async fn an_approved_call_runs_once_and_the_program_ends_as_an_unapproved_run_does() {
    let unapproved = code_mode(false).await;
    let plain = value(&unapproved.call(ToolCall::new("plain", EXECUTE, json!({"code": PROGRAM}))).await);
    assert_eq!(plain["value"], json!([1, 2.0, 2]), "{plain:#}");

    let code_mode = code_mode(true).await;
    assert_eq!(code_mode.must_approve(), ["calculator"]);
    let runtime = code_mode.runtime().clone();
    let token = paused(&code_mode, PROGRAM).await;
    assert_eq!((calls(&runtime, "json_query"), calls(&runtime, "calculator")), (1, 0), "stopped before calculator");

    let resumed = code_mode.resume("exec-2", &token, Decision::Approved, None).await.expect("resumes");
    assert_eq!(value(&resumed)["value"], plain["value"], "{}", resumed.content);
    assert_eq!(resumed.tool, "execute");
    // The first json_query was answered from the token: it ran once. The approved call ran
    // once, and the third call once.
    assert_eq!((calls(&runtime, "json_query"), calls(&runtime, "calculator")), (2, 1));

    // A token resumes once.
    let again = code_mode.resume("exec-3", &token, Decision::Approved, None).await.unwrap_err();
    assert_eq!(again, ResumeError::AlreadyUsed);
    assert_eq!(calls(&runtime, "calculator"), 1, "the approved call never runs twice");
}

#[tokio::test]
async fn a_denied_call_is_an_exception_and_the_program_carries_on() {
    let code_mode = code_mode(true).await;
    let runtime = code_mode.runtime().clone();
    let token = paused(&code_mode, PROGRAM).await;
    let resumed = code_mode.resume("exec-2", &token, Decision::Denied, None).await.expect("resumes");
    assert_eq!(value(&resumed)["value"], json!([1, "denied", 2]), "{}", resumed.content);
    assert_eq!(calls(&runtime, "calculator"), 0, "a denied call never runs");
}

#[tokio::test]
async fn a_tampered_or_foreign_token_is_refused_and_a_replica_with_the_key_resumes() {
    let first = code_mode(true).await;
    let token = paused(&first, PROGRAM).await;

    // Another answer for the first call, written into the token: the MAC no longer matches.
    let (payload, mac) = token.split_once('.').unwrap();
    let mut bytes = payload.as_bytes().to_vec();
    bytes[40] = if bytes[40] == b'A' { b'B' } else { b'A' };
    let tampered = format!("{}.{mac}", String::from_utf8(bytes).unwrap());
    assert_eq!(first.resume("t", &tampered, Decision::Approved, None).await.unwrap_err(), ResumeError::NotAuthentic);
    assert_eq!(first.resume("t", "garbage", Decision::Approved, None).await.unwrap_err(), ResumeError::NotAuthentic);

    let foreign = builder(true).resume_key([9; 32]).build().await.unwrap().code_mode().unwrap();
    let refused = foreign.resume("t", &token, Decision::Approved, None).await.unwrap_err();
    assert_eq!(refused, ResumeError::NotAuthentic);
    assert!(refused.to_string().contains("servers that resume each other's programs need the same resume key"));

    // Another runtime with the same key (a replica) resumes it: nothing stayed in memory.
    let replica = code_mode(true).await;
    let resumed = replica.resume("r", &token, Decision::Approved, None).await.expect("the replica resumes it");
    assert_eq!(value(&resumed)["value"], json!([1, 2.0, 2]));
}

#[tokio::test]
async fn a_resumed_program_that_takes_another_path_has_diverged() {
    // The program's path depends on an environment variable the record does not hold.
    let code = "import os\nif os.environ['MODE'] == 'b':\n    tools.json_query(document=[], query='$')\n\
                tools.calculator(expression='1 + 1')";
    let with_mode =
        |mode: &str| builder(true).grant("python", Grants::new().env(EnvGrant::fixed("MODE", mode))).build();
    let a = with_mode("a").await.unwrap().code_mode().unwrap();
    let output = a.call(ToolCall::new("x", EXECUTE, json!({"code": code}))).await;
    let Some(CallError::ApprovalRequired { resume_token, .. }) = output.error else { panic!("{}", output.content) };
    let b = with_mode("b").await.unwrap().code_mode().unwrap();
    let diverged = b.resume("y", &resume_token, Decision::Approved, None).await.unwrap_err();
    let ResumeError::Diverged(how) = &diverged else { panic!("{diverged:?}") };
    assert!(how.contains("asked for `json_query`"), "{how}");
    assert_eq!(calls(b.runtime(), "calculator"), 0, "nothing was approved for this path");
}

#[tokio::test]
async fn by_default_destructive_and_open_world_tools_wait_for_approval() {
    let runtime = standard_tools().code_mode(CodeModePolicy::new()).build().await.unwrap();
    let code_mode = runtime.code_mode().unwrap();
    let mut waiting = code_mode.must_approve().to_vec();
    waiting.sort();
    let expected: Vec<String> = runtime
        .definitions()
        .filter(|tool| tool.name != "python")
        .filter(|tool| tool.annotations.destructive == Some(true) || tool.annotations.open_world == Some(true))
        .map(|tool| tool.name.clone())
        .collect();
    assert_eq!(waiting, expected);
    assert!(waiting.contains(&"http_fetch".to_owned()), "{waiting:?}");
}

/// The library's way to approvals: a tool set's interceptor, which sees each call a program
/// makes and defers the ones a person must decide.
#[derive(Default)]
struct AskFirst {
    /// Each call it saw before and after it ran: `before calculator {...}`, `after calculator ok`.
    seen: std::sync::Mutex<Vec<String>>,
}

/// Arguments as the JSON text they are.
fn arguments_text(arguments: &Arguments) -> String {
    match arguments {
        Arguments::Json(text) => text.clone(),
        Arguments::Value(value) => value.to_string(),
    }
}

impl Interceptor for AskFirst {
    fn before<'a>(&'a self, mut call: ToolCall, _definition: &'a ToolDefinition) -> BoxFuture<'a, Verdict> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(format!("before {} {}", call.name, arguments_text(&call.arguments)));
            match call.name.as_str() {
                "calculator" => Verdict::Defer("a person approves every calculation".into()),
                "unit_convert" => Verdict::Deny("conversions are off today".into()),
                // Rewrites the query: the program gets what the interceptor asked for.
                _ if arguments_text(&call.arguments).contains("$.b") => {
                    call.arguments = Arguments::Value(json!({"document": {"b": 20}, "query": "$.b"}));
                    Verdict::Run(call)
                }
                _ => Verdict::Run(call),
            }
        })
    }

    fn after<'a>(&'a self, call: &'a ToolCall, output: &'a ToolOutput) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let outcome = output.error.as_ref().map_or("ok", CallError::kind);
            self.seen.lock().unwrap().push(format!("after {} {outcome}", call.name));
        })
    }
}

#[tokio::test]
async fn a_tool_sets_interceptor_defers_denies_and_rewrites_a_programs_calls() {
    let runtime = standard_tools()
        .code_mode(CodeModePolicy::new().tools(["json_query", "calculator", "unit_convert"]))
        .resume_key(KEY)
        .build()
        .await
        .expect("runtime builds");
    let interceptor = std::sync::Arc::new(AskFirst::default());
    let set = runtime.tool_set().deny(["unit_convert"]).intercept(interceptor.clone()).build().expect("tool set");
    let code_mode = set.code_mode().expect("code mode");
    // The set's tools only: unit_convert is denied by the set, so programs cannot call it.
    let callable: Vec<&str> = code_mode.tools().callable().iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(callable, ["calculator", "json_query"]);
    assert!(code_mode.must_approve().is_empty(), "the interceptor decides, not the policy");

    let token = paused(&code_mode, PROGRAM).await;
    assert_eq!(calls(&runtime, "calculator"), 0, "the deferred call did not run");
    let resumed = code_mode.resume("exec-2", &token, Decision::Approved, None).await.expect("resumes");
    // The third call's arguments were rewritten by the interceptor: `$.b` of {"b": 20}.
    assert_eq!(value(&resumed)["value"], json!([1, 2.0, 20]), "{}", resumed.content);
    assert_eq!(calls(&runtime, "calculator"), 1, "approved, it ran once");
    let seen = interceptor.seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            "before json_query {\"document\": {\"a\": 1}, \"query\": \"$.a\"}",
            "after json_query ok",
            "before calculator {\"expression\": \"1 + 1\"}",
            // Resumed: the first call came from the token, the approved one was not asked again.
            "after calculator ok",
            "before json_query {\"document\": {\"b\": 2}, \"query\": \"$.b\"}",
            "after json_query ok",
        ]
    );

    // Denied by the interceptor: the program gets ToolCallError(kind="denied") and its reason.
    let all = runtime.tool_set().intercept(AskFirst::default()).build().expect("tool set").code_mode().expect("code");
    let code = "try:\n    tools.unit_convert(value=1, to='km', **{'from': 'mi'})\n    outcome = ['ran', '']\n\
        except ToolCallError as err:\n    outcome = [err.kind, str(err)]\noutcome";
    let denied = all.call(ToolCall::new("exec-3", EXECUTE, json!({"code": code}))).await;
    let value = value(&denied)["value"].clone();
    assert_eq!(value[0], "denied", "{}", denied.content);
    assert!(value[1].as_str().unwrap().contains("conversions are off today"), "{value}");
    assert_eq!(calls(&runtime, "unit_convert"), 0);
}

#[tokio::test]
async fn a_deferred_call_outside_a_program_does_not_run_and_says_to_call_again() {
    let runtime = standard_tools().build().await.expect("runtime builds");
    let set = runtime.tool_set().intercept(AskFirst::default()).build().expect("tool set");
    let output = set.call(ToolCall::new("c1", "calculator", json!({"expression": "1 + 1"}))).await;
    match &output.error {
        Some(CallError::ApprovalRequired { tool, resume_token, .. }) => {
            assert_eq!((tool.as_str(), resume_token.as_str()), ("calculator", ""));
        }
        other => panic!("{other:?}"),
    }
    assert!(output.content.contains("waits for the user's approval, so it did not run"), "{}", output.content);
    assert!(output.content.contains("make the call again once they have decided"), "{}", output.content);
    assert_eq!(calls(&runtime, "calculator"), 0);
}
