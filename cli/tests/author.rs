//! A tool author's path, end to end: `toolcell new`, the new crate's own tests, `toolcell
//! build`, and a first `invoke` of the result; the example tools of the book's Rust chapter
//! (`docs/src/authoring/rust.md`, whose first one the README shows too) likewise.
//!
//! The tool crates build with cargo into one target folder kept under `target/tmp`, so only
//! the first run compiles the SDK's dependencies.

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::cargo::CommandCargoExt as _;
use serde_json::Value;

/// Where every tool crate of these tests builds.
fn shared_target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("tool-crates-target")
}

/// A fresh folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("author-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn toolcell(dir: &Path) -> Command {
    let mut command = Command::cargo_bin("toolcell").unwrap();
    command
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", shared_target_dir())
        .env("TOOLCELL_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"))
        .env_remove("TOOLCELL_TOOLS_DIR");
    command
}

/// Runs `command`, failing the test with its output unless it exits with `code`; returns
/// its stdout.
fn run(command: &mut Command, code: i32) -> String {
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{command:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    stdout
}

/// `cargo test` of a tool crate, natively.
fn cargo_test(crate_dir: &Path) -> String {
    let mut command = Command::new("cargo");
    command.arg("test").current_dir(crate_dir).env("CARGO_TARGET_DIR", shared_target_dir());
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "cargo test in {}:\n{stdout}\n{}",
        crate_dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

fn invoke(dir: &Path, tools: &str, tool: &str, arguments: &str, code: i32) -> Value {
    let stdout = run(toolcell(dir).args(["--tools-dir", tools, "invoke", tool, arguments]), code);
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn a_new_tool_passes_its_tests_builds_and_answers_its_first_call() {
    let dir = scratch("new");
    let created = run(toolcell(&dir).args(["new", "word_count"]), 0);
    assert!(created.contains("  toolcell test    # run the same tests inside the component"), "{created}");
    assert!(
        created.contains("toolcell --tools-dir tools invoke word_count '{\"text\": \"one two three\"}'"),
        "{created}"
    );
    let crate_dir = dir.join("word_count");
    for file in ["Cargo.toml", "rust-toolchain.toml", ".gitignore", "src/lib.rs"] {
        assert!(crate_dir.join(file).is_file(), "{file}");
    }

    let tests = cargo_test(&crate_dir);
    assert!(tests.contains("test result: ok. 3 passed"), "{tests}");

    let built = run(toolcell(&crate_dir).arg("build"), 0);
    assert!(built.starts_with("built word_count 0.1.0 -> tools/word_count.wasm"), "{built}");
    // It announces its definition, so that a server lists it before compiling it.
    let component = std::fs::read(crate_dir.join("tools/word_count.wasm")).unwrap();
    let section = toolcell_guest_build::metadata_section(&component).expect("a toolcell-metadata section");
    let announced: Value = serde_json::from_slice(section).unwrap();
    assert_eq!(announced["name"], "word_count", "{announced}");

    // The command `new` printed, run where it said.
    let output = invoke(&crate_dir, "tools", "word_count", r#"{"text": "one two three"}"#, 0);
    assert_eq!(output["content"], "3", "{output}");
    let output = invoke(&crate_dir, "tools", "word_count", r#"{"text": "lines\nof text", "unit": "lines"}"#, 0);
    assert_eq!(output["content"], "2", "{output}");

    // The host refuses what the native test saw refused, in the same words.
    let output = invoke(&crate_dir, "tools", "word_count", r#"{"text": ""}"#, 1);
    assert_eq!(output["error"]["kind"], "invalid_arguments", "{output}");
    let native = "The arguments do not match the tool's parameters schema (1 problem):\n- /text: must not be empty\nFix these and call the tool again.";
    assert_eq!(output["content"], native);
    let lib = std::fs::read_to_string(crate_dir.join("src/lib.rs")).unwrap();
    assert!(lib.contains("must not be empty"), "the template's test pins the host's message");

    // The tool's own refusal is the model's to fix.
    let output = invoke(&crate_dir, "tools", "word_count", r#"{"text": "   "}"#, 1);
    assert_eq!(output["error"]["kind"], "rejected_arguments", "{output}");

    // The same tests inside the component; then two that pass natively and not there.
    let (code, output) = toolcell_test(&crate_dir);
    assert_eq!(code, 0, "{output}");
    assert!(output.contains("\n3 passed, 0 failed\n"), "{output}");
    let mut lib = std::fs::OpenOptions::new().append(true).open(crate_dir.join("src/lib.rs")).unwrap();
    std::io::Write::write_all(&mut lib, RUST_SANDBOX_TESTS.as_bytes()).unwrap();
    let tests = cargo_test(&crate_dir);
    assert!(tests.contains("test result: ok. 6 passed"), "natively: {tests}");
    let (code, output) = toolcell_test(&crate_dir);
    assert_eq!(code, 1, "{output}");
    for words in [
        "FAIL  sandbox_tests::spawns_a_thread\n      panicked: failed to spawn thread",
        "hint: the component lacks what a native run has: wasm32-wasip2 has no threads",
        "FAIL  sandbox_tests::reads_its_manifest\n      panicked: ",
        "No such file or directory",
        "FAIL  sandbox_tests::fills_100_mib\n      the test was stopped (memory_limit)",
        "3 passed, 3 failed",
    ] {
        assert!(output.contains(words), "{words:?} in:\n{output}");
    }
}

/// Tests that pass natively and fail in a Rust tool's component: a thread, a host file, more
/// memory than the tool's limit (64 MiB).
const RUST_SANDBOX_TESTS: &str = r#"
#[cfg(test)]
mod sandbox_tests {
    #[test]
    fn spawns_a_thread() {
        let handle = std::thread::spawn(|| 2 + 2);
        assert_eq!(handle.join().unwrap(), 4);
    }

    #[test]
    fn reads_its_manifest() {
        let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
        assert!(manifest.contains("[package]"));
    }

    #[test]
    fn fills_100_mib() {
        let memory = vec![1_u8; 100 << 20];
        assert_eq!(memory.iter().map(|&byte| usize::from(byte)).sum::<usize>(), 100 << 20);
    }
}
"#;

/// The book's chapter on writing a tool in Rust.
fn rust_chapter() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/src/authoring/rust.md")).unwrap()
}

#[test]
fn the_books_first_tool_compiles_as_written_and_answers() {
    let dir = scratch("first-tool");
    run(toolcell(&dir).args(["new", "celsius_to_fahrenheit"]), 0);
    let crate_dir = dir.join("celsius_to_fahrenheit");
    std::fs::write(crate_dir.join("src/lib.rs"), rust_blocks(&rust_chapter(), "## A first tool")).unwrap();

    run(toolcell(&crate_dir).args(["build", "--out", "../tools"]), 0);
    let output = invoke(&dir, "tools", "celsius_to_fahrenheit", r#"{"celsius": 100}"#, 0);
    assert_eq!(output["content"], "212.0", "{output}");
    let output = invoke(&dir, "tools", "celsius_to_fahrenheit", r#"{"celsius": -300}"#, 1);
    assert_eq!(output["error"]["kind"], "invalid_arguments", "{output}");
    let content = output["content"].as_str().unwrap();
    assert!(content.contains("/celsius: must be at least -273.15"), "the chapter quotes it: {content}");
}

#[test]
fn the_books_full_tool_and_its_tests_compile_as_written_and_run() {
    let dir = scratch("full-tool");
    run(toolcell(&dir).args(["new", "divide"]), 0);
    let crate_dir = dir.join("divide");
    let code = rust_blocks(&rust_chapter(), "## Everything a tool can declare");
    std::fs::write(crate_dir.join("src/lib.rs"), code).unwrap();

    let tests = cargo_test(&crate_dir);
    assert!(tests.contains("test tests::refuses_a_zero_divisor_as_the_host_would ... ok"), "{tests}");

    run(toolcell(&crate_dir).args(["build", "--out", "../tools"]), 0);
    let output = invoke(&dir, "tools", "divide", r#"{"a": 7, "b": 2, "rounding": "up"}"#, 0);
    assert_eq!(output["content"], r#"{"value":4}"#, "{output}");
    let output = invoke(&dir, "tools", "divide", r#"{"a": 7, "b": 0}"#, 1);
    assert_eq!(output["error"]["kind"], "invalid_arguments", "{output}");
}

#[test]
fn building_a_crate_that_makes_no_component_says_what_to_add() {
    let dir = scratch("no-cdylib");
    run(toolcell(&dir).args(["new", "plain"]), 0);
    let manifest = dir.join("plain/Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace(r#"crate-type = ["cdylib", "rlib"]"#, r#"crate-type = ["rlib"]"#)).unwrap();

    let output = toolcell(&dir.join("plain")).arg("build").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(r#"made no .wasm component: a tool crate needs `crate-type = ["cdylib", "rlib"]`"#),
        "{stderr}"
    );
    assert!(!dir.join("plain/tools").exists());
}

#[test]
fn new_refuses_a_name_no_tool_can_have_and_a_folder_in_use() {
    let dir = scratch("refusals");
    let output = toolcell(&dir).args(["new", "Word Count"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`Word Count` cannot name a tool: start it with a lower case letter"), "{stderr}");

    std::fs::create_dir_all(dir.join("taken")).unwrap();
    std::fs::write(dir.join("taken/notes.txt"), "mine").unwrap();
    let output = toolcell(&dir).args(["new", "taken"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("already exists and is not empty"));
    assert_eq!(std::fs::read_dir(dir.join("taken")).unwrap().count(), 1, "nothing written beside it");

    for command in ["build", "test"] {
        let output = toolcell(&dir).args([command, "taken"]).output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{command}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("holds no tool project"), "{command}");
    }
}

/// The ```rust blocks of the Markdown section under `heading` (up to the next `## `), one
/// after the other.
fn rust_blocks(markdown: &str, heading: &str) -> String {
    let start = markdown.find(&format!("\n{heading}\n")).expect("the section exists");
    let section = &markdown[start + heading.len() + 2..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut code = String::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "```rust" {
            for line in lines.by_ref().take_while(|line| line.trim() != "```") {
                code.push_str(line);
                code.push('\n');
            }
        }
    }
    assert!(!code.is_empty(), "no ```rust block under {heading}");
    code
}

/// `toolcell new --lang LANG`, the test command it printed, `toolcell build` and the first
/// `invoke` it printed; the template's optional parameter (`optional`, whose content must
/// contain `expected`) inside the component, as its native test runs it; then the host's
/// refusal of an empty text.
fn new_project_in(lang: &str, name: &str, optional: &str, expected: &str) -> (PathBuf, String) {
    let dir = scratch(&format!("new-{lang}"));
    let created = run(toolcell(&dir).args(["new", name, "--lang", lang]), 0);
    assert!(created.contains("  toolcell test    # run the same tests inside the component"), "{created}");
    let project = dir.join(name);
    let test_command = created
        .lines()
        .find(|line| line.contains("# run its tests natively"))
        .and_then(|line| line.split('#').next())
        .unwrap_or_else(|| panic!("a test command in {created}"))
        .trim();
    let tests = Command::new("sh").args(["-c", test_command]).current_dir(&project).output().unwrap();
    assert!(
        tests.status.success(),
        "{test_command}:\n{}\n{}",
        String::from_utf8_lossy(&tests.stdout),
        String::from_utf8_lossy(&tests.stderr)
    );

    let built = run(toolcell(&project).arg("build"), 0);
    assert!(built.contains(&format!("built {name} 0.1.0 -> tools/{name}.wasm")), "{built}");
    let output = invoke(&project, "tools", name, r#"{"text": "one two three"}"#, 0);
    assert!(output["content"].as_str().unwrap().contains('3'), "{output}");
    // What passes natively must pass in the component: the standard library a call uses
    // lazily (`Counter.most_common` imports `heapq`) is there.
    let output = invoke(&project, "tools", name, optional, 0);
    assert!(output["content"].as_str().unwrap().contains(expected), "{output}");
    let output = invoke(&project, "tools", name, r#"{"text": ""}"#, 1);
    assert_eq!(output["error"]["kind"], "invalid_arguments", "{output}");
    assert!(output["content"].as_str().unwrap().contains("- /text: must not be empty"), "{output}");
    (project, test_command.to_owned())
}

/// `toolcell test` in `project`: its exit code and stdout.
fn toolcell_test(project: &Path) -> (i32, String) {
    let output = toolcell(project).arg("test").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.status.code().unwrap(), format!("{stdout}\nstderr:\n{stderr}"))
}

/// The new project's own tests, run inside the component by `toolcell test`, with `additions`
/// (text appended to files of the project, or new files): tests that pass natively, as
/// `test_command` shows, and fail there, saying what the component lacks, while the
/// template's three pass. (One run: a component per run is most of its time. An all-passing
/// run's exit status, the same code for every language, is the Rust tool's test.)
fn tests_inside_the_component(project: &Path, test_command: &str, additions: &[(&str, &str)], says: &[&str]) {
    for (file, text) in additions {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(project.join(file)).unwrap();
        std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
    }
    let native = Command::new("sh").args(["-c", test_command]).current_dir(project).output().unwrap();
    assert!(native.status.success(), "natively: {}", String::from_utf8_lossy(&native.stderr));
    let (code, output) = toolcell_test(project);
    assert_eq!(code, 1, "{output}");
    assert_eq!(output.matches("\nPASS  ").count(), 3, "the template's tests pass: {output}");
    assert!(output.contains("\n3 passed, "), "{output}");
    assert!(!output.contains(", 0 failed"), "{output}");
    for words in says {
        assert!(output.contains(words), "{words:?} in:\n{output}");
    }
    assert!(output.contains("hint: the component lacks what a native run has"), "{output}");
}

/// A function of the tool that imports the standard library during a call: natively fine.
const PYTHON_LAZY_IMPORT: &str = r#"

def median(values):
    import statistics

    return statistics.median(values)
"#;

/// Tests that pass natively and fail in a Python component: the tool's import during a call
/// (the test module's own import of the same module must not hide that), and a host file
/// read without a grant.
const PYTHON_SANDBOX_TEST: &str = r#"import os
import statistics
import unittest

from word_stats import median


class SandboxTest(unittest.TestCase):
    def test_a_lazy_import(self):
        self.assertEqual(median([1, 3]), statistics.median([1, 3]))

    def test_a_host_file(self):
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyproject.toml")) as file:
            self.assertIn("[tool.toolcell]", file.read())
"#;

#[test]
fn a_new_python_tool_passes_its_tests_builds_and_answers_its_first_call() {
    let (project, test_command) =
        new_project_in("python", "word_stats", r#"{"text": "b a b", "top_words": 1}"#, r#""most_common":["b"]"#);
    tests_inside_the_component(
        &project,
        &test_command,
        &[("word_stats.py", PYTHON_LAZY_IMPORT), ("test_sandbox.py", PYTHON_SANDBOX_TEST)],
        &[
            "FAIL  test_sandbox.SandboxTest.test_a_lazy_import\n      ModuleNotFoundError: No module named 'statistics'",
            "FAIL  test_sandbox.SandboxTest.test_a_host_file\n      FileNotFoundError: [Errno 44]",
            "3 passed, 2 failed",
        ],
    );
}

/// A test that passes in Node (which has ICU) and fails in the component's engine.
const JAVASCRIPT_SANDBOX_TEST: &str = r#"import assert from "node:assert/strict";
import { describe, it } from "node:test";

describe("for people", () => {
  it("formats a count", () => {
    assert.equal(new Intl.NumberFormat("en").format(1234), "1,234");
  });
});
"#;

#[test]
fn a_new_javascript_tool_passes_its_tests_builds_and_answers_its_first_call() {
    let (project, test_command) = new_project_in("js", "word-stats", r#"{"text": "a\nb\n", "unit": "lines"}"#, "2");
    tests_inside_the_component(
        &project,
        &test_command,
        &[("sandbox.test.js", JAVASCRIPT_SANDBOX_TEST)],
        &[
            "FAIL  sandbox.test.js: for people > formats a count\n      ReferenceError: Intl is not defined",
            "the engine has no ICU",
            "3 passed, 1 failed",
        ],
    );
}
