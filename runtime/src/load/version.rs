//! One version of a runtime's tools, and what every version shares.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use wasmtime::Engine;

use super::cache::CompileCache;
use super::compile::{Code, Progress};
use super::component::{LoadDiagnostic, LoadedTool};
use super::precompiled::Precompiled;
use crate::observe::metrics::{Recorder, ToolCounters};
use crate::policy::{Access, CodeModePolicy, Grants, Policy};
use crate::sandbox::engine::{EpochTicker, Pooling};
use crate::sandbox::link::Linkers;
use crate::sandbox::ready::{ReadyRoom, ReadySlot};
use crate::tool::limits::Limits;

/// Where components come from, in the order they were added.
#[derive(Clone)]
pub(crate) enum Source {
    Dir(PathBuf),
    File(PathBuf),
    Bytes { label: String, bytes: bytes::Bytes },
}

/// What a reload compares to tell whether anything changed since a version was built: the
/// bytes of the policy files, and each component's source and digest (`None`: unreadable).
#[derive(PartialEq, Eq)]
pub(crate) struct Fingerprint {
    pub(super) policies: Vec<Option<Vec<u8>>>,
    pub(super) components: Vec<(String, Option<[u8; 32]>)>,
}

/// A loaded tool with what the policy grants it: what its calls run with.
pub(crate) struct ToolEntry {
    pub(crate) tool: LoadedTool,
    pub(crate) limits: Limits,
    pub(crate) grants: Grants,
    /// Shared with the task that makes its instances ready.
    pub(crate) access: Arc<Access>,
    /// The tools it may call (code mode).
    pub(crate) call_tools: Arc<[String]>,
    /// This tool's metrics (the same across reloads).
    pub(crate) counters: Arc<ToolCounters>,
    /// Its instances made ready for its next calls ([`crate::sandbox::ready`]): this version's
    /// own, made under this version's grants.
    pub(crate) ready: Arc<ReadySlot>,
}

/// What a runtime was built from, kept so that [`crate::Runtime::reload`] can build it again.
pub(crate) struct Recipe {
    pub(crate) sources: Vec<Source>,
    pub(crate) limits: Limits,
    /// The grants made in code; the policy files are read again on every reload.
    pub(crate) policy: Policy,
    /// The grants beneath the policy files ([`crate::RuntimeBuilder::default_policy`]).
    pub(crate) default_policy: Policy,
    pub(crate) raise_limits_per_call: bool,
    /// Load only this tool when its file can be found by name
    /// ([`crate::RuntimeBuilder::only_tool`]).
    pub(crate) only_tool: Option<String>,
    /// Credentials of the host no tool may be granted ([`crate::RuntimeBuilder::host_secret`]).
    pub(crate) host_secrets: Vec<String>,
    /// Where refused requests are written ([`crate::RuntimeBuilder::record_denials`]).
    pub(crate) denials_file: Option<std::path::PathBuf>,
    /// How the policy's registry tools are pulled.
    pub(crate) registry: super::registry::RegistryLoading,
}

/// What every version of a runtime shares: a reload keeps the engine (so unchanged
/// components are reused), the pool and the metrics.
pub(crate) struct Shared {
    pub(crate) engine: Engine,
    pub(crate) linkers: Linkers,
    pub(crate) cache: Option<CompileCache>,
    /// Compiled code the program ships for its components ([`crate::RuntimeBuilder::precompiled`]).
    pub(crate) precompiled: Precompiled,
    /// The pool's sizes, with pooling.
    pub(crate) pooling: Option<Pooling>,
    pub(crate) metrics: Recorder,
    /// The key that authenticates code mode's resume tokens.
    pub(crate) resume_key: [u8; 32],
    pub(crate) progress: Option<Progress>,
    /// Held by each load for the pool's instance reserved for loading
    /// ([`crate::sandbox::engine::LOADING_INSTANCES`]).
    pub(crate) loading: tokio::sync::Mutex<()>,
    /// The room for instances made ready before their call: the pool slots kept for them
    /// ([`crate::sandbox::engine::READY_INSTANCES`]) and the memory they may hold.
    pub(crate) ready: Arc<ReadyRoom>,
    /// Stops with the last holder of `Shared`: a background task that makes an instance
    /// ready holds it, so that the epoch keeps moving while its guest runs.
    pub(crate) _ticker: EpochTicker,
}

impl Shared {
    /// Where components' code comes from without compiling them.
    pub(crate) fn code(&self) -> Code<'_> {
        Code { shipped: &self.precompiled, cache: self.cache.as_ref(), pooling: self.pooling }
    }
}

/// One version of a runtime's tools.
pub(crate) struct Version {
    pub(crate) shared: Arc<Shared>,
    pub(crate) recipe: Arc<Recipe>,
    pub(crate) tools: BTreeMap<String, ToolEntry>,
    /// In a version made while the tools still compile ([`crate::Loading`]): the tools
    /// announced and not loaded yet, named when a call names a tool this version lacks.
    pub(crate) compiling: Vec<String>,
    /// Code mode's settings, when the policy turns it on.
    pub(crate) code_mode: Option<CodeModePolicy>,
    pub(crate) diagnostics: Vec<LoadDiagnostic>,
    /// What it was built from; `None` when the host failed a load or a grant was refused,
    /// so that a reload of the same inputs tries again.
    pub(crate) read: Option<Fingerprint>,
}

impl Version {
    /// The tool loaded from `source`.
    pub(crate) fn loaded_from(&self, source: &str) -> Option<&LoadedTool> {
        self.tools.values().map(|entry| &entry.tool).find(|tool| tool.source == source)
    }
}
