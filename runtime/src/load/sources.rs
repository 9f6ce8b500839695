//! Where components come from, and reading them with the policy files as one snapshot.

use std::path::{Path, PathBuf};

use super::component::{self, Read};
use super::error::RuntimeError;
use super::registry;
use super::version::{Fingerprint, Recipe, Source, Version};
use crate::policy::{EnvValue, HostVariables, MIN_SECRET_CHARS, POLICY_FILE, Policy, PolicyError};
use crate::redact::Redactor;
use crate::tool::definition::is_tool_name;

/// Every tools folder's policy file and its bytes (`None` where the folder has none).
type PolicyFiles = Vec<(PathBuf, Option<Vec<u8>>)>;

/// The largest policy file read.
const MAX_POLICY_BYTES: u64 = 4 << 20;

/// Reads every tools folder's policy file.
fn read_policy_files(sources: &[Source]) -> Result<PolicyFiles, RuntimeError> {
    let mut files = Vec::new();
    for source in sources {
        if let Source::Dir(dir) = source {
            let file = dir.join(POLICY_FILE);
            let bytes = if file.is_file() {
                let unreadable =
                    |err| PolicyError { file: file.clone(), problems: vec![format!("cannot be read: {err}")] };
                // (Bounded, and never a file of the kernel's: its text would be quoted in errors.)
                Some(toolcell_oci::read_operator_file(&file, MAX_POLICY_BYTES).map_err(unreadable)?)
            } else {
                None
            };
            files.push((file, bytes));
        }
    }
    Ok(files)
}

/// The policy of `sources`' policy files over `defaults`, with the grants made in code on top,
/// read now to ask questions of: `from_host` variables need not be set.
pub(crate) fn read_policy(sources: &[Source], defaults: &Policy, in_code: &Policy) -> Result<Policy, RuntimeError> {
    parse_policy_files(&read_policy_files(sources)?, defaults, in_code, HostVariables::NotRead)
}

/// The policy of the policy files over the `defaults`, with the grants made in code on top.
fn parse_policy_files(
    files: &PolicyFiles,
    defaults: &Policy,
    in_code: &Policy,
    host: HostVariables,
) -> Result<Policy, RuntimeError> {
    let mut policy = defaults.clone();
    for (file, bytes) in files {
        if let Some(bytes) = bytes {
            let unreadable = |err| PolicyError { file: file.clone(), problems: vec![format!("cannot be read: {err}")] };
            let text = std::str::from_utf8(bytes).map_err(unreadable)?;
            policy.merge(Policy::parse_file(text, file, host)?);
        }
    }
    policy.merge(in_code.clone());
    Ok(policy)
}

/// How many times the policy files and the components are read before giving up on a
/// policy file that changes each time.
const SNAPSHOT_ATTEMPTS: usize = 3;

/// What one version is built from, read as one snapshot.
pub(crate) struct Snapshot {
    pub(super) policy: Policy,
    pub(super) inputs: Vec<Input>,
    pub(super) read: Fingerprint,
    /// The inputs are only the components of [`Recipe::only_tool`] and the tools it may call.
    pub(super) narrowed: bool,
}

impl Snapshot {
    /// The policy read.
    pub(crate) fn policy(&self) -> &Policy {
        &self.policy
    }
}

/// Reads the policy files, then the components, then the policy files again, until both
/// reads of the policy files agree: a version's grants are the ones on disk while its
/// components were read, never those of another moment. A component the `previous` version
/// loaded from a file that still has the same identity is not read again. With `narrow`,
/// only [`Recipe::only_tool`]'s components are read when they can be found by name.
pub(super) async fn read_snapshot(
    recipe: &Recipe,
    previous: Option<&Version>,
    narrow: bool,
) -> Result<Snapshot, RuntimeError> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        let files = read_policy_files(&recipe.sources)?;
        let policy = parse_policy_files(&files, &recipe.default_policy, &recipe.policy, HostVariables::Required)?;
        hide_secrets_from_logs(&policy);
        let only = recipe.only_tool.as_deref().filter(|_| narrow);
        let (listed, narrowed) =
            match only.and_then(|tool| read_named_sources(&recipe.sources, &callable_from(tool, &policy))) {
                Some(named) => (named, true),
                None => (read_sources(&recipe.sources)?, false),
            };
        let mut inputs = read_components(listed, previous).await;
        let callable = only.map(|tool| callable_from(tool, &policy));
        let from_registries =
            registry::pull_all(&policy, &recipe.registry, callable.as_deref().filter(|_| narrowed)).await;
        inputs.extend(from_registries.into_iter().map(|pulled| Input {
            source: pulled.source,
            read: pulled.read,
            tool: Some(pulled.name),
        }));
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

/// Keeps the policy's secrets out of every log line from the moment the policy is read, not
/// only once a tool is granted them: a server answers requests, and logs them, while its
/// tools still compile. (A value too short to be a secret is refused when it is granted, and
/// hiding it would blank every word that contains it.)
fn hide_secrets_from_logs(policy: &Policy) {
    let sources = policy.tools().flat_map(|(_, grants)| {
        grants.env.iter().map(|grant| &grant.value).chain(grants.secrets.iter().map(|secret| &secret.value))
    });
    let values = sources.filter_map(|value| match value {
        EnvValue::Secret(value) => Some(value.clone()),
        EnvValue::FromHost(variable) => std::env::var(variable).ok(),
        EnvValue::Fixed(_) => None,
    });
    Redactor::granted(values.filter(|value| value.chars().count() >= MIN_SECRET_CHARS));
}

/// Reads the listed components on the blocking pool, all at once.
async fn read_components(listed: Vec<Listed>, previous: Option<&Version>) -> Vec<Input> {
    let reading: Vec<_> = listed
        .into_iter()
        .map(|Listed { source, contents }| {
            let known = previous
                .and_then(|inner| inner.loaded_from(&source))
                .and_then(|tool| Some((tool.identity?, tool.digest)));
            let read = match contents {
                Contents::File(path) => tokio::task::spawn_blocking(move || component::read_component(&path, known)),
                Contents::Loaded(bytes) => tokio::task::spawn_blocking(move || Read::given(bytes)),
            };
            (source, read)
        })
        .collect();
    let mut inputs = Vec::with_capacity(reading.len());
    for (source, read) in reading {
        let read = read.await.unwrap_or_else(|err| Read::Failed(format!("reading panicked: {err}")));
        inputs.push(Input { source, read, tool: None });
    }
    inputs
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
pub(crate) struct Input {
    pub(super) source: String,
    pub(super) read: Read,
    /// The tool it must define: the name the policy gave a registry tool.
    pub(super) tool: Option<String>,
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
