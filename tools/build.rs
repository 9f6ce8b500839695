//! Puts the standard tools as components into `$OUT_DIR/tools/<name>.wasm`.
//!
//! In this repository they are built from their crates (`tools/<name>/`). A published copy of
//! this crate has no such crates: it carries the components themselves, built before packaging
//! into `prebuilt/` (see `.ci/package`), and copies them.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolcell_guest_build::{Artifact, GuestBuild, path_constants};

const TOOLS: [&str; 7] = ["calculator", "json_query", "regex", "datetime", "unit_convert", "http_fetch", "files"];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set"));
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set for build scripts"));
    let artifacts = if manifest_dir.join(TOOLS[0]).join("Cargo.toml").is_file() {
        build_from_source()
    } else {
        copy_prebuilt(&manifest_dir.join("prebuilt"), &out_dir.join("tools"))
    };
    write_constants(&artifacts, &out_dir);
}

fn build_from_source() -> Vec<Artifact> {
    let build = TOOLS.iter().fold(GuestBuild::new().libs(), |build, tool| {
        build.package(&format!("toolcell-tool-{}", tool.replace('_', "-")))
    });
    let artifacts = build.run("tools", |target| target.trim_start_matches("toolcell_tool_").to_owned());
    for tool in TOOLS {
        println!("cargo:rerun-if-changed={tool}");
    }
    artifacts
}

fn copy_prebuilt(prebuilt: &Path, dest: &Path) -> Vec<Artifact> {
    std::fs::create_dir_all(dest).expect("create the tools folder in OUT_DIR");
    let mut artifacts: Vec<Artifact> = TOOLS
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
        .collect();
    artifacts.sort_by(|a, b| a.target_name.cmp(&b.target_name));
    artifacts
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
