//! [`Runtime`]: a set of loaded tools and the one entry point for calling them.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use tracing::instrument::WithSubscriber as _;
use wasmtime::Engine;

use crate::admission::{
    Admission, CallsInFlight, DEFAULT_MAX_QUEUED_BYTES, default_max_concurrent_calls, default_max_queued_calls,
};
use crate::arguments;
use crate::bindings::{CallContext, ToolError};
use crate::cache::{self, CompileCache};
use crate::call::{Arguments, Diagnostics, ToolCall, ToolOutput, Usage, cut_name};
use crate::engine::{EpochTicker, Pooling, new_engine};
use crate::error::CallError;
use crate::execute::{Execution, Export, Returned, execute, millis};
use crate::files::Bound;
use crate::http::{HttpEvents, Resolver};
use crate::limits::{LimitOverrides, Limits};
use crate::link::Linkers;
use crate::load::{self, LoadDiagnostic, LoadEvent, LoadedTool, NotLoaded, Read, ToolDefinition, is_tool_name};
use crate::metrics::{Metrics, Recorder, ToolCounters};
use crate::nested::{CallBudget, Caller, Calls, Nesting};
use crate::output::check_output;
use crate::policy::{
    Access, GrantedDir, Grants, OpenDir, POLICY_FILE, Policy, PolicyError, Protected, ProtectedKind,
    RequestedCapabilities, exposes, overlapping_grants,
};
use crate::redact::Redactor;
use crate::sandbox::Network;
use crate::telemetry;
use crate::toolset::BoxFuture;
use toolcell_schema::closest;
use toolcell_schema::truncated;

/// Why a [`Runtime`] could not be built. Problems with individual components are not
/// errors: they become [`LoadDiagnostic`]s and the other tools load.
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
    /// The pool of instance slots asked for with [`RuntimeBuilder::pooling`] could not be
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
}

/// Where components come from, in the order they were added.
#[derive(Clone)]
enum Source {
    Dir(PathBuf),
    File(PathBuf),
    Bytes { label: String, bytes: bytes::Bytes },
}

/// Configures and builds a [`Runtime`].
#[must_use]
pub struct RuntimeBuilder {
    sources: Vec<Source>,
    limits: Limits,
    policy: Policy,
    cache: Option<CompileCache>,
    allocator: Allocator,
    max_concurrent_calls: Option<u32>,
    max_queued_calls: Option<u32>,
    max_queued_bytes: Option<u64>,
    raise_limits_per_call: bool,
    only_tool: Option<String>,
    progress: Option<Progress>,
    resolver: Resolver,
    max_call_depth: u32,
    host_secrets: Vec<String>,
}

/// How deep calls from tool to tool may nest by default: a tool may call others, and they
/// may call others in turn, if their policies allow.
pub const DEFAULT_MAX_CALL_DEPTH: u32 = 2;

/// Where a runtime reports [`LoadEvent`]s.
type Progress = Arc<dyn Fn(LoadEvent<'_>) + Send + Sync>;

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("sources", &self.sources.len())
            .field("limits", &self.limits)
            .field("policy", &self.policy)
            .field("cache", &self.cache)
            .field("allocator", &self.allocator)
            .field("max_concurrent_calls", &self.max_concurrent_calls)
            .field("max_queued_calls", &self.max_queued_calls)
            .field("max_queued_bytes", &self.max_queued_bytes)
            .field("raise_limits_per_call", &self.raise_limits_per_call)
            .field("only_tool", &self.only_tool)
            .field("progress", &self.progress.is_some())
            .field("max_call_depth", &self.max_call_depth)
            .finish()
    }
}

impl RuntimeBuilder {
    /// Loads every `*.wasm` file in `dir` (not recursively), in file-name order, with the
    /// grants of the folder's policy file, `toolcell.toml`, if it has one.
    pub fn tools_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.sources.push(Source::Dir(dir.into()));
        self
    }

    /// Loads one component file.
    pub fn component_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.sources.push(Source::File(path.into()));
        self
    }

    /// Loads a component from memory; `label` names it in diagnostics. A `Vec<u8>` is taken
    /// as it is and a `&'static [u8]` (a component embedded with `include_bytes!`) is not
    /// copied.
    pub fn component_bytes(mut self, label: impl Into<String>, bytes: impl Into<bytes::Bytes>) -> Self {
        self.sources.push(Source::Bytes { label: label.into(), bytes: bytes.into() });
        self
    }

    /// The limits of every tool without its own. Default: [`Limits::default`].
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Limits for one tool, on top of the default limits.
    pub fn tool_limits(self, tool: impl Into<String>, overrides: LimitOverrides) -> Self {
        self.grant(tool, Grants::new().limits(overrides))
    }

    /// Grants capabilities (and limits) to the tool named `tool`, on top of what it has.
    pub fn grant(mut self, tool: impl Into<String>, grants: Grants) -> Self {
        self.policy.grant(tool, grants);
        self
    }

    /// Adds every grant of `policy`.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy.merge(policy);
        self
    }

    /// Keeps compiled components in `dir` (created if needed, owner-only), so the next load
    /// of the same component skips compilation. Off by default. Entries are authenticated
    /// with a key kept outside the folder; a folder other users can write is not used.
    pub fn compile_cache(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache = Some(CompileCache::new(dir.into()));
        self
    }

    /// Pre-allocates instance slots for `max_concurrent_calls` calls at once (wasmtime's
    /// pooling allocator) and queues calls beyond that. This is the default, with one slot
    /// per [`Self::max_concurrent_calls`]; calling it fixes the slot count and makes a pool
    /// that cannot be created an error rather than a fallback to [`Self::on_demand`].
    ///
    /// A slot is reused by call after call: only the pages a call wrote are reset, and up to
    /// 2 MiB of its memory and tables stay resident between calls, so a call neither maps nor
    /// unmaps memory (see the README's figures). The cost is a ceiling on memory: no call may
    /// use more than the largest memory limit known at build time (the default limits and
    /// every tool's), so a per-call memory override above it is lowered to it. A tool that
    /// needs more than one slot's share of memories, tables or core instances is refused at
    /// load.
    pub fn pooling(mut self, max_concurrent_calls: u32) -> Self {
        self.allocator = Allocator::Pooling { slots: max_concurrent_calls.max(1) };
        self
    }

    /// Maps fresh memory for every call and unmaps it after, instead of reusing pooled
    /// slots: no resident memory between calls and no reserved address space, and no
    /// ceiling on per-call memory overrides, for a slower call (the kernel's page faults
    /// and unmapping are on every call's path).
    pub fn on_demand(mut self) -> Self {
        self.allocator = Allocator::OnDemand;
        self
    }

    /// How many calls run at once; later calls wait in a queue. Every running call may hold
    /// its tool's memory limit, so this bounds what all calls together can hold. Default:
    /// four per CPU core (at least four), or the pool's slots with [`Self::pooling`].
    pub fn max_concurrent_calls(mut self, calls: u32) -> Self {
        self.max_concurrent_calls = Some(calls.max(1));
        self
    }

    /// How many calls may wait for a place to run; a call past them fails at once as
    /// [`CallError::Overloaded`] (retryable) instead of waiting. Default:
    /// [`QUEUED_CALLS_PER_SLOT`](crate::QUEUED_CALLS_PER_SLOT) per call that may run at once.
    /// `0` refuses every call that cannot run at once.
    pub fn max_queued_calls(mut self, calls: u32) -> Self {
        self.max_queued_calls = Some(calls);
        self
    }

    /// How many bytes of arguments the waiting calls may hold together (each waits with its
    /// arguments as compact JSON text, never parsed); a call past them fails at once as
    /// [`CallError::Overloaded`]. Default:
    /// [`DEFAULT_MAX_QUEUED_BYTES`](crate::DEFAULT_MAX_QUEUED_BYTES).
    pub fn max_queued_bytes(mut self, bytes: u64) -> Self {
        self.max_queued_bytes = Some(bytes);
        self
    }

    /// Lets per-call [`LimitOverrides`] ([`ToolCall::with_limits`]) raise a tool's limits.
    /// By default the operator's limits (the runtime's defaults, [`Self::tool_limits`] and
    /// the policy file) are a ceiling: a per-call override can only lower them, so an
    /// embedding that forwards user input cannot be talked into more fuel, time or memory.
    pub fn allow_raising_limits_per_call(mut self) -> Self {
        self.raise_limits_per_call = true;
        self
    }

    /// Resolves `host` to `addresses` for outbound HTTP instead of asking the system
    /// resolver, as curl's `--resolve` does. The addresses are checked like resolved ones: a
    /// name on the allow-list may not reach a loopback, private or link-local address.
    pub fn resolve(mut self, host: impl Into<String>, addresses: impl IntoIterator<Item = IpAddr>) -> Self {
        self.resolver.pin(host.into(), addresses.into_iter().collect());
        self
    }

    /// Loads just the tool named `tool` where the sources allow it without reading any other
    /// component: from `<tool>.wasm` in a tools folder (with the folder's policy), or from
    /// component bytes labelled `<tool>.wasm` (e.g. `builtin:<tool>.wasm`); files added with
    /// [`Self::component_file`] always load. When that finds no such file, or the file does not
    /// define `tool`, every source loads as without this option. For a process that calls one
    /// tool and exits (`toolcell invoke`): it compiles, or reads from the cache, one tool.
    pub fn only_tool(mut self, tool: impl Into<String>) -> Self {
        self.only_tool = Some(tool.into());
        self
    }

    /// How deep calls from tool to tool (code mode, `call_tools`) may nest: with 1 a tool may
    /// call others, which may not call any; a call past it fails as
    /// [`CallError::DepthLimit`]. `0` refuses every such call. Default:
    /// [`DEFAULT_MAX_CALL_DEPTH`]. With pooling and a policy that lets some tool call others,
    /// each concurrent call gets `depth + 1` instance slots, one per level it may reach.
    pub fn max_call_depth(mut self, depth: u32) -> Self {
        self.max_call_depth = depth;
        self
    }

    /// A credential of the host itself (a server's bearer token, an exporter's header
    /// value) that no tool may be granted: a tool with an environment variable whose value
    /// holds it is refused at load, whatever the policy says. (The host variables
    /// [`RESERVED_HOST_VARIABLES`](crate::RESERVED_HOST_VARIABLES) are refused by name
    /// anyway.)
    pub fn host_secret(mut self, secret: impl Into<String>) -> Self {
        let secret = secret.into();
        if !secret.is_empty() {
            self.host_secrets.push(secret);
        }
        self
    }

    /// Calls `report` as components are compiled (not when they come from the compile cache),
    /// from the threads compiling them: for a progress bar. Reloads report too.
    pub fn on_load_progress(mut self, report: impl Fn(LoadEvent<'_>) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(report));
        self
    }

    /// Compiles and checks every component. Must run inside a tokio runtime.
    ///
    /// # Errors
    /// When a tools folder cannot be read, its policy file is invalid, or the engine cannot
    /// start. A component that cannot be loaded (corrupt, a core module, another world, bad
    /// metadata, a duplicate name, grants that cannot be resolved or that are unsafe
    /// together) becomes a [`LoadDiagnostic`] instead.
    pub async fn build(self) -> Result<Runtime, RuntimeError> {
        let recipe = Arc::new(Recipe {
            sources: self.sources,
            limits: self.limits,
            policy: self.policy,
            raise_limits_per_call: self.raise_limits_per_call,
            only_tool: self.only_tool,
            host_secrets: self.host_secrets,
        });
        let snapshot = read_snapshot(&recipe, None, true).await?;
        let policy = &snapshot.policy;
        let max_memory_bytes = max_memory_bytes(&recipe.limits, policy);
        let concurrency = match (self.max_concurrent_calls, self.allocator) {
            (Some(calls), Allocator::Pooling { slots }) => calls.min(slots),
            (None, Allocator::Pooling { slots }) => slots,
            (Some(calls), Allocator::Default | Allocator::OnDemand) => calls,
            (None, Allocator::Default | Allocator::OnDemand) => default_max_concurrent_calls(),
        };
        let instances_per_call = if nests_calls(policy) { self.max_call_depth.saturating_add(1) } else { 1 };
        let pool = Pooling { slots: concurrency, instances_per_call, max_memory_bytes };
        let (engine, pooling) = engine_for(self.allocator, pool)?;
        let ticker = EpochTicker::start(&engine).map_err(RuntimeError::Ticker)?;
        let linkers = Linkers::new(&engine).map_err(|err| RuntimeError::Engine(err.to_string()))?;
        let shared = Arc::new(Shared {
            engine,
            linkers,
            cache: self.cache.and_then(CompileCache::usable),
            pooling,
            admission: Admission::new(
                concurrency,
                self.max_queued_calls.unwrap_or_else(|| default_max_queued_calls(concurrency)),
                self.max_queued_bytes.unwrap_or(DEFAULT_MAX_QUEUED_BYTES),
            ),
            network: Network { resolver: self.resolver, ..Network::default() },
            metrics: Recorder::new(),
            progress: self.progress,
            max_call_depth: self.max_call_depth,
            loading: tokio::sync::Mutex::new(()),
            _ticker: ticker,
        });
        Ok(assemble(shared, recipe, snapshot, None).await?.0)
    }
}

/// How instances get their memory, tables and stacks.
#[derive(Debug, Clone, Copy)]
enum Allocator {
    /// Pooling with a slot per concurrent call, or on-demand if the pool cannot be created.
    Default,
    Pooling {
        slots: u32,
    },
    OnDemand,
}

/// The engine for `allocator`, and its pool's sizes if it pools. The default falls back to
/// on-demand allocation, with a warning, where the pool's address space cannot be reserved
/// (a tight `ulimit -v`, a tool like valgrind).
fn engine_for(allocator: Allocator, pool: Pooling) -> Result<(Engine, Option<Pooling>), RuntimeError> {
    let engine_error = |err: wasmtime::Error| RuntimeError::Engine(format!("{err:#}"));
    match allocator {
        Allocator::OnDemand => Ok((new_engine(None).map_err(engine_error)?, None)),
        Allocator::Pooling { slots } => match new_engine(Some(pool)) {
            Ok(engine) => Ok((engine, Some(pool))),
            Err(err) => Err(RuntimeError::Pool { slots, reason: format!("{err:#}") }),
        },
        Allocator::Default => match new_engine(Some(pool)) {
            Ok(engine) => Ok((engine, Some(pool))),
            Err(err) => {
                tracing::warn!(
                    slots = pool.slots,
                    error = format!("{err:#}"),
                    "cannot create the pool of instance slots; every call will map its own memory (slower)"
                );
                Ok((new_engine(None).map_err(engine_error)?, None))
            }
        },
    }
}

/// Every tools folder's policy file and its bytes (`None` where the folder has none).
type PolicyFiles = Vec<(PathBuf, Option<Vec<u8>>)>;

/// Reads every tools folder's policy file.
fn read_policy_files(sources: &[Source]) -> Result<PolicyFiles, RuntimeError> {
    let mut files = Vec::new();
    for source in sources {
        if let Source::Dir(dir) = source {
            let file = dir.join(POLICY_FILE);
            let bytes = if file.is_file() {
                let unreadable =
                    |err| PolicyError { file: file.clone(), problems: vec![format!("cannot be read: {err}")] };
                Some(std::fs::read(&file).map_err(unreadable)?)
            } else {
                None
            };
            files.push((file, bytes));
        }
    }
    Ok(files)
}

/// The policy of the policy files, with the grants made in code on top.
fn parse_policy_files(files: &PolicyFiles, in_code: &Policy) -> Result<Policy, RuntimeError> {
    let mut policy = Policy::new();
    for (file, bytes) in files {
        if let Some(bytes) = bytes {
            let unreadable = |err| PolicyError { file: file.clone(), problems: vec![format!("cannot be read: {err}")] };
            let text = std::str::from_utf8(bytes).map_err(unreadable)?;
            policy.merge(Policy::parse_file(text, file)?);
        }
    }
    policy.merge(in_code.clone());
    Ok(policy)
}

/// How many times the policy files and the components are read before giving up on a
/// policy file that changes each time.
const SNAPSHOT_ATTEMPTS: usize = 3;

/// What one version is built from, read as one snapshot.
struct Snapshot {
    policy: Policy,
    inputs: Vec<Input>,
    read: Fingerprint,
    /// The inputs are only the components of [`Recipe::only_tool`] and the tools it may call.
    narrowed: bool,
}

/// What a reload compares to tell whether anything changed since a version was built: the
/// bytes of the policy files, and each component's source and digest (`None`: unreadable).
#[derive(PartialEq, Eq)]
struct Fingerprint {
    policies: Vec<Option<Vec<u8>>>,
    components: Vec<(String, Option<[u8; 32]>)>,
}

/// Reads the policy files, then the components, then the policy files again, until both
/// reads of the policy files agree: a version's grants are the ones on disk while its
/// components were read, never those of another moment. A component the `previous` version
/// loaded from a file that still has the same identity is not read again. With `narrow`,
/// only [`Recipe::only_tool`]'s components are read when they can be found by name.
async fn read_snapshot(recipe: &Recipe, previous: Option<&Inner>, narrow: bool) -> Result<Snapshot, RuntimeError> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        let files = read_policy_files(&recipe.sources)?;
        let policy = parse_policy_files(&files, &recipe.policy)?;
        let only = recipe.only_tool.as_deref().filter(|_| narrow);
        let (listed, narrowed) =
            match only.and_then(|tool| read_named_sources(&recipe.sources, &callable_from(tool, &policy))) {
                Some(named) => (named, true),
                None => (read_sources(&recipe.sources)?, false),
            };
        let inputs = read_components(listed, previous).await;
        let again = read_policy_files(&recipe.sources)?;
        if again == files {
            let components = inputs.iter().map(|input| (input.source.clone(), input.read.digest())).collect();
            let read = Fingerprint { policies: files.into_iter().map(|(_, bytes)| bytes).collect(), components };
            return Ok(Snapshot { policy, inputs, read, narrowed });
        }
        if attempts >= SNAPSHOT_ATTEMPTS {
            let changed = files.into_iter().zip(again).find(|(before, after)| before != after);
            let file = changed.map(|(before, _)| before.0).unwrap_or_default();
            return Err(RuntimeError::PolicyChanging { file, attempts });
        }
    }
}

/// Reads the listed components on the blocking pool, all at once.
async fn read_components(listed: Vec<Listed>, previous: Option<&Inner>) -> Vec<Input> {
    let reading: Vec<_> = listed
        .into_iter()
        .map(|Listed { source, contents }| {
            let known = previous
                .and_then(|inner| inner.loaded_from(&source))
                .and_then(|tool| Some((tool.identity?, tool.digest)));
            let read = match contents {
                Contents::File(path) => tokio::task::spawn_blocking(move || load::read_component(&path, known)),
                Contents::Loaded(bytes) => tokio::task::spawn_blocking(move || Read::given(bytes)),
            };
            (source, read)
        })
        .collect();
    let mut inputs = Vec::with_capacity(reading.len());
    for (source, read) in reading {
        let read = read.await.unwrap_or_else(|err| Read::Failed(format!("reading panicked: {err}")));
        inputs.push(Input { source, read });
    }
    inputs
}

/// The largest memory limit any tool has: the size of every pooled memory slot.
fn max_memory_bytes(limits: &Limits, policy: &Policy) -> u64 {
    let overrides = policy.tools().map(|(_, grants)| limits.with(&grants.limits).memory_bytes);
    overrides.fold(limits.memory_bytes, u64::max)
}

/// Whether the policy lets any tool call others.
fn nests_calls(policy: &Policy) -> bool {
    policy.tools().any(|(_, grants)| !grants.call_tools.is_empty())
}

/// Refuses a policy whose memory limits the pool's slots cannot hold (calls would otherwise
/// get less memory than the operator set, silently), or that lets tools call others when
/// the pool has no slots for their calls.
fn check_fits_pool(limits: &Limits, policy: &Policy, pooling: Option<Pooling>) -> Result<(), RuntimeError> {
    let Some(Pooling { max_memory_bytes: slot_bytes, instances_per_call, .. }) = pooling else {
        return Ok(());
    };
    if instances_per_call == 1
        && let Some((tool, _)) = policy.tools().find(|(_, grants)| !grants.call_tools.is_empty())
    {
        return Err(RuntimeError::NestedCallsAbovePool { tool: tool.to_owned() });
    }
    let mut tools = policy.tools().map(|(tool, grants)| (tool, limits.with(&grants.limits).memory_bytes));
    match tools.find(|(_, limit_bytes)| *limit_bytes > slot_bytes) {
        Some((tool, limit_bytes)) => {
            Err(RuntimeError::MemoryAbovePoolSlot { tool: tool.to_owned(), limit_bytes, slot_bytes })
        }
        None => Ok(()),
    }
}

/// Loads the recipe's tools from `snapshot` into a new version of a runtime. With the
/// `previous` version, an unchanged component is reused rather than compiled again, and one
/// that no longer loads is kept at its previous version. Returns the sources compiled.
async fn assemble(
    shared: Arc<Shared>,
    recipe: Arc<Recipe>,
    mut snapshot: Snapshot,
    previous: Option<&Inner>,
) -> Result<(Runtime, Vec<String>), RuntimeError> {
    check_fits_pool(&recipe.limits, &snapshot.policy, shared.pooling)?;
    if let Some(tool) = recipe.only_tool.as_deref()
        && snapshot.narrowed
    {
        let only = Some(tool);
        let (runtime, compiled) = assemble_from(shared.clone(), recipe.clone(), snapshot, previous, only).await?;
        if runtime.definition(tool).is_some() {
            return Ok((runtime, compiled));
        }
        snapshot = read_snapshot(&recipe, previous, false).await?;
        check_fits_pool(&recipe.limits, &snapshot.policy, shared.pooling)?;
    }
    assemble_from(shared, recipe, snapshot, previous, None).await
}

/// Loads `inputs` into a new version of a runtime; see [`assemble`]. With `only` a tool,
/// the policy's grants for other tools are not reported as granted to no loaded tool.
///
/// # Errors
/// [`RuntimeError::GrantReplaced`], when an unchanged grant of the `previous` version now
/// leads elsewhere.
async fn assemble_from(
    shared: Arc<Shared>,
    recipe: Arc<Recipe>,
    snapshot: Snapshot,
    previous: Option<&Inner>,
    only: Option<&str>,
) -> Result<(Runtime, Vec<String>), RuntimeError> {
    let Snapshot { policy, inputs, read, .. } = snapshot;
    let policy = &policy;
    let mut diagnostics = Vec::new();
    let (tools, compiled, retry) =
        compile_and_load(&shared, inputs, &recipe.limits, policy, previous, &mut diagnostics).await;
    let unmatched =
        policy.tools().filter(|(name, _)| !tools.contains_key(*name) && only.is_none_or(|only| only == *name));
    for (name, _) in unmatched {
        diagnostics.push(LoadDiagnostic {
            source: "policy".into(),
            reason: format!("grants or limits are set for tool `{name}`, but no loaded tool has that name"),
        });
    }
    let before_grants = diagnostics.len();
    let mut entries = grant_access(tools, policy, &recipe, &shared, previous, &mut diagnostics)?;
    let protected = protected_paths(&recipe.sources, policy, shared.cache.as_ref());
    refuse_unsafe_grants(&mut entries, policy, &protected, &mut diagnostics);
    // Refused grants depend on more than the policy's bytes (a directory, a host's variable):
    // the next reload resolves them again even when its inputs are the same.
    let retry = retry || diagnostics.len() > before_grants;
    report_uncallable(&entries, &mut diagnostics);
    // Said once: a diagnostic the previous version had too is no news.
    for diagnostic in &diagnostics {
        let (source, reason) = (&diagnostic.source, &diagnostic.reason);
        if previous.is_some_and(|previous| previous.diagnostics.contains(diagnostic)) {
            tracing::debug!(%source, %reason, "component still not loaded");
        } else {
            tracing::warn!(%source, %reason, "component not loaded");
        }
    }
    telemetry::record_load(entries.values().map(|entry| &entry.tool.definition), diagnostics.len());
    // A version with a load the host failed, or a grant refused, is never the same as the
    // next reload's.
    let read = (!retry).then_some(read);
    let runtime = Runtime { inner: Arc::new(Inner { shared, recipe, tools: entries, diagnostics, read }) };
    Ok((runtime, compiled))
}

/// A diagnostic for every tool a policy lets some tool call (`call_tools`) that is not
/// loaded: such a call would fail as an unknown tool.
fn report_uncallable(entries: &BTreeMap<String, ToolEntry>, diagnostics: &mut Vec<LoadDiagnostic>) {
    for (name, entry) in entries {
        for callee in entry.call_tools.iter().filter(|callee| !entries.contains_key(*callee)) {
            diagnostics.push(LoadDiagnostic {
                source: "policy".into(),
                reason: format!("tool `{name}` may call `{callee}` (`call_tools`), but no loaded tool has that name"),
            });
        }
    }
}

/// Resolves each loaded tool's grants (keeping the `previous` version's open directories
/// for grants that did not change), and links tools granted HTTP hosts with `wasi:http`. A
/// tool whose grants cannot be resolved becomes a diagnostic.
///
/// # Errors
/// [`RuntimeError::GrantReplaced`], when an unchanged grant now leads elsewhere.
fn grant_access(
    tools: BTreeMap<String, LoadedTool>,
    policy: &Policy,
    recipe: &Recipe,
    shared: &Shared,
    previous: Option<&Inner>,
    diagnostics: &mut Vec<LoadDiagnostic>,
) -> Result<BTreeMap<String, ToolEntry>, RuntimeError> {
    let mut entries = BTreeMap::new();
    for (name, mut tool) in tools {
        let grants = policy.grants(&name).cloned().unwrap_or_default();
        tool.settle_open_world(!grants.allow_hosts.is_empty());
        let host_env = |variable: &str| std::env::var(variable).ok();
        let mut resolved = Access::resolve(&grants, host_env, &recipe.host_secrets);
        if let (Ok(access), Some(before)) = (&mut resolved, previous.and_then(|inner| inner.tools.get(&name))) {
            access
                .keep_unchanged(&before.access)
                .map_err(|reason| RuntimeError::GrantReplaced { tool: name.clone(), reason })?;
        }
        let linked = resolved.and_then(|access| {
            if !access.allow_hosts.is_empty() {
                tool.link_http(&shared.linkers)?;
            } else if !tool.requested.http_hosts.is_empty() {
                tracing::warn!(
                    tool = %name,
                    requested = ?tool.requested.http_hosts,
                    "the tool requests HTTP hosts but is granted none (`allow_hosts`): its HTTP requests will fail"
                );
            }
            Ok(access)
        });
        match linked {
            Ok(access) => {
                let limits = recipe.limits.with(&grants.limits);
                let counters = shared.metrics.tool(&name);
                let call_tools = grants.call_tools.clone().into();
                entries.insert(name, ToolEntry { tool, limits, grants, access, call_tools, counters });
            }
            Err(reason) => diagnostics.push(LoadDiagnostic {
                reason: format!("tool `{name}` was not loaded: {reason}"),
                source: tool.source,
            }),
        }
    }
    Ok(entries)
}

/// One component to read: where it came from, and its bytes or the file that holds them
/// (read on the blocking pool, all files at once).
struct Listed {
    source: String,
    contents: Contents,
}

enum Contents {
    File(PathBuf),
    Loaded(bytes::Bytes),
}

/// One component to load: where it came from, and what was read.
struct Input {
    source: String,
    read: Read,
}

/// Lists every source's components, in the order they were added.
fn read_sources(sources: &[Source]) -> Result<Vec<Listed>, RuntimeError> {
    let mut inputs = Vec::new();
    for source in sources {
        match source {
            Source::Dir(dir) => {
                for path in tools_dir_files(dir)? {
                    inputs.push(Listed { source: path.display().to_string(), contents: Contents::File(path) });
                }
            }
            Source::File(path) => {
                inputs.push(Listed { source: path.display().to_string(), contents: Contents::File(path.clone()) })
            }
            Source::Bytes { label, bytes } => {
                inputs.push(Listed { source: label.clone(), contents: Contents::Loaded(bytes.clone()) });
            }
        }
    }
    Ok(inputs)
}

/// `tool` and every tool it may call, directly or through others, by the policy.
fn callable_from(tool: &str, policy: &Policy) -> Vec<String> {
    let mut tools = vec![tool.to_owned()];
    let mut next = 0;
    while let Some(caller) = tools.get(next).cloned() {
        for callee in policy.grants(&caller).map(|grants| grants.call_tools.as_slice()).unwrap_or_default() {
            if !tools.contains(callee) {
                tools.push(callee.clone());
            }
        }
        next += 1;
    }
    tools
}

/// The sources narrowed to the components named after `tools` (the first is the one asked
/// for, the others those it may call): `<tool>.wasm` in each tools folder, bytes labelled
/// `<tool>.wasm`, and every explicit file. `None` when no folder or bytes have the first
/// (or it cannot be a file name): then everything must be read.
fn read_named_sources(sources: &[Source], tools: &[String]) -> Option<Vec<Listed>> {
    let first = tools.first()?;
    if !is_tool_name(first) {
        return None;
    }
    let file_names: Vec<String> = tools.iter().filter(|tool| is_tool_name(tool)).map(|t| format!("{t}.wasm")).collect();
    let named_bytes =
        |label: &str| label.rsplit([':', '/']).next().is_some_and(|file| file_names.iter().any(|f| f == file));
    let mut narrowed = Vec::new();
    let mut found = false;
    for source in sources {
        match source {
            Source::Dir(dir) => {
                for file_name in &file_names {
                    if dir.join(file_name).is_file() {
                        found |= file_name == &file_names[0];
                        narrowed.push(Source::File(dir.join(file_name)));
                    }
                }
            }
            Source::Bytes { label, .. } if named_bytes(label) => {
                found |= label.rsplit([':', '/']).next() == Some(file_names[0].as_str());
                narrowed.push(source.clone());
            }
            Source::Bytes { .. } => {}
            Source::File(_) => narrowed.push(source.clone()),
        }
    }
    if !found {
        return None;
    }
    read_sources(&narrowed).ok()
}

/// Compiles every component in parallel on the blocking pool, reads each one's metadata as
/// it finishes, and keeps the first of any two that define the same tool name. A component
/// the `previous` version loaded from the same bytes is reused as it is; one that fails
/// where the previous version loaded it keeps that version, unless `policy` changed that
/// tool's grants (they were written for the component that failed, not for the old one).
/// Returns the sources compiled, and whether a load failed for want of something in the
/// host rather than in the component (the next reload must try it again).
async fn compile_and_load(
    shared: &Shared,
    inputs: Vec<Input>,
    limits: &Limits,
    policy: &Policy,
    previous: Option<&Inner>,
    diagnostics: &mut Vec<LoadDiagnostic>,
) -> (BTreeMap<String, LoadedTool>, Vec<String>, bool) {
    let preparing: Vec<_> = inputs
        .into_iter()
        .map(|Input { source, read }| {
            let before = previous.and_then(|inner| inner.loaded_from(&source));
            let before_digest = before.map(|tool| tool.digest);
            let (engine, linkers, cache) = (shared.engine.clone(), shared.linkers.clone(), shared.cache.clone());
            let (label, progress) = (source.clone(), shared.progress.clone());
            let prepare = move || {
                let report = |event: LoadEvent<'_>| progress.as_ref().map_or((), |report| report(event));
                prepare_input(&engine, &linkers, cache.as_ref(), read, before_digest, &label, &report)
            };
            (source, before, tokio::task::spawn_blocking(prepare))
        })
        .collect();
    let mut compiled = Vec::new();
    let mut retry = false;
    let mut tools: BTreeMap<String, LoadedTool> = BTreeMap::new();
    for (source, before, preparing) in preparing {
        let preparing = preparing.await.unwrap_or_else(|err| Preparing::Failed(format!("loading panicked: {err}")));
        let loaded = match (preparing, before) {
            (Preparing::Failed(reason), _) => {
                diagnostics.push(LoadDiagnostic { source, reason });
                continue;
            }
            (Preparing::Unchanged { identity }, Some(before)) => Ok(before.without_grants().read_from(identity)),
            (Preparing::Unchanged { .. }, None) => Err(NotLoaded {
                reason: "changed while it was read; the next reload reads it again".into(),
                by_host: true,
            }),
            (Preparing::Compiled { digest, identity, prepared }, _) => {
                compiled.push(source.clone());
                match prepared {
                    // Loads take the pool's instance reserved for them, one at a time.
                    Ok(prepared) => {
                        let _loading = shared.loading.lock().await;
                        let loaded = load::load(&shared.engine, source.clone(), digest, prepared, limits).await;
                        loaded.map(|tool| tool.read_from(identity))
                    }
                    Err(reason) => Err(reason.into()),
                }
            }
        };
        let tool = match (loaded, before) {
            (Ok(tool), _) => tool,
            (Err(NotLoaded { reason, by_host }), Some(before)) => {
                retry |= by_host;
                let name = &before.definition.name;
                let granted_before = previous.and_then(|inner| inner.tools.get(name)).map(|entry| &entry.grants);
                if granted_before != Some(&policy.grants(name).cloned().unwrap_or_default()) {
                    diagnostics.push(LoadDiagnostic {
                        reason: format!(
                            "{reason}; tool `{name}` is not served until this file loads: the policy changed its \
                             grants, and the version loaded before this file changed must not run under grants \
                             written for another"
                        ),
                        source,
                    });
                    continue;
                }
                diagnostics.push(LoadDiagnostic {
                    reason: format!("{reason}; tool `{name}` stays at the version loaded before this file changed"),
                    source: source.clone(),
                });
                before.without_grants()
            }
            (Err(NotLoaded { reason, by_host }), None) => {
                retry |= by_host;
                diagnostics.push(LoadDiagnostic { source, reason });
                continue;
            }
        };
        match tools.get(&tool.definition.name) {
            Some(first) => diagnostics.push(LoadDiagnostic {
                reason: format!(
                    "defines tool `{}`, which {} already defines; rename one of them (this file was not loaded)",
                    tool.definition.name, first.source
                ),
                source,
            }),
            None => {
                tools.insert(tool.definition.name.clone(), tool);
            }
        }
    }
    (tools, compiled, retry)
}

/// What became of one component on the blocking pool.
enum Preparing {
    /// It could not be read (or loading it panicked).
    Failed(String),
    /// The same bytes as the tool of the previous version: nothing to do.
    Unchanged { identity: Option<load::FileIdentity> },
    /// Compiled (or read from the cache) and linked, or why not.
    Compiled { digest: [u8; 32], identity: Option<load::FileIdentity>, prepared: Result<load::Prepared, String> },
}

/// Prepares one component, unless its digest is `before`'s.
fn prepare_input(
    engine: &Engine,
    linkers: &Linkers,
    cache: Option<&CompileCache>,
    read: Read,
    before: Option<[u8; 32]>,
    source: &str,
    report: &dyn Fn(LoadEvent<'_>),
) -> Preparing {
    let (bytes, digest, identity) = match read {
        Read::Failed(reason) => return Preparing::Failed(reason),
        Read::Same { digest, identity } if before == Some(digest) => {
            return Preparing::Unchanged { identity: Some(identity) };
        }
        Read::Same { .. } => return Preparing::Failed("changed while it was read; reload again".into()),
        Read::Bytes { bytes, digest, identity } => (bytes, digest, identity),
    };
    if before == Some(digest) {
        return Preparing::Unchanged { identity };
    }
    let started = Instant::now();
    let compiled = std::cell::Cell::new(false);
    let compiling = || {
        compiled.set(true);
        report(LoadEvent::Compiling { source });
    };
    let prepared = load::prepare(engine, linkers, cache, &bytes, &digest, &compiling);
    if compiled.get() {
        report(LoadEvent::Compiled { source });
    }
    tracing::debug!(bytes = bytes.len(), elapsed_ms = started.elapsed().as_millis(), "prepared");
    Preparing::Compiled { digest, identity, prepared }
}

/// What the host loads, reads or runs, which no grant may expose: every tools folder and
/// component file, every policy file, the compile cache and its key.
fn protected_paths(sources: &[Source], policy: &Policy, cache: Option<&CompileCache>) -> Vec<Protected> {
    let mut protected: Vec<Protected> = sources
        .iter()
        .filter_map(|source| match source {
            Source::Dir(dir) => Some(Protected::new(dir, ProtectedKind::ToolsFolder)),
            Source::File(file) => Some(Protected::new(file, ProtectedKind::Component)),
            Source::Bytes { .. } => None,
        })
        .collect();
    protected.extend(policy.files().iter().map(|file| Protected::new(file, ProtectedKind::PolicyFile)));
    if let Some(cache) = cache {
        let [dir, key] = cache::protected_paths(cache.dir());
        protected.push(Protected::new(&dir, ProtectedKind::CompileCache));
        protected.push(Protected::new(&key, ProtectedKind::CacheKey));
    }
    protected
}

/// Removes tools whose directory grants are unsafe: overlapping a writable grant of any tool
/// the policy names (loaded now or not: `toolcell invoke` loads one tool, and another
/// process may run the writer), or exposing what the host loads (`protected`).
fn refuse_unsafe_grants(
    entries: &mut BTreeMap<String, ToolEntry>,
    policy: &Policy,
    protected: &[Protected],
    diagnostics: &mut Vec<LoadDiagnostic>,
) {
    // The grants of tools not loaded, opened only to compare them; one that cannot be opened
    // exposes nothing.
    let not_loaded: Vec<(&str, OpenDir)> = policy
        .tools()
        .filter(|(tool, _)| !entries.contains_key(*tool))
        .flat_map(|(tool, grants)| grants.dirs.iter().filter_map(move |dir| Some((tool, OpenDir::open(dir).ok()?))))
        .collect();
    let granted: Vec<GrantedDir<'_>> = entries
        .iter()
        .flat_map(|(tool, entry)| entry.access.dirs.iter().map(move |dir| GrantedDir { tool, dir }))
        .chain(not_loaded.iter().map(|(tool, dir)| GrantedDir { tool, dir }))
        .collect();
    let mut refused = overlapping_grants(&granted);
    for grant in granted.iter().filter(|grant| entries.contains_key(grant.tool)) {
        for protected in protected {
            if let Some(reason) = exposes(grant.dir, protected) {
                refused.push((grant.tool.to_owned(), format!("tool `{}` was not loaded: {reason}", grant.tool)));
            }
        }
    }
    for (tool, reason) in refused {
        if let Some(entry) = entries.remove(&tool) {
            diagnostics.push(LoadDiagnostic { source: entry.tool.source, reason });
        }
    }
}

/// `*.wasm` files of a folder, sorted by path so duplicate names resolve the same way on
/// every run.
fn tools_dir_files(dir: &Path) -> Result<Vec<PathBuf>, RuntimeError> {
    let entries = std::fs::read_dir(dir).map_err(|source| RuntimeError::ToolsDir { path: dir.to_owned(), source })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wasm") && path.is_file())
        .collect();
    paths.sort();
    Ok(paths)
}

struct ToolEntry {
    tool: LoadedTool,
    limits: Limits,
    grants: Grants,
    access: Access,
    /// The tools it may call (code mode).
    call_tools: Arc<[String]>,
    /// This tool's metrics (the same across reloads).
    counters: Arc<ToolCounters>,
}

/// What a runtime was built from, kept so that [`Runtime::reload`] can build it again.
struct Recipe {
    sources: Vec<Source>,
    limits: Limits,
    /// The grants made in code; the policy files are read again on every reload.
    policy: Policy,
    raise_limits_per_call: bool,
    /// Load only this tool when its file can be found by name ([`RuntimeBuilder::only_tool`]).
    only_tool: Option<String>,
    /// Credentials of the host no tool may be granted ([`RuntimeBuilder::host_secret`]).
    host_secrets: Vec<String>,
}

/// What every version of a runtime shares: a reload keeps the engine (so unchanged
/// components are reused), the concurrency limit and the network bounds.
struct Shared {
    engine: Engine,
    linkers: Linkers,
    cache: Option<CompileCache>,
    /// The pool's sizes, with pooling.
    pooling: Option<Pooling>,
    admission: Admission,
    network: Network,
    metrics: Recorder,
    progress: Option<Progress>,
    max_call_depth: u32,
    /// Held by each load for the pool's instance reserved for loading
    /// ([`crate::engine::LOADING_INSTANCES`]).
    loading: tokio::sync::Mutex<()>,
    _ticker: EpochTicker,
}

/// One version of a runtime's tools.
struct Inner {
    shared: Arc<Shared>,
    recipe: Arc<Recipe>,
    tools: BTreeMap<String, ToolEntry>,
    diagnostics: Vec<LoadDiagnostic>,
    /// What it was built from; `None` when the host failed a load or a grant was refused,
    /// so that a reload of the same inputs tries again.
    read: Option<Fingerprint>,
}

impl Inner {
    /// The tool loaded from `source`.
    fn loaded_from(&self, source: &str) -> Option<&LoadedTool> {
        self.tools.values().map(|entry| &entry.tool).find(|tool| tool.source == source)
    }
}

/// A set of loaded tools. Cheap to clone; every clone shares the tools.
///
/// Every call runs in a fresh instance under its tool's [`Limits`], with no filesystem,
/// network, environment or arguments beyond the tool's grants, and stdout/stderr captured
/// into bounded buffers.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("tools", &self.inner.tools.keys().collect::<Vec<_>>())
            .field("diagnostics", &self.inner.diagnostics)
            .finish()
    }
}

impl Runtime {
    /// Starts configuring a runtime.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder {
            sources: Vec::new(),
            limits: Limits::default(),
            policy: Policy::new(),
            cache: None,
            allocator: Allocator::Default,
            max_concurrent_calls: None,
            max_queued_calls: None,
            max_queued_bytes: None,
            raise_limits_per_call: false,
            only_tool: None,
            progress: None,
            resolver: Resolver::default(),
            max_call_depth: DEFAULT_MAX_CALL_DEPTH,
            host_secrets: Vec::new(),
        }
    }

    /// Loads the tools again from the same folders, files and bytes, with the policy files
    /// read again, as a new version of this runtime. The policy files and the components are
    /// read as one snapshot (the policy files again after the components, until they agree),
    /// so a version never pairs a component with grants from another moment. Only components
    /// whose bytes changed are compiled; one that no longer loads stays at its current
    /// version (with a diagnostic saying why), unless the policy changed its grants: then it
    /// is not served until it loads. Calls in flight finish on the version they started
    /// with. The new version shares this one's engine, concurrency limit and network bounds.
    ///
    /// Returns the new version and the sources it compiled. When nothing it reads changed
    /// since this version was built (the policy files' bytes, each component's bytes, by
    /// digest or by a file identity that vouches for them), returns this version itself
    /// ([`Runtime::same_version`]): nothing is compiled, loaded or logged.
    ///
    /// # Errors
    /// When a tools folder cannot be read, a policy file is invalid or keeps changing while
    /// the components are read, or (with pooling) the policy raises a memory limit above the
    /// pool's slots: then nothing changes, and this version stays the one to use.
    pub async fn reload(&self) -> Result<(Runtime, Vec<String>), RuntimeError> {
        let recipe = self.inner.recipe.clone();
        let snapshot = read_snapshot(&recipe, Some(&self.inner), true).await?;
        if self.inner.read.as_ref() == Some(&snapshot.read) {
            return Ok((self.clone(), Vec::new()));
        }
        assemble(self.inner.shared.clone(), recipe, snapshot, Some(&self.inner)).await
    }

    /// Whether `other` is this very version (a clone of it, or what [`Runtime::reload`]
    /// returned when nothing had changed).
    pub fn same_version(&self, other: &Runtime) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Every loaded tool's definition, by name, ready to give a model.
    pub fn definitions(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> {
        self.inner.tools.values().map(|entry| &entry.tool.definition)
    }

    /// One tool's definition.
    pub fn definition(&self, name: &str) -> Option<&ToolDefinition> {
        self.inner.tools.get(name).map(|entry| &entry.tool.definition)
    }

    /// Where a tool was loaded from.
    pub fn source(&self, name: &str) -> Option<&str> {
        self.inner.tools.get(name).map(|entry| entry.tool.source.as_str())
    }

    /// The limits a tool's calls run under (before per-call overrides).
    pub fn limits(&self, name: &str) -> Option<Limits> {
        self.inner.tools.get(name).map(|entry| entry.limits)
    }

    /// What the operator granted a tool (without secret values).
    pub fn grants(&self, name: &str) -> Option<&Grants> {
        self.inner.tools.get(name).map(|entry| &entry.grants)
    }

    /// What a tool asks to be granted (asking grants nothing).
    pub fn requested(&self, name: &str) -> Option<&RequestedCapabilities> {
        self.inner.tools.get(name).map(|entry| &entry.tool.requested)
    }

    /// The components that were not loaded, and why.
    pub fn diagnostics(&self) -> &[LoadDiagnostic] {
        &self.inner.diagnostics
    }

    /// How many calls are running and waiting right now, and how many may run at once.
    pub fn calls_in_flight(&self) -> CallsInFlight {
        self.inner.shared.admission.in_flight()
    }

    /// Calls, errors by kind, latency and fuel per tool since the runtime was built (counts
    /// survive reloads), and the calls in flight now. The same numbers go to an
    /// OpenTelemetry meter provider when the process installed one before building the
    /// runtime (see [`crate::METER_NAME`]).
    pub fn metrics(&self) -> Metrics {
        self.inner.shared.metrics.snapshot(self.calls_in_flight())
    }

    /// Runs one call. Never fails: whatever the model sent and however the tool behaves,
    /// the outcome is a [`ToolOutput`] (with [`ToolOutput::is_error`] and a typed
    /// [`CallError`] when it failed). Must run inside a tokio runtime.
    pub async fn call(&self, call: ToolCall) -> ToolOutput {
        self.traced(call, None, None).await
    }

    /// Runs one call, as [`Self::call`], and stops it when `cancel` is cancelled: a call
    /// waiting for a slot leaves the queue, and a running tool is stopped within one epoch
    /// tick (10 ms) whether it computes or waits in a host call. The output is then a
    /// [`CallError::Cancelled`], and the call's slot is free for the next one.
    pub async fn call_cancellable(&self, call: ToolCall, cancel: &CancellationToken) -> ToolOutput {
        self.traced(call, Some(cancel), None).await
    }

    /// Runs a call a tool made to another (see [`crate::nested`]), in a span that is a child
    /// of the caller's. Cancelling the caller drops it.
    pub(crate) fn call_nested(&self, call: ToolCall, nesting: Nesting) -> BoxFuture<'_, ToolOutput> {
        Box::pin(self.traced(call, None, Some(nesting)))
    }

    /// One call in its span (see [`crate::telemetry`]) and its metrics. Where a call
    /// enters: its name and id are cut here, before anything records them, and everything
    /// it reports is redacted with its tool's secrets and, for a nested call, its callers'.
    async fn traced(
        &self,
        mut call: ToolCall,
        cancel: Option<&CancellationToken>,
        nesting: Option<Nesting>,
    ) -> ToolOutput {
        let entry = self.inner.tools.get(&call.name);
        let redactor = call_redactor(entry, nesting.as_ref());
        call.bound(entry.is_some(), nesting.is_none(), &redactor);
        let span = telemetry::call_span(&call.name, &call.id);
        if let Some(parent) = &call.trace_parent {
            telemetry::set_parent(&span, parent);
        }
        let record = self.inner.shared.metrics.start(entry.map(|entry| &entry.counters));
        let tool = entry.map(|entry| (&entry.tool.definition, entry.tool.source.as_str()));
        let parse_bytes =
            entry.map(|entry| self.call_limits(entry, &call.limits, nesting.is_some()).max_argument_bytes);
        telemetry::record_input(&span, tool, &call.arguments, &redactor, parse_bytes);
        let output = self.run(call, cancel, nesting, &redactor).instrument(span.clone()).await;
        telemetry::record_output(&span, &output);
        let error_kind = output.error.as_ref().map(CallError::kind);
        record.finish(error_kind, output.usage.duration, output.usage.fuel_consumed);
        output
    }

    /// Runs several calls concurrently (as a model's parallel tool calls), returning their
    /// outputs in the same order. Calls beyond the runtime's concurrency limit wait.
    pub async fn call_all(&self, calls: impl IntoIterator<Item = ToolCall>) -> Vec<ToolOutput> {
        let runtime = self.clone();
        call_concurrently(calls, move |call| {
            let runtime = runtime.clone();
            async move { runtime.call(call).await }
        })
        .await
    }

    /// One call: (for a nested call: may it be made?) → parse → validate → admit → execute →
    /// classify → redact.
    async fn run(
        &self,
        mut call: ToolCall,
        cancel: Option<&CancellationToken>,
        nesting: Option<Nesting>,
        redactor: &Redactor,
    ) -> ToolOutput {
        let started = Instant::now();
        // Owned from here on, so the call holds one copy of its arguments.
        let arguments = std::mem::replace(&mut call.arguments, Arguments::Json(String::new()));
        let refused = |mut error: CallError| {
            tracing::debug!(kind = error.kind(), "call refused");
            // It may quote the arguments (a value the schema refused) or the name.
            error.redact(redactor);
            ToolOutput::failure(
                &call,
                error,
                Usage { duration: started.elapsed(), ..Usage::default() },
                Diagnostics::default(),
            )
        };
        if let Some(nesting) = &nesting
            && let Err(error) = self.may_nest(&call.name, nesting)
        {
            return refused(error);
        }
        let Some(entry) = self.inner.tools.get(&call.name) else {
            let error = match &nesting {
                // A tool learns only of the tools it may call.
                Some(nesting) => unknown_tool(&call.name, self.loaded(&nesting.allowed)),
                None => self.unknown_tool(&call.name),
            };
            return refused(error);
        };
        let limits = self.call_limits(entry, &call.limits, nesting.is_some());
        let arguments = match parse_and_validate(entry, arguments, &limits) {
            // What the guest gets, and all a waiting call holds: compact text, not the
            // parsed tree (which can take tens of times the bytes).
            Ok(arguments) => arguments.to_string(),
            Err(error) => return refused(error),
        };
        // A nested call runs in its caller's place: its caller holds a slot and waits for it,
        // so making it queue for another could deadlock a full runtime.
        let _admitted = if nesting.is_some() {
            None
        } else {
            match self.admit(cancel, started, arguments.len()).await {
                Ok(permit) => Some(permit),
                Err(error) => return refused(error),
            }
        };
        let calls = self.calls(entry, &call, &limits, nesting, redactor);
        // The tool runs on exactly the arguments that were validated.
        let context =
            CallContext { call_id: call.id.clone(), host_context: Value::Object(call.context.clone()).to_string() };
        let export = Export::Invoke { pre: &entry.tool.pre, arguments: &arguments, context: &context, redactor };
        let execution = self.execute(entry, &limits, export, calls, cancel).await;
        let usage = Usage {
            duration: started.elapsed(),
            fuel_consumed: execution.fuel_consumed,
            peak_memory_bytes: execution.peak_memory_bytes,
            nested_calls: execution.nested_calls,
            nested_fuel: execution.nested_fuel,
        };
        let (result, diagnostics) = classify(entry, &limits, execution, redactor);
        let (result, diagnostics) = redact(redactor, &limits, result, diagnostics);
        finish(&call, result, usage, diagnostics)
    }

    /// Refuses a nested call to `tool` the caller may not make: a tool it may not call, or
    /// too deep. (It took its share of the call tree's budget where it entered, in
    /// [`crate::nested`], refused or not.)
    fn may_nest(&self, tool: &str, nesting: &Nesting) -> Result<(), CallError> {
        if !nesting.allowed.iter().any(|allowed| allowed == tool) {
            let allowed = self.loaded(&nesting.allowed);
            return Err(CallError::NotAllowed { caller: nesting.caller.clone(), tool: tool.to_owned(), allowed });
        }
        let limit = self.inner.shared.max_call_depth;
        if nesting.depth > limit {
            return Err(CallError::DepthLimit { limit });
        }
        Ok(())
    }

    /// Those of `tools` that are loaded.
    fn loaded(&self, tools: &[String]) -> Vec<String> {
        tools.iter().filter(|name| self.inner.tools.contains_key(*name)).cloned().collect()
    }

    /// Waits for a place to run, unless `cancel` fires first.
    async fn admit(
        &self,
        cancel: Option<&CancellationToken>,
        started: Instant,
        bytes: usize,
    ) -> Result<OwnedSemaphorePermit, CallError> {
        match cancel {
            None => self.inner.shared.admission.admit(bytes).await,
            Some(cancel) => tokio::select! {
                admitted = self.inner.shared.admission.admit(bytes) => admitted,
                () = cancel.cancelled() => Err(CallError::Cancelled { after_ms: millis(started.elapsed()) }),
            },
        }
    }

    /// What the call's guest may call through the `calls` import: the tools its policy
    /// names, within the budget of calls of the call tree it belongs to, redacted with the
    /// call's `redactor` (its tool's secrets and its callers').
    fn calls(
        &self,
        entry: &ToolEntry,
        call: &ToolCall,
        limits: &Limits,
        nesting: Option<Nesting>,
        redactor: &Redactor,
    ) -> Calls {
        if entry.call_tools.is_empty() {
            return Calls::NoneAllowed { tool: call.name.clone(), refused: 0 };
        }
        let (depth, budget) = match nesting {
            Some(nesting) => (nesting.depth, nesting.budget),
            None => (0, CallBudget::new(limits.max_nested_calls)),
        };
        Calls::Allowed(Caller {
            runtime: self.clone(),
            tool: call.name.clone(),
            allowed: entry.call_tools.clone(),
            depth,
            budget,
            call_id: call.id.clone(),
            context: call.context.clone(),
            made: 0,
            fuel: 0,
            redactor: redactor.clone(),
        })
    }

    /// The tool's limits with the call's overrides: lowering only, unless the embedding
    /// allowed raising (never for a nested call); never past the pool's memory slots.
    fn call_limits(&self, entry: &ToolEntry, overrides: &LimitOverrides, nested: bool) -> Limits {
        let mut limits = if self.inner.recipe.raise_limits_per_call && !nested {
            entry.limits.with(overrides)
        } else {
            entry.limits.with_at_most(overrides)
        };
        if let Some(pooling) = self.inner.shared.pooling {
            limits.memory_bytes = limits.memory_bytes.min(pooling.max_memory_bytes);
        }
        limits
    }

    /// Runs `export` of the tool in a sandbox of its grants.
    async fn execute(
        &self,
        entry: &ToolEntry,
        limits: &Limits,
        export: Export<'_>,
        calls: Calls,
        cancel: Option<&CancellationToken>,
    ) -> Execution {
        let shared = &self.inner.shared;
        execute(&shared.engine, limits, &entry.access, &shared.network, calls, export, cancel).await
    }

    fn unknown_tool(&self, name: &str) -> CallError {
        unknown_tool(name, self.inner.tools.keys().cloned().collect())
    }
}

/// Runs each call on a task of its own with `run`, and returns the outputs in the calls'
/// order; a task that ends abnormally becomes an `internal` failure of its call.
pub(crate) async fn call_concurrently<F, Fut>(calls: impl IntoIterator<Item = ToolCall>, run: F) -> Vec<ToolOutput>
where
    F: Fn(ToolCall) -> Fut,
    Fut: Future<Output = ToolOutput> + Send + 'static,
{
    let tasks: Vec<_> = calls
        .into_iter()
        .map(|call| {
            let fallback = ToolCall::new(call.id.clone(), call.name.clone(), Value::Null);
            // In the caller's span and subscriber, so that each call's span is its child (as
            // with `call`), even under a subscriber set only for the caller's thread.
            let traced = run(call).instrument(tracing::Span::current()).with_current_subscriber();
            (fallback, tokio::spawn(traced))
        })
        .collect();
    let mut outputs = Vec::with_capacity(tasks.len());
    for (fallback, task) in tasks {
        outputs.push(task.await.unwrap_or_else(|err| {
            let error = CallError::Internal { message: "the call's task ended abnormally".into() };
            let diagnostics = Diagnostics { detail: Some(err.to_string()), ..Diagnostics::default() };
            ToolOutput::failure(&fallback, error, Usage::default(), diagnostics)
        }));
    }
    outputs
}

/// The error for a call to `name`, which is not among `available`; it quotes the name cut
/// as where a call enters (a runtime's calls were cut there already).
pub(crate) fn unknown_tool(name: &str, available: Vec<String>) -> CallError {
    let name = cut_name(name, &Redactor::default());
    let closest = closest(&name, available.iter().map(String::as_str), 3).into_iter().map(str::to_owned).collect();
    CallError::UnknownTool { name, closest, available }
}

/// What a call is redacted with: its tool's secrets (none for a tool not loaded) and, for a
/// nested call, those of every call above it.
fn call_redactor(entry: Option<&ToolEntry>, nesting: Option<&Nesting>) -> Redactor {
    let own = entry.map(|entry| &entry.access.redactor);
    match (own, nesting) {
        (Some(own), Some(nesting)) => own.union(&nesting.redactor),
        (Some(own), None) => own.clone(),
        (None, Some(nesting)) => nesting.redactor.clone(),
        (None, None) => Redactor::default(),
    }
}

/// The arguments as one JSON value within the size limit, checked against the tool's schema.
fn parse_and_validate(entry: &ToolEntry, arguments: Arguments, limits: &Limits) -> Result<Value, CallError> {
    let arguments = arguments::parse(arguments, limits.max_argument_bytes)?;
    let violations = entry.tool.parameters.violations(&arguments);
    if violations.is_empty() { Ok(arguments) } else { Err(CallError::InvalidArguments { violations }) }
}

/// Turns how the run ended into the result for the model, or the error that explains it;
/// the result is checked as redacted with `redactor`.
fn classify(
    entry: &ToolEntry,
    limits: &Limits,
    execution: Execution,
    redactor: &Redactor,
) -> (Result<String, CallError>, Diagnostics) {
    let Execution { outcome, mut diagnostics, http, files_refused, .. } = execution;
    let result = match outcome {
        Ok(Returned::Invoke(Ok(result))) => {
            check_output(result, entry.tool.output.as_deref(), limits.max_output_bytes, redactor)
        }
        Ok(Returned::Invoke(Err(ToolError::InvalidArguments(message)))) => {
            Err(CallError::RejectedArguments { message })
        }
        Ok(Returned::Invoke(Err(ToolError::Failed(failure)))) => {
            Err(CallError::ToolFailed { message: failure.message, retryable: failure.retryable })
        }
        Ok(Returned::Metadata(_) | Returned::Capabilities(_) | Returned::Annotations(_)) => {
            Err(CallError::Internal { message: "the wrong export was called".into() })
        }
        Err(error) => Err(error),
    };
    let result = result
        .map_err(|error| explain_http_failure(error, entry, limits, &http, &mut diagnostics))
        .map_err(|error| explain_open_files_failure(error, files_refused, &mut diagnostics));
    (result, diagnostics)
}

/// When the tool failed (or crashed) after the host refused to let it open another file,
/// the bound explains the failure; the tool's own account goes to the diagnostics.
fn explain_open_files_failure(error: CallError, refused: Option<Bound>, diagnostics: &mut Diagnostics) -> CallError {
    let Some(bound) = refused else { return error };
    if !matches!(error, CallError::RejectedArguments { .. } | CallError::ToolFailed { .. } | CallError::Crashed { .. })
    {
        return error;
    }
    let detail = diagnostics.detail.take().map(|detail| format!("\n{detail}")).unwrap_or_default();
    diagnostics.detail = Some(format!("the tool's own outcome: {error}{detail}"));
    let (resource, limit) = bound.describe();
    CallError::ResourceLimit { resource, limit }
}

/// When the tool gave up after the host refused one of its requests or capped a response,
/// the refusal explains the failure better than the tool's own account (which goes to the
/// diagnostics). Limits the host enforced (time, fuel, memory, crashes) stand as they are.
fn explain_http_failure(
    error: CallError,
    entry: &ToolEntry,
    limits: &Limits,
    http: &HttpEvents,
    diagnostics: &mut Diagnostics,
) -> CallError {
    if !matches!(error, CallError::RejectedArguments { .. } | CallError::ToolFailed { .. }) {
        return error;
    }
    let cause = match http.first_denied() {
        Some(denied) => CallError::HttpDenied {
            request: Some(denied.request),
            reason: denied.reason,
            grant: denied.grant,
            allowed: entry.grants.allow_hosts.iter().map(ToString::to_string).collect(),
        },
        None if http.response_capped() => {
            CallError::HttpResponseTooLarge { limit_bytes: limits.max_http_response_bytes }
        }
        None => return error,
    };
    let detail = diagnostics.detail.take().map(|detail| format!("\n{detail}")).unwrap_or_default();
    diagnostics.detail = Some(format!("the tool's own outcome: {error}{detail}"));
    cause
}

/// Replaces secrets in the error and the diagnostics, then holds the tool's own messages to
/// the output limit (cut after redaction, so a cut never splits a secret).
fn redact(
    redactor: &Redactor,
    limits: &Limits,
    mut result: Result<String, CallError>,
    mut diagnostics: Diagnostics,
) -> (Result<String, CallError>, Diagnostics) {
    if !redactor.is_empty() {
        let cut = diagnostics.dropped_stdio_bytes > 0;
        for text in [&mut diagnostics.stdout, &mut diagnostics.stderr] {
            if cut { redactor.cut_text(text) } else { redactor.text(text) }
        }
        if let Some(detail) = &mut diagnostics.detail {
            redactor.text(detail);
        }
        if let Err(error) = &mut result {
            error.redact(redactor);
        }
    }
    if let Err(CallError::RejectedArguments { message } | CallError::ToolFailed { message, .. }) = &mut result {
        *message = truncated(message, usize::try_from(limits.max_output_bytes).unwrap_or(usize::MAX));
    }
    (result, diagnostics)
}

/// The output, logged.
fn finish(call: &ToolCall, result: Result<String, CallError>, usage: Usage, diagnostics: Diagnostics) -> ToolOutput {
    match result {
        Ok(content) => ToolOutput::success(call, content, usage, diagnostics),
        Err(error) => {
            if error.is_caller_error() {
                tracing::debug!(kind = error.kind(), "tool rejected the call");
            } else {
                tracing::warn!(
                    kind = error.kind(),
                    detail = diagnostics.detail.as_deref().unwrap_or(""),
                    stderr = %diagnostics.stderr,
                    "tool call failed"
                );
            }
            ToolOutput::failure(call, error, usage, diagnostics)
        }
    }
}
