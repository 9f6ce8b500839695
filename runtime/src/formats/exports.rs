//! What a request's tools carry beside their definitions: which ones tool search loads only
//! when the model looks for them (`defer_loading`), an OpenAI namespace that groups them, and
//! which ones a provider's code may call (`allowed_callers`).
//!
//! Only the OpenAI Responses API and Anthropic's Messages API take these; MCP lists carry
//! them as `_meta` marks ([`DEFER_LOADING_META_KEY`], [`ALLOWED_CALLERS_META_KEY`]), which
//! no client is bound to read, and when some tools are deferred, the others carry the key
//! Claude Code reads ([`ALWAYS_LOAD_META_KEY`]). Chat Completions and Gemini have no such fields, and an export
//! in their formats refuses the options rather than drop them unseen.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};
use toolcell_schema::words::closest;

use super::{Format, FormatError, dialects};
use crate::tool::definition::ToolDefinition;

/// The MCP `_meta` key that marks a tool to load only through tool search: `true`, or left out.
pub const DEFER_LOADING_META_KEY: &str = "toolcell/deferLoading";

/// The MCP `_meta` key that lists who may call a tool: `["direct", "programmatic"]` for a tool
/// a program may call, as OpenAI names them; left out for the default, the model only.
pub const ALLOWED_CALLERS_META_KEY: &str = "toolcell/allowedCallers";

/// The MCP `_meta` key Claude Code reads to keep a tool loaded while its tool search defers a
/// server's tools (which it does by default): `true` on the tools an export does not defer
/// when it defers others, so that only those are deferred there too.
pub const ALWAYS_LOAD_META_KEY: &str = "anthropic/alwaysLoad";

/// `allowed_callers` of a tool the model and the Responses API's programs may call.
const OPENAI_CALLERS: [&str; 2] = ["direct", "programmatic"];
/// Anthropic's code execution tool, whose code may call the tools that name its type.
const ANTHROPIC_CODE_EXECUTION: &str = "code_execution_20250825";
/// Anthropic's tool search tool over deferred tools (BM25: natural-language queries).
const ANTHROPIC_TOOL_SEARCH: &str = "tool_search_tool_bm25_20251119";

/// Which tools are deferred: listed by name and description only until tool search finds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Deferral {
    /// Every tool is loaded up front.
    #[default]
    None,
    /// Every tool is deferred.
    All,
    /// These tools are deferred.
    Only(BTreeSet<String>),
}

impl Deferral {
    /// Whether `tool` is deferred.
    pub fn defers(&self, tool: &str) -> bool {
        match self {
            Deferral::None => false,
            Deferral::All => true,
            Deferral::Only(tools) => tools.contains(tool),
        }
    }

    /// Whether it defers any tool.
    pub fn defers_any(&self) -> bool {
        match self {
            Deferral::None => false,
            Deferral::All => true,
            Deferral::Only(tools) => !tools.is_empty(),
        }
    }
}

/// An OpenAI Responses namespace: one `tools` entry grouping every function under a name the
/// model calls them by (`{"type": "namespace", "name", "description", "tools": [...]}`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Namespace {
    /// The name, e.g. `toolcell`; never one of its tools' names.
    pub name: String,
    /// What its tools are for; OpenAI requires one.
    pub description: String,
}

/// How many tool names a derived namespace description lists before "and N more".
const DESCRIBED_TOOLS: usize = 10;

impl Namespace {
    /// A namespace `name` described by `description`.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self { name: name.into(), description: description.into() }
    }

    /// A namespace `name` whose description names its tools: `Tools: calculator, regex.`
    /// (the first ten, and how many more).
    pub fn listing<'a>(name: impl Into<String>, tools: impl IntoIterator<Item = &'a ToolDefinition>) -> Self {
        let names: Vec<&str> = tools.into_iter().map(|tool| tool.name.as_str()).collect();
        let mut description =
            format!("Tools: {}", names.iter().take(DESCRIBED_TOOLS).copied().collect::<Vec<_>>().join(", "));
        if names.len() > DESCRIBED_TOOLS {
            description.push_str(&format!(" and {} more", names.len() - DESCRIBED_TOOLS));
        }
        description.push('.');
        Self::new(name, description)
    }
}

/// What an export adds to the definitions (see [`Format::tools_with`]). The default adds
/// nothing: [`Format::tools`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExportOptions {
    /// Which tools carry `defer_loading: true`.
    pub deferred: Deferral,
    /// The namespace wrapping every function (OpenAI Responses only).
    pub namespace: Option<Namespace>,
    /// The tools a program may call (`allowed_callers`), e.g. those the policy's `[code_mode]`
    /// lets a program call; `None`: no tool says, so only the model calls them.
    pub code_callers: Option<BTreeSet<String>>,
}

impl ExportOptions {
    /// Options that add nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Defers `deferred`.
    #[must_use]
    pub fn deferring(mut self, deferred: Deferral) -> Self {
        self.deferred = deferred;
        self
    }

    /// Wraps the functions in `namespace`.
    #[must_use]
    pub fn in_namespace(mut self, namespace: Namespace) -> Self {
        self.namespace = Some(namespace);
        self
    }

    /// Lets programs call `tools`.
    #[must_use]
    pub fn callable_from_code<S: Into<String>>(mut self, tools: impl IntoIterator<Item = S>) -> Self {
        self.code_callers = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// What tool `name` carries.
    pub fn marks(&self, name: &str) -> ToolMarks {
        let deferred = self.deferred.defers(name);
        ToolMarks {
            deferred,
            always_loaded: !deferred && self.deferred.defers_any(),
            code_callable: self.code_callers.as_ref().is_some_and(|tools| tools.contains(name)),
        }
    }

    /// Refuses options `format` has no field for, tool names not among `definitions`, and a
    /// namespace OpenAI would refuse.
    fn check(&self, format: Format, definitions: &[&ToolDefinition]) -> Result<(), ExportError> {
        let names: Vec<&str> = definitions.iter().map(|tool| tool.name.as_str()).collect();
        if self.deferred != Deferral::None {
            Feature::DeferLoading.check(format)?;
        }
        if let Deferral::Only(tools) = &self.deferred {
            check_known(Feature::DeferLoading, tools, &names)?;
        }
        if let Some(tools) = &self.code_callers {
            Feature::AllowedCallers.check(format)?;
            check_known(Feature::AllowedCallers, tools, &names)?;
        }
        if let Some(namespace) = &self.namespace {
            Feature::Namespace.check(format)?;
            namespace.check(format, &names)?;
        }
        Ok(())
    }
}

impl Namespace {
    fn check(&self, format: Format, tools: &[&str]) -> Result<(), ExportError> {
        dialects::check_name(format, &self.name)
            .map_err(|rule| ExportError::NamespaceName { name: self.name.clone(), rule })?;
        if tools.contains(&self.name.as_str()) {
            return Err(ExportError::NamespaceNamedLikeTool { name: self.name.clone() });
        }
        if self.description.trim().is_empty() {
            return Err(ExportError::NamespaceDescription { name: self.name.clone() });
        }
        Ok(())
    }
}

fn check_known(feature: Feature, tools: &BTreeSet<String>, names: &[&str]) -> Result<(), ExportError> {
    match tools.iter().find(|tool| !names.contains(&tool.as_str())) {
        None => Ok(()),
        Some(unknown) => Err(ExportError::UnknownTool {
            field: feature.field(),
            name: unknown.clone(),
            closest: closest(unknown, names.iter().copied(), 1).first().map(|name| (*name).to_owned()),
        }),
    }
}

/// What one tool carries beside its definition (see [`ToolDefinition::to_format_marked`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolMarks {
    /// `defer_loading: true`: tool search loads it.
    pub deferred: bool,
    /// Loaded up front where a client defers by default: in MCP,
    /// [`ALWAYS_LOAD_META_KEY`]; elsewhere what a tool without `defer_loading` is anyway.
    pub always_loaded: bool,
    /// `allowed_callers`: the model and a program may call it.
    pub code_callable: bool,
}

impl ToolMarks {
    /// No marks: the tool as [`ToolDefinition::to_format`] gives it.
    pub const NONE: ToolMarks = ToolMarks { deferred: false, always_loaded: false, code_callable: false };

    /// With `defer_loading` as `deferred` says.
    #[must_use]
    pub fn with_deferred(mut self, deferred: bool) -> Self {
        self.deferred = deferred;
        self
    }

    /// Marked to load up front as `always_loaded` says (MCP only).
    #[must_use]
    pub fn with_always_loaded(mut self, always_loaded: bool) -> Self {
        self.always_loaded = always_loaded;
        self
    }

    /// With `allowed_callers` when `code_callable`.
    #[must_use]
    pub fn with_code_callable(mut self, code_callable: bool) -> Self {
        self.code_callable = code_callable;
        self
    }
}

/// A field some formats have and others lack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feature {
    DeferLoading,
    AllowedCallers,
    Namespace,
}

impl Feature {
    fn field(self) -> &'static str {
        match self {
            Feature::DeferLoading => "defer_loading",
            Feature::AllowedCallers => "allowed_callers",
            Feature::Namespace => "namespace",
        }
    }

    fn supported(self, format: Format) -> bool {
        let responses = matches!(format, Format::OpenAiResponses | Format::OpenAiResponsesStrict);
        match self {
            Feature::Namespace => responses,
            Feature::DeferLoading | Feature::AllowedCallers => {
                responses
                    || matches!(format, Format::Anthropic | Format::AnthropicStrict | Format::Mcp | Format::McpStrict)
            }
        }
    }

    fn check(self, format: Format) -> Result<(), ExportError> {
        if self.supported(format) {
            return Ok(());
        }
        let formats: Vec<&str> =
            Format::ALL.into_iter().filter(|other| self.supported(*other)).map(Format::name).collect();
        Err(ExportError::Unsupported { format, field: self.field(), formats: formats.join(", ") })
    }
}

/// Options an export cannot honour.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// A definition has no form in the format.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The format has no field for an option.
    #[error(
        "{format} tools have no `{field}`: only the formats {formats} carry it. Export in one of those, or leave the \
         option out"
    )]
    Unsupported {
        /// The format.
        format: Format,
        /// The field it lacks.
        field: &'static str,
        /// The formats that have it.
        formats: String,
    },
    /// An option names a tool that is not exported.
    #[error(
        "`{field}` names tool `{name}`, which is not among the tools exported{}: name exported tools only (see \
         `toolcell list`)",
        closest.as_ref().map(|name| format!(" (did you mean `{name}`?)")).unwrap_or_default()
    )]
    UnknownTool {
        /// The option's field.
        field: &'static str,
        /// The name.
        name: String,
        /// The exported tool named most like it.
        closest: Option<String>,
    },
    /// A namespace name the provider does not take.
    #[error("namespace `{name}` has a name the provider does not take ({rule}): pick another")]
    NamespaceName {
        /// The name.
        name: String,
        /// The provider's rule for it.
        rule: String,
    },
    /// A namespace named like one of its tools.
    #[error(
        "namespace `{name}` is named like one of its tools, and OpenAI reads a call in a namespace named like the \
         tool as that tool's own deferred call: name the namespace after the group, e.g. `{name}_tools`"
    )]
    NamespaceNamedLikeTool {
        /// The name.
        name: String,
    },
    /// A tool named like a provider's own tool that the options add to the request.
    #[error(
        "tool `{name}` has the name of the provider's own tool that the request needs for these options, and a \
         request's tool names must differ: rename the tool, or leave the option out"
    )]
    NamedLikeProviderTool {
        /// The name.
        name: String,
    },
    /// A namespace without a description.
    #[error("namespace `{name}` has an empty description, which OpenAI requires: say in a few words what its tools do")]
    NamespaceDescription {
        /// The namespace's name.
        name: String,
    },
}

impl Format {
    /// The value of a request's `tools` field for `definitions` with `options`: each tool
    /// with the `defer_loading` and `allowed_callers` they give it (for MCP, as `_meta`
    /// marks), the functions inside the namespace they name (OpenAI Responses), and after
    /// them the provider's own tools the request then needs, so that the value is a request's
    /// whole `tools`:
    /// - a deferred tool: OpenAI's `{"type": "tool_search"}`, Anthropic's BM25 tool search
    ///   (`tool_search_tool_bm25_20251119`);
    /// - a tool a program may call: OpenAI's `{"type": "programmatic_tool_calling"}`,
    ///   Anthropic's `code_execution_20250825`, whose type its tools' `allowed_callers` name.
    ///
    /// Without options, the same as [`Format::tools`].
    ///
    /// # Errors
    /// When a definition cannot be expressed in this format, or the options cannot: a field
    /// the format lacks (Chat Completions and Gemini have none of them, only OpenAI Responses
    /// has namespaces), a tool name that is not among `definitions`, or a namespace OpenAI
    /// would refuse (a bad name, one of its tools' names, no description).
    pub fn tools_with<'a>(
        self,
        definitions: impl IntoIterator<Item = &'a ToolDefinition>,
        options: &ExportOptions,
    ) -> Result<Value, ExportError> {
        let definitions: Vec<&ToolDefinition> = definitions.into_iter().collect();
        if *options == ExportOptions::default() {
            return Ok(self.tools(definitions)?);
        }
        options.check(self, &definitions)?;
        let marks: Vec<ToolMarks> = definitions.iter().map(|definition| options.marks(&definition.name)).collect();
        let tools = definitions
            .iter()
            .zip(&marks)
            .map(|(definition, marks)| definition.to_format_marked(self, *marks))
            .collect::<Result<Vec<_>, _>>()?;
        if self == Format::AnthropicStrict {
            dialects::check_anthropic_request(&definitions, &tools)?;
        }
        let provider_tools = self.provider_tools(&marks);
        let clash = provider_tools
            .iter()
            .filter_map(|tool| tool.get("name")?.as_str())
            .find(|name| definitions.iter().any(|definition| definition.name == *name));
        if let Some(name) = clash {
            return Err(ExportError::NamedLikeProviderTool { name: name.to_owned() });
        }
        let mut entries = match &options.namespace {
            Some(namespace) => vec![json!({"type": "namespace", "name": namespace.name,
                "description": namespace.description, "tools": tools})],
            None => tools,
        };
        entries.extend(provider_tools);
        Ok(Value::Array(entries))
    }

    /// The provider's tools a request needs for tools with `marks`.
    fn provider_tools(self, marks: &[ToolMarks]) -> Vec<Value> {
        let deferred = marks.iter().any(|marks| marks.deferred);
        let code_callable = marks.iter().any(|marks| marks.code_callable);
        let (search, code) = match self {
            Format::OpenAiResponses | Format::OpenAiResponsesStrict => {
                (json!({"type": "tool_search"}), json!({"type": "programmatic_tool_calling"}))
            }
            Format::Anthropic | Format::AnthropicStrict => (
                json!({"type": ANTHROPIC_TOOL_SEARCH, "name": "tool_search_tool_bm25"}),
                json!({"type": ANTHROPIC_CODE_EXECUTION, "name": "code_execution"}),
            ),
            _ => return Vec::new(),
        };
        [(deferred, search), (code_callable, code)]
            .into_iter()
            .filter(|(needed, _)| *needed)
            .map(|(_, tool)| tool)
            .collect()
    }
}

impl ToolDefinition {
    /// This definition in `format` (as [`ToolDefinition::to_format`]) with `marks`:
    /// `defer_loading: true` when deferred, and `allowed_callers` naming the model and the
    /// provider's programs when code-callable (OpenAI Responses: `["direct", "programmatic"]`;
    /// Anthropic: `["direct", "code_execution_20250825"]`); in MCP, the same as `_meta` marks
    /// ([`DEFER_LOADING_META_KEY`], [`ALLOWED_CALLERS_META_KEY`]), and
    /// [`ALWAYS_LOAD_META_KEY`] when always loaded. No mark, no field.
    ///
    /// # Errors
    /// As [`ToolDefinition::to_format`], and when `format` has no field for a mark.
    pub fn to_format_marked(&self, format: Format, marks: ToolMarks) -> Result<Value, ExportError> {
        if marks.deferred {
            Feature::DeferLoading.check(format)?;
        }
        if marks.code_callable {
            Feature::AllowedCallers.check(format)?;
        }
        let mut tool = self.to_format(format)?;
        let mcp = matches!(format, Format::Mcp | Format::McpStrict);
        let (defer_key, callers_key) = match mcp {
            true => (DEFER_LOADING_META_KEY, ALLOWED_CALLERS_META_KEY),
            false => ("defer_loading", "allowed_callers"),
        };
        let callers = match format {
            Format::Anthropic | Format::AnthropicStrict => json!(["direct", ANTHROPIC_CODE_EXECUTION]),
            _ => json!(OPENAI_CALLERS),
        };
        let mut fields = Map::new();
        if marks.deferred {
            fields.insert(defer_key.into(), json!(true));
        }
        if marks.code_callable {
            fields.insert(callers_key.into(), callers);
        }
        if marks.always_loaded && mcp {
            fields.insert(ALWAYS_LOAD_META_KEY.into(), json!(true));
        }
        match tool.as_object_mut() {
            Some(_) if fields.is_empty() => {}
            Some(object) if mcp => {
                object.insert("_meta".into(), Value::Object(fields));
            }
            Some(object) => object.extend(fields),
            None => {}
        }
        Ok(tool)
    }
}
