//! Reading a prepared component's metadata once, granted nothing, and checking it: the
//! definition a model sees, the capabilities it asks for, its annotations.

use std::sync::Arc;

use serde_json::Value;
use wasmtime::Engine;

use super::code::ToolCode;
use super::compile::Prepared;
use super::component::{LoadedTool, NotLoaded};
use crate::bindings::annotations::ToolAnnotations as DeclaredAnnotations;
use crate::policy::{Access, RequestedCapabilities, RequestedDirectory};
use crate::sandbox::Network;
use crate::sandbox::execute::{Export, Returned, execute};
use crate::sandbox::nested::NestedCalls;
use crate::tool::definition::{
    MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_TITLE_CHARS, ToolAnnotations, ToolDefinition, is_tool_name,
};
use crate::tool::error::CallError;
use crate::tool::limits::Limits;
use toolcell_schema::CompiledSchema;

/// Reads a prepared component's metadata, requested capabilities and annotations (once, under
/// `limits`, granted nothing) and checks them.
pub(crate) async fn load_tool(
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

    let said = Said {
        name: metadata.name,
        description: metadata.description,
        version: metadata.version,
        parameters_schema: metadata.parameters_schema,
        output_schema: metadata.output_schema,
        requested,
        declared,
    };
    let Described { definition, requested, parameters, output, declared_open_world } = describe(said)?;
    Ok(LoadedTool {
        definition,
        requested,
        source,
        digest,
        identity: None,
        code: ToolCode::linked(prepared.component, prepared.core),
        http: false,
        parameters: Arc::new(parameters),
        output: output.map(Arc::new),
        declared_open_world,
        uses_http: prepared.uses_http,
    })
}

/// What a tool says of itself, from its describing exports (or the section announcing them,
/// [`super::announce`]), before it is checked.
pub(crate) struct Said {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) version: String,
    pub(crate) parameters_schema: String,
    pub(crate) output_schema: Option<String>,
    pub(crate) requested: RequestedCapabilities,
    pub(crate) declared: DeclaredAnnotations,
}

/// What a tool says of itself, checked: its definition and compiled schemas.
pub(crate) struct Described {
    pub(crate) definition: ToolDefinition,
    pub(crate) requested: RequestedCapabilities,
    pub(crate) parameters: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    /// What the tool itself says of `open_world`; without a word, grants decide.
    pub(crate) declared_open_world: Option<bool>,
}

/// Checks what a tool says of itself: a valid name, a description and title a model and a
/// person can use, a semantic version, schemas that compile (the parameters' an object).
pub(crate) fn describe(said: Said) -> Result<Described, NotLoaded> {
    let Said { name, description, version, parameters_schema, output_schema, requested, declared } = said;
    check_name(&name)?;
    let description = description.trim();
    if description.is_empty() {
        return Err(NotLoaded::from(format!(
            "tool `{name}` has an empty description: the model needs one to know when to call it"
        )));
    }
    let description_chars = description.chars().count();
    if description_chars > MAX_DESCRIPTION_CHARS {
        return Err(NotLoaded::from(format!(
            "tool `{name}` has a description of {description_chars} characters; model providers accept at most {MAX_DESCRIPTION_CHARS}"
        )));
    }
    let title = declared.title.as_deref().map(|title| check_title(&name, title)).transpose()?;
    if declared.read_only == Some(true) && declared.destructive == Some(true) {
        return Err(NotLoaded::from(format!(
            "tool `{name}` declares itself both read-only and destructive, which contradict each other: \
             a read-only tool changes nothing. Declare only the one that is true"
        )));
    }
    if !is_semver(&version) {
        return Err(NotLoaded::from(format!(
            "tool `{name}` has version `{version}`, which is not a semantic version like `1.2.0`"
        )));
    }
    let (parameters_schema, parameters) = CompiledSchema::compile(&parameters_schema)
        .map_err(|reason| format!("tool `{name}`: its parameters schema {reason}"))?;
    if parameters_schema.get("type") != Some(&Value::from("object")) {
        return Err(NotLoaded::from(format!(
            "tool `{name}`: its parameters schema must have `\"type\": \"object\"` at the top level, \
             because arguments are always a JSON object"
        )));
    }
    let (output_schema, output) = match &output_schema {
        Some(text) => {
            let (schema, compiled) =
                CompiledSchema::compile(text).map_err(|reason| format!("tool `{name}`: its output schema {reason}"))?;
            (Some(schema), Some(compiled))
        }
        None => (None, None),
    };
    let annotations = ToolAnnotations {
        read_only: declared.read_only,
        destructive: declared.destructive,
        idempotent: declared.idempotent,
        open_world: declared.open_world.or(Some(!requested.http_hosts.is_empty())),
    };
    let definition = ToolDefinition {
        name,
        title,
        description: description.to_owned(),
        version,
        parameters: parameters_schema,
        output_schema,
        annotations,
    };
    Ok(Described { definition, requested, parameters, output, declared_open_world: declared.open_world })
}

/// Calls a describing export (`metadata`, `capabilities`, `annotations`) in a sandbox that
/// grants nothing.
async fn call_once(engine: &Engine, source: &str, limits: &Limits, export: Export<'_>) -> Result<Returned, NotLoaded> {
    let name = match export {
        Export::Capabilities(_) => "capabilities",
        Export::Annotations(_) => "annotations",
        Export::Metadata(_) | Export::Invoke { .. } | Export::Run { .. } => "metadata",
    };
    let execution =
        execute(engine, limits, &Access::default(), &Network::default(), NestedCalls::Loading, export, None).await;
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
    fn semver_needs_three_numbers() {
        assert!(is_semver("1.0.0"));
        assert!(is_semver("0.3.1-beta.2+build5"));
        assert!(!is_semver("1.0"));
        assert!(!is_semver("v1.0.0"));
        assert!(!is_semver("1.0.0-"));
    }
}
