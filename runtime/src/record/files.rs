//! The granted directories of a recorded call, as the call found them when it started: kept in
//! the record, and written out again into a temporary folder for its replay, so that a replay
//! needs none of the host's files. Regular files and directories are kept, with their
//! modification times; symlinks and other special files are left out.

use std::fs::{self, File, FileTimes};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::policy::{DirGrant, OpenDir};
use crate::sandbox::journal::{from_hex, to_hex};

/// The most bytes of files one record keeps.
pub(crate) const MAX_RECORDED_FILE_BYTES: u64 = 16 << 20;
/// The most files and directories one record keeps.
pub(crate) const MAX_RECORDED_FILES: usize = 10_000;

/// A granted directory, as a recorded call found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RecordedDir {
    /// Where the tool saw it.
    pub guest: String,
    /// Whether it was granted read-write.
    pub writable: bool,
    /// Its files and directories, by path (`/`-separated, relative to it; `""` for itself).
    pub entries: Vec<RecordedEntry>,
}

/// A file or directory of a recorded directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RecordedEntry {
    /// Its path in the directory.
    pub path: String,
    /// Whether it is a directory.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub directory: bool,
    /// A file's content, as hex.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub content_hex: String,
    /// When it was last modified, in nanoseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_ns: Option<u64>,
}

/// What the granted `dirs` hold now.
///
/// # Errors
/// When they hold more than a record keeps, or cannot be read.
pub(crate) fn snapshot(dirs: &[OpenDir]) -> Result<Vec<RecordedDir>, String> {
    let mut budget = (MAX_RECORDED_FILE_BYTES, MAX_RECORDED_FILES);
    dirs.iter()
        .map(|dir| {
            let mut entries = Vec::new();
            walk(&dir.reopen_path(), "", &mut entries, &mut budget)
                .map_err(|err| format!("the granted directory {} {err}", dir.host.display()))?;
            Ok(RecordedDir { guest: dir.guest.clone(), writable: dir.writable, entries })
        })
        .collect()
}

/// Keeps `dir` (at `path` in the recorded directory) and everything under it, by name.
fn walk(dir: &Path, path: &str, entries: &mut Vec<RecordedEntry>, budget: &mut (u64, usize)) -> Result<(), String> {
    let unreadable = |err: std::io::Error| format!("cannot be read: {err}");
    take_place(budget)?;
    entries.push(RecordedEntry {
        path: path.to_owned(),
        directory: true,
        content_hex: String::new(),
        modified_ns: modified(&fs::metadata(dir).map_err(unreadable)?),
    });
    let mut children: Vec<_> = fs::read_dir(dir).map_err(unreadable)?.collect::<Result<_, _>>().map_err(unreadable)?;
    children.sort_by_key(fs::DirEntry::file_name);
    for child in children {
        let name = child.file_name().to_string_lossy().into_owned();
        let child_path = if path.is_empty() { name } else { format!("{path}/{name}") };
        let kind = child.file_type().map_err(unreadable)?;
        if kind.is_dir() {
            walk(&child.path(), &child_path, entries, budget)?;
        } else if kind.is_file() {
            let metadata = child.metadata().map_err(unreadable)?;
            if metadata.len() > budget.0 {
                return Err(format!(
                    "holds more than {} MiB of files, more than a record keeps",
                    MAX_RECORDED_FILE_BYTES >> 20
                ));
            }
            take_place(budget)?;
            let content = fs::read(child.path()).map_err(unreadable)?;
            budget.0 = budget.0.saturating_sub(content.len() as u64);
            entries.push(RecordedEntry {
                path: child_path,
                directory: false,
                content_hex: to_hex(&content),
                modified_ns: modified(&metadata),
            });
        }
    }
    Ok(())
}

fn take_place(budget: &mut (u64, usize)) -> Result<(), String> {
    if budget.1 == 0 {
        return Err(format!("holds more than {MAX_RECORDED_FILES} files and directories, more than a record keeps"));
    }
    budget.1 -= 1;
    Ok(())
}

fn modified(metadata: &fs::Metadata) -> Option<u64> {
    let since = metadata.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    u64::try_from(since.as_nanos()).ok()
}

/// Recorded directories written out for a replay, removed when dropped.
#[derive(Debug)]
pub(crate) struct WrittenOut {
    root: PathBuf,
    /// The grants a replay gives the tool in place of its own.
    pub(crate) dirs: Vec<OpenDir>,
}

impl Drop for WrittenOut {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

/// Writes `dirs` out into a new temporary folder, with their modification times.
///
/// # Errors
/// When a recorded path is not a plain relative path, a content is not hex, or the folder
/// cannot be written.
pub(crate) fn write_out(dirs: &[RecordedDir]) -> Result<WrittenOut, String> {
    static WRITTEN: AtomicU64 = AtomicU64::new(0);
    let name = format!("toolcell-replay-{}-{}", std::process::id(), WRITTEN.fetch_add(1, Ordering::Relaxed));
    let root = std::env::temp_dir().join(name);
    let mut written = WrittenOut { root: root.clone(), dirs: Vec::new() };
    for (index, dir) in dirs.iter().enumerate() {
        let base = root.join(index.to_string());
        write_dir(&base, dir)?;
        let grant = DirGrant { host: base, guest: dir.guest.clone(), writable: dir.writable };
        written.dirs.push(OpenDir::open(&grant)?);
    }
    Ok(written)
}

fn write_dir(base: &Path, dir: &RecordedDir) -> Result<(), String> {
    let failed = |path: &Path, err: std::io::Error| format!("cannot write {}: {err}", path.display());
    fs::create_dir_all(base).map_err(|err| failed(base, err))?;
    for entry in &dir.entries {
        let path = inside(base, &entry.path)?;
        if entry.directory {
            fs::create_dir_all(&path).map_err(|err| failed(&path, err))?;
        } else {
            let content =
                from_hex(&entry.content_hex).ok_or_else(|| format!("the content of {} is not hex", entry.path))?;
            fs::write(&path, content).map_err(|err| failed(&path, err))?;
        }
    }
    // Times last, deepest first: writing into a directory changes its own.
    let mut by_depth: Vec<&RecordedEntry> = dir.entries.iter().collect();
    by_depth
        .sort_by_key(|entry| std::cmp::Reverse(entry.path.matches('/').count() + usize::from(!entry.path.is_empty())));
    for entry in by_depth {
        if let Some(ns) = entry.modified_ns {
            let path = inside(base, &entry.path)?;
            let time = SystemTime::UNIX_EPOCH + Duration::from_nanos(ns);
            File::open(&path)
                .and_then(|file| file.set_times(FileTimes::new().set_modified(time)))
                .map_err(|err| failed(&path, err))?;
        }
    }
    Ok(())
}

/// `path` under `base`, refusing one that would leave it (`..`, an absolute path).
fn inside(base: &Path, path: &str) -> Result<PathBuf, String> {
    let mut full = base.to_owned();
    for part in path.split('/').filter(|part| !part.is_empty()) {
        if part == "." || part == ".." || part.contains('\\') || part.contains('\0') {
            return Err(format!("the recorded path `{path}` leaves its directory"));
        }
        full.push(part);
    }
    if path.starts_with('/') {
        return Err(format!("the recorded path `{path}` leaves its directory"));
    }
    Ok(full)
}
