//! Puts the `python` tool's component at `$OUT_DIR/python.wasm`, and its path in the
//! `DEP_TOOLCELL_TOOL_PYTHON_WASM` of dependents' build scripts.
//!
//! In this repository it is built from the Python project beside this file, with the Python
//! SDK and componentize-py (which toolcell-author installs once beside the SDK, from PyPI). A
//! published copy has no sources: it carries the component, built before packaging into
//! `prebuilt/` (see `.ci/package`), and copies it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use toolcell_guest_build::progress::{Progress, elapsed};

/// The project's files, besides the SDK's, that the component is built from.
const SOURCES: [&str; 4] = ["pyproject.toml", "python_tool.py", "_toolcell_runner.py", "_toolcell_tools.py"];

fn main() {
    let project = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set for build scripts"));
    let wasm = out_dir.join("python.wasm");
    if project.join("python_tool.py").is_file() {
        build(&project, &wasm);
    } else {
        copy_prebuilt(&project.join("prebuilt").join("python.wasm"), &wasm);
    }
    println!("cargo::metadata=wasm={}", wasm.display());
}

fn build(project: &Path, wasm: &Path) {
    // Tens of seconds, and a minute more the first time: say so while it runs.
    let mut progress = Progress::to_cargo();
    progress.status(
        "Building",
        "the `python` tool: CPython as a component, with componentize-py (installed from PyPI the first time)",
    );
    let started = Instant::now();
    let inputs = toolcell_author::build_python_to(project, wasm).unwrap_or_else(|err| {
        panic!(
            "building the `python` tool from {} failed: {err}. It needs Python 3.11+ (`python3`) and, the first \
             time, PyPI to install componentize-py",
            project.display()
        )
    });
    progress.status("Finished", &format!("the `python` tool in {}", elapsed(started.elapsed())));
    for file in SOURCES {
        println!("cargo::rerun-if-changed={}", project.join(file).display());
    }
    for input in inputs {
        println!("cargo::rerun-if-changed={}", input.display());
    }
}

fn copy_prebuilt(prebuilt: &Path, wasm: &Path) {
    std::fs::copy(prebuilt, wasm).unwrap_or_else(|err| {
        panic!(
            "this copy of toolcell-tool-python has neither the tool's sources nor the prebuilt {}: {err}. In the \
             repository, run .ci/package to put the built component in prebuilt/.",
            prebuilt.display()
        )
    });
    println!("cargo::rerun-if-changed={}", prebuilt.display());
}
