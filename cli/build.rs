//! Records the commit the binary is built from, for `toolcell --version`: `0.1.0 (1a2b3c4d5e6f)`.
//! Outside a git checkout (a packaged crate), the version alone.
//!
//! When toolcell-tools embeds the standard tools' precompiled code (`TOOLCELL_PRECOMPILED_DIR`),
//! the version says so: `0.1.0 (1a2b3c4d5e6f, 8 tools precompiled)`.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let version = env!("CARGO_PKG_VERSION");
    let mut notes: Vec<String> = git(&["rev-parse", "--short=12", "HEAD"]).into_iter().collect();
    // toolcell-tools' build script embeds the precompiled code, and says how many.
    let precompiled: usize =
        std::env::var("DEP_TOOLCELL_TOOLS_PRECOMPILED").ok().and_then(|n| n.parse().ok()).unwrap_or(0);
    if precompiled > 0 {
        notes.push(format!("{precompiled} tools precompiled"));
    }
    let line = if notes.is_empty() { version.to_owned() } else { format!("{version} ({})", notes.join(", ")) };
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
