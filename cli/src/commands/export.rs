//! `toolcell export-builtins DIR`: the built-in tools and their policy as a tools folder.

use std::fs::OpenOptions;
use std::io::Write as _;
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
///
/// The file beside it is created anew (`O_CREAT | O_EXCL`, which never follows a symlink): a
/// symlink planted at its name cannot make the export write through it, outside the folder.
/// A stale one (an export killed midway, or a planted link) is unlinked first, never followed.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let partial = path.with_file_name(format!(".{name}.partial"));
    remove_stale(&partial)?;
    let mut file = OpenOptions::new().write(true).create_new(true).open(&partial)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&partial, path)
}

/// Unlinks what is at `partial`, if it is a file or a symlink (the link itself, not what it
/// points to). Anything else there is not ours to remove.
fn remove_stale(partial: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(partial) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(err),
        Ok(meta) if meta.is_file() || meta.file_type().is_symlink() => std::fs::remove_file(partial),
        Ok(_) => Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{} is in the way and is not a file: remove it and export again", partial.display()),
        )),
    }
}
