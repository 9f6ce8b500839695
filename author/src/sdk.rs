//! What the Python and JavaScript SDKs share: where their folder is, their project templates,
//! and build tools installed once beside them.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::AuthorError;

/// Overrides where the SDKs are: the `sdk/` folder of a toolcell source tree.
pub(crate) const SDK_DIR_VARIABLE: &str = "TOOLCELL_SDK_DIR";

/// The folder of one language's SDK (`python` or `js`): under `$TOOLCELL_SDK_DIR`, else
/// under the `sdk/` folder of the source tree this binary was built from.
pub(crate) fn language_dir(language: &str, title: &str) -> Result<PathBuf, AuthorError> {
    let root = std::env::var_os(SDK_DIR_VARIABLE)
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk"), PathBuf::from);
    let dir = root.join(language);
    match dir.canonicalize() {
        Ok(dir) if dir.join("template").is_dir() => Ok(dir),
        _ => Err(AuthorError::SdkMissing { language: title.to_owned(), dir }),
    }
}

/// The files of `sdk_dir/template/`, every `{{key}}` in their names and contents replaced.
pub(crate) fn template_files(sdk_dir: &Path, values: &[(&str, &str)]) -> Result<Vec<(PathBuf, String)>, AuthorError> {
    let fill = |text: &str| values.iter().fold(text.to_owned(), |text, (key, value)| text.replace(key, value));
    let template = sdk_dir.join("template");
    let mut files = Vec::new();
    let mut folders = vec![template.clone()];
    while let Some(folder) = folders.pop() {
        let entries = std::fs::read_dir(&folder).map_err(|source| AuthorError::Io { path: folder.clone(), source })?;
        for entry in entries {
            let path = entry.map_err(|source| AuthorError::Io { path: folder.clone(), source })?.path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let text =
                std::fs::read_to_string(&path).map_err(|source| AuthorError::Io { path: path.clone(), source })?;
            #[expect(clippy::expect_used, reason = "the walk starts at the template folder")]
            let relative = path.strip_prefix(&template).expect("walked from the template folder");
            files.push((PathBuf::from(fill(&relative.to_string_lossy())), fill(&text)));
        }
    }
    files.sort();
    Ok(files)
}

/// Makes sure build tools are installed: runs `install` once, under a lock so that two
/// builds at the same time do not install over each other. `pinned` is the file that pins
/// their versions; a copy of it beside them (`marker`) says which versions are installed, so
/// a changed pin installs again.
pub(crate) fn installed_once(
    what: &str,
    pinned: &Path,
    marker: &Path,
    install: impl FnOnce() -> Result<(), AuthorError>,
) -> Result<(), AuthorError> {
    let wanted = std::fs::read(pinned).map_err(|source| AuthorError::Io { path: pinned.to_owned(), source })?;
    let current = || std::fs::read(marker).is_ok_and(|installed| installed == wanted);
    if current() {
        return Ok(());
    }
    let lock_path = pinned.with_file_name(".toolcell-install.lock");
    let lock = File::create(&lock_path).map_err(|source| AuthorError::Io { path: lock_path.clone(), source })?;
    lock.lock().map_err(|source| AuthorError::Io { path: lock_path, source })?;
    if current() {
        return Ok(());
    }
    eprintln!("installing {what} (once; this takes a minute)…");
    install()?;
    std::fs::write(marker, &wanted).map_err(|source| AuthorError::Io { path: marker.to_owned(), source })
}

/// Runs `command` to completion, its output going to this process's stderr and stdout.
pub(crate) fn run(mut command: Command, program: &str) -> Result<(), AuthorError> {
    let status = command.status().map_err(|source| AuthorError::Spawn { program: program.to_owned(), source })?;
    if status.success() { Ok(()) } else { Err(AuthorError::BuildFailed { program: program.to_owned(), status }) }
}

/// Where a project's component is written: `build/<folder name>.wasm` in the project.
pub(crate) fn output_path(project: &Path) -> PathBuf {
    let name = project.file_name().map_or_else(|| "tool".into(), |name| name.to_string_lossy().into_owned());
    project.join("build").join(format!("{name}.wasm"))
}
