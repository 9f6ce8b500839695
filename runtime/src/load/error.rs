//! Why a runtime, or a new version of it, could not be built.

use std::path::PathBuf;

use crate::policy::PolicyError;

/// Why a [`Runtime`](crate::Runtime) could not be built. Problems with individual components are not
/// errors: they become [`LoadDiagnostic`](super::LoadDiagnostic)s and the other tools load.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// A tools folder could not be read.
    #[error("cannot read the tools folder {}: {source}. Create it, or pass a folder that exists", path.display())]
    ToolsDir {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The WebAssembly engine could not be created.
    #[error("cannot create the WebAssembly engine: {0}")]
    Engine(String),
    /// The pool of instance slots asked for with [`RuntimeBuilder::pooling`](crate::RuntimeBuilder::pooling) could not be
    /// created, typically because its address space cannot be reserved.
    #[error(
        "cannot create a pool of {slots} instance slots: {reason}. Ask for fewer slots, allow the \
         process more address space (`ulimit -v`), or map memory per call with `on_demand()`"
    )]
    Pool {
        /// The slots asked for.
        slots: u32,
        /// Why.
        reason: String,
    },
    /// The denials file ([`RuntimeBuilder::record_denials`](crate::RuntimeBuilder::record_denials))
    /// could not be opened.
    #[error("cannot use the denials file {}: {source}", path.display())]
    DenialsFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The epoch ticker thread could not be started.
    #[error("cannot start the epoch ticker thread: {0}")]
    Ticker(#[source] std::io::Error),
    /// A policy file is invalid. Nothing is loaded: a tool must not run with less, or more,
    /// than its operator meant to grant.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// A reloaded policy lets a tool call other tools, but the pooling allocator's slots were
    /// sized, when the runtime was built, for a policy that let none: nested calls would find
    /// no free slot.
    #[error(
        "the policy now lets `{tool}` call other tools (`call_tools`), but the pool of instance slots was \
         sized, when the tools were first loaded, for calls that call no tools. The previous version stays in \
         use; restart (e.g. `toolcell serve`) to apply it"
    )]
    NestedCallsAbovePool {
        /// A tool the new policy lets call others.
        tool: String,
    },
    /// A policy file changed each time the components were read: the tools and the grants
    /// read would not belong together, so none are loaded.
    #[error(
        "the policy file {} changed while the tools were read, {attempts} times in a row; nothing was loaded \
         (on a reload, the previous version stays in use). Load again once it is written",
        file.display()
    )]
    PolicyChanging {
        /// The policy file.
        file: PathBuf,
        /// How many times the policy and the components were read.
        attempts: usize,
    },
    /// A reloaded policy gives a tool more memory than the pooling allocator's slots, which
    /// are sized when the runtime is built, can hold.
    #[error(
        "the policy now lets `{tool}` use {limit_bytes} bytes of memory, more than the {slot_bytes} bytes \
         of each pooled instance slot, which were sized when the tools were first loaded. The previous \
         version stays in use; restart (e.g. `toolcell serve`) to apply the larger limit"
    )]
    MemoryAbovePoolSlot {
        /// The tool.
        tool: String,
        /// Its new memory limit.
        limit_bytes: u64,
        /// The size of a pooled memory slot.
        slot_bytes: u64,
    },
    /// A directory grant that did not change now leads to another directory than the one
    /// granted: something replaced it. The reload is refused; the grant keeps the original.
    #[error("tool `{tool}`: {reason}. The previous version stays in use")]
    GrantReplaced {
        /// The tool.
        tool: String,
        /// Which grant, and what to do.
        reason: String,
    },
    /// The tools stopped loading in the background before they were all loaded
    /// ([`crate::RuntimeBuilder::start`]).
    #[error("the tools stopped loading: {0}")]
    LoadStopped(String),
}
