//! A tool's definition known before its component is compiled: what `toolcell build` (and the
//! standard tools' build) writes into a custom section of the component, `toolcell-metadata`,
//! so that a server can list a tool at once on a cold start rather than after seconds of
//! compiling. The section is a claim of the component's own author, like its exports: it is
//! checked as the exports are, and once the component is compiled its exports decide (a tool
//! whose section said otherwise is listed as its exports say, and clients are told the list
//! changed).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolcell_guest_build::{METADATA_SECTION, metadata_section};

use super::code::ToolCode;
use super::component::{LoadedTool, Read, open_world};
use super::metadata::{Described, Said, describe};
use super::sources::Snapshot;
use crate::bindings::annotations::ToolAnnotations as DeclaredAnnotations;
use crate::policy::{MissingGrant, RequestedCapabilities, missing_grants};
use crate::tool::definition::ToolDefinition;

/// The section format this runtime reads and writes; a section of another is ignored.
const FORMAT: u32 = 1;

/// What the section holds: the tool's three describing exports' answers, and whether it
/// imports `wasi:http`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Announcement {
    format: u32,
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    description: String,
    version: String,
    parameters_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output_schema: Option<Value>,
    #[serde(default)]
    annotations: Declared,
    #[serde(default)]
    capabilities: RequestedCapabilities,
    #[serde(default)]
    imports_http: bool,
}

/// The annotations a tool declares (before grants settle `open_world`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Declared {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    read_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    destructive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    idempotent: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    open_world: Option<bool>,
}

impl Announcement {
    /// What a loaded tool would announce of itself.
    pub(crate) fn of(tool: &LoadedTool) -> Self {
        let definition = &tool.definition;
        Self {
            format: FORMAT,
            name: definition.name.clone(),
            title: definition.title.clone(),
            description: definition.description.clone(),
            version: definition.version.clone(),
            parameters_schema: definition.parameters.clone(),
            output_schema: definition.output_schema.clone(),
            annotations: Declared {
                read_only: definition.annotations.read_only,
                destructive: definition.annotations.destructive,
                idempotent: definition.annotations.idempotent,
                open_world: tool.declared_open_world,
            },
            capabilities: tool.requested.clone(),
            imports_http: tool.uses_http,
        }
    }

    /// The section's payload.
    pub(crate) fn to_payload(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// The announcement a component carries, checked as its exports would be; `None` when it
    /// carries none, or one this runtime cannot read (its exports then say it all, once
    /// compiled).
    pub(crate) fn read(component: &[u8]) -> Option<Result<Announced, String>> {
        let payload = metadata_section(component)?;
        let announcement: Self = match serde_json::from_slice(payload) {
            Ok(announcement) => announcement,
            Err(err) => return Some(Err(format!("its `{METADATA_SECTION}` section is not valid: {err}"))),
        };
        if announcement.format != FORMAT {
            return None;
        }
        Some(announcement.check())
    }

    /// What a component said of itself, from the compile cache's record of it
    /// (`CompileCache::said`), checked as its exports were; `None` for a record this runtime
    /// cannot read.
    pub(crate) fn from_record(payload: &[u8]) -> Option<Result<Announced, String>> {
        let announcement: Self = serde_json::from_slice(payload).ok()?;
        (announcement.format == FORMAT).then(|| announcement.check())
    }

    fn check(self) -> Result<Announced, String> {
        let said = Said {
            name: self.name,
            description: self.description,
            version: self.version,
            parameters_schema: self.parameters_schema.to_string(),
            output_schema: self.output_schema.map(|schema| schema.to_string()),
            requested: self.capabilities,
            declared: DeclaredAnnotations {
                title: self.title,
                read_only: self.annotations.read_only,
                destructive: self.annotations.destructive,
                idempotent: self.annotations.idempotent,
                open_world: self.annotations.open_world,
            },
        };
        let described = describe(said).map_err(|reason| reason.reason)?;
        Ok(Announced { described, uses_http: self.imports_http })
    }
}

/// A tool a component announces, as a runtime lists it before compiling it: its definition
/// (with `open_world` settled by its grants), and what it needs and is not granted.
#[derive(Debug, Clone)]
pub(crate) struct AnnouncedTool {
    pub(crate) definition: ToolDefinition,
    pub(crate) missing_grants: Vec<MissingGrant>,
}

/// Each component of `snapshot`, by source in the order of the sources, with the tool it
/// announces, granted as the snapshot's policy grants it; `None` for a component that
/// announces none (or one that is not valid: compiling it will say why).
pub(crate) fn announced(snapshot: &Snapshot) -> Vec<(String, Option<AnnouncedTool>)> {
    let policy = snapshot.policy();
    snapshot
        .inputs
        .iter()
        .map(|input| {
            let Read::Bytes { bytes, .. } = &input.read else { return (input.source.clone(), None) };
            let announced = match Announcement::read(bytes) {
                Some(Ok(announced)) => Some(announced),
                Some(Err(reason)) => {
                    tracing::debug!(source = %input.source, %reason, "announced tool not listed before it compiles");
                    None
                }
                None => None,
            };
            let tool = announced.map(|Announced { described, uses_http }| {
                let Described { mut definition, requested, declared_open_world, .. } = described;
                let grants = policy.grants(&definition.name).cloned().unwrap_or_default();
                let open_world = open_world(declared_open_world, &requested, grants.sends_http());
                definition.annotations.open_world = Some(open_world);
                AnnouncedTool { missing_grants: missing_grants(&requested, uses_http, &grants), definition }
            });
            (input.source.clone(), tool)
        })
        .collect()
}

/// A tool as its component's section announces it, checked.
pub(crate) struct Announced {
    pub(crate) described: Described,
    pub(crate) uses_http: bool,
}

impl Announced {
    /// The tool as a record of what it said of itself describes it, loaded from `source`
    /// (bytes of this `digest`) with this code.
    pub(crate) fn into_tool(self, source: String, digest: [u8; 32], code: Arc<ToolCode>) -> LoadedTool {
        let Self { described, uses_http } = self;
        let Described { definition, requested, parameters, output, declared_open_world } = described;
        LoadedTool {
            definition,
            requested,
            source,
            digest,
            identity: None,
            code,
            http: false,
            parameters: Arc::new(parameters),
            output: output.map(Arc::new),
            declared_open_world,
            uses_http,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    fn announcement() -> Announcement {
        Announcement {
            format: FORMAT,
            name: "echo".into(),
            title: Some("Echo".into()),
            description: "Says it back.".into(),
            version: "1.0.0".into(),
            parameters_schema: serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            output_schema: None,
            annotations: Declared { read_only: Some(true), ..Declared::default() },
            capabilities: RequestedCapabilities::default(),
            imports_http: false,
        }
    }

    #[test]
    fn a_written_section_is_read_back_and_checked() {
        let component = toolcell_guest_build::with_metadata_section(EMPTY_COMPONENT, &announcement().to_payload());
        let announced = Announcement::read(&component).expect("a section").expect("valid");
        assert_eq!(announced.described.definition.name, "echo");
        assert_eq!(announced.described.definition.title.as_deref(), Some("Echo"));
        // Written again: the old section is replaced, not repeated.
        let mut renamed = announcement();
        renamed.name = "echo2".into();
        let again = toolcell_guest_build::with_metadata_section(&component, &renamed.to_payload());
        assert_eq!(again.len(), component.len() + 1);
        let announced = Announcement::read(&again).expect("a section").expect("valid");
        assert_eq!(announced.described.definition.name, "echo2");
    }

    /// Every standard tool, loaded, its record kept and read back: the same definition (with
    /// the same settled `open_world`), requests and HTTP use as its exports gave.
    #[tokio::test]
    async fn a_record_of_what_a_tool_said_reads_back_as_the_tool_it_was_taken_from() {
        let runtime = crate::Runtime::builder().tools_dir(toolcell_tools::DIR).build().await.expect("a runtime");
        let version = &runtime.runner().version;
        assert_eq!(version.tools.len(), 8);
        for entry in version.tools.values() {
            let tool = &entry.tool;
            let record = Announcement::of(tool).to_payload();
            let Announced { described, uses_http } =
                Announcement::from_record(&record).expect("a record of this format").expect("valid");
            let mut definition = described.definition;
            definition.annotations.open_world =
                Some(open_world(described.declared_open_world, &described.requested, entry.grants.sends_http()));
            assert_eq!(definition, tool.definition, "{}", tool.definition.name);
            assert_eq!(described.requested, tool.requested, "{}", tool.definition.name);
            assert_eq!(uses_http, tool.uses_http, "{}", tool.definition.name);
        }
    }

    #[test]
    fn a_section_is_checked_as_the_exports_are() {
        let mut bad = announcement();
        bad.name = "has space".into();
        let component = toolcell_guest_build::with_metadata_section(EMPTY_COMPONENT, &bad.to_payload());
        let error = Announcement::read(&component).expect("a section").err().expect("refused");
        assert!(error.contains("tool name `has space` is invalid"), "{error}");

        let garbage = toolcell_guest_build::with_metadata_section(EMPTY_COMPONENT, b"{not json");
        let error = Announcement::read(&garbage).expect("a section").err().expect("refused");
        assert!(error.starts_with("its `toolcell-metadata` section is not valid"), "{error}");

        let mut future = announcement();
        future.format = 2;
        let component = toolcell_guest_build::with_metadata_section(EMPTY_COMPONENT, &future.to_payload());
        assert!(Announcement::read(&component).is_none(), "a format this runtime cannot read is ignored");
    }
}
