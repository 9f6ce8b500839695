//! The tools being served: one [`Runtime`] at a time, replaced whole when the tools change.

use std::sync::{PoisonError, RwLock};

use tokio::sync::watch;
use toolcell_runtime::Runtime;

/// The runtime that serves calls now, and a signal for everyone who must hear that it changed.
///
/// A call takes the current runtime when it starts and keeps it to the end, so replacing
/// the runtime never disturbs calls in flight: they finish on the version they started with.
#[derive(Debug)]
pub struct Catalog {
    current: RwLock<Runtime>,
    /// Bumped on every replacement; connected clients are told the tool list changed.
    generation: watch::Sender<u64>,
}

impl Catalog {
    /// Serves `runtime`'s tools.
    pub fn new(runtime: Runtime) -> Self {
        Self { current: RwLock::new(runtime), generation: watch::Sender::new(0) }
    }

    /// The runtime to use for the next request.
    pub fn runtime(&self) -> Runtime {
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Serves `runtime`'s tools from now on. Tells subscribers the list changed when a
    /// definition did (a new component with the same definitions changes nothing they see).
    /// Returns whether it did.
    pub fn replace(&self, runtime: Runtime) -> bool {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        let changed = !current.definitions().eq(runtime.definitions());
        *current = runtime;
        drop(current);
        if changed {
            self.generation.send_modify(|generation| *generation += 1);
        }
        changed
    }

    /// Fires once per change of the tool list made after this call.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }
}
