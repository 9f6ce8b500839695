//! `toolcell test [PATH]`: the project's own tests, run inside its component, under the
//! tool's limits and grants, one fresh instance per test (see `toolcell_author::selftest`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use toolcell_author::Language;
use toolcell_author::selftest::{self, LIST_TESTS, Outcome, TestResult};
use toolcell_runtime::{Policy, Runtime, ToolCall, ToolOutput};

use crate::EXIT_TOOL_ERROR;
use crate::load::{Source, load};

pub(crate) async fn test(source: Source<'_>, path: &Path) -> anyhow::Result<ExitCode> {
    let (language, wasm) = match toolcell_author::detect(path).and_then(|language| {
        eprintln!("building the tests of {} into a test component…", path.display());
        selftest::build_tests(path).map(|wasm| (language, wasm))
    }) {
        Ok(built) => built,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(ExitCode::from(EXIT_TOOL_ERROR));
        }
    };
    let (policy, policy_files) = grants_for(source, path)?;
    let runtime = load(Source { tools_dir: None, policy: &policy, ..source }, Some(&wasm), None).await?;
    if let Some(diagnostic) = runtime.diagnostics().first() {
        eprintln!("error: the test component {} does not load: {}", wasm.display(), diagnostic.reason);
        return Ok(ExitCode::from(EXIT_TOOL_ERROR));
    }
    let tool = runtime.definitions().next().context("the test component defines no tool")?.name.clone();
    let grants = if policy_files.is_empty() {
        "no grants: no policy file".to_owned()
    } else {
        format!(
            "the grants of {}",
            policy_files.iter().map(|file| file.display().to_string()).collect::<Vec<_>>().join(", ")
        )
    };
    out!("running the tests of `{tool}` inside its component, with its limits and {grants}");

    let listed = runtime.call(ToolCall::new("list-tests", &tool, LIST_TESTS)).await;
    if listed.is_error {
        eprintln!("error: the test component could not list its tests: {}", stopped(&listed));
        print_diagnostics(&listed);
        return Ok(ExitCode::from(EXIT_TOOL_ERROR));
    }
    let listing = selftest::parse_listing(&listed.content).map_err(anyhow::Error::msg)?;
    let mut tally = Tally::default();
    for error in &listing.errors {
        let result = TestResult::failed_to_load(error);
        report(language, &format!("{} (loading the file)", error.file), &result, &mut tally);
    }
    for (index, test) in listing.tests.iter().enumerate() {
        let result = run_one(&runtime, &tool, index).await;
        report(language, &display_name(&test.name, &test.file), &result, &mut tally);
    }
    let skipped = if tally.skipped > 0 { format!(", {} skipped", tally.skipped) } else { String::new() };
    out!("{} passed, {} failed{skipped}", tally.passed, tally.failed);
    Ok(if tally.failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(EXIT_TOOL_ERROR) })
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
