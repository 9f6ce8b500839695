//! Loading the tools a command works on: from the tools folder, the built-in tools or one
//! file, with the policy, the compile cache and the host's secrets.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context as _, bail};
use toolcell_author::shell_quote;
use toolcell_runtime::load::Precompiled;
use toolcell_runtime::policy::Grants;
use toolcell_runtime::{Limits, Policy, Runtime, RuntimeBuilder};

use crate::progress;

/// Where the tools come from, what they are granted, and where compiled ones are kept.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'a> {
    pub(crate) tools_dir: Option<&'a Path>,
    /// Whether the built-in tools are loaded (beside the tools folder's).
    pub(crate) builtins: bool,
    pub(crate) cache: Option<&'a Path>,
    pub(crate) policy: &'a Policy,
    /// A memory limit the calls will ask for: the pool's slots are made at least this large,
    /// so `invoke --memory` is never capped below what it asked.
    pub(crate) call_memory_bytes: Option<u64>,
    /// Where refused HTTP requests are written (`--denials`).
    pub(crate) denials: Option<&'a Path>,
    /// Where registry tools are kept (`--registry-store`, else oci/ in the cache folder).
    pub(crate) registry_store: Option<&'a Path>,
    /// `--locked`: registry tools load only by a pinned digest.
    pub(crate) locked: bool,
    /// One component to load alone, instead of a file or the folder: a pulled `oci://` tool's
    /// bytes, under its reference.
    pub(crate) component: Option<(&'a str, &'a bytes::Bytes)>,
}

pub(crate) fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("toolcell"))
}

/// Loads the runtime for a NAME|FILE argument (or `source.component`), with `grants` for that
/// tool, and returns the tool's name. A file or a component is loaded alone (and must load); a
/// name is looked up by the caller.
pub(crate) async fn load_one(source: Source<'_>, tool: &str, grants: &Grants) -> anyhow::Result<(Runtime, String)> {
    let path = Path::new(tool);
    if source.component.is_some() || names_a_file(tool) {
        if source.component.is_none() && !path.is_file() {
            bail!("{}", not_a_file(path));
        }
        let path = source.component.is_none().then_some(path);
        let mut runtime = load(source, path, None).await?;
        if let Some(diagnostic) = runtime.diagnostics().first() {
            bail!("cannot load {diagnostic}");
        }
        let name = runtime.definitions().next().map(|tool| tool.name.clone()).context("the file defines no tool")?;
        if !grants.is_empty() {
            // The name is known only now; loading again comes from the compile cache.
            runtime = load(source, path, Some((&name, grants))).await?;
            if let Some(diagnostic) = runtime.diagnostics().first() {
                bail!("cannot load {diagnostic}");
            }
        }
        return Ok((runtime, name));
    }
    // Reads and compiles only `<tool>.wasm` when the folder (or the built-in set) has it.
    let grants = (!grants.is_empty()).then_some((tool, grants));
    let runtime = builder(source, None, grants).only_tool(tool).allow_raising_limits_per_call().build().await?;
    if runtime.definition(tool).is_none()
        && let Some(diagnostic) = runtime.diagnostics().iter().find(|d| d.reason.contains(&format!("`{tool}`")))
    {
        bail!("cannot load {diagnostic}");
    }
    Ok((runtime, tool.to_owned()))
}

/// Whether a NAME|FILE argument is a file: it ends in `.wasm` or has a path separator. A
/// bare word is always a tool name, even when a file of that name is in the current folder
/// (which would otherwise run with the grants meant for the named tool).
pub(crate) fn names_a_file(tool: &str) -> bool {
    tool.ends_with(".wasm") || tool.contains('/') || tool.contains(std::path::MAIN_SEPARATOR)
}

/// A runtime over one file, a tools folder, or the built-in tools, with the policy and
/// `grants` for one tool.
pub(crate) async fn load(
    source: Source<'_>,
    file: Option<&Path>,
    grants: Option<(&str, &Grants)>,
) -> anyhow::Result<Runtime> {
    // The person at the command line is the operator: `--fuel`, `--timeout` and `--memory`
    // may raise the limits of the policy file.
    Ok(builder(source, file, grants).allow_raising_limits_per_call().build().await?)
}

/// A runtime builder over one file, or a tools folder and the built-in tools, with the
/// policy and `grants` for one tool.
pub(crate) fn builder(source: Source<'_>, file: Option<&Path>, grants: Option<(&str, &Grants)>) -> RuntimeBuilder {
    let alone = file.is_some() || source.component.is_some();
    let builtins = if !alone && source.builtins { builtins_beside(source.tools_dir) } else { Vec::new() };
    let mut builder = Runtime::builder().policy(source.policy.clone());
    // The built-in tools come with their policy (the interpreter's limits), beneath the tools
    // folder's toolcell.toml and the operator's --policy; not for a tool the folder replaces.
    let loaded = |tool: &str| builtins.iter().any(|(file, _)| file.strip_suffix(".wasm") == Some(tool));
    let mut defaults = Policy::new();
    for (tool, grants) in builtin_policy().tools().filter(|(tool, _)| loaded(tool)) {
        defaults.grant(tool, grants.clone());
    }
    builder = builder.default_policy(defaults);
    if let Some(bytes) = source.call_memory_bytes {
        let mut limits = Limits::default();
        limits.memory_bytes = limits.memory_bytes.max(bytes);
        builder = builder.limits(limits);
    }
    builder = builder.on_load_progress(progress::compile_progress()).precompiled(shipped_code().clone());
    if let Some(cache) = source.cache {
        builder = builder.compile_cache(cache);
    }
    if let Some(denials) = source.denials {
        builder = builder.record_denials(denials);
    }
    if let Some(store) = source.registry_store {
        builder = builder.registry_store(store);
    }
    if source.locked {
        builder = builder.locked();
    }
    if let Some((tool, grants)) = grants {
        builder = builder.grant(tool, grants.clone());
    }
    for secret in otlp_header_values() {
        builder = builder.host_secret(secret);
    }
    if let Some((label, bytes)) = source.component {
        return builder.component_bytes(label, bytes.clone());
    }
    match (file, source.tools_dir) {
        (Some(file), _) => return builder.component_file(file),
        (None, Some(dir)) => builder = builder.tools_dir(dir),
        (None, None) => {}
    }
    builtins.iter().fold(builder, |builder, (file, bytes)| builder.component_bytes(format!("builtin:{file}"), *bytes))
}

/// The built-in tools' code this binary ships: none, unless it was built with
/// `TOOLCELL_PRECOMPILED_DIR` ([`toolcell_tools::PRECOMPILED`], `toolcell precompile`).
pub(crate) fn shipped_code() -> &'static Precompiled {
    static SHIPPED: OnceLock<Precompiled> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        // SAFETY: the artifacts are part of this binary, embedded at build time from what
        // `toolcell precompile` wrote (toolcell-tools' build script checked each one's header
        // and that it names a tool it embeds); nothing read at run time can change them.
        #[expect(unsafe_code, reason = "code embedded in this binary when it was built")]
        let shipped = unsafe { Precompiled::new(toolcell_tools::PRECOMPILED.iter().copied()) };
        shipped.unwrap_or_else(|err| unreachable!("the build script checked every artifact's header: {err}"))
    })
}

/// The built-in tools, but those the tools folder replaces with a file of the same name.
fn builtins_beside(tools_dir: Option<&Path>) -> Vec<(&'static str, &'static [u8])> {
    let replaced = |file: &str| tools_dir.is_some_and(|dir| dir.join(file).is_file());
    toolcell_tools::ALL.iter().copied().filter(|(file, _)| !replaced(file)).collect()
}

/// The values of the OTLP exporter's headers (`OTEL_EXPORTER_OTLP_*HEADERS`, `key=value`
/// pairs separated by commas, as written and with `%20` decoded): credentials of this
/// process that no tool may be granted under another name.
pub(crate) fn otlp_header_values() -> Vec<String> {
    toolcell_runtime::policy::RESERVED_HOST_VARIABLES
        .iter()
        .filter(|name| name.ends_with("HEADERS"))
        .filter_map(|name| std::env::var(name).ok())
        .flat_map(|headers| {
            headers
                .split(',')
                .filter_map(|pair| pair.split_once('=').map(|(_, value)| value.trim().to_owned()))
                .collect::<Vec<_>>()
        })
        .flat_map(|value| [value.replace("%20", " "), value])
        .filter(|value| value.chars().count() >= toolcell_runtime::policy::MIN_SECRET_CHARS)
        .collect()
}

/// [`toolcell_tools::POLICY`], which a test of this crate parses.
pub(crate) fn builtin_policy() -> Policy {
    Policy::parse(toolcell_tools::POLICY, Path::new("."))
        .unwrap_or_else(|problems| unreachable!("the built-in tools' policy is checked by a test: {problems:?}"))
}

pub(crate) fn warn_diagnostics(runtime: &Runtime) {
    for diagnostic in runtime.diagnostics() {
        eprintln!("warning: not loaded: {diagnostic}");
    }
}

/// "there is no tool named …", with the closest names and the rest of the list.
pub(crate) fn no_such_tool(runtime: &Runtime, tool: &str) -> String {
    let names: Vec<&str> = runtime.definitions().map(|tool| tool.name.as_str()).collect();
    if names.is_empty() {
        return format!("there is no tool named `{tool}`: no tool is loaded");
    }
    let mut message = format!("there is no tool named `{tool}`");
    if let Some(best) = toolcell_schema::words::closest(tool, names.iter().copied(), 1).first() {
        message.push_str(&format!("; did you mean `{best}`?"));
    }
    message.push_str(&format!(" Available: {}", names.join(", ")));
    message
}

/// "… is not a file", with the closest `.wasm` file of its folder when there is one.
pub(crate) fn not_a_file(path: &Path) -> String {
    let what = if path.exists() { "is not a file" } else { "does not exist" };
    let mut message = format!("{} {what}", path.display());
    let folder = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let names: Vec<String> = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.ends_with(".wasm"))
        .collect();
    let wanted = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    if let Some(best) = toolcell_schema::words::closest(&wanted, names.iter().map(String::as_str), 1).first() {
        message.push_str(&format!("; did you mean {}?", folder.join(best).display()));
    }
    message
}

/// A `toolcell` command line that loads the same tools as this one: `toolcell [--tools-dir
/// DIR] <rest>`.
pub(crate) fn command_line(source: Source<'_>, rest: &str) -> String {
    match source.tools_dir {
        Some(dir) => format!("toolcell --tools-dir {} {rest}", shell_quote(&dir.display().to_string())),
        None => format!("toolcell {rest}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_builtin_policy_parses_and_grants_nothing() {
        let policy = super::builtin_policy();
        let tools: Vec<_> = policy.tools().map(|(tool, _)| tool).collect();
        assert_eq!(tools, ["python"]);
        let python = policy.grants("python").unwrap();
        assert!(python.is_empty(), "{python:?}");
        assert!(python.limits.fuel.is_some() && python.limits.memory_bytes.is_some());
    }
}
