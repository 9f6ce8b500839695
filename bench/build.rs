//! Builds the benchmark's tools (`guests/examples/*.rs`) into `$OUT_DIR/guests/`, and the
//! Extism plugin (`extism-add/`) for wasm32-unknown-unknown.

use std::path::{Path, PathBuf};
use std::process::Command;

use toolcell_guest_build::{GuestBuild, path_constants};

const EXTISM_TARGET: &str = "wasm32-unknown-unknown";

fn main() {
    let artifacts = GuestBuild::new().package("toolcell-bench-guests").examples().run("guests", str::to_owned);
    println!("cargo:rerun-if-changed=guests");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set for build scripts"));
    let mut constants = path_constants(&artifacts);
    let plugin = build_extism_plugin(&out_dir);
    constants.push_str(&format!("pub const EXTISM_ADD: &str = {plugin:?};\n"));
    std::fs::write(out_dir.join("guests.rs"), constants).expect("write guests.rs");
}

/// A nested `cargo build` of `extism-add` in its own target directory (the outer build holds
/// the lock on the outer one), without the outer build's host flags.
fn build_extism_plugin(out_dir: &Path) -> PathBuf {
    println!("cargo:rerun-if-changed=extism-add");
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR is set"));
    let target_dir = manifest_dir.join("target").join("wasm-extism");
    let mut cargo = Command::new("cargo");
    cargo
        .current_dir(&manifest_dir)
        .args(["build", "--release", "--package", "toolcell-bench-extism-add", "--target", EXTISM_TARGET])
        .env("CARGO_TARGET_DIR", &target_dir);
    for var in
        ["CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", "RUSTC_WORKSPACE_WRAPPER", "RUSTC_WRAPPER", "CARGO_BUILD_TARGET"]
    {
        cargo.env_remove(var);
    }
    let built = cargo.status().is_ok_and(|status| status.success());
    assert!(
        built,
        "building the Extism plugin failed (see above); if the target is missing: rustup target add {EXTISM_TARGET}"
    );
    let wasm = target_dir.join(EXTISM_TARGET).join("release").join("toolcell_bench_extism_add.wasm");
    let copy = out_dir.join("extism_add.wasm");
    std::fs::copy(&wasm, &copy).unwrap_or_else(|err| panic!("copy {}: {err}", wasm.display()));
    copy
}
