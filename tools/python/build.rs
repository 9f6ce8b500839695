//! Puts the `python` tool's component at `$OUT_DIR/python.wasm`, and its path in the
//! `DEP_TOOLCELL_TOOL_PYTHON_WASM` of dependents' build scripts.
//!
//! In this repository it is built from the Python project beside this file, with the Python
//! SDK and componentize-py (which toolcell-author installs once beside the SDK, from PyPI). A
//! published copy has no sources: it carries the component, built before packaging into
//! `prebuilt/` (see `.ci/package`), and copies it.
//!
//! A build of the same sources is other bytes each time (componentize-py snapshots a running
//! interpreter), so the component is kept in the folder every configuration of the outer
//! build shares (`toolcell_guest_build::shared_guest_dir`), named by its inputs' digest: `cargo
//! test`, `cargo build` and the Python extension's build then embed the same bytes, and code
//! `toolcell precompile` compiled from one fits them all.

use std::path::{Path, PathBuf};
use std::time::Instant;

use toolcell_guest_build::progress::{Progress, elapsed};
use toolcell_guest_build::shared_guest_dir;

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
    let sources: Vec<PathBuf> = SOURCES.iter().map(|file| project.join(file)).collect();
    let sdk = toolcell_author::python_build_inputs().unwrap_or_else(|err| panic!("the Python SDK: {err}"));
    for input in sources.iter().chain(&sdk) {
        println!("cargo::rerun-if-changed={}", input.display());
    }
    let kept = shared_guest_dir().join("python-tool");
    let component = kept.join(format!("{}.wasm", inputs_digest(&sources, &sdk)));
    if !component.is_file() {
        build_into(project, &kept, &component);
    }
    std::fs::copy(&component, wasm)
        .unwrap_or_else(|err| panic!("copy {} to {}: {err}", component.display(), wasm.display()));
}

/// Builds the component into `kept` as `component`, unless another build (another
/// configuration, at the same time) puts it there first; of the others kept, only the newest
/// stays.
fn build_into(project: &Path, kept: &Path, component: &Path) {
    // Tens of seconds, and a minute more the first time: say so while it runs.
    let mut progress = Progress::to_cargo();
    progress.status(
        "Building",
        "the `python` tool: CPython as a component, with componentize-py (installed from PyPI the first time)",
    );
    let started = Instant::now();
    std::fs::create_dir_all(kept).unwrap_or_else(|err| panic!("create {}: {err}", kept.display()));
    let building = kept.join(format!("building-{}.tmp", std::process::id()));
    toolcell_author::build_python_to(project, &building).unwrap_or_else(|err| {
        let _ = std::fs::remove_file(&building);
        panic!(
            "building the `python` tool from {} failed: {err}. It needs Python 3.11+ (`python3`) and, the first \
             time, PyPI to install componentize-py",
            project.display()
        )
    });
    // A link fails where the name is taken: the first build to finish is the one every
    // configuration embeds.
    match std::fs::hard_link(&building, component) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(err) => panic!("keep {} as {}: {err}", building.display(), component.display()),
    }
    let _ = std::fs::remove_file(&building);
    remove_older(kept, component);
    progress.status("Finished", &format!("the `python` tool in {}", elapsed(started.elapsed())));
}

/// Removes the components kept from other inputs (21 MB each) but the newest, so that going
/// back one change builds nothing.
fn remove_older(kept: &Path, component: &Path) {
    let Ok(entries) = std::fs::read_dir(kept) else { return };
    let mut others: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path != component && path.extension().is_some_and(|ext| ext == "wasm"))
        .filter_map(|path| Some((path.metadata().ok()?.modified().ok()?, path)))
        .collect();
    others.sort();
    others.pop();
    for (_, path) in others {
        let _ = std::fs::remove_file(path);
    }
}

/// The BLAKE3 digest (hex) of everything the build reads: the project's `sources` and the
/// SDK's files (`sdk`, whose folders are walked, Python's bytecode caches left out), each
/// named by its path.
fn inputs_digest(sources: &[PathBuf], sdk: &[PathBuf]) -> String {
    let mut files = sources.to_vec();
    for input in sdk {
        walk(input, &mut files);
    }
    files.sort();
    let mut hasher = blake3::Hasher::new();
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_else(|err| panic!("read {}: {err}", file.display()));
        let name = file.to_string_lossy();
        hasher.update(&(name.len() as u64).to_le_bytes()).update(name.as_bytes());
        hasher.update(&(bytes.len() as u64).to_le_bytes()).update(&bytes);
    }
    hasher.finalize().to_hex().to_string()
}

/// `path`, or the files under it.
fn walk(path: &Path, files: &mut Vec<PathBuf>) {
    if !path.is_dir() {
        files.push(path.to_owned());
        return;
    }
    let entries = std::fs::read_dir(path).unwrap_or_else(|err| panic!("read {}: {err}", path.display()));
    for entry in entries.flatten() {
        let path = entry.path();
        let cache = path.file_name().is_some_and(|name| name == "__pycache__");
        if !cache && path.extension().is_none_or(|ext| ext != "pyc") {
            walk(&path, files);
        }
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
