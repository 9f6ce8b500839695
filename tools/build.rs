//! Builds the standard tools as components into `$OUT_DIR/tools/<name>.wasm`.

use std::fmt::Write as _;

use toolcell_guest_build::{GuestBuild, path_constants};

const TOOLS: [&str; 7] = ["calculator", "json_query", "regex", "datetime", "unit_convert", "http_fetch", "files"];

fn main() {
    let build = TOOLS.iter().fold(GuestBuild::new().libs(), |build, tool| {
        build.package(&format!("toolcell-tool-{}", tool.replace('_', "-")))
    });
    let artifacts = build.run("tools", |target| target.trim_start_matches("toolcell_tool_").to_owned());

    for tool in TOOLS {
        println!("cargo:rerun-if-changed={tool}");
    }
    let mut code = path_constants(&artifacts);
    code.push_str(
        "/// Every standard tool: its file name and its component bytes.\npub static ALL: &[(&str, &[u8])] = &[\n",
    );
    for artifact in &artifacts {
        let file = artifact.path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let _ = writeln!(code, "    ({file:?}, include_bytes!({:?})),", artifact.path);
    }
    code.push_str("];\n");
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR is set for build scripts");
    std::fs::write(format!("{out_dir}/tools.rs"), code).expect("write tools.rs");
}
