//! `toolcell test [PATH]`: the project's own tests, run inside its component, under the
//! tool's limits and grants, one fresh instance per test (see `toolcell_author::selftest`):
//! a test-harness tool's calls for Python and JavaScript, libtest binaries run as commands in
//! the tool's sandbox for Rust.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use toolcell_author::Language;
use toolcell_author::selftest::{self, LIST_TESTS, Outcome, TestComponents, TestResult};
use toolcell_runtime::{Policy, Runtime, ToolCall, ToolOutput};

use crate::EXIT_TOOL_ERROR;
use crate::load::{Source, load};

pub(crate) async fn test(source: Source<'_>, path: &Path) -> anyhow::Result<ExitCode> {
    let built = toolcell_author::detect(path).and_then(|language| {
        eprintln!("building the tests of {} to run inside the component…", path.display());
        selftest::build_tests(path).map(|built| (language, built))
    });
    let (language, built) = match built {
        Ok(built) => built,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(ExitCode::from(EXIT_TOOL_ERROR));
        }
    };
    let (policy, policy_files) = grants_for(source, path)?;
    let source = Source { tools_dir: None, policy: &policy, ..source };
    let grants = if policy_files.is_empty() {
        "no grants: no policy file".to_owned()
    } else {
        let files = policy_files.iter().map(|file| file.display().to_string()).collect::<Vec<_>>();
        format!("the grants of {}", files.join(", "))
    };
    let mut tally = Tally::default();
    match built {
        TestComponents::Harness(wasm) => {
            let Some(runtime) = load_tool(source, &wasm).await? else { return Ok(ExitCode::from(EXIT_TOOL_ERROR)) };
            let tool = tool_name(&runtime)?;
            out!("running the tests of `{tool}` inside its component, with its limits and {grants}");
            if !run_harness(&runtime, &tool, language, &mut tally).await {
                return Ok(ExitCode::from(EXIT_TOOL_ERROR));
            }
        }
        TestComponents::LibTest { tools, binaries } => {
            for binary in &binaries {
                // The tool of the binary's package, else the project's first.
                let Some(tool) = tools.iter().find(|tool| tool.project == binary.manifest).or(tools.first()) else {
                    anyhow::bail!("the project built no tool to run its tests as");
                };
                let Some(runtime) = load_tool(source, &tool.wasm).await? else {
                    return Ok(ExitCode::from(EXIT_TOOL_ERROR));
                };
                let name = tool_name(&runtime)?;
                out!(
                    "running {} inside the sandbox of `{name}`, with its limits and {grants}",
                    binary
                        .wasm
                        .file_name()
                        .map_or_else(|| binary.wasm.display().to_string(), |file| file.to_string_lossy().into_owned())
                );
                if !run_libtest(&runtime, &name, &binary.wasm, &mut tally).await? {
                    return Ok(ExitCode::from(EXIT_TOOL_ERROR));
                }
            }
        }
        _ => anyhow::bail!("this toolcell cannot run the tests it built"),
    }
    let skipped = if tally.skipped > 0 { format!(", {} skipped", tally.skipped) } else { String::new() };
    out!("{} passed, {} failed{skipped}", tally.passed, tally.failed);
    Ok(if tally.failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(EXIT_TOOL_ERROR) })
}

/// A runtime with the component at `wasm` loaded as a tool; `None` (said on stderr) when it
/// does not load.
async fn load_tool(source: Source<'_>, wasm: &Path) -> anyhow::Result<Option<Runtime>> {
    let runtime = load(source, Some(wasm), None).await?;
    if let Some(diagnostic) = runtime.diagnostics().first() {
        eprintln!("error: {} does not load as a tool: {}", wasm.display(), diagnostic.reason);
        return Ok(None);
    }
    Ok(Some(runtime))
}

fn tool_name(runtime: &Runtime) -> anyhow::Result<String> {
    Ok(runtime.definitions().next().context("the component defines no tool")?.name.clone())
}

/// Lists the harness's tests and runs each; false (said on stderr) when it cannot list them.
async fn run_harness(runtime: &Runtime, tool: &str, language: Language, tally: &mut Tally) -> bool {
    let listed = runtime.call(ToolCall::new("list-tests", tool, LIST_TESTS)).await;
    if listed.is_error {
        eprintln!("error: the test component could not list its tests: {}", stopped(&listed));
        print_diagnostics(&listed);
        return false;
    }
    let listing = match selftest::parse_listing(&listed.content) {
        Ok(listing) => listing,
        Err(err) => {
            eprintln!("error: {err}");
            return false;
        }
    };
    for error in &listing.errors {
        let result = TestResult::failed_to_load(error);
        report(language, &format!("{} (loading the file)", error.file), &result, tally);
    }
    for (index, test) in listing.tests.iter().enumerate() {
        let result = run_one(runtime, tool, index).await;
        report(language, &display_name(&test.name, &test.file), &result, tally);
    }
    true
}

/// Lists the tests of the libtest binary `wasm` and runs each in the sandbox of `tool`;
/// false (said on stderr) when it cannot list them.
async fn run_libtest(runtime: &Runtime, tool: &str, wasm: &Path, tally: &mut Tally) -> anyhow::Result<bool> {
    let bytes = std::fs::read(wasm).with_context(|| format!("cannot read {}", wasm.display()))?;
    let program = wasm.file_stem().map_or_else(|| "test".to_owned(), |stem| stem.to_string_lossy().into_owned());
    eprintln!("toolcell: compiling {program} (a test binary, {} KiB)…", bytes.len().div_ceil(1024));
    let command = match runtime.command(tool, &bytes) {
        Ok(command) => command,
        Err(err) => {
            eprintln!("error: {}: {err}", wasm.display());
            return Ok(false);
        }
    };
    let listed = command.run(&selftest::libtest_list(&program)).await;
    if listed.exit_code != Some(0) {
        let why =
            listed.error.as_ref().map_or_else(|| format!("exit code {:?}", listed.exit_code), ToString::to_string);
        eprintln!("error: {program} could not list its tests ({why}):\n{}", listed.stderr.trim_end());
        return Ok(false);
    }
    for name in selftest::libtest_names(&listed.stdout) {
        let run = command.run(&selftest::libtest_run(&program, &name)).await;
        let stopped = run.error.as_ref().map(|error| format!("the test was stopped ({}): {error}", error.kind()));
        let mut result = selftest::libtest_result(run.exit_code, stopped.as_deref(), &run.stdout, &run.stderr);
        // The trap's wasm backtrace only when the test left nothing on stderr to go by.
        if let (Some(detail), Outcome::Failed, true) = (&run.detail, result.outcome, run.stderr.trim().is_empty()) {
            result = TestResult::stopped(result.message.clone(), format!("{}\n{detail}", result.details));
        }
        report(Language::Rust, &name, &result, tally);
    }
    Ok(true)
}

/// The policy the tests run under: the tools folder's toolcell.toml (--tools-dir, else the
/// project's `tools/`, where `toolcell build` puts the tool), then --policy on top; and the
/// files it came from.
fn grants_for(source: Source<'_>, project: &Path) -> anyhow::Result<(Policy, Vec<PathBuf>)> {
    let tools_dir = source.tools_dir.map_or_else(|| project.join("tools"), Path::to_path_buf);
    let folder_policy = tools_dir.join("toolcell.toml");
    let mut policy = Policy::new();
    if folder_policy.is_file() {
        policy.merge(Policy::from_file(&folder_policy)?);
    }
    policy.merge(source.policy.clone());
    let files = policy.files().to_vec();
    Ok((policy, files))
}

/// Runs the test at `index` in a fresh instance; a component stopped by a limit or a trap is
/// that test's failure.
async fn run_one(runtime: &Runtime, tool: &str, index: usize) -> TestResult {
    let output = runtime.call(ToolCall::new(format!("test-{index}"), tool, selftest::run_test(index))).await;
    if output.is_error {
        let mut details = output.diagnostics.stderr.trim_end().to_owned();
        if let Some(detail) = &output.diagnostics.detail {
            details.push_str(&format!("\n{detail}"));
        }
        return TestResult::stopped(stopped(&output), details.trim().to_owned());
    }
    selftest::parse_result(&output.content).unwrap_or_else(|err| TestResult::stopped(err, String::new()))
}

/// Why the component stopped, in the words the model would get and the error's kind.
fn stopped(output: &ToolOutput) -> String {
    let kind = output.error.as_ref().map_or("error", |error| error.kind());
    format!("the component stopped ({kind}): {}", output.content)
}

fn print_diagnostics(output: &ToolOutput) {
    for text in [output.diagnostics.stderr.trim(), output.diagnostics.detail.as_deref().unwrap_or("").trim()] {
        if !text.is_empty() {
            eprintln!("{text}");
        }
    }
}

/// The test's name, with its file unless the name already says it (Python's do).
fn display_name(name: &str, file: &str) -> String {
    let stem = file.rsplit('/').next().unwrap_or(file).split('.').next().unwrap_or(file);
    if name.starts_with(stem) { name.to_owned() } else { format!("{file}: {name}") }
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
}

/// One line per test; a failure's message, details and, when the sandbox is the likely cause,
/// a hint, indented below it.
fn report(language: Language, name: &str, result: &TestResult, tally: &mut Tally) {
    match result.outcome {
        Outcome::Passed => {
            tally.passed += 1;
            out!("PASS  {name}");
        }
        Outcome::Skipped => {
            tally.skipped += 1;
            out!("SKIP  {name}: {}", result.message);
        }
        _ => {
            tally.failed += 1;
            out!("FAIL  {name}");
            out!("      {}", result.message);
            for line in result.details.lines() {
                out!("      | {line}");
            }
            if let Some(hint) = selftest::sandbox_hint(language, &result.message) {
                out!("      hint: the component lacks what a native run has: {hint}");
            }
        }
    }
}
