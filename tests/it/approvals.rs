//! Code mode's approvals: a program stops at a call that waits for a person, and resumes by
//! replay once they decide: the calls before the pause are answered from the token (they ran
//! once), the approved call runs once, a denied one is an exception the program may catch.

use serde_json::json;
use toolcell_runtime::code_mode::{CodeMode, Decision, EXECUTE, ResumeError};
use toolcell_runtime::policy::{CodeModePolicy, EnvGrant, Grants};
use toolcell_runtime::{CallError, Runtime, RuntimeBuilder, ToolCall};

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
