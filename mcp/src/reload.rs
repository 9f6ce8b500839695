//! Hot reload: a tools folder is watched, and when a `.wasm` file or its `toolcell.toml`
//! changes, the runtime is reloaded and the catalog swapped. Calls in flight finish on the
//! version they started with; a broken file or policy leaves the previous version serving.
//!
//! Only events that can change what a reload reads start one: a file created, written,
//! renamed or removed. Opening, reading or a change of metadata does not (a reload reads
//! every file, so reacting to reads made each reload start the next, four times a second
//! for ever). And a reload that finds the same bytes as the version serving
//! ([`Runtime::reload`] then returns that version) changes, compiles and logs nothing.
//!
//! [`Runtime::reload`]: toolcell_runtime::Runtime::reload

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;
use toolcell_runtime::policy::POLICY_FILE;

use crate::catalog::Catalog;

/// How long the folder must be quiet before a reload: copying a file or saving from an
/// editor is several events, and one reload should see the finished file.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// Reloads while alive; dropping it stops watching.
#[derive(Debug)]
pub struct Reloader {
    _watcher: RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Reloader {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Watches `dir` and reloads `catalog`'s runtime when its tools or policy file change.
/// Must run inside a tokio runtime.
///
/// # Errors
/// When the folder cannot be watched (it does not exist, or the system's limit on watches
/// is reached).
pub fn watch(catalog: Arc<Catalog>, dir: &Path) -> notify::Result<Reloader> {
    let (changed, mut changes) = mpsc::unbounded_channel::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| match event {
        Ok(event) if may_change_tools(&event) => {
            let _ = changed.send(());
        }
        Ok(_) => {}
        Err(err) => tracing::warn!("watching the tools folder failed: {err}"),
    })?;
    watcher.watch(dir, RecursiveMode::NonRecursive)?;
    let dir: PathBuf = dir.to_owned();
    let task = tokio::spawn(async move {
        let mut last_error = None;
        while changes.recv().await.is_some() {
            // Wait for quiet, then reload once for everything that changed meanwhile.
            while let Ok(Some(())) = tokio::time::timeout(DEBOUNCE, changes.recv()).await {}
            last_error = reload(&catalog, &dir, last_error).await;
        }
    });
    Ok(Reloader { _watcher: watcher, task })
}

/// Whether `event` may change a component or the policy file of the folder: a file created,
/// its data written, renamed or removed; or events lost (the folder must be read again).
/// Not an open, a read or a change of metadata (`chmod`, the times `touch` sets): those
/// change no byte a reload reads, and a reload's own reads are such events. Closing a file
/// written to counts, because a file written through `mmap` says nothing else (inotify has
/// no `IN_MODIFY` for it); when nothing was written, the reload finds the same bytes.
fn may_change_tools(event: &Event) -> bool {
    let changes_content = match event.kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any | ModifyKind::Other) => true,
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Modify(ModifyKind::Metadata(_)) | EventKind::Access(_) => false,
        // Backends that cannot say what happened.
        EventKind::Any | EventKind::Other => true,
    };
    event.need_rescan() || changes_content && event.paths.iter().any(|path| concerns_tools(path))
}

/// A component, the policy file, or a file its registry tools are checked with (a signer's
/// key, a trusted root, the lockfile) in a tools folder: a trusted root replaced to withdraw
/// trust in a CA must unload what that CA vouched for.
fn concerns_tools(path: &Path) -> bool {
    let signers = ["pub", "pem", "json", "lock"];
    path.extension().is_some_and(|ext| ext == "wasm" || signers.iter().any(|signer| ext == *signer))
        || path.file_name().is_some_and(|name| name == POLICY_FILE)
}

/// Reloads, and returns the error that kept the previous version serving, if any: the same
/// error again is logged at debug level, not as a new warning.
async fn reload(catalog: &Catalog, dir: &Path, last_error: Option<String>) -> Option<String> {
    // A change while the tools first load: reload after it (it may have read the folder
    // before the change).
    let Ok(current) = catalog.runtime().await else { return last_error };
    match current.reload().await {
        Ok((next, _)) if next.same_version(&current) => {
            tracing::debug!(dir = %dir.display(), "tools unchanged, not reloaded");
            None
        }
        Ok((next, compiled)) => {
            let tools = next.definitions().len();
            let changed = catalog.replace(next);
            tracing::info!(dir = %dir.display(), tools, ?compiled, list_changed = changed, "tools reloaded");
            None
        }
        Err(err) => {
            let err = err.to_string();
            if last_error.as_ref() == Some(&err) {
                tracing::debug!(dir = %dir.display(), "tools still not reloaded: {err}");
            } else {
                tracing::warn!(dir = %dir.display(), "tools not reloaded, the previous version keeps serving: {err}");
            }
            Some(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use notify::event::{CreateKind, DataChange, MetadataKind, RemoveKind, RenameMode};

    use super::*;

    fn event(kind: EventKind, file: &str) -> Event {
        Event::new(kind).add_path(PathBuf::from("/tools").join(file))
    }

    #[test]
    fn only_changes_of_content_start_a_reload() {
        let changes = [
            EventKind::Create(CreateKind::File),
            EventKind::Modify(ModifyKind::Data(DataChange::Any)),
            EventKind::Modify(ModifyKind::Name(RenameMode::To)),
            EventKind::Remove(RemoveKind::File),
            EventKind::Access(AccessKind::Close(AccessMode::Write)),
        ];
        for kind in changes {
            assert!(may_change_tools(&event(kind, "echo.wasm")), "{kind:?}");
            assert!(may_change_tools(&event(kind, POLICY_FILE)), "{kind:?}");
            assert!(!may_change_tools(&event(kind, "notes.txt")), "{kind:?}");
        }
        // inotify's IN_OPEN, IN_CLOSE_NOWRITE and IN_ATTRIB.
        let no_changes = [
            EventKind::Access(AccessKind::Open(AccessMode::Any)),
            EventKind::Access(AccessKind::Close(AccessMode::Read)),
            EventKind::Modify(ModifyKind::Metadata(MetadataKind::Any)),
        ];
        for kind in no_changes {
            assert!(!may_change_tools(&event(kind, "echo.wasm")), "{kind:?}");
        }
        let lost = Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        assert!(may_change_tools(&lost), "events were lost: read the folder again");
    }

    #[test]
    fn a_signer_file_or_the_lockfile_replaced_starts_a_reload_and_other_files_do_not() {
        let written = EventKind::Modify(ModifyKind::Data(DataChange::Any));
        for file in ["trusted_root.json", "release.pub", "ci.pem", "toolcell.lock", "toolcell.toml", "echo.wasm"] {
            assert!(may_change_tools(&event(written, file)), "{file}");
        }
        for file in ["notes.txt", "denials.jsonl", ".echo.wasm.swp"] {
            assert!(!may_change_tools(&event(written, file)), "{file}");
        }
    }
}
