//! The project's own tests, run inside the component (`toolcell test`): a test-harness
//! component built from the same sources plus the test files, and the JSON it answers with.
//!
//! The harness is a tool of the project's name (so it runs under the tool's limits and
//! grants) whose `invoke` runs the tests: `{}` lists them, `{"run": INDEX}` runs one. Each
//! call is a fresh instance, as each call of the tool is. The harness of a Python project is
//! built by the SDK's `build.py --tests` (`toolcell_tool/selftest.py`), of a JavaScript one by
//! `build.mjs --tests` (`src/selftest/`).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::{AuthorError, Language, javascript, python, sdk};

/// The arguments that list a harness's tests.
pub const LIST_TESTS: &str = "{}";

/// The arguments that run the test at `index` of the list.
pub fn run_test(index: usize) -> String {
    format!(r#"{{"run": {index}}}"#)
}

/// Builds the test harness of the project in `dir` into `build/<folder>.tests.wasm` and
/// returns its path. The build's own progress and errors go to this process's stderr.
///
/// # Errors
/// As [`crate::build`] (a project without test files fails to build, saying so);
/// [`AuthorError::TestsNotInComponent`] for a Rust project.
pub fn build_tests(dir: &Path) -> Result<PathBuf, AuthorError> {
    let language = crate::detect(dir)?;
    let dir = dir.canonicalize().map_err(|source| AuthorError::Io { path: dir.to_owned(), source })?;
    let wasm = sdk::output_path(&dir).with_extension("tests.wasm");
    match language {
        Language::Python => python::build_tests_to(&dir, &wasm)?,
        Language::JavaScript => javascript::build_tests_to(&dir, &wasm)?,
        Language::Rust => return Err(AuthorError::TestsNotInComponent { language: language.name().to_owned() }),
    }
    Ok(wasm)
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
        Language::Rust => &[],
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
}
