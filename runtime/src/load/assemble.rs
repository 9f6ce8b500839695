//! Building a version of a runtime's tools from a snapshot: compile, load, grant.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::Engine;

use super::announce::Announcement;
use super::code::{self, Deferred, ToolCode};
use super::compile::{self, Code, Compile, LoadEvent, Prepared, Progress};
use super::component::{FileIdentity, LoadDiagnostic, LoadedTool, NotLoaded, Read};
use super::error::RuntimeError;
use super::grants::{check_fits_pool, grant_access, protected_paths, refuse_unsafe_grants, report_uncallable};
use super::metadata::load_tool;
use super::sources::{Input, Snapshot, read_snapshot};
use super::steer::{Steer, Wanted};
use super::version::{Recipe, Shared, Version};
use crate::observe::spans;
use crate::policy::Policy;
use crate::sandbox::link::Linkers;
use crate::tool::limits::Limits;

/// Loads the recipe's tools from `snapshot` into a new version of a runtime. With the
/// `previous` version, an unchanged component is reused rather than compiled again, and one
/// that no longer loads is kept at its previous version. Returns the sources compiled.
pub(crate) async fn assemble(
    shared: Arc<Shared>,
    recipe: Arc<Recipe>,
    mut snapshot: Snapshot,
    previous: Option<&Version>,
    steer: Option<&Steer>,
) -> Result<(Arc<Version>, Vec<String>), RuntimeError> {
    check_fits_pool(&recipe.limits, &snapshot.policy, shared.pooling)?;
    if let Some(tool) = recipe.only_tool.as_deref()
        && snapshot.narrowed
    {
        let only = Some(tool);
        let (version, compiled) = assemble_from(shared.clone(), recipe.clone(), snapshot, previous, only, None).await?;
        if version.tools.contains_key(tool) {
            return Ok((version, compiled));
        }
        snapshot = read_snapshot(&recipe, previous, false).await?;
        check_fits_pool(&recipe.limits, &snapshot.policy, shared.pooling)?;
    }
    assemble_from(shared, recipe, snapshot, previous, None, steer).await
}

/// Loads `inputs` into a new version of a runtime; see [`assemble`]. With `only` a tool,
/// the policy's grants for other tools are not reported as granted to no loaded tool. With
/// `steer`, each version of the tools loaded so far is published as it is made.
///
/// # Errors
/// [`RuntimeError::GrantReplaced`], when an unchanged grant of the `previous` version now
/// leads elsewhere.
async fn assemble_from(
    shared: Arc<Shared>,
    recipe: Arc<Recipe>,
    snapshot: Snapshot,
    previous: Option<&Version>,
    only: Option<&str>,
    steer: Option<&Steer>,
) -> Result<(Arc<Version>, Vec<String>), RuntimeError> {
    let Snapshot { policy, inputs, read, .. } = snapshot;
    let policy = &policy;
    let mut diagnostics = Vec::new();
    let settled = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let publish_partial = |mut tools: BTreeMap<String, LoadedTool>, source: String| {
        let Some(steer) = steer else { return };
        let mut settled = settled.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        settled.insert(source.clone());
        let (compiling, shadowed) = steer.partial(&tools, |tool| tool.source.as_str(), &settled);
        shadowed.iter().for_each(|name| drop(tools.remove(name)));
        (steer.publish)(partial_version(&shared, &recipe, policy, tools, compiling), source);
    };
    let steering = steer.map(|steer| Steering { wanted: &steer.wanted, loaded: &publish_partial });
    let (tools, compiled, retry) =
        compile_and_load(&shared, inputs, &recipe.limits, policy, previous, &mut diagnostics, steering.as_ref()).await;
    // (A registry tool that did not load has its own diagnostic, saying why.)
    let unmatched = policy.tools().filter(|(name, _)| {
        !tools.contains_key(*name)
            && !policy.registry().tools.contains_key(*name)
            && only.is_none_or(|only| only == *name)
    });
    for (name, _) in unmatched {
        diagnostics.push(LoadDiagnostic {
            source: "policy".into(),
            reason: format!("grants or limits are set for tool `{name}`, but no loaded tool has that name"),
        });
    }
    if only.is_none() {
        report_code_mode_unmatched(policy, &tools, &mut diagnostics);
    }
    let before_grants = diagnostics.len();
    let mut entries = grant_access(tools, policy, &recipe, &shared, previous, &mut diagnostics)?;
    let protected = protected_paths(&recipe.sources, policy, shared.cache.as_ref(), recipe.denials_file.as_deref());
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
    spans::record_load(entries.values().map(|entry| &entry.tool.definition), diagnostics.len());
    // A version with a load the host failed, or a grant refused, is never the same as the
    // next reload's.
    let read = (!retry).then_some(read);
    let code_mode = policy.code_mode().cloned();
    let version =
        Arc::new(Version { shared, recipe, tools: entries, compiling: Vec::new(), code_mode, diagnostics, read });
    let deferred = version.tools.values().map(|entry| &entry.tool.code).filter(|code| !code.is_settled());
    code::link_in_background(deferred.map(Arc::downgrade).collect());
    Ok((version, compiled))
}

/// Code mode's settings naming a tool no loaded tool has (its program tool, or a tool its
/// programs may call), each as a diagnostic.
fn report_code_mode_unmatched(
    policy: &Policy,
    tools: &BTreeMap<String, LoadedTool>,
    diagnostics: &mut Vec<LoadDiagnostic>,
) {
    let Some(code_mode) = policy.code_mode() else { return };
    let program = code_mode.program_tool();
    if !tools.contains_key(program) {
        diagnostics.push(LoadDiagnostic {
            source: "policy".into(),
            reason: format!(
                "code mode runs programs in tool `{program}` (`[code_mode] program`), but no loaded tool has that \
                 name: code mode's `execute` fails until it loads"
            ),
        });
    }
    for name in code_mode.tools.iter().flatten().filter(|name| !tools.contains_key(*name)) {
        diagnostics.push(LoadDiagnostic {
            source: "policy".into(),
            reason: format!(
                "code mode's programs may call tool `{name}` (`[code_mode] tools`), but no loaded tool has that name"
            ),
        });
    }
}

/// A version of the tools loaded so far in a first load, granted as the whole will be. Says
/// nothing: the whole version reports what is wrong.
fn partial_version(
    shared: &Arc<Shared>,
    recipe: &Arc<Recipe>,
    policy: &Policy,
    tools: BTreeMap<String, LoadedTool>,
    compiling: Vec<String>,
) -> Arc<Version> {
    let mut diagnostics = Vec::new();
    let mut entries = grant_access(tools, policy, recipe, shared, None, &mut diagnostics).unwrap_or_default();
    let protected = protected_paths(&recipe.sources, policy, shared.cache.as_ref(), recipe.denials_file.as_deref());
    refuse_unsafe_grants(&mut entries, policy, &protected, &mut diagnostics);
    let (shared, recipe) = (shared.clone(), recipe.clone());
    let code_mode = policy.code_mode().cloned();
    Arc::new(Version { shared, recipe, tools: entries, compiling, code_mode, diagnostics, read: None })
}

/// Takes every component the compile cache holds from it, a few at a time
/// ([`from_cache_at_once`]), then compiles the rest one at a time and smallest first (or,
/// when `steering` wants a tool sooner, that one next); reads each one's metadata, and keeps
/// the first (in the order of the sources) of any two that define the same tool name. A
/// component the `previous` version loaded from the same bytes is reused as it is; one that
/// fails where the previous version loaded it keeps that version, unless `policy` changed
/// that tool's grants (they were written for the component that failed, not for the old
/// one). After each component, `steering` is given the tools loaded so far. Returns the sources compiled (or taken from the cache), in
/// the order of the sources, and whether a load failed for want of something in the host
/// rather than in the component (the next reload must try it again).
///
/// Compiling goes one at a time because each compilation already uses every core: the small
/// tools are ready (and in the compile cache) in a fraction of the time, rather than all at
/// the end together.
async fn compile_and_load(
    shared: &Shared,
    inputs: Vec<Input>,
    limits: &Limits,
    policy: &Policy,
    previous: Option<&Version>,
    diagnostics: &mut Vec<LoadDiagnostic>,
    steering: Option<&Steering<'_>>,
) -> (BTreeMap<String, LoadedTool>, Vec<String>, bool) {
    let mut pending: Vec<(usize, Input)> = inputs.into_iter().enumerate().collect();
    let outcomes = (0..pending.len()).map(|_| None).collect();
    let mut assembly =
        Assembly { shared, limits, policy, previous, steering, outcomes, compiled: Vec::new(), retry: false };
    if shared.code().has_any() {
        pending = assembly.take_from_cache(pending).await;
    }
    pending.sort_by_key(|(_, input)| input.read.len());
    while !pending.is_empty() {
        let next = steering.and_then(|steering| steering.wanted.first(pending.iter().map(|(_, input)| &input.source)));
        let (index, Input { source, read, tool }) = pending.remove(next.unwrap_or(0));
        let preparing = tokio::task::spawn_blocking(preparation(shared, read, previous, &source, false))
            .await
            .unwrap_or_else(|err| Preparing::Failed(format!("loading panicked: {err}")));
        assembly.load(index, PreparedInput { source, tool, preparing }).await;
    }
    let Assembly { outcomes, mut compiled, retry, .. } = assembly;
    let tools = select(outcomes.iter().flatten(), Some(diagnostics));
    compiled.sort();
    (tools, compiled.into_iter().map(|(_, source)| source).collect(), retry)
}

/// How many components are taken from the compile cache at once: one per core, up to four.
/// Taking one (reading, authenticating and loading its code) uses one core; one at a time, a
/// warm start of ten tools used one of two.
fn from_cache_at_once() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get).clamp(1, 4)
}

/// A version's tools as [`compile_and_load`] loads them.
struct Assembly<'a> {
    shared: &'a Shared,
    limits: &'a Limits,
    policy: &'a Policy,
    previous: Option<&'a Version>,
    steering: Option<&'a Steering<'a>>,
    /// By input index.
    outcomes: Vec<Option<Outcome>>,
    /// The sources compiled or taken from the cache, with their input index.
    compiled: Vec<(usize, String)>,
    retry: bool,
}

impl Assembly<'_> {
    /// Loads those of `pending` the compile cache holds (and those unchanged since the previous
    /// version, or unreadable), a few at a time; returns the rest, to compile.
    async fn take_from_cache(&mut self, mut pending: Vec<(usize, Input)>) -> Vec<(usize, Input)> {
        let mut uncached = Vec::new();
        let mut taking = tokio::task::JoinSet::new();
        let mut started = std::collections::HashMap::new();
        let at_once = from_cache_at_once();
        loop {
            while taking.len() < at_once && !pending.is_empty() {
                let wanted = self.steering.and_then(|steering| {
                    steering.wanted.first(pending.iter().map(|(_, input): &(usize, Input)| &input.source))
                });
                let (index, Input { source, read, tool }) = pending.remove(wanted.unwrap_or(0));
                let task = taking.spawn_blocking(preparation(self.shared, read, self.previous, &source, true));
                started.insert(task.id(), (index, source, tool));
            }
            let (id, preparing) = match taking.join_next_with_id().await {
                None => break,
                Some(Ok((id, preparing))) => (id, preparing),
                Some(Err(err)) => (err.id(), Preparing::Failed(format!("loading panicked: {err}"))),
            };
            let Some((index, source, tool)) = started.remove(&id) else { continue };
            if let Preparing::Uncached(read) = preparing {
                uncached.push((index, Input { source, read, tool }));
                continue;
            }
            self.load(index, PreparedInput { source, tool, preparing }).await;
        }
        uncached
    }

    /// Loads input `index`, prepared; keeps what became of it, and tells the steering.
    async fn load(&mut self, index: usize, input: PreparedInput) {
        let source = input.source.clone();
        if matches!(input.preparing, Preparing::Compiled { .. } | Preparing::Recorded { .. }) {
            self.compiled.push((index, source.clone()));
        }
        let outcome = load_prepared(self.shared, input, self.limits, self.policy, self.previous, &mut self.retry).await;
        self.outcomes[index] = Some(outcome);
        if let Some(steering) = self.steering {
            (steering.loaded)(select(self.outcomes.iter().flatten(), None), source);
        }
    }
}

/// What [`compile_and_load`] is steered by: the components wanted first, and what to do with
/// the tools loaded so far after each component (with its source).
struct Steering<'a> {
    wanted: &'a Wanted,
    loaded: &'a (dyn Fn(BTreeMap<String, LoadedTool>, String) + Send + Sync),
}

/// What became of one component: the tool it loaded (or the previous version's it keeps), and
/// what went wrong.
struct Outcome {
    source: String,
    tool: Option<LoadedTool>,
    diagnostic: Option<LoadDiagnostic>,
}

/// The tools of `outcomes`, in the order of their sources, the first of any two of the same
/// name kept. With `diagnostics`, each outcome's diagnostic goes there, and so does each
/// duplicate's.
fn select<'a>(
    outcomes: impl Iterator<Item = &'a Outcome>,
    mut diagnostics: Option<&mut Vec<LoadDiagnostic>>,
) -> BTreeMap<String, LoadedTool> {
    let mut tools: BTreeMap<String, LoadedTool> = BTreeMap::new();
    for outcome in outcomes {
        if let (Some(diagnostic), Some(diagnostics)) = (&outcome.diagnostic, diagnostics.as_deref_mut()) {
            diagnostics.push(diagnostic.clone());
        }
        let Some(tool) = &outcome.tool else { continue };
        match tools.get(&tool.definition.name) {
            Some(first) => {
                if let Some(diagnostics) = diagnostics.as_deref_mut() {
                    diagnostics.push(LoadDiagnostic {
                        reason: format!(
                            "defines tool `{}`, which {} already defines; rename one of them (this file was not \
                             loaded)",
                            tool.definition.name, first.source
                        ),
                        source: outcome.source.clone(),
                    });
                }
            }
            None => {
                tools.insert(tool.definition.name.clone(), tool.clone());
            }
        }
    }
    tools
}

/// One component's preparation, to run on the blocking pool; see [`prepare_input`].
fn preparation(
    shared: &Shared,
    read: Read,
    previous: Option<&Version>,
    source: &str,
    cached_only: bool,
) -> impl FnOnce() -> Preparing + Send + 'static {
    let before_digest = previous.and_then(|inner| inner.loaded_from(source)).map(|tool| tool.digest);
    let (engine, linkers) = (shared.engine.clone(), shared.linkers.clone());
    let (cache, shipped, pooling) = (shared.cache.clone(), shared.precompiled.clone(), shared.pooling);
    let (label, progress) = (source.to_owned(), shared.progress.clone());
    move || {
        let code = Code { shipped: &shipped, cache: cache.as_ref(), pooling };
        prepare_input(&engine, &linkers, code, read, before_digest, &label, progress.as_ref(), cached_only)
    }
}

/// One component prepared: where it came from, the tool it must define (the name the policy
/// gives a registry tool), and what became of it.
struct PreparedInput {
    source: String,
    tool: Option<String>,
    preparing: Preparing,
}

/// Loads one prepared component, or keeps the `previous` version's. `retry`: set when it
/// failed for want of something in the host, which the next reload must try again.
async fn load_prepared(
    shared: &Shared,
    PreparedInput { source, tool: expected, preparing }: PreparedInput,
    limits: &Limits,
    policy: &Policy,
    previous: Option<&Version>,
    retry: &mut bool,
) -> Outcome {
    let before = previous.and_then(|inner| inner.loaded_from(&source));
    let failed = |reason: String, source: String| Outcome {
        tool: None,
        diagnostic: Some(LoadDiagnostic { source: source.clone(), reason }),
        source,
    };
    let loaded = match (preparing, before) {
        (Preparing::Failed(reason), _) => return failed(reason, source),
        (Preparing::Unchanged { identity }, Some(before)) => Ok(before.without_grants().read_from(identity)),
        (Preparing::Unchanged { .. }, None) => {
            Err(NotLoaded { reason: "changed while it was read; the next reload reads it again".into(), by_host: true })
        }
        (Preparing::Recorded { identity, tool }, _) => Ok(tool.read_from(identity)),
        (Preparing::Uncached(_), _) => Err(NotLoaded {
            reason: "was not compiled (an internal error); reload to compile it".into(),
            by_host: true,
        }),
        (Preparing::Compiled { digest, identity, prepared }, _) => {
            match prepared {
                // Loads take the pool's instance reserved for them, one at a time.
                Ok(prepared) => {
                    let _loading = shared.loading.lock().await;
                    let loaded = load_tool(&shared.engine, source.clone(), digest, *prepared, limits).await;
                    if let Ok(tool) = &loaded {
                        shared.code().keep_said(&shared.engine, &tool.digest, &Announcement::of(tool).to_payload());
                    }
                    loaded.map(|tool| tool.read_from(identity))
                }
                Err(reason) => Err(reason.into()),
            }
        }
    };
    match (loaded, before) {
        (Ok(tool), _) if expected.as_ref().is_some_and(|name| *name != tool.definition.name) => {
            let name = expected.unwrap_or_default();
            let reason = format!(
                "defines the tool `{}`, but the policy takes it as `{name}` ([tools.{name}] source); name the table after the tool it holds (it was not loaded)",
                tool.definition.name
            );
            failed(reason, source)
        }
        (Ok(tool), _) => Outcome { source, tool: Some(tool), diagnostic: None },
        (Err(NotLoaded { reason, by_host }), Some(before)) => {
            *retry |= by_host;
            let name = &before.definition.name;
            let granted_before = previous.and_then(|inner| inner.tools.get(name)).map(|entry| &entry.grants);
            if granted_before != Some(&policy.grants(name).cloned().unwrap_or_default()) {
                let reason = format!(
                    "{reason}; tool `{name}` is not served until this file loads: the policy changed its grants, \
                     and the version loaded before this file changed must not run under grants written for another"
                );
                return failed(reason, source);
            }
            let reason = format!("{reason}; tool `{name}` stays at the version loaded before this file changed");
            Outcome {
                tool: Some(before.without_grants()),
                diagnostic: Some(LoadDiagnostic { source: source.clone(), reason }),
                source,
            }
        }
        (Err(NotLoaded { reason, by_host }), None) => {
            *retry |= by_host;
            failed(reason, source)
        }
    }
}

/// What became of one component on the blocking pool.
enum Preparing {
    /// It could not be read (or loading it panicked).
    Failed(String),
    /// The same bytes as the tool of the previous version: nothing to do.
    Unchanged { identity: Option<FileIdentity> },
    /// Compiled (or read from the cache) and linked, or why not.
    Compiled { digest: [u8; 32], identity: Option<FileIdentity>, prepared: Result<Box<Prepared>, String> },
    /// Listed from the compile cache's record of what it said of itself, its code linked when
    /// first needed.
    Recorded { identity: Option<FileIdentity>, tool: Box<LoadedTool> },
    /// Not in the compile cache, when only the cache was to be read: what was read, to compile.
    Uncached(Read),
}

/// Prepares one component, unless its digest is `before`'s; with `cached_only`, only when
/// its code is shipped or in the compile cache.
#[expect(clippy::too_many_arguments, reason = "what one component's preparation reads, each named")]
fn prepare_input(
    engine: &Engine,
    linkers: &Linkers,
    code: Code<'_>,
    read: Read,
    before: Option<[u8; 32]>,
    source: &str,
    progress: Option<&Progress>,
    cached_only: bool,
) -> Preparing {
    let report = |event: LoadEvent<'_>| progress.map_or((), |report| report(event));
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
    if cached_only && let Some(tool) = recorded_tool(engine, linkers, code, &bytes, digest, source, progress) {
        return Preparing::Recorded { identity, tool: Box::new(tool) };
    }
    let started = Instant::now();
    let compiled = std::cell::Cell::new(false);
    let compiling = || {
        compiled.set(true);
        report(LoadEvent::Compiling { source, bytes: bytes.len() });
    };
    let compile = if cached_only { Compile::CachedOnly } else { Compile::Announced(&compiling) };
    let prepared = match compile::prepare(engine, linkers, code, &bytes, &digest, compile) {
        Ok(Some(prepared)) => Ok(prepared),
        Ok(None) => return Preparing::Uncached(Read::Bytes { bytes, digest, identity }),
        Err(reason) => Err(reason),
    };
    if compiled.get() {
        let elapsed = started.elapsed();
        report(LoadEvent::Compiled { source, elapsed, ok: prepared.is_ok() });
        if looks_unoptimized(bytes.len(), elapsed, cfg!(debug_assertions)) {
            warn_unoptimized(source, bytes.len(), elapsed);
        }
    }
    tracing::debug!(bytes = bytes.len(), elapsed_ms = started.elapsed().as_millis(), "prepared");
    Preparing::Compiled { digest, identity, prepared: prepared.map(Box::new) }
}

/// The tool the compile cache's record of what it said of itself describes, checked as its
/// exports were, its code deferred ([`ToolCode::deferred`]); `None` when there is no such
/// record (or it is refused), or neither shipped code nor a compiled entry for it.
fn recorded_tool(
    engine: &Engine,
    linkers: &Linkers,
    code: Code<'_>,
    bytes: &bytes::Bytes,
    digest: [u8; 32],
    source: &str,
    progress: Option<&Progress>,
) -> Option<LoadedTool> {
    let cache = code.cache?;
    if !code.shipped.has(&digest) && !cache.has_entry(engine, &digest) {
        return None;
    }
    let announced = match Announcement::from_record(&code.said(engine, &digest)?)? {
        Ok(announced) => announced,
        Err(reason) => {
            tracing::debug!(%source, %reason, "the record of what a tool said is not valid; reading its exports");
            return None;
        }
    };
    let deferred = Deferred {
        source: source.to_owned(),
        progress: progress.cloned(),
        bytes: bytes.clone(),
        digest,
        engine: engine.clone(),
        linkers: linkers.clone(),
        shipped: code.shipped.clone(),
        cache: Some(cache.clone()),
        pooling: code.pooling,
    };
    Some(announced.into_tool(source.to_owned(), digest, ToolCode::deferred(deferred)))
}

/// The slowest an optimized Cranelift compiles, with room for a busy machine: about 1.2 MB/s
/// on 2 cores for the 21 MB `python` tool, where an unoptimized one (a debug build of the
/// program that embeds the runtime) managed about 50 KB/s (the eight standard tools, 29 MB,
/// in 9 min 24 s, against 11.3 s with `opt-level = 2` for dependencies).
const SLOWEST_OPTIMIZED_BYTES_PER_SECOND: f64 = 150_000.0;

/// Whether compiling `bytes` in `elapsed` points to a Cranelift built without optimizations:
/// only in a debug build of this crate (a release build optimizes its dependencies too), and
/// only for a component big enough to time.
fn looks_unoptimized(bytes: usize, elapsed: Duration, debug_build: bool) -> bool {
    let seconds = elapsed.as_secs_f64();
    debug_build && bytes >= 200_000 && seconds > 1.0 && (bytes as f64) / seconds < SLOWEST_OPTIMIZED_BYTES_PER_SECOND
}

/// Says once per process what to set when compiling is that slow.
fn warn_unoptimized(source: &str, bytes: usize, elapsed: Duration) {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        tracing::warn!(
            %source,
            bytes,
            seconds = elapsed.as_secs_f64(),
            "compiling took {:.1} s for {} KiB: this looks like a debug build whose dependencies (wasmtime's \
             compiler) are not optimized, which compiles tools about 30 times slower (minutes for the python \
             tool). Add to the Cargo.toml of your workspace: [profile.dev.package.\"*\"] opt-level = 2 \
             (or build with --release); compiled tools are cached, so this is paid once per tool",
            elapsed.as_secs_f64(),
            bytes / 1024
        );
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_slow_compile_in_a_debug_build_looks_unoptimized() {
        let python = 20_741_902;
        assert!(looks_unoptimized(python, Duration::from_secs(500), true));
        assert!(!looks_unoptimized(python, Duration::from_secs(16), true), "optimized, on a busy machine");
        assert!(!looks_unoptimized(python, Duration::from_secs(500), false), "a release build optimizes it all");
        assert!(!looks_unoptimized(50_000, Duration::from_secs(2), true), "too small to time");
    }
}
