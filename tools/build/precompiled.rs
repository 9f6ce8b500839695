//! The standard tools' precompiled code: with `TOOLCELL_PRECOMPILED_DIR` (an absolute path;
//! unset or empty for none), every artifact `toolcell precompile --out DIR` wrote there,
//! embedded as `PRECOMPILED` (`$OUT_DIR/precompiled.rs`), each checked to be code for one of
//! the tools this build embeds.

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use toolcell_guest_build::Artifact;

/// Names the folder of precompiled artifacts to embed.
const PRECOMPILED_DIR: &str = "TOOLCELL_PRECOMPILED_DIR";
/// The first bytes of an artifact `toolcell precompile` writes; the component's BLAKE3
/// digest follows.
const ARTIFACT_MAGIC: &[u8; 8] = b"toolpre1";

/// Writes `precompiled.rs` into `out_dir`: `PRECOMPILED`, the artifacts of
/// `$TOOLCELL_PRECOMPILED_DIR` for `tools` (none without it). Returns how many.
pub(crate) fn embed(tools: &[Artifact], out_dir: &Path) -> usize {
    println!("cargo:rerun-if-env-changed={PRECOMPILED_DIR}");
    let dir = std::env::var_os(PRECOMPILED_DIR).filter(|dir| !dir.is_empty());
    let artifacts = dir.map(|dir| artifacts_in(Path::new(&dir), tools)).unwrap_or_default();
    let mut code = String::from(
        "/// The standard tools' code, compiled ahead of time by `toolcell precompile` and embedded\n\
         /// when this crate was built with `TOOLCELL_PRECOMPILED_DIR` (else empty): each artifact\n\
         /// names the component it was compiled from by digest. Hand them to\n\
         /// `toolcell_runtime::load::Precompiled::new`.\n\
         pub static PRECOMPILED: &[&[u8]] = &[\n",
    );
    for artifact in &artifacts {
        println!("cargo:rerun-if-changed={}", artifact.display());
        let _ = writeln!(code, "    include_bytes!({:?}),", artifact.display().to_string());
    }
    code.push_str("];\n");
    std::fs::write(out_dir.join("precompiled.rs"), code).expect("write precompiled.rs");
    artifacts.len()
}

/// The artifacts (`*.cwasm`) in `dir`, each checked to be one `toolcell precompile` wrote,
/// for one of `tools`.
fn artifacts_in(dir: &Path, tools: &[Artifact]) -> Vec<PathBuf> {
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
    let digests: Vec<blake3::Hash> =
        tools.iter().map(|tool| blake3::hash(&std::fs::read(&tool.path).expect("read a built tool"))).collect();
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
            digests.iter().any(|digest| digest.as_bytes() == from),
            "{} was compiled from a component this build does not embed: a tool changed since `toolcell \
             precompile` ran, or the binary that ran it was built in another target folder (the python \
             tool's build is not byte-for-byte reproducible: builds share one build of it per target \
             folder). Run `precompile` with a binary built from the same sources in this build's target \
             folder (as `just install` does)",
            artifact.display(),
        );
    }
    artifacts
}
