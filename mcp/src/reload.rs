//! Hot reload: a tools folder is watched, and when a `.wasm` file or its `toolcell.toml`
//! changes, the runtime is reloaded and the catalog swapped. Calls in flight finish on the
//! version they started with; a broken file or policy leaves the previous version serving.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;
use toolcell_runtime::POLICY_FILE;

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
        Ok(event) if event.paths.iter().any(|path| concerns_tools(path)) => {
            let _ = changed.send(());
        }
        Ok(_) => {}
        Err(err) => tracing::warn!("watching the tools folder failed: {err}"),
    })?;
    watcher.watch(dir, RecursiveMode::NonRecursive)?;
    let dir: PathBuf = dir.to_owned();
    let task = tokio::spawn(async move {
        while changes.recv().await.is_some() {
            // Wait for quiet, then reload once for everything that changed meanwhile.
            while let Ok(Some(())) = tokio::time::timeout(DEBOUNCE, changes.recv()).await {}
            reload(&catalog, &dir).await;
        }
    });
    Ok(Reloader { _watcher: watcher, task })
}

/// A component or the policy file of a tools folder.
fn concerns_tools(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "wasm") || path.file_name().is_some_and(|name| name == POLICY_FILE)
}

async fn reload(catalog: &Catalog, dir: &Path) {
    let current = catalog.runtime();
    match current.reload().await {
        Ok((next, compiled)) => {
            let tools = next.definitions().len();
            let changed = catalog.replace(next);
            tracing::info!(dir = %dir.display(), tools, ?compiled, list_changed = changed, "tools reloaded");
        }
        Err(err) => {
            tracing::warn!(dir = %dir.display(), "tools not reloaded, the previous version keeps serving: {err}");
        }
    }
}
