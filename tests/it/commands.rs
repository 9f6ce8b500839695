//! `Runtime::command`: a `wasi:cli` command (what `toolcell test` runs a Rust tool's test
//! binary as) in a loaded tool's sandbox, with its command line as the only addition.

use std::time::Duration;

use toolcell_runtime::command::CommandError;
use toolcell_runtime::{CallError, LimitOverrides};

use crate::common::{runtime, standard_tools};

fn cli_command() -> Vec<u8> {
    std::fs::read(toolcell_tests::CLI_COMMAND).unwrap()
}

fn args(args: &[&str]) -> Vec<String> {
    args.iter().map(|arg| (*arg).to_owned()).collect()
}

#[tokio::test]
async fn a_command_runs_with_its_command_line_and_ends_with_its_exit_code() {
    let command = runtime().command("calculator", &cli_command()).unwrap();
    let run = command.run(&args(&["cli_command"])).await;
    assert_eq!((run.exit_code, run.error), (Some(0), None));
    assert_eq!(run.stdout, "I am a command, not a tool\n");
    // WASI 0.2's `exit` carries success or failure, not a code: exit(3) is a failure, 1.
    let run = command.run(&args(&["cli_command", "exit", "3"])).await;
    assert_eq!((run.exit_code, run.error), (Some(1), None), "{}", run.stderr);
}

#[tokio::test]
async fn a_command_gets_nothing_its_tool_is_not_granted() {
    let command = runtime().command("calculator", &cli_command()).unwrap();
    let run = command.run(&args(&["cli_command", "read", "/etc/passwd"])).await;
    assert_eq!(run.exit_code, Some(1), "{run:?}");
    assert!(run.stderr.contains("cannot read /etc/passwd"), "{}", run.stderr);
    let run = command.run(&args(&["cli_command", "env", "HOME"])).await;
    assert_eq!(run.stdout, "HOME=None\n");
}

#[tokio::test]
async fn a_command_is_stopped_by_its_tools_limits() {
    let limits = LimitOverrides::new().timeout(Duration::from_millis(300));
    let runtime = standard_tools().tool_limits("calculator", limits).build().await.unwrap();
    let command = runtime.command("calculator", &cli_command()).unwrap();
    let run = command.run(&args(&["cli_command", "loop"])).await;
    assert_eq!(run.exit_code, None);
    assert!(matches!(run.error, Some(CallError::Timeout { limit_ms: 300 })), "{:?}", run.error);
}

#[tokio::test]
async fn only_a_command_runs_and_only_in_a_loaded_tools_sandbox() {
    let error = runtime().command("no_such_tool", &cli_command()).unwrap_err();
    assert!(matches!(error, CommandError::UnknownTool { .. }), "{error}");
    let tool = std::fs::read(toolcell_tools::CALCULATOR).unwrap();
    let error = runtime().command("calculator", &tool).unwrap_err();
    assert!(error.to_string().contains("does not export `wasi:cli/run`"), "{error}");
    let error = runtime().command("calculator", b"not wasm").unwrap_err();
    assert!(error.to_string().contains("could not be compiled"), "{error}");
}
