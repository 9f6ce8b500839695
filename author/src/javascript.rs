//! Tools written in JavaScript: a module whose default export is a `tool({...})`, bundled and
//! built into a component by the JavaScript SDK's `build.mjs` (esbuild and componentize-js,
//! installed once, pinned by its package-lock.json).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{AuthorError, Built, sdk};

fn sdk_dir() -> Result<PathBuf, AuthorError> {
    sdk::language_dir("js", "JavaScript")
}

/// The files of a new JavaScript tool project named `name`, relative to its folder.
pub(crate) fn project_files(name: &str) -> Result<Vec<(PathBuf, String)>, AuthorError> {
    let sdk = sdk_dir()?;
    let module = name.replace('-', "_");
    let title = crate::title_of(name);
    let sdk_path = sdk.to_string_lossy();
    sdk::template_files(
        &sdk,
        &[("{{name}}", name), ("{{title}}", &title), ("{{module}}", &module), ("{{sdk_path}}", &sdk_path)],
    )
}

/// How to run a new project's tests natively, from its folder.
pub(crate) fn test_command() -> String {
    "npm install && npm test".to_owned()
}

/// Builds the project in `dir` into `build/<folder>.wasm`.
pub(crate) fn build(dir: &Path) -> Result<Vec<Built>, AuthorError> {
    let wasm = sdk::output_path(dir);
    run_build(dir, &wasm, false)?;
    Ok(vec![Built { wasm, project: dir.join("package.json") }])
}

/// Builds the project's test harness (see [`crate::selftest`]) into `wasm`.
pub(crate) fn build_tests_to(dir: &Path, wasm: &Path) -> Result<(), AuthorError> {
    run_build(dir, wasm, true)
}

fn run_build(dir: &Path, wasm: &Path, tests: bool) -> Result<(), AuthorError> {
    let sdk = sdk_dir()?;
    sdk::installed_once(
        "the JavaScript SDK's build tools (esbuild, componentize-js)",
        &sdk.join("package-lock.json"),
        &sdk.join("node_modules/.toolcell-installed"),
        || {
            let mut install = Command::new("npm");
            install.args(["ci", "--no-audit", "--no-fund"]).current_dir(&sdk);
            sdk::run(install, "npm ci")
        },
    )?;
    let mut command = Command::new("node");
    command.arg(sdk.join("build.mjs")).arg(dir).arg("-o").arg(wasm);
    if tests {
        command.arg("--tests");
    }
    sdk::run(command, "node build.mjs")
}
