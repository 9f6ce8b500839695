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
}

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

    let output = toolcell(&dir).args(["build", "taken"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("holds no tool project"));
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
fn new_project_in(lang: &str, name: &str, optional: &str, expected: &str) {
    let dir = scratch(&format!("new-{lang}"));
    let created = run(toolcell(&dir).args(["new", name, "--lang", lang]), 0);
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
}

#[test]
fn a_new_python_tool_passes_its_tests_builds_and_answers_its_first_call() {
    new_project_in("python", "word_stats", r#"{"text": "b a b", "top_words": 1}"#, r#""most_common":["b"]"#);
}

#[test]
fn a_new_javascript_tool_passes_its_tests_builds_and_answers_its_first_call() {
    new_project_in("js", "word-stats", r#"{"text": "a\nb\n", "unit": "lines"}"#, "2");
}
