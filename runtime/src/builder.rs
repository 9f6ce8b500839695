//! [`RuntimeBuilder`]: configures and builds a [`Runtime`].

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;
use wasmtime::Engine;

use crate::call::admission::{
    Admission, DEFAULT_MAX_QUEUED_BYTES, default_max_concurrent_calls, default_max_queued_calls,
};
use crate::call::{Host, Runner};
use crate::load::Precompiled;
use crate::load::cache::CompileCache;
use crate::load::{
    self, LoadEvent, Progress, Recipe, RegistryLoading, RuntimeError, Shared, Snapshot, Source, Steer, Version, Wanted,
    max_memory_bytes, nests_calls,
};
use crate::loading::{Loading, Stage};
use crate::observe::denials::DenialLog;
use crate::observe::metrics::Recorder;
use crate::policy::{CodeModePolicy, Grants, Policy};
use crate::runtime::Runtime;
use crate::sandbox::Network;
use crate::sandbox::engine::{EpochTicker, Pooling, READY_INSTANCES, new_engine};
use crate::sandbox::http::Resolver;
use crate::sandbox::link::Linkers;
use crate::sandbox::ready::ReadyRoom;
use crate::tool::limits::{LimitOverrides, Limits};

/// Configures and builds a [`Runtime`].
#[must_use]
pub struct RuntimeBuilder {
    sources: Vec<Source>,
    limits: Limits,
    policy: Policy,
    default_policy: Policy,
    cache: Option<CompileCache>,
    precompiled: Precompiled,
    allocator: Allocator,
    max_concurrent_calls: Option<u32>,
    max_queued_calls: Option<u32>,
    max_queued_bytes: Option<u64>,
    raise_limits_per_call: bool,
    only_tool: Option<String>,
    progress: Option<Progress>,
    resolver: Resolver,
    max_call_depth: u32,
    ready_instances: bool,
    host_secrets: Vec<String>,
    resume_key: Option<[u8; 32]>,
    denials_file: Option<PathBuf>,
    registry: RegistryLoading,
}

impl Runtime {
    /// Starts configuring a runtime.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::new()
    }
}

/// What the resume key is derived from the compile cache's key for.
const RESUME_KEY_PURPOSE: &str = "toolcell 2026-11-26 code mode resume tokens";

/// A key from the system's random source: a runtime's own, shared with no other.
fn random_key() -> [u8; 32] {
    let mut key = [0u8; 32];
    if getrandom::fill(&mut key).is_err() {
        // Never a constant key anyone could forge tokens with: at worst, one unique to this
        // process and moment.
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let seed = format!("{}:{}:{:p}", now.as_nanos(), std::process::id(), &key);
        key = blake3::hash(seed.as_bytes()).into();
    }
    key
}

/// How deep calls from tool to tool may nest by default: a tool may call others, and they
/// may call others in turn, if their policies allow.
pub const DEFAULT_MAX_CALL_DEPTH: u32 = 2;

impl std::fmt::Debug for RuntimeBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeBuilder")
            .field("sources", &self.sources.len())
            .field("limits", &self.limits)
            .field("policy", &self.policy)
            .field("default_policy", &self.default_policy)
            .field("cache", &self.cache)
            .field("allocator", &self.allocator)
            .field("max_concurrent_calls", &self.max_concurrent_calls)
            .field("max_queued_calls", &self.max_queued_calls)
            .field("max_queued_bytes", &self.max_queued_bytes)
            .field("raise_limits_per_call", &self.raise_limits_per_call)
            .field("only_tool", &self.only_tool)
            .field("progress", &self.progress.is_some())
            .field("max_call_depth", &self.max_call_depth)
            .field("denials_file", &self.denials_file)
            .field("registry", &self.registry)
            .finish()
    }
}

impl RuntimeBuilder {
    /// Starts configuring a runtime ([`Runtime::builder`]).
    pub(crate) fn new() -> Self {
        Self {
            sources: Vec::new(),
            limits: Limits::default(),
            policy: Policy::new(),
            default_policy: Policy::new(),
            cache: None,
            precompiled: Precompiled::default(),
            allocator: Allocator::Default,
            max_concurrent_calls: None,
            max_queued_calls: None,
            max_queued_bytes: None,
            raise_limits_per_call: false,
            only_tool: None,
            progress: None,
            resolver: Resolver::default(),
            max_call_depth: DEFAULT_MAX_CALL_DEPTH,
            ready_instances: true,
            host_secrets: Vec::new(),
            resume_key: None,
            denials_file: None,
            registry: RegistryLoading::default(),
        }
    }

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

    /// The key that authenticates code mode's resume tokens (a program paused for approval).
    /// Runtimes that must resume each other's programs (replicas behind a load balancer) need
    /// the same key. Default: derived from the compile cache's key (so runtimes sharing a
    /// cache, or its key file, share it), else random per process.
    pub fn resume_key(mut self, key: [u8; 32]) -> Self {
        self.resume_key = Some(key);
        self
    }

    /// Turns code mode on with these settings, over any the policy files set
    /// ([`crate::code_mode`], [`Runtime::code_mode`]).
    pub fn code_mode(mut self, settings: CodeModePolicy) -> Self {
        self.policy.set_code_mode(settings);
        self
    }

    /// Adds every grant of `policy`.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy.merge(policy);
        self
    }

    /// Adds every grant of `policy` beneath the rest: the tools folders' policy files and
    /// [`RuntimeBuilder::policy`] are merged over it, key by key (a limit they set wins). For
    /// tools that come with a policy of their own, such as the standard tools' limits, which
    /// an operator's policy file may change.
    pub fn default_policy(mut self, policy: Policy) -> Self {
        self.default_policy.merge(policy);
        self
    }

    /// Keeps compiled components in `dir` (created if needed, owner-only), so the next load
    /// of the same component skips compilation. Off by default. Entries are authenticated
    /// with a key kept outside the folder; a folder other users can write is not used.
    pub fn compile_cache(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache = Some(CompileCache::new(dir.into()));
        self
    }

    /// Loads the components `precompiled` has code for from that code, rather than compiling
    /// them or reading them from the compile cache: a program that ships its tools compiled
    /// ([`Runtime::precompile`]) starts them in a fraction of a second on its first run. A
    /// component it has no code for, or whose code this engine refuses (another wasmtime,
    /// settings or CPU), is compiled as usual.
    pub fn precompiled(mut self, precompiled: Precompiled) -> Self {
        self.precompiled = precompiled;
        self
    }

    /// Pre-allocates instance slots for `max_concurrent_calls` calls at once (wasmtime's
    /// pooling allocator) and queues calls beyond that. This is the default, with one slot
    /// per [`Self::max_concurrent_calls`]; calling it fixes the slot count and makes a pool
    /// that cannot be created an error rather than a fallback to [`Self::on_demand`].
    ///
    /// A slot is reused by call after call: only the pages a call wrote are reset, and up to
    /// 2 MiB of its memory and tables stay resident between calls, so a call neither maps nor
    /// unmaps memory (see the figures in docs/src/performance.md). The cost is a ceiling on memory: no call may
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
    /// [`CallError::Overloaded`](crate::CallError::Overloaded) (retryable) instead of waiting. Default:
    /// [`QUEUED_CALLS_PER_SLOT`](crate::limits::QUEUED_CALLS_PER_SLOT) per call that may run at once.
    /// `0` refuses every call that cannot run at once.
    pub fn max_queued_calls(mut self, calls: u32) -> Self {
        self.max_queued_calls = Some(calls);
        self
    }

    /// How many bytes of arguments the waiting calls may hold together (each waits with its
    /// arguments as compact JSON text, never parsed); a call past them fails at once as
    /// [`CallError::Overloaded`](crate::CallError::Overloaded). Default:
    /// [`DEFAULT_MAX_QUEUED_BYTES`](crate::limits::DEFAULT_MAX_QUEUED_BYTES).
    pub fn max_queued_bytes(mut self, bytes: u64) -> Self {
        self.max_queued_bytes = Some(bytes);
        self
    }

    /// Lets per-call [`LimitOverrides`] ([`ToolCall::with_limits`](crate::ToolCall::with_limits)) raise a tool's limits.
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

    /// Whether tools' instances are made ready before their calls (default: yes). While no
    /// call runs, each tool's next instances (two at most) are made in the background, so a
    /// call only binds its own deadline, secrets and nested calls to one and runs. They hold
    /// up to 256 MiB and 16 more pool slots in all. Off, every call makes its own instance
    /// and the pool has 16 slots fewer: for a host that would rather not hold that memory.
    pub fn ready_instances(mut self, on: bool) -> Self {
        self.ready_instances = on;
        self
    }

    /// How deep calls from tool to tool (code mode, `call_tools`) may nest: with 1 a tool may
    /// call others, which may not call any; a call past it fails as
    /// [`CallError::DepthLimit`](crate::CallError::DepthLimit). `0` refuses every such call. Default:
    /// [`DEFAULT_MAX_CALL_DEPTH`]. With pooling and a policy that lets some tool call others,
    /// each concurrent call gets `depth + 1` instance slots, one per level it may reach.
    pub fn max_call_depth(mut self, depth: u32) -> Self {
        self.max_call_depth = depth;
        self
    }

    /// A credential of the host itself (a server's bearer token, an exporter's header
    /// value) that no tool may be granted: a tool with an environment variable whose value
    /// holds it is refused at load, whatever the policy says. (The host variables
    /// [`RESERVED_HOST_VARIABLES`](crate::policy::RESERVED_HOST_VARIABLES) are refused by name
    /// anyway.)
    pub fn host_secret(mut self, secret: impl Into<String>) -> Self {
        let secret = secret.into();
        if !secret.is_empty() {
            self.host_secrets.push(secret);
        }
        self
    }

    /// Appends every HTTP request the tools' egress rules refuse to `path`, one JSON object
    /// per line ([`Denial`](crate::questions::Denial)), for
    /// [`suggest`](crate::questions::suggest) (`toolcell policy suggest`) to propose rules
    /// from. Created owner-only if missing; it stops growing at 16 MiB. No tool may be granted
    /// a directory that holds it: a tool could write refusals that never happened.
    pub fn record_denials(mut self, path: impl Into<PathBuf>) -> Self {
        self.denials_file = Some(path.into());
        self
    }

    /// Keeps the components, manifests and signatures of the policy's registry tools
    /// (`[tools.NAME] source = "oci://…"`) in `dir`, a content-addressed store (created
    /// owner-only): what is pinned and there loads with the registry gone. Default: `oci/` in
    /// the compile cache's folder, else a new folder for this process only.
    pub fn registry_store(mut self, dir: impl Into<PathBuf>) -> Self {
        self.registry.store = Some(dir.into());
        self
    }

    /// Takes the tool `tool` from a registry, as a policy's `source = "oci://…"` does: pulled
    /// into the [registry store](Self::registry_store) at load (and reload), checked against
    /// `trust` before it compiles, and loaded when it defines `tool`; otherwise a load
    /// diagnostic names the reference, the digest and what was expected. A tag is pinned in
    /// `toolcell.lock` in the current folder.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use toolcell_oci::signature::{PublicKey, Trust};
    /// let key = PublicKey::from_pem("release", &std::fs::read_to_string("release.pub")?)?;
    /// let runtime = toolcell_runtime::Runtime::builder()
    ///     .registry_tool("echo", "oci://ghcr.io/acme/tools/echo:1.0".parse()?, Trust::keys(vec![key]))
    ///     .build()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn registry_tool(
        mut self,
        tool: impl Into<String>,
        reference: toolcell_oci::OciReference,
        trust: toolcell_oci::signature::Trust,
    ) -> Self {
        self.policy.take_from_registry(tool, reference, trust, toolcell_oci::LOCK_FILE);
        self
    }

    /// Loads a registry tool only by a digest: its reference's, or the one its tag is pinned
    /// to in `toolcell.lock`. A tag the lockfile does not pin is not resolved (the tool is a
    /// load diagnostic instead): every replica started from the same files runs the same bytes.
    pub fn locked(mut self) -> Self {
        self.registry.locked = true;
        self
    }

    /// The policy the runtime would run under, read now: the default policy, every tools
    /// folder's policy file over it, and the grants made in code on top. Loads no component
    /// and reads no `from_host` variable (they need not be set): for questions about the
    /// policy ([`crate::questions`]).
    ///
    /// # Errors
    /// When a policy file cannot be read or is invalid.
    pub fn read_policy(&self) -> Result<Policy, RuntimeError> {
        crate::load::read_policy(&self.sources, &self.default_policy, &self.policy)
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
    /// together) becomes a [`LoadDiagnostic`](crate::load::LoadDiagnostic) instead.
    pub async fn build(self) -> Result<Runtime, RuntimeError> {
        let Prepared { shared, recipe, snapshot, host } = self.prepare().await?;
        let version = load::first_version(shared, recipe, snapshot, None).await?;
        Ok(Runtime::new(Runner { version, host }))
    }

    /// Reads the folders and the policy, makes the engine, and returns at once a [`Loading`]
    /// runtime that serves while the tools compile in the background: one at a time, smallest
    /// first, and a tool a call needs before the others. What a server uses to answer its
    /// clients from the first second on a cold compile cache, when compiling every tool takes
    /// tens of seconds. Must run inside a tokio runtime.
    ///
    /// # Errors
    /// As [`RuntimeBuilder::build`], for everything read before compiling.
    pub async fn start(self) -> Result<Loading, RuntimeError> {
        let Prepared { shared, recipe, snapshot, host } = self.prepare().await?;
        load::check_fits_pool(&shared, &recipe, &snapshot)?;
        let components = load::announced(&snapshot);
        let announced: Vec<(String, Option<String>)> = components
            .iter()
            .map(|(source, tool)| (source.clone(), tool.as_ref().map(|tool| tool.definition.name.clone())))
            .collect();
        let nothing_yet = Arc::new(Version {
            shared: shared.clone(),
            recipe: recipe.clone(),
            tools: BTreeMap::new(),
            compiling: announced.iter().filter_map(|(_, name)| name.clone()).collect(),
            code_mode: snapshot.policy().code_mode().cloned(),
            diagnostics: Vec::new(),
            read: None,
        });
        let stages =
            Arc::new(watch::Sender::new(Stage { version: nothing_yet, settled: BTreeSet::new(), finished: None }));
        let wanted = Arc::new(Wanted::default());
        let publishing = stages.clone();
        let steer = Steer {
            wanted: wanted.clone(),
            publish: Box::new(move |version, source| {
                publishing.send_modify(|stage| {
                    stage.version = version;
                    stage.settled.insert(source);
                });
            }),
            announced,
        };
        let loading = Loading::new(components, wanted, stages.subscribe(), host);
        tokio::spawn(async move {
            let finished = load::first_version(shared, recipe, snapshot, Some(&steer)).await;
            stages.send_modify(|stage| match finished {
                Ok(version) => {
                    stage.version = version;
                    stage.finished = Some(Ok(()));
                }
                Err(err) => stage.finished = Some(Err(err.to_string())),
            });
        });
        Ok(loading)
    }

    /// Everything a runtime is made of before its tools are compiled.
    async fn prepare(self) -> Result<Prepared, RuntimeError> {
        let recipe = Arc::new(Recipe {
            sources: self.sources,
            limits: self.limits,
            policy: self.policy,
            default_policy: self.default_policy,
            raise_limits_per_call: self.raise_limits_per_call,
            only_tool: self.only_tool,
            host_secrets: self.host_secrets,
            denials_file: self.denials_file.clone(),
            registry: RegistryLoading {
                store: self.registry.store.clone().or_else(|| self.cache.as_ref().map(|cache| cache.dir().join("oci"))),
                locked: self.registry.locked,
            },
        });
        let snapshot = load::first_snapshot(&recipe).await?;
        let policy = snapshot.policy();
        let max_memory_bytes = max_memory_bytes(&recipe.limits, policy);
        let concurrency = match (self.max_concurrent_calls, self.allocator) {
            (Some(calls), Allocator::Pooling { slots }) => calls.min(slots),
            (None, Allocator::Pooling { slots }) => slots,
            (Some(calls), Allocator::Default | Allocator::OnDemand) => calls,
            (None, Allocator::Default | Allocator::OnDemand) => default_max_concurrent_calls(),
        };
        let instances_per_call = if nests_calls(policy) { self.max_call_depth.saturating_add(1) } else { 1 };
        let ready_instances = if self.ready_instances { READY_INSTANCES } else { 0 };
        let pool = Pooling { slots: concurrency, instances_per_call, max_memory_bytes, ready_instances };
        let (engine, pooling) = engine_for(self.allocator, pool)?;
        let ticker = EpochTicker::start(&engine).map_err(RuntimeError::Ticker)?;
        let linkers = Linkers::new(&engine).map_err(|err| RuntimeError::Engine(err.to_string()))?;
        let cache = self.cache.and_then(CompileCache::usable);
        let resume_key =
            self.resume_key.or_else(|| cache.as_ref()?.derived_key(RESUME_KEY_PURPOSE)).unwrap_or_else(random_key);
        let denials = match &self.denials_file {
            Some(path) => {
                Some(DenialLog::open(path).map_err(|source| RuntimeError::DenialsFile { path: path.clone(), source })?)
            }
            None => None,
        };
        let shared = Arc::new(Shared {
            engine,
            linkers,
            cache,
            precompiled: self.precompiled,
            pooling,
            metrics: Recorder::new(),
            resume_key,
            progress: self.progress,
            loading: tokio::sync::Mutex::new(()),
            ready: ReadyRoom::new(ready_instances),
            _ticker: ticker,
        });
        let host = Arc::new(Host {
            admission: Admission::new(
                concurrency,
                self.max_queued_calls.unwrap_or_else(|| default_max_queued_calls(concurrency)),
                self.max_queued_bytes.unwrap_or(DEFAULT_MAX_QUEUED_BYTES),
            ),
            network: Network { resolver: self.resolver, ..Network::default() },
            max_call_depth: self.max_call_depth,
            denials,
        });
        Ok(Prepared { shared, recipe, snapshot, host })
    }
}

/// What [`RuntimeBuilder::prepare`] makes.
struct Prepared {
    shared: Arc<Shared>,
    recipe: Arc<Recipe>,
    snapshot: Snapshot,
    host: Arc<Host>,
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
