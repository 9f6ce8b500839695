//! Loading one component: read, compile, pre-instantiate, read its metadata once and check it.

use std::fmt;
use std::fs::{File, Metadata};
use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

use crate::bindings::ToolCorePre;
use crate::bindings::annotations::{AnnotationsExportPre, ToolAnnotations as DeclaredAnnotations};
use crate::bindings::capabilities::CapabilityRequestsPre;
use crate::cache::{self, CompileCache};
use crate::error::CallError;
use crate::execute::{Export, Returned, execute};
use crate::limits::Limits;
use crate::link::Linkers;
use crate::nested::Calls;
use crate::policy::{Access, RequestedCapabilities, RequestedDirectory};
use crate::sandbox::{Network, Sandbox};
use toolcell_schema::CompiledSchema;

/// The longest description model providers accept.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest tool name model providers accept.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest title a tool may declare: a label for people, not a second description.
pub const MAX_TITLE_CHARS: usize = 128;

/// A tool as a model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolDefinition {
    /// The name to call it by.
    pub name: String,
    /// A short name for people (MCP's `title`), e.g. `Calculator`, when the tool declares one:
    /// trimmed, at most [`MAX_TITLE_CHARS`] characters, one line. Omitted from JSON when absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub title: Option<String>,
    /// What it does, for the model.
    pub description: String,
    /// The tool's semantic version.
    pub version: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
    /// JSON Schema of the result, when the tool declares one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output_schema: Option<Value>,
    /// How the tool says it behaves (MCP's tool `annotations`). Omitted from JSON when no hint
    /// is set, which does not happen for a loaded tool: [`ToolAnnotations::open_world`] is
    /// always decided at load.
    #[serde(skip_serializing_if = "ToolAnnotations::is_empty", default)]
    pub annotations: ToolAnnotations,
}

/// A tool's hints about its behaviour: MCP's tool annotations, serialized with MCP's names
/// (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`) and without the
/// hints that are `None`.
///
/// The tool declares them itself (the `tool-annotations` export of `wit/tool.wit`), so they
/// are claims for a client deciding what to confirm with its user, never a security
/// boundary: what a tool can do is decided by the sandbox and the operator's policy. `None`
/// means the tool does not say; a client then assumes MCP's cautious default, given on each
/// field. A tool built before the export existed declares nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// `true`: the tool does not modify its environment. MCP's default: `false`.
    #[serde(rename = "readOnlyHint", skip_serializing_if = "Option::is_none", default)]
    pub read_only: Option<bool>,
    /// `true`: the tool may delete or overwrite things; `false`: it only adds. Meaningful only
    /// when the tool is not read-only (a tool declaring both is not loaded). MCP's default:
    /// `true`.
    #[serde(rename = "destructiveHint", skip_serializing_if = "Option::is_none", default)]
    pub destructive: Option<bool>,
    /// `true`: calling again with the same arguments has no further effect on the
    /// environment (the result may still differ, as a clock's does). Meaningful only when the
    /// tool is not read-only. MCP's default: `false`.
    #[serde(rename = "idempotentHint", skip_serializing_if = "Option::is_none", default)]
    pub idempotent: Option<bool>,
    /// `true`: the tool interacts with an open world of external entities (the web);
    /// `false`: its domain is closed (its arguments, a granted folder). MCP's default: `true`.
    ///
    /// Always `Some` for a loaded tool. What the tool declares wins; a tool that declares
    /// nothing gets `Some(true)` when its `capabilities` export requests HTTP hosts or the
    /// operator grants it some, and `Some(false)` otherwise: such a tool has no network
    /// (sockets are never granted, and `wasi:http` only for granted hosts), so its world is
    /// closed by construction.
    #[serde(rename = "openWorldHint", skip_serializing_if = "Option::is_none", default)]
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// Whether no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// What loading is doing, for a progress display. Only compilation is reported: a component
/// read from the compile cache is ready in milliseconds, one compiled takes seconds.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum LoadEvent<'a> {
    /// A component (named by its file or label) is being compiled: it was not in the cache.
    Compiling {
        /// The file or label.
        source: &'a str,
    },
    /// That compilation ended, in a compiled component or an error.
    Compiled {
        /// The file or label.
        source: &'a str,
    },
}

/// A component that was not loaded, and why. Loading goes on with the other components.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadDiagnostic {
    /// The file (or label) the component came from.
    pub source: String,
    /// What is wrong and what to do about it.
    pub reason: String,
}

impl fmt::Display for LoadDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source, self.reason)
    }
}

/// A component file's identity: what changes whenever its contents change, read without
/// reading them (device, inode, size, modification and change times). A reload trusts it only
/// for a file that had not changed for [`SETTLED`] when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) struct FileIdentity {
    device: u64,
    inode: u64,
    len: u64,
    modified_ns: i128,
    changed_ns: i128,
}

/// How long before it is read a file must have stopped changing for its identity to vouch
/// for its bytes: a second write within one tick of the file system's clock can leave every
/// field of the identity as it was (git's "racily clean" files).
const SETTLED: Duration = Duration::from_secs(2);

impl FileIdentity {
    #[cfg(unix)]
    fn of(metadata: &Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt as _;
        let ns = |seconds: i64, nanos: i64| i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
        Some(Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            len: metadata.len(),
            modified_ns: ns(metadata.mtime(), metadata.mtime_nsec()),
            changed_ns: ns(metadata.ctime(), metadata.ctime_nsec()),
        })
    }

    #[cfg(not(unix))]
    fn of(_metadata: &Metadata) -> Option<Self> {
        None
    }

    /// Whether the file had stopped changing [`SETTLED`] before `time`.
    fn settled_before(&self, time: SystemTime) -> bool {
        let Ok(since_epoch) = time.duration_since(SystemTime::UNIX_EPOCH) else { return false };
        let limit = i128::try_from(since_epoch.saturating_sub(SETTLED).as_nanos()).unwrap_or(i128::MAX);
        self.modified_ns < limit && self.changed_ns < limit
    }
}

/// A component as one version of a runtime reads it.
pub(crate) enum Read {
    /// Its bytes and their digest, and the file's identity when it can vouch for these bytes
    /// at the next reload.
    Bytes { bytes: bytes::Bytes, digest: [u8; 32], identity: Option<FileIdentity> },
    /// The file still has the identity of the one the previous version loaded: not read again.
    Same { digest: [u8; 32], identity: FileIdentity },
    /// It could not be read.
    Failed(String),
}

impl Read {
    /// Bytes given rather than read from a file.
    pub(crate) fn given(bytes: bytes::Bytes) -> Self {
        let digest = cache::digest(&bytes);
        Self::Bytes { bytes, digest, identity: None }
    }

    /// The digest of the bytes, when they could be read.
    pub(crate) fn digest(&self) -> Option<[u8; 32]> {
        match self {
            Self::Bytes { digest, .. } | Self::Same { digest, .. } => Some(*digest),
            Self::Failed(_) => None,
        }
    }
}

/// Reads a component file. `known` is the identity and digest of the file the previous
/// version loaded from this path: a file that still has that identity is not read again.
/// Blocking.
pub(crate) fn read_component(path: &Path, known: Option<(FileIdentity, [u8; 32])>) -> Read {
    if let Some((identity, digest)) = known
        && std::fs::metadata(path).ok().as_ref().and_then(FileIdentity::of) == Some(identity)
    {
        return Read::Same { digest, identity };
    }
    let started = SystemTime::now();
    let read = || -> std::io::Result<(Vec<u8>, Option<FileIdentity>)> {
        let mut file = File::open(path)?;
        let before = file.metadata()?;
        let mut bytes = Vec::with_capacity(usize::try_from(before.len()).unwrap_or(0));
        file.read_to_end(&mut bytes)?;
        let after = FileIdentity::of(&file.metadata()?);
        // An identity vouches for the bytes only if nothing wrote the file while it was read,
        // nor so shortly before that a later write could leave the identity unchanged.
        let identity =
            FileIdentity::of(&before).filter(|identity| after == Some(*identity) && identity.settled_before(started));
        Ok((bytes, identity))
    };
    match read() {
        Ok((bytes, identity)) => {
            let digest = cache::digest(&bytes);
            Read::Bytes { bytes: bytes.into(), digest, identity }
        }
        Err(err) => Read::Failed(format!("cannot be read: {err}")),
    }
}

/// Why a component did not load.
pub(crate) struct NotLoaded {
    /// What is wrong and what to do about it.
    pub(crate) reason: String,
    /// The host, not the component, failed (no instance was free to read its metadata in):
    /// the next reload tries the same bytes again.
    pub(crate) by_host: bool,
}

impl From<String> for NotLoaded {
    fn from(reason: String) -> Self {
        Self { reason, by_host: false }
    }
}

impl From<&str> for NotLoaded {
    fn from(reason: &str) -> Self {
        reason.to_owned().into()
    }
}

/// A component compiled and linked (without HTTP), its exports found.
pub(crate) struct Prepared {
    component: Component,
    core: ToolCorePre<Sandbox>,
    /// Absent for tools built before the `capabilities` export existed.
    capabilities: Option<CapabilityRequestsPre<Sandbox>>,
    /// Absent for tools built before the `annotations` export existed.
    annotations: Option<AnnotationsExportPre<Sandbox>>,
}

/// A tool ready to be called. Cheap to clone: a reload reuses it when its file is unchanged.
#[derive(Clone)]
pub(crate) struct LoadedTool {
    pub(crate) definition: ToolDefinition,
    pub(crate) requested: RequestedCapabilities,
    pub(crate) source: String,
    /// Digest of the component's bytes: a reload recompiles only what changed.
    pub(crate) digest: [u8; 32],
    /// The identity of the file those bytes were read from, when it vouches for them: a
    /// reload does not read a file that still has it.
    pub(crate) identity: Option<FileIdentity>,
    component: Component,
    /// Linked without `wasi:http`: the starting point whatever the policy grants.
    unlinked_http: ToolCorePre<Sandbox>,
    pub(crate) pre: ToolCorePre<Sandbox>,
    pub(crate) parameters: Arc<CompiledSchema>,
    pub(crate) output: Option<Arc<CompiledSchema>>,
    /// What the tool itself says of `open_world`; without a word, grants decide.
    declared_open_world: Option<bool>,
}

/// Compiles (or loads from the cache) and links a component. Blocking: compilation takes
/// hundreds of milliseconds or more.
pub(crate) fn prepare(
    engine: &Engine,
    linkers: &Linkers,
    cache: Option<&CompileCache>,
    bytes: &[u8],
    digest: &[u8; 32],
    compiling: &dyn Fn(),
) -> Result<Prepared, String> {
    const MAGIC: &[u8] = b"\0asm";
    const CORE_VERSION: &[u8] = &[1, 0, 0, 0];
    if bytes.len() < 8 || &bytes[..4] != MAGIC {
        return Err("is not a WebAssembly file (it does not start with the `\\0asm` magic bytes)".into());
    }
    if &bytes[4..8] == CORE_VERSION {
        return Err("is a core WebAssembly module, not a component: build the tool for the `wasm32-wasip2` \
                    target, which produces a component"
            .into());
    }
    let compiled = match cache {
        Some(cache) => cache.compile(engine, bytes, digest, compiling),
        None => {
            compiling();
            Component::from_binary(engine, bytes)
        }
    };
    let component = compiled.map_err(compile_error)?;
    let linker = linkers.without_http(engine, &component).map_err(|err| format!("cannot be linked: {err}"))?;
    let pre = link(&linker, &component)?;
    let capabilities = match component.get_export_index(None, "capabilities") {
        Some(_) => Some(CapabilityRequestsPre::new(pre.clone()).map_err(|err| {
            format!("exports `capabilities` with the wrong type ({err}); rebuild it with the current toolcell-guest")
        })?),
        None => None,
    };
    let annotations = match component.get_export_index(None, "annotations") {
        Some(_) => Some(AnnotationsExportPre::new(pre.clone()).map_err(|err| {
            format!("exports `annotations` with the wrong type ({err}); rebuild it with the current toolcell-guest")
        })?),
        None => None,
    };
    let core = ToolCorePre::new(pre).map_err(|err| {
        format!(
            "does not export the `toolcell:tool/tool` world ({err}); \
             is it a tool built with toolcell-guest's #[tool]? A `wasi:cli` command is not a tool"
        )
    })?;
    Ok(Prepared { component, core, capabilities, annotations })
}

fn compile_error(err: wasmtime::Error) -> String {
    let text = err.to_string();
    if text.contains("pooling allocator") {
        // The pool's per-component maxima are one call's share of the pool.
        format!(
            "cannot run in a pooled instance slot: {text}. One call may use at most one slot's share of memories, \
             tables and core instances; simplify the tool, or load it in a runtime without pooling"
        )
    } else {
        format!("could not be compiled: {text}")
    }
}

fn link(linker: &Linker<Sandbox>, component: &Component) -> Result<wasmtime::component::InstancePre<Sandbox>, String> {
    linker.instantiate_pre(component).map_err(|err| {
        format!("cannot be linked: {err}. A tool may import only WASI 0.2 interfaces that toolcell provides")
    })
}

impl LoadedTool {
    /// The same tool linked as when it was loaded (without `wasi:http`), for a new set of grants.
    pub(crate) fn without_grants(&self) -> Self {
        Self { pre: self.unlinked_http.clone(), ..self.clone() }
    }

    /// The same tool, its bytes last read from a file of this identity.
    pub(crate) fn read_from(self, identity: Option<FileIdentity>) -> Self {
        Self { identity, ..self }
    }

    /// Settles [`ToolAnnotations::open_world`] for the operator's grants: what the tool
    /// declares, else whether it requests or is granted any HTTP host.
    pub(crate) fn settle_open_world(&mut self, granted_hosts: bool) {
        let reaches_hosts = granted_hosts || !self.requested.http_hosts.is_empty();
        self.definition.annotations.open_world = Some(self.declared_open_world.unwrap_or(reaches_hosts));
    }

    /// Links the tool with `wasi:http`, for a tool the operator granted HTTP hosts.
    pub(crate) fn link_http(&mut self, linkers: &Linkers) -> Result<(), String> {
        let pre = link(linkers.with_http(), &self.component)?;
        self.pre = ToolCorePre::new(pre).map_err(|err| format!("cannot be linked with wasi:http: {err}"))?;
        Ok(())
    }
}

/// Reads a prepared component's metadata, requested capabilities and annotations (once, under
/// `limits`, granted nothing) and checks them.
pub(crate) async fn load(
    engine: &Engine,
    source: String,
    digest: [u8; 32],
    prepared: Prepared,
    limits: &Limits,
) -> Result<LoadedTool, NotLoaded> {
    let metadata = match call_once(engine, &source, limits, Export::Metadata(&prepared.core)).await? {
        Returned::Metadata(metadata) => metadata,
        _ => return Err("returned an unexpected value from metadata()".into()),
    };
    let requested = match &prepared.capabilities {
        Some(pre) => match call_once(engine, &source, limits, Export::Capabilities(pre)).await? {
            Returned::Capabilities(request) => RequestedCapabilities {
                http_hosts: request.http_hosts,
                directories: request
                    .directories
                    .into_iter()
                    .map(|dir| RequestedDirectory { guest_path: dir.guest_path, writable: dir.writable })
                    .collect(),
                env: request.env,
            },
            _ => return Err("returned an unexpected value from capabilities()".into()),
        },
        None => RequestedCapabilities::default(),
    };
    let declared = match &prepared.annotations {
        Some(pre) => match call_once(engine, &source, limits, Export::Annotations(pre)).await? {
            Returned::Annotations(annotations) => annotations,
            _ => return Err("returned an unexpected value from annotations()".into()),
        },
        None => {
            DeclaredAnnotations { title: None, read_only: None, destructive: None, idempotent: None, open_world: None }
        }
    };

    check_name(&metadata.name)?;
    let description = metadata.description.trim();
    if description.is_empty() {
        return Err(NotLoaded::from(format!(
            "tool `{}` has an empty description: the model needs one to know when to call it",
            metadata.name
        )));
    }
    let description_chars = description.chars().count();
    if description_chars > MAX_DESCRIPTION_CHARS {
        return Err(NotLoaded::from(format!(
            "tool `{}` has a description of {description_chars} characters; model providers accept at most {MAX_DESCRIPTION_CHARS}",
            metadata.name
        )));
    }
    let title = declared.title.as_deref().map(|title| check_title(&metadata.name, title)).transpose()?;
    if declared.read_only == Some(true) && declared.destructive == Some(true) {
        return Err(NotLoaded::from(format!(
            "tool `{}` declares itself both read-only and destructive, which contradict each other: \
             a read-only tool changes nothing. Declare only the one that is true",
            metadata.name
        )));
    }
    if !is_semver(&metadata.version) {
        return Err(NotLoaded::from(format!(
            "tool `{}` has version `{}`, which is not a semantic version like `1.2.0`",
            metadata.name, metadata.version
        )));
    }
    let (parameters_schema, parameters) = CompiledSchema::compile(&metadata.parameters_schema)
        .map_err(|reason| format!("tool `{}`: its parameters schema {reason}", metadata.name))?;
    if parameters_schema.get("type") != Some(&Value::from("object")) {
        return Err(NotLoaded::from(format!(
            "tool `{}`: its parameters schema must have `\"type\": \"object\"` at the top level, \
             because arguments are always a JSON object",
            metadata.name
        )));
    }
    let (output_schema, output) = match &metadata.output_schema {
        Some(text) => {
            let (schema, compiled) = CompiledSchema::compile(text)
                .map_err(|reason| format!("tool `{}`: its output schema {reason}", metadata.name))?;
            (Some(schema), Some(compiled))
        }
        None => (None, None),
    };

    Ok(LoadedTool {
        definition: ToolDefinition {
            name: metadata.name,
            title,
            description: description.to_owned(),
            version: metadata.version,
            parameters: parameters_schema,
            output_schema,
            annotations: ToolAnnotations {
                read_only: declared.read_only,
                destructive: declared.destructive,
                idempotent: declared.idempotent,
                open_world: declared.open_world.or(Some(!requested.http_hosts.is_empty())),
            },
        },
        requested,
        source,
        digest,
        identity: None,
        component: prepared.component,
        unlinked_http: prepared.core.clone(),
        pre: prepared.core,
        parameters: Arc::new(parameters),
        output: output.map(Arc::new),
        declared_open_world: declared.open_world,
    })
}

/// Calls a describing export (`metadata`, `capabilities`, `annotations`) in a sandbox that
/// grants nothing.
async fn call_once(engine: &Engine, source: &str, limits: &Limits, export: Export<'_>) -> Result<Returned, NotLoaded> {
    let name = match export {
        Export::Capabilities(_) => "capabilities",
        Export::Annotations(_) => "annotations",
        Export::Metadata(_) | Export::Invoke { .. } => "metadata",
    };
    let execution =
        execute(engine, limits, &Access::default(), &Network::default(), Calls::Loading, export, None).await;
    execution.outcome.map_err(|err| {
        let detail = execution.diagnostics.detail.unwrap_or_default();
        if let CallError::Internal { message } = &err {
            // The host failed before or around the guest (no free instance, say): nothing the
            // tool did, so the diagnostic must not blame it.
            tracing::warn!(%source, %detail, "{name}() could not be called: {message}");
            return NotLoaded {
                reason: format!(
                    "was not loaded because the host could not call its {name}(): {message}. This is not a fault \
                     of the tool; the next reload tries it again"
                ),
                by_host: true,
            };
        }
        tracing::warn!(%source, kind = err.kind(), %detail, stderr = %execution.diagnostics.stderr, "{name}() failed");
        format!("failed in {name}() ({}); it must return without trapping", err.kind()).into()
    })
}

/// Whether `name` may name a tool: 1-[`MAX_NAME_CHARS`] characters of `[a-zA-Z0-9_-]`.
pub(crate) fn is_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn check_name(name: &str) -> Result<(), String> {
    if is_tool_name(name) {
        Ok(())
    } else {
        Err(format!(
            "tool name `{name}` is invalid: it must be 1-{MAX_NAME_CHARS} characters from a-z, A-Z, 0-9, `_` and `-`"
        ))
    }
}

/// Checks a declared title the way the description is checked, and returns it trimmed.
fn check_title(tool: &str, title: &str) -> Result<String, String> {
    let title = title.trim();
    if title.is_empty() {
        return Err(format!(
            "tool `{tool}` declares an empty title: give it a short name for people, such as `Calculator`, \
             or declare no title"
        ));
    }
    let chars = title.chars().count();
    if chars > MAX_TITLE_CHARS {
        return Err(format!(
            "tool `{tool}` has a title of {chars} characters; at most {MAX_TITLE_CHARS} are allowed: shorten it \
             (the description is the place for detail)"
        ));
    }
    if let Some(control) = title.chars().find(|c| c.is_control()) {
        return Err(format!(
            "tool `{tool}` has a title containing the control character U+{:04X}: a title is one line of plain \
             text; remove it",
            u32::from(control)
        ));
    }
    Ok(title.to_owned())
}

/// `MAJOR.MINOR.PATCH`, optionally followed by `-pre` and `+build`.
fn is_semver(version: &str) -> bool {
    let core = version.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<&str> = core.split('.').collect();
    let numeric = |part: &&str| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit());
    parts.len() == 3 && parts.iter().all(numeric) && !version.ends_with(['-', '+'])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_follow_the_provider_rules() {
        assert!(check_name("json_query-2").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("has space").is_err());
        assert!(check_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn titles_are_one_short_line() {
        assert_eq!(check_title("t", "  Unit converter ").as_deref(), Ok("Unit converter"));
        assert_eq!(check_title("t", &"é".repeat(MAX_TITLE_CHARS)).map(|title| title.chars().count()), Ok(128));
        assert!(check_title("t", " \t ").unwrap_err().contains("empty title"));
        assert!(check_title("t", &"a".repeat(MAX_TITLE_CHARS + 1)).unwrap_err().contains("129 characters"));
        assert!(check_title("t", "two\nlines").unwrap_err().contains("U+000A"));
        assert!(check_title("t", "bell\u{7}").unwrap_err().contains("U+0007"));
    }

    #[test]
    fn annotations_serialize_with_mcp_names_and_without_unset_hints() {
        let mut annotations = ToolAnnotations::default();
        assert!(annotations.is_empty());
        assert_eq!(serde_json::to_value(&annotations).unwrap(), json!({}));
        annotations.read_only = Some(true);
        annotations.open_world = Some(false);
        assert!(!annotations.is_empty());
        assert_eq!(serde_json::to_value(&annotations).unwrap(), json!({"readOnlyHint": true, "openWorldHint": false}));
        annotations.destructive = Some(false);
        annotations.idempotent = Some(true);
        let value =
            json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false});
        assert_eq!(serde_json::to_value(&annotations).unwrap(), value);
        assert_eq!(serde_json::from_value::<ToolAnnotations>(value).unwrap(), annotations);
    }

    #[test]
    fn semver_needs_three_numbers() {
        assert!(is_semver("1.0.0"));
        assert!(is_semver("0.3.1-beta.2+build5"));
        assert!(!is_semver("1.0"));
        assert!(!is_semver("v1.0.0"));
        assert!(!is_semver("1.0.0-"));
    }
}
