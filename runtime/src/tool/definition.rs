//! A tool as a model sees it: its definition, its annotations and the rules for its name.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// Whether `name` may name a tool: 1-[`MAX_NAME_CHARS`] characters of `[a-zA-Z0-9_-]`.
pub(crate) fn is_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_follow_the_provider_rules() {
        assert!(is_tool_name("json_query-2"));
        assert!(!is_tool_name(""));
        assert!(!is_tool_name("has space"));
        assert!(!is_tool_name(&"a".repeat(65)));
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
}
