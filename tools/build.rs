//! Puts the standard tools as components into `$OUT_DIR/tools/<name>.wasm`, with their
//! policy file.
//!
//! In this repository the Rust tools are built from their crates (`tools/<name>/`). A
//! published copy of this crate has no such crates: it carries the components themselves,
//! built before packaging into `prebuilt/` (see `.ci/package`), and copies them. `python`
//! comes from the crate toolcell-tool-python (`tools/python/`), either way.
//!
//! With `TOOLCELL_PRECOMPILED_DIR`, it also embeds the tools' precompiled code
//! (`build/precompiled.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolcell_guest_build::{Artifact, GuestBuild, path_constants, with_metadata_section};

#[path = "build/precompiled.rs"]
mod precompiled;

/// The tools written in Rust, each a crate `toolcell-tool-<name>`.
const RUST_TOOLS: [&str; 7] = ["calculator", "json_query", "regex", "datetime", "unit_convert", "http_fetch", "files"];
/// The standard tools' policy, copied into the tools folder beside them.
const POLICY_FILE: &str = "toolcell.toml";
/// What each standard tool announces of itself, written into its component.
const DEFINITIONS_FILE: &str = "definitions.json";

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set"));
    let tools_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set for build scripts")).join("tools");
    std::fs::create_dir_all(&tools_dir).expect("create the tools folder in OUT_DIR");
    let mut artifacts = if manifest_dir.join(RUST_TOOLS[0]).join("Cargo.toml").is_file() {
        build_rust_tools()
    } else {
        copy_prebuilt(&manifest_dir.join("prebuilt"), &tools_dir)
    };
    artifacts.push(copy_python(&tools_dir));
    artifacts.sort_by(|a, b| a.target_name.cmp(&b.target_name));
    announce(&artifacts, &manifest_dir.join(DEFINITIONS_FILE));
    write_constants(&artifacts, tools_dir.parent().expect("OUT_DIR"));
    let precompiled = precompiled::embed(&artifacts, tools_dir.parent().expect("OUT_DIR"));
    // For cli/build.rs, whose version says so.
    println!("cargo::metadata=precompiled={precompiled}");
    let policy = manifest_dir.join(POLICY_FILE);
    std::fs::copy(&policy, tools_dir.join(POLICY_FILE)).expect("copy toolcell.toml into the tools folder");
    println!("cargo:rerun-if-changed={}", policy.display());
}

/// Writes each tool's definition from `definitions` into its component's `toolcell-metadata`
/// section, so that a server lists the tool before compiling it. The file is kept true by the
/// test `standard_tools_announce_what_they_export` (tests/it/announce.rs), which rewrites it
/// with `UPDATE_DEFINITIONS=1`; a tool it does not name announces nothing.
fn announce(artifacts: &[Artifact], definitions: &Path) {
    println!("cargo:rerun-if-changed={}", definitions.display());
    let text = std::fs::read_to_string(definitions).expect("read tools/definitions.json");
    let definitions: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&text).expect("tools/definitions.json is a JSON object of definitions by tool");
    for artifact in artifacts {
        let name = artifact.path.file_stem().and_then(|stem| stem.to_str()).unwrap_or_default();
        let Some(definition) = definitions.get(name) else { continue };
        let payload = serde_json::to_vec(definition).expect("a JSON value serializes");
        let component = std::fs::read(&artifact.path).expect("read a built tool");
        std::fs::write(&artifact.path, with_metadata_section(&component, &payload)).expect("write a built tool");
    }
}

fn build_rust_tools() -> Vec<Artifact> {
    let build = RUST_TOOLS.iter().fold(GuestBuild::new().libs(), |build, tool| {
        build.package(&format!("toolcell-tool-{}", tool.replace('_', "-")))
    });
    let artifacts = build.run("tools", |target| target.trim_start_matches("toolcell_tool_").to_owned());
    for tool in RUST_TOOLS {
        println!("cargo:rerun-if-changed={tool}");
    }
    artifacts
}

/// The `python` tool, from toolcell-tool-python's build script.
fn copy_python(dest: &Path) -> Artifact {
    let built =
        std::env::var_os("DEP_TOOLCELL_TOOL_PYTHON_WASM").expect("toolcell-tool-python says where its component is");
    let path = dest.join("python.wasm");
    std::fs::copy(&built, &path).expect("copy python.wasm into the tools folder");
    println!("cargo:rerun-if-changed={}", PathBuf::from(built).display());
    Artifact { target_name: "toolcell_tool_python".into(), path }
}

fn copy_prebuilt(prebuilt: &Path, dest: &Path) -> Vec<Artifact> {
    RUST_TOOLS
        .iter()
        .map(|tool| {
            let from = prebuilt.join(format!("{tool}.wasm"));
            let path = dest.join(format!("{tool}.wasm"));
            std::fs::copy(&from, &path).unwrap_or_else(|err| {
                panic!(
                    "this copy of toolcell-tools has neither the tools' crates nor the prebuilt {}: {err}. \
                     In the repository, run .ci/package to put the built components in prebuilt/.",
                    from.display()
                )
            });
            println!("cargo:rerun-if-changed={}", from.display());
            Artifact { target_name: format!("toolcell_tool_{tool}"), path }
        })
        .collect()
}

/// `tools.rs`: a path constant per tool and `ALL`, every tool's file name and bytes.
fn write_constants(artifacts: &[Artifact], out_dir: &Path) {
    let mut code = path_constants(artifacts);
    code.push_str(
        "/// Every standard tool: its file name and its component bytes.\npub static ALL: &[(&str, &[u8])] = &[\n",
    );
    for artifact in artifacts {
        let file = artifact.path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let _ = writeln!(code, "    ({file:?}, include_bytes!({:?})),", artifact.path);
    }
    code.push_str("];\n");
    std::fs::write(out_dir.join("tools.rs"), code).expect("write tools.rs");
}
