//! The project's own tests, run inside the component (`toolcell test`), one fresh instance per
//! test under the tool's limits and grants.
//!
//! - Python and JavaScript: a test-harness component built from the same sources plus the test
//!   files, a tool of the project's name (so it gets the tool's limits and grants) whose
//!   `invoke` runs the tests: [`LIST_TESTS`] lists them, [`run_test`] runs one, and each answers
//!   in JSON. Built by the SDK's `build.py --tests` (`toolcell_tool/selftest.py`) or
//!   `build.mjs --tests` (`src/selftest/`).
//! - Rust: the crate's libtest binaries built for `wasm32-wasip2` (`cargo test --no-run`),
//!   which are `wasi:cli/command` components, run in the tool's sandbox with a command line:
//!   [`libtest_list`] lists the tests, [`libtest_run`] runs one and [`libtest_result`] reads
//!   how it ended. The tool itself is built too, for its name.

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use crate::rust::TestBinary;
use crate::{AuthorError, Built, Language, javascript, python, rust, sdk};

/// The arguments that list a harness's tests.
pub const LIST_TESTS: &str = "{}";

/// The arguments that run the test at `index` of the list.
pub fn run_test(index: usize) -> String {
    format!(r#"{{"run": {index}}}"#)
}

/// What [`build_tests`] made for `toolcell test` to run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TestComponents {
    /// A test-harness tool (Python, JavaScript) at this path.
    Harness(PathBuf),
    /// A Rust project's tool components (for their names: the tests run with a tool's limits
    /// and grants) and its test binaries.
    LibTest {
        /// The tools, as [`crate::build`] made them.
        tools: Vec<Built>,
        /// The test binaries.
        binaries: Vec<TestBinary>,
    },
}

/// Builds what runs the tests of the project in `dir` inside the component: for Python and
/// JavaScript the test harness, into `build/<folder>.tests.wasm`; for Rust the tool and its
/// test binaries. The build's own progress and errors go to this process's stderr.
///
/// # Errors
/// As [`crate::build`] (a project without test files fails to build, saying so).
pub fn build_tests(dir: &Path) -> Result<TestComponents, AuthorError> {
    let language = crate::detect(dir)?;
    let dir = dir.canonicalize().map_err(|source| AuthorError::Io { path: dir.to_owned(), source })?;
    let wasm = sdk::output_path(&dir).with_extension("tests.wasm");
    match language {
        Language::Python => python::build_tests_to(&dir, &wasm)?,
        Language::JavaScript => javascript::build_tests_to(&dir, &wasm)?,
        Language::Rust => {
            let tools = rust::build(&dir)?;
            let binaries = rust::build_tests(&dir)?;
            return Ok(TestComponents::LibTest { tools, binaries });
        }
    }
    Ok(TestComponents::Harness(wasm))
}

/// The command line that lists a libtest binary's tests (`NAME: test` lines on stdout).
pub fn libtest_list(program: &str) -> Vec<String> {
    [program, "--list", "--format", "terse"].map(str::to_owned).to_vec()
}

/// The test names in a libtest binary's answer to [`libtest_list`].
pub fn libtest_names(stdout: &str) -> Vec<String> {
    stdout.lines().filter_map(|line| line.strip_suffix(": test")).map(str::to_owned).collect()
}

/// The command line that runs the one test `name` of a libtest binary, its output not
/// captured by libtest (a panic aborts on `wasm32-wasip2`: captured output would be lost).
pub fn libtest_run(program: &str, name: &str) -> Vec<String> {
    [program, "--exact", name, "--nocapture", "--test-threads=1"].map(str::to_owned).to_vec()
}

/// How a run of [`libtest_run`] ended: its exit code (`None` when it was stopped, for
/// `stopped`: a limit, or the abort of a panic), and its output.
pub fn libtest_result(exit_code: Option<i32>, stopped: Option<&str>, stdout: &str, stderr: &str) -> TestResult {
    let output = [stderr.trim_end(), stdout.trim_end()].into_iter().filter(|text| !text.is_empty());
    let details = output.collect::<Vec<_>>().join("\n");
    match exit_code {
        Some(0) if stdout.contains(" ... ignored") => {
            TestResult { outcome: Outcome::Skipped, message: "#[ignore]".to_owned(), details: String::new() }
        }
        Some(0) => TestResult { outcome: Outcome::Passed, message: String::new(), details: String::new() },
        _ => {
            // `thread 'NAME' panicked at FILE:LINE:COL:` then the message.
            let mut lines = stderr.lines();
            let panic = lines.by_ref().find(|line| line.contains("panicked at")).and_then(|_| lines.next());
            let message = match (panic, stopped, exit_code) {
                (Some(message), _, _) => format!("panicked: {message}"),
                (None, Some(stopped), _) => stopped.to_owned(),
                (None, None, code) => format!("the test binary exited with {code:?}"),
            };
            TestResult { outcome: Outcome::Failed, message, details }
        }
    }
}

/// The tests a harness holds, as it lists them.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct Listing {
    /// The tests, in order: run one with [`run_test`] and its index.
    pub tests: Vec<TestName>,
    /// Test files that could not be loaded in the component, each a failure of its own.
    #[serde(default)]
    pub errors: Vec<LoadError>,
}

/// One test of a [`Listing`].
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct TestName {
    /// Its name, as the language's test runner names it.
    pub name: String,
    /// The file that defines it, relative to the project.
    pub file: String,
}

/// A test file the component could not load.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct LoadError {
    /// The file, relative to the project.
    pub file: String,
    /// The error, with its traceback.
    pub details: String,
}

/// How one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Outcome {
    /// It passed.
    Passed,
    /// It failed or raised.
    Failed,
    /// It was skipped.
    Skipped,
}

/// What a harness answered for one test.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct TestResult {
    /// How it ended.
    pub outcome: Outcome,
    /// One line: the failure's exception or assertion, or why it was skipped.
    #[serde(default)]
    pub message: String,
    /// The traceback or stack, and what the test printed.
    #[serde(default)]
    pub details: String,
}

impl TestResult {
    /// The failure of a test file the component could not load.
    pub fn failed_to_load(error: &LoadError) -> Self {
        let message = error.details.lines().rfind(|line| !line.trim().is_empty()).unwrap_or("").to_owned();
        Self { outcome: Outcome::Failed, message, details: error.details.clone() }
    }

    /// The failure of a test whose component was stopped (a limit, a trap) before it answered.
    pub fn stopped(message: String, details: String) -> Self {
        Self { outcome: Outcome::Failed, message, details }
    }
}

/// Reads a harness's answer to [`LIST_TESTS`].
///
/// # Errors
/// When it is not a listing (the component is not a harness of this version).
pub fn parse_listing(json: &str) -> Result<Listing, String> {
    serde_json::from_str(json)
        .map_err(|err| format!("the test harness answered something that is not a list of tests ({err}): {json:.200}"))
}

/// Reads a harness's answer to [`run_test`].
///
/// # Errors
/// When it is not a test's result.
pub fn parse_result(json: &str) -> Result<TestResult, String> {
    serde_json::from_str(json)
        .map_err(|err| format!("the test harness answered something that is not a test's result ({err}): {json:.200}"))
}

/// A hint for a failure that is the sandbox's doing, from its message: what the component
/// lacks that a native run has, and what to do about it.
pub fn sandbox_hint(language: Language, message: &str) -> Option<&'static str> {
    let hints: &[(&str, &str)] = match language {
        Language::Python => &[
            (
                "ModuleNotFoundError",
                "a component has only the modules imported while it was built: import the module at the top of the tool's module (a pure-Python dependency goes in ./vendor)",
            ),
            (
                "[Errno 44]",
                "the component sees no files but the directories its policy grants (a `dirs` entry in the tools folder's toolcell.toml, or --policy)",
            ),
            ("[Errno 76]", "the component cannot do this: there are no processes, threads or sockets in it"),
            ("[Errno 58]", "the component cannot do this: there are no processes, threads or sockets in it"),
        ],
        Language::JavaScript => &[
            (
                "Intl",
                "the engine has no ICU: no Intl, toLocaleString or String.prototype.normalize, and no \\p{...} in regular expressions",
            ),
            ("toLocale", "the engine has no ICU: toLocaleString and friends do not format for a locale"),
            (
                "ReferenceError",
                "the engine has web APIs (fetch, TextEncoder, URL) but none of Node's globals (process, Buffer, require)",
            ),
            ("not available in the component", "use plain functions and values in place of node:test's mocks"),
        ],
        Language::Rust => &[
            ("failed to spawn thread", "wasm32-wasip2 has no threads: a tool cannot spawn them"),
            ("kind: Unsupported", "wasm32-wasip2 has no threads, processes or sockets"),
            ("No such file or directory", "the component sees no files but the directories its policy grants"),
        ],
    };
    hints.iter().find(|(pattern, _)| message.contains(pattern)).map(|(_, hint)| *hint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_and_results_read_as_the_harnesses_write_them() {
        let listing = parse_listing(r#"{"tests": [{"name": "t.A.test_x", "file": "t.py"}], "errors": []}"#).unwrap();
        assert_eq!(listing.tests[0].name, "t.A.test_x");
        let result = parse_result(
            r#"{"outcome": "failed", "message": "ReferenceError: Intl is not defined", "details": "@x:1"}"#,
        )
        .unwrap();
        assert_eq!(result.outcome, Outcome::Failed);
        assert!(parse_result(r#"{"outcome": "maybe"}"#).unwrap_err().contains("not a test's result"));
        assert_eq!(run_test(3), r#"{"run": 3}"#);
    }

    #[test]
    fn a_failure_only_the_sandbox_causes_gets_a_hint() {
        let hint = sandbox_hint(Language::Python, "ModuleNotFoundError: No module named 'statistics'").unwrap();
        assert!(hint.contains("import the module at the top"), "{hint}");
        let hint = sandbox_hint(Language::JavaScript, "ReferenceError: Intl is not defined").unwrap();
        assert!(hint.contains("no ICU"), "{hint}");
        assert!(sandbox_hint(Language::Python, "AssertionError: 2 != 3").is_none());
    }

    #[test]
    fn libtest_lists_and_results_read_as_libtest_writes_them() {
        let names = libtest_names("tests::counts: test\ntests::refuses: test\nbench_x: bench\n");
        assert_eq!(names, ["tests::counts", "tests::refuses"]);
        let passed = libtest_result(Some(0), None, "running 1 test\ntest tests::counts ... ok\n", "");
        assert_eq!(passed.outcome, Outcome::Passed);
        let ignored = libtest_result(Some(0), None, "test tests::slow ... ignored\n", "");
        assert_eq!(ignored.outcome, Outcome::Skipped);
        let stderr = "thread 'main' panicked at src/lib.rs:9:5:\nfailed to spawn thread: Os { code: 58, kind: Unsupported }\nnote: run with `RUST_BACKTRACE=1`";
        let failed = libtest_result(None, Some("the component stopped (tool_crashed)"), "", stderr);
        assert_eq!(failed.outcome, Outcome::Failed);
        assert_eq!(failed.message, "panicked: failed to spawn thread: Os { code: 58, kind: Unsupported }");
        assert!(sandbox_hint(Language::Rust, &failed.message).unwrap().contains("no threads"));
        assert!(failed.details.contains("src/lib.rs:9:5"));
    }
}
