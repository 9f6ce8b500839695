//! Records the commit the binary is built from, for `toolcell --version`: `0.1.0 (1a2b3c4d5e6f)`.
//! Outside a git checkout (a packaged crate), the version alone.
//!
//! With `TOOLCELL_PRECOMPILED_DIR` (an absolute path; unset or empty for none), embeds the built-in tools' precompiled
//! code that `toolcell precompile --out DIR` wrote there (`$OUT_DIR/precompiled.rs`), and says
//! so in the version: `0.1.0 (1a2b3c4d5e6f, 8 tools precompiled)`.

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Names the folder of precompiled artifacts to embed.
const PRECOMPILED_DIR: &str = "TOOLCELL_PRECOMPILED_DIR";
/// The first bytes of an artifact `toolcell precompile` writes.
const ARTIFACT_MAGIC: &[u8; 8] = b"toolpre1";

fn main() {
    let version = env!("CARGO_PKG_VERSION");
    let mut notes: Vec<String> = git(&["rev-parse", "--short=12", "HEAD"]).into_iter().collect();
    let precompiled = embed_precompiled();
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

/// Writes `precompiled.rs`: `ARTIFACTS`, each artifact in `$TOOLCELL_PRECOMPILED_DIR` (none
/// without it), embedded with `include_bytes!`. Returns how many.
fn embed_precompiled() -> usize {
    println!("cargo:rerun-if-env-changed={PRECOMPILED_DIR}");
    let dir = std::env::var_os(PRECOMPILED_DIR).filter(|dir| !dir.is_empty());
    let artifacts = dir.map(|dir| artifacts_in(Path::new(&dir))).unwrap_or_default();
    let mut code = String::from("/// The built-in tools' precompiled code (`toolcell precompile`).\n");
    code.push_str("pub(crate) static ARTIFACTS: &[&[u8]] = &[\n");
    for artifact in &artifacts {
        println!("cargo:rerun-if-changed={}", artifact.display());
        let _ = writeln!(code, "    include_bytes!({:?}),", artifact.display().to_string());
    }
    code.push_str("];\n");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set for build scripts"));
    std::fs::write(out_dir.join("precompiled.rs"), code).expect("write precompiled.rs");
    artifacts.len()
}

/// The artifacts (`*.cwasm`) in `dir`, each checked to be one `toolcell precompile` wrote.
fn artifacts_in(dir: &Path) -> Vec<PathBuf> {
    assert!(
        dir.is_absolute(),
        "{PRECOMPILED_DIR}={} is relative; give the absolute path `toolcell precompile` printed",
        dir.display()
    );
    println!("cargo:rerun-if-changed={}", dir.display());
    let entries = std::fs::read_dir(dir).unwrap_or_else(|err| {
        panic!("{PRECOMPILED_DIR}={}: cannot read it ({err}); run `toolcell precompile --out DIR` first", dir.display())
    });
    let mut artifacts: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|extension| extension == "cwasm"))
        .collect();
    artifacts.sort();
    assert!(
        !artifacts.is_empty(),
        "{PRECOMPILED_DIR}={} has no .cwasm files; run `toolcell precompile --out {0}` first",
        dir.display()
    );
    let tools = embedded_tools();
    for artifact in &artifacts {
        let mut header = [0u8; ARTIFACT_MAGIC.len() + 32];
        let read = std::fs::File::open(artifact).and_then(|mut file| file.read_exact(&mut header));
        assert!(
            read.is_ok() && header.starts_with(ARTIFACT_MAGIC),
            "{} is not an artifact `toolcell precompile` wrote; write the folder again with it",
            artifact.display()
        );
        let from = &header[ARTIFACT_MAGIC.len()..];
        assert!(
            tools.iter().any(|(_, digest)| digest.as_bytes() == from),
            "{} was compiled from a component this build does not embed ({}): the tools were built again since \
             `toolcell precompile` ran (the python tool's build is not byte-for-byte reproducible). Build the \
             binary you run `precompile` with by the same cargo command as this build, with nothing changed \
             between (as `just install` does)",
            artifact.display(),
            tools.iter().map(|(file, _)| file.as_str()).collect::<Vec<_>>().join(", ")
        );
    }
    artifacts
}

/// The standard tools this build embeds (from toolcell-tools' build script), with their
/// digests: the BLAKE3 hash of their bytes, as an artifact's header names its component.
fn embedded_tools() -> Vec<(String, blake3::Hash)> {
    let dir = std::env::var_os("DEP_TOOLCELL_TOOLS_DIR").expect("toolcell-tools says where the tools are");
    let entries = std::fs::read_dir(&dir).expect("read the standard tools' folder");
    entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|extension| extension == "wasm"))
        .map(|path| {
            let bytes = std::fs::read(&path).expect("read a standard tool");
            (path.file_name().unwrap_or_default().to_string_lossy().into_owned(), blake3::hash(&bytes))
        })
        .collect()
}

/// What `git ARGS` prints, trimmed, when it succeeds.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok().filter(|output| output.status.success())?;
    let text = String::from_utf8(output.stdout).ok()?.trim().to_owned();
    (!text.is_empty()).then_some(text)
}
