//! Tools written in Python: a module with one `@tool` function, built into a component by the
//! Python SDK's `build.py` with componentize-py (installed once, pinned, beside the SDK).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{AuthorError, Built, sdk};

fn sdk_dir() -> Result<PathBuf, AuthorError> {
    sdk::language_dir("python", "Python")
}

/// The files of a new Python tool project named `name`, relative to its folder.
pub(crate) fn project_files(name: &str) -> Result<Vec<(PathBuf, String)>, AuthorError> {
    let module = name.replace('-', "_");
    let title = crate::title_of(name);
    let values = [("{{name}}", name), ("{{title}}", &title), ("{{module}}", &module), ("{{function}}", &module)];
    sdk::template_files(&sdk_dir()?, &values)
}

/// How to run a new project's tests natively, from its folder.
pub(crate) fn test_command() -> Result<String, AuthorError> {
    Ok(format!("PYTHONPATH={} python3 -m unittest", crate::shell_quote(&sdk_dir()?.to_string_lossy())))
}

/// Builds the project in `dir` into `build/<folder>.wasm`.
pub(crate) fn build(dir: &Path) -> Result<Vec<Built>, AuthorError> {
    let wasm = sdk::output_path(dir);
    build_to(dir, &wasm)?;
    Ok(vec![Built { wasm, project: dir.join("pyproject.toml") }])
}

/// Builds the project in `dir` into the component file `wasm`.
pub(crate) fn build_to(dir: &Path, wasm: &Path) -> Result<(), AuthorError> {
    run_build(dir, wasm, false)
}

/// Builds the project's test harness (see [`crate::selftest`]) into `wasm`.
pub(crate) fn build_tests_to(dir: &Path, wasm: &Path) -> Result<(), AuthorError> {
    run_build(dir, wasm, true)
}

fn run_build(dir: &Path, wasm: &Path, tests: bool) -> Result<(), AuthorError> {
    let sdk = sdk_dir()?;
    let venv = sdk.join(".build-venv");
    let python = if cfg!(windows) { venv.join("Scripts/python.exe") } else { venv.join("bin/python") };
    let requirements = sdk.join("requirements-build.txt");
    sdk::installed_once("componentize-py for Python tools", &requirements, &venv.join(".toolcell-installed"), || {
        let mut create = Command::new("python3");
        create.args(["-m", "venv"]).arg(&venv);
        sdk::run(create, "python3 -m venv")?;
        let mut install = Command::new(&python);
        install.args(["-m", "pip", "install", "--disable-pip-version-check", "--quiet", "-r"]).arg(&requirements);
        sdk::run(install, "pip install")
    })?;
    let mut command = Command::new(&python);
    command.arg(sdk.join("build.py")).arg(dir).arg("-o").arg(wasm);
    if tests {
        command.arg("--tests");
    }
    // The build imports the tool natively first; it leaves no __pycache__ in the project.
    command.env("PYTHONDONTWRITEBYTECODE", "1");
    sdk::run(command, "build.py")
}

/// The files a build of a Python project depends on besides the project: the SDK's package
/// and build script, and the pinned build tools.
pub(crate) fn sdk_inputs() -> Result<Vec<PathBuf>, AuthorError> {
    let sdk = sdk_dir()?;
    Ok(vec![sdk.join("toolcell_tool"), sdk.join("build.py"), sdk.join("wit"), sdk.join("requirements-build.txt")])
}
