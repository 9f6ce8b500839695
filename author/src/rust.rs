//! Tools written in Rust: a crate depending on `toolcell-guest`, built by cargo.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use toolcell_guest_build::{TARGET, Toolchain, read_components};

use crate::{AuthorError, Built};

const CARGO_TOML: &str = include_str!("../templates/rust/Cargo.toml.template");
const TOOLCHAIN_TOML: &str = include_str!("../templates/rust/rust-toolchain.toml");
const GITIGNORE: &str = include_str!("../templates/rust/gitignore");
const LIB_RS: &str = include_str!("../templates/rust/lib.rs");

/// The files of a new tool crate named `name`, relative to its folder.
pub(crate) fn project_files(name: &str) -> Vec<(PathBuf, String)> {
    let function = name.replace('-', "_");
    let tool_struct = format!("{}Tool", pascal_case(&function));
    // A name with `-` is not a Rust identifier: the function takes `_` and the attribute
    // keeps the name the author chose.
    let attribute_name = if name.contains('-') { format!("name = \"{name}\", ") } else { String::new() };
    let title = crate::title_of(name);
    let fill = |template: &str| {
        template
            .replace("{{crate}}", name)
            .replace("{{title}}", &title)
            .replace("{{name}}", name)
            .replace("{{function}}", &function)
            .replace("{{tool_struct}}", &tool_struct)
            .replace("#[tool(", &format!("#[tool({attribute_name}"))
            .replace("{{sdk_dependency}}", &sdk_dependency())
    };
    vec![
        (PathBuf::from("Cargo.toml"), fill(CARGO_TOML)),
        (PathBuf::from("rust-toolchain.toml"), TOOLCHAIN_TOML.to_owned()),
        (PathBuf::from(".gitignore"), GITIGNORE.to_owned()),
        (PathBuf::from("src/lib.rs"), fill(LIB_RS)),
    ]
}

/// The dependency line for the guest SDK: this source tree's `guest-sdk/` when it is still
/// where this binary was built from; else (a CLI installed from crates.io, or a clone since
/// removed) the `toolcell-guest` of this version on crates.io (the crates are published
/// together, `cargo publish --workspace`).
fn sdk_dependency() -> String {
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../guest-sdk");
    match local.canonicalize() {
        Ok(path) if path.join("Cargo.toml").is_file() => {
            format!("toolcell-guest = {{ path = {} }}", toml_string(&path.to_string_lossy()))
        }
        _ => format!("toolcell-guest = \"{}\"", env!("CARGO_PKG_VERSION")),
    }
}

/// `text` as a TOML literal string when it can be one, else a basic string.
fn toml_string(text: &str) -> String {
    if text.contains(['\'', '\n', '\r']) { format!("{text:?}") } else { format!("'{text}'") }
}

/// Builds the crate (or every tool crate of the workspace) in `dir` with cargo and returns
/// its components.
pub(crate) fn build(dir: &Path) -> Result<Vec<Built>, AuthorError> {
    let toolchain = Toolchain::detect(dir);
    toolchain.ensure_target_installed().map_err(AuthorError::Toolchain)?;
    let manifest = dir.join("Cargo.toml");
    let mut command = toolchain.cargo();
    command
        .args(["build", "--release", "--target", TARGET, "--message-format=json-render-diagnostics", "--manifest-path"])
        .arg(&manifest)
        .stdout(Stdio::piped());
    let mut child = command.spawn().map_err(|source| AuthorError::Spawn { program: "cargo".to_owned(), source })?;
    #[expect(clippy::expect_used, reason = "stdout is piped just above")]
    let stdout = child.stdout.take().expect("stdout is piped");
    let components = read_components(BufReader::new(stdout));
    let status = child.wait().map_err(|source| AuthorError::Spawn { program: "cargo".to_owned(), source })?;
    if !status.success() {
        return Err(AuthorError::BuildFailed { program: "cargo".to_owned(), status });
    }
    // Only this project's libraries are tools: not its dependencies, not its binaries.
    let built: Vec<Built> = components
        .into_iter()
        .filter(|component| component.kinds.iter().any(|kind| kind == "cdylib"))
        .filter(|component| component.manifest_path.starts_with(dir))
        .map(|component| Built { wasm: component.wasm, project: component.manifest_path })
        .collect();
    if built.is_empty() {
        return Err(AuthorError::NoComponent(format!(
            "cargo built {} but made no .wasm component: a tool crate needs `crate-type = [\"cdylib\", \"rlib\"]` \
             under `[lib]` in its Cargo.toml, and a `#[tool]` function in src/lib.rs",
            manifest.display()
        )));
    }
    Ok(built)
}

/// A Rust test binary: a `wasi:cli/command` component that runs libtest.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TestBinary {
    /// The `Cargo.toml` of the package it tests.
    pub manifest: PathBuf,
    /// The component.
    pub wasm: PathBuf,
}

/// Builds the tests of the crate (or of every crate of the workspace) in `dir` for
/// `wasm32-wasip2` (`cargo test --no-run`, the test profile as natively) and returns the test
/// binaries of its own packages: `wasi:cli/command` components, run by libtest.
pub(crate) fn build_tests(dir: &Path) -> Result<Vec<TestBinary>, AuthorError> {
    let toolchain = Toolchain::detect(dir);
    toolchain.ensure_target_installed().map_err(AuthorError::Toolchain)?;
    let manifest = dir.join("Cargo.toml");
    let mut command = toolchain.cargo();
    // The tests call the tool's function with no host in front of it: the SDK checks the
    // arguments and results as the host would, as it does natively.
    command
        .args(["test", "--no-run", "--target", TARGET, "--features", "toolcell-guest/host-checks"])
        .args(["--message-format=json-render-diagnostics", "--manifest-path"])
        .arg(&manifest)
        .stdout(Stdio::piped());
    let mut child = command.spawn().map_err(|source| AuthorError::Spawn { program: "cargo".to_owned(), source })?;
    #[expect(clippy::expect_used, reason = "stdout is piped just above")]
    let stdout = child.stdout.take().expect("stdout is piped");
    let binaries = read_test_binaries(BufReader::new(stdout), dir);
    let status = child.wait().map_err(|source| AuthorError::Spawn { program: "cargo".to_owned(), source })?;
    if !status.success() {
        return Err(AuthorError::BuildFailed { program: "cargo test --no-run".to_owned(), status });
    }
    Ok(binaries)
}

/// The test executables among cargo's `compiler-artifact` messages, of packages under `dir`.
fn read_test_binaries(messages: impl std::io::BufRead, dir: &Path) -> Vec<TestBinary> {
    messages
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
        .filter(|message| message["reason"] == "compiler-artifact" && message["profile"]["test"] == true)
        .filter_map(|message| {
            let manifest = PathBuf::from(message["manifest_path"].as_str()?);
            let wasm = PathBuf::from(message["executable"].as_str()?);
            manifest.starts_with(dir).then_some(TestBinary { manifest, wasm })
        })
        .collect()
}

fn pascal_case(snake: &str) -> String {
    snake
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|first| first.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}

/// Whether `word` is reserved in Rust 2024 (strict or reserved keywords), so cannot name a
/// function.
pub(crate) fn is_keyword(word: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn",
        "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro",
        "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "self", "static", "struct", "super",
        "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
    ];
    KEYWORDS.contains(&word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hyphenated_name_keeps_its_tool_name_and_gets_a_rust_function_name() {
        let files = project_files("word-count");
        let lib = &files.iter().find(|(path, _)| path.ends_with("lib.rs")).unwrap().1;
        assert!(lib.contains("#[tool(name = \"word-count\", title = \"Word count\", read_only, idempotent)]"), "{lib}");
        assert!(lib.contains("pub fn word_count("));
        assert!(lib.contains("WordCountTool::invoke"));
        let manifest = &files.iter().find(|(path, _)| path.ends_with("Cargo.toml")).unwrap().1;
        assert!(manifest.contains("name = \"word-count\""));
        assert!(!manifest.contains("{{") && !lib.contains("{{"));
    }

    #[test]
    fn the_test_binaries_are_the_projects_own_test_executables() {
        let messages = [
            r#"{"reason":"compiler-artifact","manifest_path":"/p/Cargo.toml","profile":{"test":true},"executable":"/t/deps/p-1.wasm"}"#,
            r#"{"reason":"compiler-artifact","manifest_path":"/p/Cargo.toml","profile":{"test":false},"executable":null}"#,
            r#"{"reason":"compiler-artifact","manifest_path":"/registry/serde/Cargo.toml","profile":{"test":true},"executable":"/t/x.wasm"}"#,
            r#"{"reason":"build-finished","success":true}"#,
            "not json",
        ]
        .join("\n");
        let binaries = read_test_binaries(messages.as_bytes(), Path::new("/p"));
        assert_eq!(binaries.len(), 1);
        assert_eq!(binaries[0].wasm, PathBuf::from("/t/deps/p-1.wasm"));
        assert_eq!(binaries[0].manifest, PathBuf::from("/p/Cargo.toml"));
    }

    #[test]
    fn the_sdk_dependency_is_this_source_tree_when_it_is_here() {
        let line = sdk_dependency();
        let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../guest-sdk").canonicalize().unwrap();
        assert_eq!(line, format!("toolcell-guest = {{ path = '{}' }}", sdk.display()));
    }

    #[test]
    fn a_new_crate_builds_with_the_rust_toolcell_is_tested_with() {
        let channel = |toml: &str| {
            toml.lines()
                .find_map(|line| line.strip_prefix("channel = "))
                .map(|value| value.trim_matches('"').to_owned())
        };
        let workspace = include_str!("../../rust-toolchain.toml");
        assert_eq!(channel(TOOLCHAIN_TOML), channel(workspace));
        assert!(channel(workspace).is_some());
    }
}
