//! Loading one component: compile, pre-instantiate, read its metadata once and check it.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

use crate::bindings::ToolCorePre;
use crate::bindings::capabilities::CapabilityRequestsPre;
use crate::cache::CompileCache;
use crate::execute::{Export, Returned, execute};
use crate::limits::Limits;
use crate::link::Linkers;
use crate::policy::{Access, RequestedCapabilities, RequestedDirectory};
use crate::sandbox::{Network, Sandbox};
use crate::schema::CompiledSchema;

/// The longest description model providers accept.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The longest tool name model providers accept.
pub const MAX_NAME_CHARS: usize = 64;

/// A tool as a model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolDefinition {
    /// The name to call it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The tool's semantic version.
    pub version: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
    /// JSON Schema of the result, when the tool declares one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output_schema: Option<Value>,
}

impl ToolDefinition {
    /// The definition in OpenAI's Chat Completions `tools` format.
    pub fn to_openai(&self) -> Value {
        json!({
            "type": "function",
            "function": { "name": self.name, "description": self.description, "parameters": self.parameters },
        })
    }

    /// The definition in Anthropic's Messages API `tools` format.
    pub fn to_anthropic(&self) -> Value {
        json!({ "name": self.name, "description": self.description, "input_schema": self.parameters })
    }
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

/// A component compiled and linked (without HTTP), its exports found.
pub(crate) struct Prepared {
    component: Component,
    core: ToolCorePre<Sandbox>,
    /// Absent for tools built before the `capabilities` export existed.
    capabilities: Option<CapabilityRequestsPre<Sandbox>>,
}

/// A tool ready to be called. Cheap to clone: a reload reuses it when its file is unchanged.
#[derive(Clone)]
pub(crate) struct LoadedTool {
    pub(crate) definition: ToolDefinition,
    pub(crate) requested: RequestedCapabilities,
    pub(crate) source: String,
    /// SHA-256 of the component's bytes: a reload recompiles only what changed.
    pub(crate) digest: [u8; 32],
    component: Component,
    /// Linked without `wasi:http`: the starting point whatever the policy grants.
    unlinked_http: ToolCorePre<Sandbox>,
    pub(crate) pre: ToolCorePre<Sandbox>,
    pub(crate) parameters: Arc<CompiledSchema>,
    pub(crate) output: Option<Arc<CompiledSchema>>,
}

/// Compiles (or loads from the cache) and links a component. Blocking: compilation takes
/// hundreds of milliseconds or more.
pub(crate) fn prepare(
    engine: &Engine,
    linkers: &Linkers,
    cache: Option<&CompileCache>,
    bytes: &[u8],
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
        Some(cache) => cache.compile(engine, bytes),
        None => Component::from_binary(engine, bytes),
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
    let core = ToolCorePre::new(pre).map_err(|err| {
        format!(
            "does not export the `toolcell:tool/tool` world ({err}); \
             is it a tool built with toolcell-guest's #[tool]? A `wasi:cli` command is not a tool"
        )
    })?;
    Ok(Prepared { component, core, capabilities })
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

    /// Links the tool with `wasi:http`, for a tool the operator granted HTTP hosts.
    pub(crate) fn link_http(&mut self, linkers: &Linkers) -> Result<(), String> {
        let pre = link(linkers.with_http(), &self.component)?;
        self.pre = ToolCorePre::new(pre).map_err(|err| format!("cannot be linked with wasi:http: {err}"))?;
        Ok(())
    }
}

/// Reads a prepared component's metadata and requested capabilities (once, under `limits`,
/// granted nothing) and checks them.
pub(crate) async fn load(
    engine: &Engine,
    source: String,
    digest: [u8; 32],
    prepared: Prepared,
    limits: &Limits,
) -> Result<LoadedTool, String> {
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

    check_name(&metadata.name)?;
    let description = metadata.description.trim();
    if description.is_empty() {
        return Err(format!(
            "tool `{}` has an empty description: the model needs one to know when to call it",
            metadata.name
        ));
    }
    let description_chars = description.chars().count();
    if description_chars > MAX_DESCRIPTION_CHARS {
        return Err(format!(
            "tool `{}` has a description of {description_chars} characters; model providers accept at most {MAX_DESCRIPTION_CHARS}",
            metadata.name
        ));
    }
    if !is_semver(&metadata.version) {
        return Err(format!(
            "tool `{}` has version `{}`, which is not a semantic version like `1.2.0`",
            metadata.name, metadata.version
        ));
    }
    let (parameters_schema, parameters) = CompiledSchema::compile(&metadata.parameters_schema)
        .map_err(|reason| format!("tool `{}`: its parameters schema {reason}", metadata.name))?;
    if parameters_schema.get("type") != Some(&Value::from("object")) {
        return Err(format!(
            "tool `{}`: its parameters schema must have `\"type\": \"object\"` at the top level, \
             because arguments are always a JSON object",
            metadata.name
        ));
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
            description: description.to_owned(),
            version: metadata.version,
            parameters: parameters_schema,
            output_schema,
        },
        requested,
        source,
        digest,
        component: prepared.component,
        unlinked_http: prepared.core.clone(),
        pre: prepared.core,
        parameters: Arc::new(parameters),
        output: output.map(Arc::new),
    })
}

/// Calls a describing export (`metadata`, `capabilities`) in a sandbox that grants nothing.
async fn call_once(engine: &Engine, source: &str, limits: &Limits, export: Export<'_>) -> Result<Returned, String> {
    let name = if matches!(export, Export::Capabilities(_)) { "capabilities" } else { "metadata" };
    let execution = execute(engine, limits, &Access::default(), &Network::default(), export, None).await;
    execution.outcome.map_err(|err| {
        let detail = execution.diagnostics.detail.unwrap_or_default();
        tracing::warn!(%source, kind = err.kind(), %detail, stderr = %execution.diagnostics.stderr, "{name}() failed");
        format!("failed in {name}() ({}); it must return without trapping", err.kind())
    })
}

fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "tool name `{name}` is invalid: it must be 1-{MAX_NAME_CHARS} characters from a-z, A-Z, 0-9, `_` and `-`"
        ))
    }
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
    use super::*;

    #[test]
    fn names_follow_the_provider_rules() {
        assert!(check_name("json_query-2").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("has space").is_err());
        assert!(check_name(&"a".repeat(65)).is_err());
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
