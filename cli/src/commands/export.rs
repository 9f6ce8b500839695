//! `toolcell export-builtins DIR`: the built-in tools and their policy as a tools folder.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use toolcell_author::shell_quote;
use toolcell_runtime::policy::POLICY_FILE;

pub(crate) fn export_builtins(dir: &Path, force: bool) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let files = toolcell_tools::ALL
        .iter()
        .map(|(file, bytes)| (*file, *bytes))
        .chain([(POLICY_FILE, toolcell_tools::POLICY.as_bytes())]);
    let (mut written, mut same) = (0, 0);
    let mut differing = Vec::new();
    for (file, bytes) in files {
        let path = dir.join(file);
        match std::fs::read(&path) {
            Ok(existing) if existing == bytes => {
                same += 1;
                continue;
            }
            Ok(_) if !force => {
                differing.push(file);
                continue;
            }
            Ok(_) | Err(_) => {}
        }
        write_whole(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        written += 1;
    }
    if !differing.is_empty() {
        bail!(
            "{} already has {} that differ from the built-in ones and were kept; pass --force to replace them \
             (the other files were written)",
            dir.display(),
            differing.join(", ")
        );
    }
    println!("wrote {written} files to {} ({same} were already there, unchanged)", dir.display());
    let dir = shell_quote(&dir.display().to_string());
    println!("serve them from there, with your own tools beside them: toolcell --tools-dir {dir} --no-builtins serve");
    Ok(ExitCode::SUCCESS)
}

/// Writes `bytes` to `path` through a file beside it, renamed into place: a server watching
/// the folder never loads half a component.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let partial = path.with_file_name(format!(".{name}.partial"));
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, path)
}
