//! The tools being served: one [`Runtime`] at a time, replaced whole when the tools change.
//! The first may still be loading (compiling, on a cold cache) while clients connect: then
//! the tools are listed as their components announce them, and a call waits for its own tool.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio::sync::watch;
use toolcell_runtime::code_mode::{CodeModeError, CodeModeTools};
use toolcell_runtime::loading::ListedTool;
use toolcell_runtime::{Loading, Runtime, ToolDefinition};

use crate::code_mode::CodeModeCache;

/// How many requests may wait for the first load at once. Calls are bounded by the runtime's
/// queue only once it exists: without this, a client could pile up requests (and their
/// arguments) in memory for as long as the tools compile.
pub const MAX_WAITING_FOR_LOAD: usize = 256;

/// What the catalog serves.
#[derive(Debug, Clone)]
enum State {
    /// The first runtime is being made: clients may connect and handshake, and whatever needs
    /// the tools waits.
    Loading,
    /// The first runtime's tools are compiling: they can be listed, and a call waits for its
    /// own tool.
    Compiling(Loading),
    Ready(Runtime),
    /// The first runtime could not be built; this says why.
    Failed(String),
}

/// The runtime that serves calls now, and a signal for everyone who must hear that it changed.
///
/// A call takes the current runtime when it starts and keeps it to the end, so replacing
/// the runtime never disturbs calls in flight: they finish on the version they started with.
#[derive(Debug)]
pub struct Catalog {
    current: watch::Sender<State>,
    /// Bumped on every replacement; connected clients are told the tool list changed.
    generation: watch::Sender<u64>,
    /// Requests waiting for the first load.
    waiting: AtomicUsize,
    /// The definitions last listed while the tools compiled: clients are told the list
    /// changed when the compiled tools' differ.
    listed_while_compiling: Mutex<Option<Vec<ToolDefinition>>>,
    /// Code mode's tools over the tools last listed.
    code_mode: CodeModeCache,
}

impl Catalog {
    /// Serves `runtime`'s tools.
    pub fn new(runtime: Runtime) -> Self {
        Self::with(State::Ready(runtime))
    }

    /// A catalog whose tools are still loading: a server over it answers the handshake at
    /// once, and every request that needs the tools waits for [`Catalog::loaded`] (or
    /// fails with what [`Catalog::failed`] says).
    pub fn loading() -> Self {
        Self::with(State::Loading)
    }

    fn with(state: State) -> Self {
        Self {
            current: watch::Sender::new(state),
            generation: watch::Sender::new(0),
            waiting: AtomicUsize::new(0),
            listed_while_compiling: Mutex::new(None),
            code_mode: CodeModeCache::default(),
        }
    }

    /// The first runtime's tools are compiling ([`toolcell_runtime::RuntimeBuilder::start`]):
    /// lists them as their components announce them, and runs a call once its tool is compiled.
    pub fn compiling(&self, loading: Loading) {
        self.current.send_replace(State::Compiling(loading));
    }

    /// The first runtime is built: serves its tools. Clients that listed the tools while they
    /// compiled are told the list changed when it did.
    pub fn loaded(&self, runtime: Runtime) {
        self.current.send_replace(State::Ready(runtime.clone()));
        let listed = self.listed_while_compiling.lock().unwrap_or_else(PoisonError::into_inner).take();
        if listed.is_some_and(|listed| !listed.iter().eq(runtime.definitions())) {
            self.generation.send_modify(|generation| *generation += 1);
        }
    }

    /// The first runtime could not be built: requests that wait for it, and later ones, fail
    /// with `reason`.
    pub fn failed(&self, reason: String) {
        self.current.send_replace(State::Failed(reason));
    }

    /// The runtime to use for the next request, once loaded.
    ///
    /// # Errors
    /// Why the tools could not be loaded, or that too many requests wait for them already
    /// ([`MAX_WAITING_FOR_LOAD`]).
    pub async fn runtime(&self) -> Result<Runtime, String> {
        let mut state = self.current.subscribe();
        if matches!(*state.borrow(), State::Loading | State::Compiling(_)) {
            let _waiting = self.wait_for_load()?;
            return Self::settled(&mut state).await;
        }
        Self::settled(&mut state).await
    }

    /// A runtime with tool `name` loaded, if it loads: while the tools compile, one as soon
    /// as that tool is (it is compiled next).
    ///
    /// # Errors
    /// As [`Catalog::runtime`].
    pub async fn runtime_for(&self, name: &str) -> Result<Runtime, String> {
        let Some(loading) = self.started().await? else { return self.runtime().await };
        let _waiting = self.wait_for_load()?;
        loading.runtime_for(name).await.map_err(|err| format!("the server could not load its tools: {err}"))
    }

    /// The tools to list: while they compile, as their components announce them.
    ///
    /// # Errors
    /// As [`Catalog::runtime`].
    pub async fn tools(&self) -> Result<Vec<ListedTool>, String> {
        let Some(loading) = self.started().await? else {
            return self.runtime().await.map(|runtime| ListedTool::all(&runtime));
        };
        let _waiting = self.wait_for_load()?;
        let tools = loading.tools().await.map_err(|err| format!("the server could not load its tools: {err}"))?;
        self.remember_listed(&tools);
        Ok(tools)
    }

    /// Code mode's `search` and `execute` over `listed` (what [`Catalog::tools`] gave), with
    /// the serving runtime's `[code_mode]` settings.
    ///
    /// # Errors
    /// When the policy does not turn code mode on, or the program tool is not listed.
    pub fn code_mode(&self, listed: &[ListedTool]) -> Result<CodeModeTools, String> {
        let runtime = self.serving().ok_or_else(|| "the server could not load its tools".to_owned())?;
        let settings = runtime.code_mode_policy().ok_or_else(|| CodeModeError::Off.to_string())?;
        self.code_mode.tools(settings, listed)
    }

    /// Keeps what was listed while the tools compiled, for [`Catalog::loaded`] to compare;
    /// when they were loaded meanwhile, compares it now.
    fn remember_listed(&self, tools: &[ListedTool]) {
        let definitions: Vec<ToolDefinition> = tools.iter().map(|tool| tool.definition.clone()).collect();
        let mut listed = self.listed_while_compiling.lock().unwrap_or_else(PoisonError::into_inner);
        match &*self.current.borrow() {
            State::Compiling(_) => *listed = Some(definitions),
            State::Ready(runtime) if !definitions.iter().eq(runtime.definitions()) => {
                self.generation.send_modify(|generation| *generation += 1);
            }
            State::Loading | State::Ready(_) | State::Failed(_) => {}
        }
    }

    /// The tools compiling, once the first runtime is made; `None` once they are loaded.
    async fn started(&self) -> Result<Option<Loading>, String> {
        let mut state = self.current.subscribe();
        if matches!(*state.borrow(), State::Loading) {
            let _waiting = self.wait_for_load()?;
            state.wait_for(|state| !matches!(state, State::Loading)).await.map_err(|_| "the server stopped")?;
        }
        let compiling = match &*state.borrow() {
            State::Compiling(loading) => Some(loading.clone()),
            State::Failed(reason) => return Err(format!("the server could not load its tools: {reason}")),
            State::Loading | State::Ready(_) => None,
        };
        Ok(compiling)
    }

    /// A place among the requests waiting for the first load, or the error when all are taken.
    fn wait_for_load(&self) -> Result<Waiting<'_>, String> {
        let waiting = self.waiting.fetch_add(1, Ordering::AcqRel);
        let place = Waiting(&self.waiting);
        if waiting >= MAX_WAITING_FOR_LOAD {
            return Err(format!(
                "the server is still compiling its tools (the first start after installing or updating them) and \
                 {MAX_WAITING_FOR_LOAD} requests already wait for them; retry in a few seconds (an operator can \
                 compile ahead of time with `toolcell warm`)"
            ));
        }
        Ok(place)
    }

    async fn settled(state: &mut watch::Receiver<State>) -> Result<Runtime, String> {
        let settled = state.wait_for(|state| !matches!(state, State::Loading | State::Compiling(_))).await;
        match settled.as_deref() {
            Ok(State::Ready(runtime)) => Ok(runtime.clone()),
            Ok(State::Failed(reason)) => Err(format!("the server could not load its tools: {reason}")),
            Ok(State::Loading | State::Compiling(_)) | Err(_) => Err("the server could not load its tools".into()),
        }
    }

    /// The runtime serving now, or `None` while the first one loads (or when it failed).
    pub fn current(&self) -> Option<Runtime> {
        match &*self.current.borrow() {
            State::Ready(runtime) => Some(runtime.clone()),
            State::Loading | State::Compiling(_) | State::Failed(_) => None,
        }
    }

    /// The runtime calls run on now: while the tools compile, the one with those compiled so
    /// far (every version shares one limit on calls in flight).
    pub fn serving(&self) -> Option<Runtime> {
        match &*self.current.borrow() {
            State::Ready(runtime) => Some(runtime.clone()),
            State::Compiling(loading) => Some(loading.current()),
            State::Loading | State::Failed(_) => None,
        }
    }

    /// Serves `runtime`'s tools from now on. Tells subscribers the list changed when a
    /// definition did (a new component with the same definitions changes nothing they see).
    /// Returns whether it did.
    pub fn replace(&self, runtime: Runtime) -> bool {
        let previous = self.current.send_replace(State::Ready(runtime.clone()));
        let changed = match previous {
            State::Ready(previous) => !previous.definitions().eq(runtime.definitions()),
            State::Loading | State::Compiling(_) | State::Failed(_) => false,
        };
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

/// A request's place among those waiting for the first load, given back when dropped.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn requests_wait_for_the_first_load_up_to_a_bound_and_then_are_refused() {
        let catalog = Arc::new(Catalog::loading());
        assert!(catalog.current().is_none());
        let waiting: Vec<_> = (0..MAX_WAITING_FOR_LOAD)
            .map(|_| {
                let catalog = catalog.clone();
                tokio::spawn(async move { catalog.runtime().await.map(|runtime| runtime.definitions().len()) })
            })
            .collect();
        while catalog.waiting.load(Ordering::Acquire) < MAX_WAITING_FOR_LOAD {
            tokio::task::yield_now().await;
        }
        let refused = catalog.runtime().await.expect_err("one more than the bound");
        assert!(refused.contains("updating them) and 256 requests already wait for them; retry"), "{refused}");
        assert!(refused.ends_with("(an operator can compile ahead of time with `toolcell warm`)"), "{refused}");

        catalog.loaded(Runtime::builder().build().await.unwrap());
        for request in waiting {
            assert_eq!(request.await.unwrap(), Ok(0), "every waiting request is served");
        }
        assert_eq!(catalog.waiting.load(Ordering::Acquire), 0, "every place given back");
        assert!(catalog.runtime().await.is_ok(), "loaded: no bound");
    }

    #[tokio::test]
    async fn a_failed_load_fails_the_requests_that_wait_with_the_reason() {
        let catalog = Arc::new(Catalog::loading());
        let waiting = tokio::spawn({
            let catalog = catalog.clone();
            async move { catalog.runtime().await.map(|_| ()) }
        });
        tokio::task::yield_now().await;
        catalog.failed("the policy file is invalid".into());
        let error = waiting.await.unwrap().unwrap_err();
        assert_eq!(error, "the server could not load its tools: the policy file is invalid");
        assert!(catalog.runtime().await.is_err(), "and so do later ones");
    }
}
