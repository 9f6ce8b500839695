//! [`Loading`]: a runtime that serves while its tools compile.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use tokio::sync::watch;

use crate::call::{Host, Runner};
use crate::load::{AnnouncedTool, RuntimeError, Version, Wanted};
use crate::policy::MissingGrant;
use crate::runtime::Runtime;
use crate::tool::definition::ToolDefinition;

/// A runtime whose tools are still loading: made by [`RuntimeBuilder::start`], which returns
/// before compiling anything. Cheap to clone.
///
/// Its tools can be listed at once when their components announce them (`toolcell build` and
/// the standard tools write a `toolcell-metadata` section into each component); a tool whose
/// component announces nothing is compiled first, before the list is given. A call waits for
/// its own tool only, which is compiled next (after the one compiling when it came). The
/// components are compiled one at a time, smallest first otherwise, and each is in the
/// compile cache as soon as it is done.
///
/// What a component announces is its author's claim, like its exports: once compiled, the
/// exports decide. [`Loading::finished`] gives the whole runtime; compare its definitions with
/// the list given before to tell clients when it changed.
///
/// [`RuntimeBuilder::start`]: crate::RuntimeBuilder::start
#[derive(Clone)]
pub struct Loading {
    inner: Arc<Inner>,
}

struct Inner {
    /// Every component, by source in the order of the sources, with the tool it announces.
    components: Vec<(String, Option<AnnouncedTool>)>,
    wanted: Arc<Wanted>,
    stages: watch::Receiver<Stage>,
    host: Arc<Host>,
}

/// How far the load is.
#[derive(Clone)]
pub(crate) struct Stage {
    /// The tools loaded so far (all of them once finished).
    pub(crate) version: Arc<Version>,
    /// The components loaded, or failed to, so far.
    pub(crate) settled: BTreeSet<String>,
    /// `Some` once every component is settled: `Err` when the load stopped.
    pub(crate) finished: Option<Result<(), String>>,
}

/// A tool as a [`Loading`] runtime lists it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ListedTool {
    /// Its definition: the compiled component's, or what the component announces.
    pub definition: ToolDefinition,
    /// What it needs and is not granted (see [`Runtime::missing_grants`]).
    pub missing_grants: Vec<MissingGrant>,
    /// Whether it is compiled (else its definition is what its component announces).
    pub compiled: bool,
}

impl ListedTool {
    /// Every tool of `runtime`, by name.
    pub fn all(runtime: &Runtime) -> Vec<Self> {
        runtime
            .definitions()
            .map(|definition| Self {
                missing_grants: runtime.missing_grants(&definition.name),
                definition: definition.clone(),
                compiled: true,
            })
            .collect()
    }
}

impl std::fmt::Debug for Loading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stage = self.inner.stages.borrow();
        f.debug_struct("Loading")
            .field("components", &self.inner.components.len())
            .field("settled", &stage.settled.len())
            .field("finished", &stage.finished)
            .finish()
    }
}

impl Loading {
    pub(crate) fn new(
        components: Vec<(String, Option<AnnouncedTool>)>,
        wanted: Arc<Wanted>,
        stages: watch::Receiver<Stage>,
        host: Arc<Host>,
    ) -> Self {
        Self { inner: Arc::new(Inner { components, wanted, stages, host }) }
    }

    /// The tools loaded so far, as a runtime (every tool, once finished).
    pub fn current(&self) -> Runtime {
        self.runtime_of(&self.inner.stages.borrow())
    }

    /// Whether every tool is loaded (or failed to load).
    pub fn is_finished(&self) -> bool {
        self.inner.stages.borrow().finished.is_some()
    }

    /// The tools to list now, by name: each compiled tool's definition, and the definition
    /// each component not yet compiled announces. Waits for the components that announce
    /// nothing, compiling them first.
    ///
    /// # Errors
    /// When the load stopped before those components were settled.
    pub async fn tools(&self) -> Result<Vec<ListedTool>, RuntimeError> {
        let unannounced: Vec<&str> = self
            .inner
            .components
            .iter()
            .filter(|(_, tool)| tool.is_none())
            .map(|(source, _)| source.as_str())
            .collect();
        unannounced.iter().for_each(|source| self.inner.wanted.want(source));
        let stage = self.wait_for(|stage| unannounced.iter().all(|source| stage.settled.contains(*source))).await?;
        let mut listed: BTreeMap<String, ListedTool> = ListedTool::all(&self.runtime_of(&stage))
            .into_iter()
            .map(|tool| (tool.definition.name.clone(), tool))
            .collect();
        for (source, tool) in &self.inner.components {
            let Some(tool) = tool else { continue };
            if stage.settled.contains(source) || listed.contains_key(&tool.definition.name) {
                continue;
            }
            let listed_tool = ListedTool {
                definition: tool.definition.clone(),
                missing_grants: tool.missing_grants.clone(),
                compiled: false,
            };
            listed.insert(tool.definition.name.clone(), listed_tool);
        }
        Ok(listed.into_values().collect())
    }

    /// A runtime that has tool `name` loaded, once it is: its component is compiled next.
    /// When no component announces `name`, waits for those that announce nothing (it may be
    /// one of theirs); when `name` fails to load, or is no tool at all, the runtime returned
    /// does not have it, and a call to it says so.
    ///
    /// # Errors
    /// When the load stopped first.
    pub async fn runtime_for(&self, name: &str) -> Result<Runtime, RuntimeError> {
        let announcing: Vec<&str> = self
            .inner
            .components
            .iter()
            .filter(|(_, tool)| tool.as_ref().is_some_and(|tool| tool.definition.name == name))
            .map(|(source, _)| source.as_str())
            .collect();
        let candidates: Vec<&str> = if announcing.is_empty() {
            self.inner.components.iter().filter(|(_, tool)| tool.is_none()).map(|(source, _)| source.as_str()).collect()
        } else {
            announcing
        };
        candidates.iter().for_each(|source| self.inner.wanted.want(source));
        let stage = self
            .wait_for(|stage| {
                stage.version.tools.contains_key(name)
                    || candidates.iter().all(|source| stage.settled.contains(*source))
            })
            .await?;
        Ok(self.runtime_of(&stage))
    }

    /// The runtime with every tool, once loaded.
    ///
    /// # Errors
    /// When the load stopped first.
    pub async fn finished(&self) -> Result<Runtime, RuntimeError> {
        let stage = self.wait_for(|stage| stage.finished.is_some()).await?;
        Ok(self.runtime_of(&stage))
    }

    /// The first stage for which `ready` holds, or the error of a load that stopped.
    async fn wait_for(&self, ready: impl Fn(&Stage) -> bool) -> Result<Stage, RuntimeError> {
        let mut stages = self.inner.stages.clone();
        let stage = stages
            .wait_for(|stage| ready(stage) || stage.finished.is_some())
            .await
            .map_err(|_| RuntimeError::LoadStopped("loading ended unexpectedly (it panicked)".into()))?
            .clone();
        match &stage.finished {
            Some(Err(reason)) => Err(RuntimeError::LoadStopped(reason.clone())),
            _ => Ok(stage),
        }
    }

    fn runtime_of(&self, stage: &Stage) -> Runtime {
        Runtime::new(Runner { version: stage.version.clone(), host: self.inner.host.clone() })
    }
}
