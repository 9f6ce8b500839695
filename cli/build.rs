//! Records the commit the binary is built from, for `toolcell --version`: `0.1.0 (1a2b3c4d5e6f)`.
//! Outside a git checkout (a packaged crate), the version alone.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let version = env!("CARGO_PKG_VERSION");
    let line = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) => format!("{version} ({commit})"),
        None => version.to_owned(),
    };
    println!("cargo:rustc-env=TOOLCELL_VERSION={line}");
    // Built again when HEAD moves: a checkout, a commit, a pull.
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]).map(PathBuf::from) {
        println!("cargo:rerun-if-changed={}", git_dir.join("HEAD").display());
        println!("cargo:rerun-if-changed={}", git_dir.join("packed-refs").display());
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={}", git_dir.join(branch).display());
        }
    } else {
        println!("cargo:rerun-if-changed=build.rs");
    }
}

/// What `git ARGS` prints, trimmed, when it succeeds.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok().filter(|output| output.status.success())?;
    let text = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (!text.is_empty()).then_some(text)
}
