//! Giving loaded tools their grants: resolved, checked against each other and against what
//! the host loads, and against the pool of instance slots.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::cache;
use super::component::LoadDiagnostic;
use super::component::LoadedTool;
use super::error::RuntimeError;
use super::version::Source;
use super::version::{Recipe, Shared, ToolEntry, Version};
use crate::policy::{Access, GrantedDir, OpenDir, Policy, Protected, ProtectedKind, exposes, overlapping_grants};
use crate::sandbox::engine::Pooling;
use crate::tool::limits::Limits;

/// The largest memory limit any tool has: the size of every pooled memory slot.
pub(crate) fn max_memory_bytes(limits: &Limits, policy: &Policy) -> u64 {
    let overrides = policy.tools().map(|(_, grants)| limits.with(&grants.limits).memory_bytes);
    overrides.fold(limits.memory_bytes, u64::max)
}

/// Whether the policy lets any tool call others (code mode's program tool included).
pub(crate) fn nests_calls(policy: &Policy) -> bool {
    calling_tool(policy).is_some()
}

/// A tool the policy lets call others, if any: one with `call_tools`, or code mode's program.
fn calling_tool(policy: &Policy) -> Option<&str> {
    let granted = policy.tools().find(|(_, grants)| !grants.call_tools.is_empty()).map(|(tool, _)| tool);
    granted.or_else(|| policy.code_mode().map(|code_mode| code_mode.program_tool()))
}

/// Refuses a policy whose memory limits the pool's slots cannot hold (calls would otherwise
/// get less memory than the operator set, silently), or that lets tools call others when
/// the pool has no slots for their calls.
pub(super) fn check_fits_pool(limits: &Limits, policy: &Policy, pooling: Option<Pooling>) -> Result<(), RuntimeError> {
    let Some(Pooling { max_memory_bytes: slot_bytes, instances_per_call, .. }) = pooling else {
        return Ok(());
    };
    if instances_per_call == 1
        && let Some(tool) = calling_tool(policy)
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

/// Resolves each loaded tool's grants (keeping the `previous` version's open directories
/// for grants that did not change), and links tools granted HTTP hosts with `wasi:http`. A
/// tool whose grants cannot be resolved becomes a diagnostic.
///
/// # Errors
/// [`RuntimeError::GrantReplaced`], when an unchanged grant now leads elsewhere.
pub(super) fn grant_access(
    tools: BTreeMap<String, LoadedTool>,
    policy: &Policy,
    recipe: &Recipe,
    shared: &Shared,
    previous: Option<&Version>,
    diagnostics: &mut Vec<LoadDiagnostic>,
) -> Result<BTreeMap<String, ToolEntry>, RuntimeError> {
    let mut entries = BTreeMap::new();
    for (name, mut tool) in tools {
        let grants = policy.grants(&name).cloned().unwrap_or_default();
        tool.settle_open_world(grants.sends_http());
        let host_env = |variable: &str| std::env::var(variable).ok();
        let mut resolved = Access::resolve(&grants, host_env, &recipe.host_secrets);
        if let (Ok(access), Some(before)) = (&mut resolved, previous.and_then(|inner| inner.tools.get(&name))) {
            access
                .keep_unchanged(&before.access)
                .map_err(|reason| RuntimeError::GrantReplaced { tool: name.clone(), reason })?;
        }
        let linked = resolved.and_then(|access| {
            if !access.egress.is_empty() {
                tool.link_http(&shared.linkers)?;
            } else if !tool.requested.http_hosts.is_empty() {
                tracing::warn!(
                    tool = %name,
                    requested = ?tool.requested.http_hosts,
                    "the tool requests HTTP hosts but is granted none (`allow_hosts` or `http` rules): its HTTP requests will fail"
                );
            }
            Ok(access)
        });
        match linked {
            Ok(access) => {
                let limits = recipe.limits.with(&grants.limits);
                let counters = shared.metrics.tool(&name);
                let call_tools = grants.call_tools.clone().into();
                let (access, ready) = (Arc::new(access), Arc::default());
                entries.insert(name, ToolEntry { tool, limits, grants, access, call_tools, counters, ready });
            }
            Err(reason) => diagnostics.push(LoadDiagnostic {
                reason: format!("tool `{name}` was not loaded: {reason}"),
                source: tool.source,
            }),
        }
    }
    Ok(entries)
}

/// What the host loads, reads, runs or writes, which no grant may expose: every tools folder
/// and component file, every policy file, the compile cache and its key, the denials file.
pub(super) fn protected_paths(
    sources: &[Source],
    policy: &Policy,
    cache: Option<&cache::CompileCache>,
    denials_file: Option<&std::path::Path>,
) -> Vec<Protected> {
    let mut protected: Vec<Protected> = sources
        .iter()
        .filter_map(|source| match source {
            Source::Dir(dir) => Some(Protected::new(dir, ProtectedKind::ToolsFolder)),
            Source::File(file) => Some(Protected::new(file, ProtectedKind::Component)),
            Source::Bytes { .. } => None,
        })
        .collect();
    protected.extend(policy.files().iter().map(|file| Protected::new(file, ProtectedKind::PolicyFile)));
    if let Some(file) = denials_file {
        protected.push(Protected::new(file, ProtectedKind::DenialsFile));
    }
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
pub(super) fn refuse_unsafe_grants(
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

/// A diagnostic for every tool a policy lets some tool call (`call_tools`) that is not
/// loaded: such a call would fail as an unknown tool.
pub(super) fn report_uncallable(entries: &BTreeMap<String, ToolEntry>, diagnostics: &mut Vec<LoadDiagnostic>) {
    for (name, entry) in entries {
        for callee in entry.call_tools.iter().filter(|callee| !entries.contains_key(*callee)) {
            diagnostics.push(LoadDiagnostic {
                source: "policy".into(),
                reason: format!("tool `{name}` may call `{callee}` (`call_tools`), but no loaded tool has that name"),
            });
        }
    }
}
