//! Code mode as agents consume it: two tools in place of a server's many. `search` finds the
//! tools a program may call, by what they do, and shows each as the Python function the
//! program calls; `execute` runs a program in the program tool (`python`) with `tools.*` for
//! exactly those tools. A model that would make five tool calls, reading each result before
//! writing the next, writes one program instead, and a server of a hundred tools lists two.
//!
//! The operator turns it on and says what programs may call in the policy (`[code_mode]`,
//! [`CodeModePolicy`]). Each nested call runs as any call: the callee's schema, limits and
//! grants, a fresh instance, the program's fuel and time paying for it (see the book's
//! code-mode chapter).
//!
//! [`CodeModeTools`] is what to list and what `search` finds, from definitions alone (a
//! server lists it while the tools still compile); [`CodeMode`] ([`Runtime::code_mode`]) runs
//! both tools' calls.

mod resume;
mod search;

use std::sync::{Arc, LazyLock};
use std::time::Instant;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolcell_schema::CompiledSchema;

use self::resume::Paused;
pub use self::resume::{MAX_RESUME_TOKEN_BYTES, RESUME_TOKEN_TTL, ResumeError};
use self::search::ToolIndex;
use crate::call::{Journaled, arguments};
use crate::formats::{PythonFunction, python_function};
use crate::policy::CodeModePolicy;
use crate::runtime::Runtime;
use crate::sandbox::journal::Journal;
pub use crate::sandbox::journal::{Decision, PendingCall};
use crate::tool::definition::{ToolAnnotations, ToolDefinition};
use crate::tool::error::CallError;
use crate::tool::intercept::Interceptors;
use crate::tool::io::{Diagnostics, ProgramGrant, ToolCall, ToolOutput, Usage};

/// The name of code mode's tool that finds tools.
pub const SEARCH: &str = "search";
/// The name of code mode's tool that runs a program.
pub const EXECUTE: &str = "execute";
/// How many tools `search` gives when the call does not say.
pub const DEFAULT_SEARCH_LIMIT: usize = 5;
/// The most tools one `search` gives.
pub const MAX_SEARCH_LIMIT: usize = 50;
/// The longest `search` arguments, in bytes.
const MAX_SEARCH_ARGUMENT_BYTES: u64 = 8 << 10;

/// Why code mode cannot serve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodeModeError {
    /// No policy turns it on.
    #[error(
        "code mode is off: add a `[code_mode]` table to the policy (toolcell.toml), or turn it on in code with \
         `Policy::set_code_mode`"
    )]
    Off,
    /// The tool that runs programs is not loaded.
    #[error(
        "code mode runs programs in tool `{program}`, which is not loaded: load it (the standard `python` tool), or \
         name another tool with `[code_mode] program`"
    )]
    ProgramNotLoaded {
        /// The program tool's name.
        program: String,
    },
}

/// A tool `search` found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SearchHit {
    /// The tool's name.
    pub name: String,
    /// How well it matched (BM25; comparable within one search only).
    pub score: f32,
    /// The tool as the program calls it.
    pub function: PythonFunction,
}

/// Code mode's two tools over a set of definitions: what a server lists and what `search`
/// finds. Cheap to clone. Build it once per version of the tools (3.8 ms for 108 tools, and a
/// search tens of microseconds: `benches/search.rs`).
#[derive(Clone)]
pub struct CodeModeTools {
    inner: Arc<ToolsInner>,
}

struct ToolsInner {
    program: String,
    /// The tools a program may call, by name.
    callable: Vec<ToolDefinition>,
    index: ToolIndex,
    /// `search` and `execute`.
    definitions: [ToolDefinition; 2],
}

impl std::fmt::Debug for CodeModeTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeModeTools")
            .field("program", &self.inner.program)
            .field("callable", &self.inner.callable.iter().map(|tool| &tool.name).collect::<Vec<_>>())
            .finish()
    }
}

impl CodeModeTools {
    /// Code mode with `settings` over `tools` (a version's definitions, or what its
    /// components announce while they compile).
    ///
    /// # Errors
    /// When `tools` lacks the program tool.
    pub fn new<'a>(
        settings: &CodeModePolicy,
        tools: impl IntoIterator<Item = &'a ToolDefinition>,
    ) -> Result<Self, CodeModeError> {
        let program_name = settings.program_tool();
        let tools: Vec<&ToolDefinition> = tools.into_iter().collect();
        let program = tools
            .iter()
            .find(|tool| tool.name == program_name)
            .ok_or_else(|| CodeModeError::ProgramNotLoaded { program: program_name.to_owned() })?;
        let mut callable: Vec<ToolDefinition> =
            tools.iter().filter(|tool| settings.may_call(&tool.name)).map(|tool| (*tool).clone()).collect();
        callable.sort_by(|a, b| a.name.cmp(&b.name));
        callable.dedup_by(|a, b| a.name == b.name);
        let index = ToolIndex::new(&callable);
        let definitions = [search_definition(callable.len()), execute_definition(program, &callable)];
        Ok(Self { inner: Arc::new(ToolsInner { program: program_name.to_owned(), callable, index, definitions }) })
    }

    /// `search` and `execute`, as a server lists them.
    pub fn definitions(&self) -> &[ToolDefinition] {
        &self.inner.definitions
    }

    /// The tool that runs programs.
    pub fn program(&self) -> &str {
        &self.inner.program
    }

    /// The tools a program may call, by name.
    pub fn callable(&self) -> &[ToolDefinition] {
        &self.inner.callable
    }

    /// The callable tool named `name`.
    pub fn describe(&self, name: &str) -> Option<&ToolDefinition> {
        self.inner.callable.iter().find(|tool| tool.name == name)
    }

    /// The callable tools that match `query`, best first, at most `limit`. An empty query (or
    /// one of stop words only) gives the tools by name.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let hit = |name: &str, score: f32| {
            self.describe(name).map(|tool| SearchHit { name: name.to_owned(), score, function: python_function(tool) })
        };
        if !ToolIndex::has_words(query) {
            return self.inner.callable.iter().take(limit).filter_map(|tool| hit(&tool.name, 0.0)).collect();
        }
        self.inner.index.search(query, limit).into_iter().filter_map(|(name, score)| hit(name, score)).collect()
    }

    /// Runs a call of `search`: its result lists each tool found as the program calls it.
    pub fn search_call(&self, call: &ToolCall) -> ToolOutput {
        let started = Instant::now();
        let usage = |started: Instant| Usage { duration: started.elapsed(), ..Usage::default() };
        let request = match search_request(call) {
            Ok(request) => request,
            Err(error) => return ToolOutput::failure(call, error, usage(started), Diagnostics::default()),
        };
        let hits = self.search(&request.query, request.limit);
        let tools: Vec<Value> = hits.iter().map(|hit| self.hit_json(hit, request.detail)).collect();
        let mut result = json!({"tools": tools, "callable": self.inner.callable.len()});
        if hits.is_empty() {
            let names: Vec<&str> =
                self.inner.callable.iter().take(MAX_SEARCH_LIMIT).map(|tool| tool.name.as_str()).collect();
            result["hint"] = Value::String(if names.is_empty() {
                "Programs may call no tools here.".to_owned()
            } else {
                format!(
                    "No tool matches. Programs may call: {}{}. Search with other words, or an empty query to list them.",
                    names.join(", "),
                    if self.inner.callable.len() > names.len() { ", ..." } else { "" }
                )
            });
        }
        ToolOutput::success(call, result.to_string(), usage(started), Diagnostics::default())
    }

    /// The output of a call of a tool code mode does not serve: an unknown tool, naming
    /// `search` and `execute`.
    pub fn not_a_tool(&self, call: &ToolCall) -> ToolOutput {
        let started = Instant::now();
        let error = crate::call::unknown_tool(&call.name, vec![SEARCH.to_owned(), EXECUTE.to_owned()]);
        ToolOutput::failure(
            call,
            error,
            Usage { duration: started.elapsed(), ..Usage::default() },
            Diagnostics::default(),
        )
    }

    fn hit_json(&self, hit: &SearchHit, detail: bool) -> Value {
        let mut entry = json!({
            "name": hit.name,
            "signature": hit.function.signature(),
            "doc": hit.function.docstring,
        });
        if detail && let Some(tool) = self.describe(&hit.name) {
            entry["parameters"] = tool.parameters.clone();
            if let Some(output) = &tool.output_schema {
                entry["output_schema"] = output.clone();
            }
        }
        entry
    }
}

/// What a `search` call asks.
struct SearchRequest {
    query: String,
    limit: usize,
    detail: bool,
}

fn search_request(call: &ToolCall) -> Result<SearchRequest, CallError> {
    static SCHEMA: LazyLock<Option<CompiledSchema>> =
        LazyLock::new(|| CompiledSchema::compile(&search_parameters().to_string()).ok().map(|(_, schema)| schema));
    let arguments = arguments::parse(call.arguments.clone(), MAX_SEARCH_ARGUMENT_BYTES)?;
    let Some(schema) = SCHEMA.as_ref() else {
        return Err(CallError::Internal { message: "the search tool's schema did not compile".into() });
    };
    let violations = schema.violations(&arguments);
    if !violations.is_empty() {
        return Err(CallError::InvalidArguments { violations });
    }
    let limit = arguments
        .get("limit")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_SEARCH_LIMIT, |limit| usize::try_from(limit).unwrap_or(MAX_SEARCH_LIMIT).min(MAX_SEARCH_LIMIT));
    Ok(SearchRequest {
        query: arguments.get("query").and_then(Value::as_str).unwrap_or_default().to_owned(),
        limit,
        detail: arguments.get("detail").and_then(Value::as_bool).unwrap_or(false),
    })
}

fn search_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "maxLength": 1000,
                "description": "What the tools should do, in a few words (e.g. \"convert units\"); an empty query lists the tools by name.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SEARCH_LIMIT,
                "description": format!("At most this many tools (default {DEFAULT_SEARCH_LIMIT})."),
            },
            "detail": {
                "type": "boolean",
                "description": "Also give each tool's JSON Schemas for its parameters and result (default false).",
            },
        },
        "required": ["query"],
        "additionalProperties": false,
    })
}

fn search_definition(callable: usize) -> ToolDefinition {
    ToolDefinition {
        name: SEARCH.to_owned(),
        title: Some("Search tools".to_owned()),
        description: format!(
            "Find the tools a program run by `execute` may call ({callable} here), by what they do: ranks them by how \
             well their names, descriptions and parameters match `query`, and gives each as the Python function the \
             program calls, with its signature and docstring."
        ),
        version: env!("CARGO_PKG_VERSION").to_owned(),
        parameters: search_parameters(),
        output_schema: Some(json!({
            "type": "object",
            "properties": {
                "tools": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "signature": {"type": "string"},
                            "doc": {"type": "string"},
                            "parameters": {"type": "object"},
                            "output_schema": {"type": "object"},
                        },
                        "required": ["name", "signature", "doc"],
                    },
                },
                "callable": {"type": "integer", "description": "How many tools programs may call."},
                "hint": {"type": "string"},
            },
            "required": ["tools", "callable"],
        })),
        annotations: ToolAnnotations {
            read_only: Some(true),
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(false),
        },
    }
}

/// `execute`: the program tool's parameters and result, described for code mode, with hints
/// that hold for any program over the callable tools.
fn execute_definition(program: &ToolDefinition, callable: &[ToolDefinition]) -> ToolDefinition {
    let all =
        |hint: fn(&ToolAnnotations) -> Option<bool>| callable.iter().all(|tool| hint(&tool.annotations) == Some(true));
    let none =
        |hint: fn(&ToolAnnotations) -> Option<bool>| callable.iter().all(|tool| hint(&tool.annotations) == Some(false));
    let read_only = all(|hints| hints.read_only);
    ToolDefinition {
        name: EXECUTE.to_owned(),
        title: Some("Run a program that calls tools".to_owned()),
        description: format!(
            "Run a Python 3 program in a fresh sandbox where the tools found with `search` are functions of `tools`: \
             `tools.name(param=value)` returns the tool's result as Python values, and raises ToolCallError (with \
             .kind and .message) when the call fails. Call several tools, loop and combine their results in one \
             program instead of one tool call at a time. Returns the program's stdout, stderr and the value of its \
             final expression, or the exception that ended it. `inputs` is bound to the variable `inputs`. \
             {} tools may be called; `print(tools)` lists them.",
            callable.len()
        ),
        version: program.version.clone(),
        parameters: program.parameters.clone(),
        output_schema: program.output_schema.clone(),
        annotations: ToolAnnotations {
            read_only: Some(read_only),
            destructive: Some(!read_only && !none(|hints| hints.destructive)),
            idempotent: Some(read_only),
            open_world: Some(!none(|hints| hints.open_world)),
        },
    }
}

/// Code mode over one version of a runtime's tools: runs `search` and `execute` calls.
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct CodeMode {
    tools: CodeModeTools,
    runtime: Runtime,
    /// What a program may call, and what of it waits for approval.
    grant: ProgramGrant,
    /// The embedding's interceptors around each call a program makes (a tool set's).
    interceptors: Interceptors,
}

impl Runtime {
    /// Code mode over this version of the tools, with the policy's `[code_mode]` settings.
    ///
    /// # Errors
    /// When the policy does not turn code mode on, or the program tool is not loaded.
    pub fn code_mode(&self) -> Result<CodeMode, CodeModeError> {
        self.code_mode_within(|_| true, Interceptors::default())
    }

    /// Code mode whose programs may call only the tools `keep` keeps (of those the policy
    /// lets them call), each call decided by `interceptors` first: a tool set's.
    pub(crate) fn code_mode_within(
        &self,
        keep: impl Fn(&str) -> bool,
        interceptors: Interceptors,
    ) -> Result<CodeMode, CodeModeError> {
        let settings = self.runner().version.code_mode.as_ref().ok_or(CodeModeError::Off)?;
        let program = settings.program_tool();
        let kept = self.definitions().filter(|tool| tool.name == program || keep(&tool.name));
        let tools = CodeModeTools::new(settings, kept)?;
        let may_call = tools.callable().iter().map(|tool| tool.name.clone()).collect();
        let must_approve =
            tools.callable().iter().filter(|tool| self.needs_approval(tool)).map(|tool| tool.name.clone()).collect();
        let grant = ProgramGrant { may_call, must_approve };
        Ok(CodeMode { tools, runtime: self.clone(), grant, interceptors })
    }

    /// Whether code mode's programs must have a person approve each call of `tool`: as the
    /// policy's `approve` says, else when the tool says it is destructive or open-world.
    fn needs_approval(&self, tool: &ToolDefinition) -> bool {
        match self.grants(&tool.name).and_then(|grants| grants.approve) {
            Some(approve) => approve,
            None => tool.annotations.destructive == Some(true) || tool.annotations.open_world == Some(true),
        }
    }

    /// The policy's code mode settings, when it turns code mode on.
    pub fn code_mode_policy(&self) -> Option<&CodeModePolicy> {
        self.runner().version.code_mode.as_ref()
    }
}

impl CodeMode {
    /// What it lists and finds.
    pub fn tools(&self) -> &CodeModeTools {
        &self.tools
    }

    /// The runtime its programs run on.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Runs a call of `search` or `execute` (any other name is an unknown tool).
    pub async fn call(&self, call: ToolCall) -> ToolOutput {
        self.run(call, None).await
    }

    /// Runs a call as [`Self::call`] does, stopping it when `cancel` is cancelled.
    pub async fn call_cancellable(&self, call: ToolCall, cancel: &CancellationToken) -> ToolOutput {
        self.run(call, Some(cancel)).await
    }

    /// The tools a program may call that wait for a person's approval on every call.
    pub fn must_approve(&self) -> &[String] {
        &self.grant.must_approve
    }

    async fn run(&self, call: ToolCall, cancel: Option<&CancellationToken>) -> ToolOutput {
        match call.name.as_str() {
            SEARCH => self.tools.search_call(&call),
            EXECUTE => self.execute(call, None, cancel).await,
            _ => self.tools.not_a_tool(&call),
        }
    }

    /// Resumes a program that paused at a call waiting for approval ([`CallError::ApprovalRequired`]),
    /// with a person's decision: it runs again from the start, every clock reading, random
    /// byte and call before the pause answered from the token, the paused call run (approved)
    /// or answered `ToolCallError(kind="denied")` (denied), and the rest live. It may pause
    /// again at a later call.
    ///
    /// # Errors
    /// When the token is not authentic, expired or used already, the program tool changed,
    /// or the resumed run diverged from the paused one.
    pub async fn resume(
        &self,
        call_id: &str,
        resume_token: &str,
        decision: Decision,
        cancel: Option<&CancellationToken>,
    ) -> Result<ToolOutput, ResumeError> {
        let paused = Paused::open(&self.runtime.runner().version.shared.resume_key, resume_token)?;
        if Some(paused.digest.as_str()) != self.program_digest().as_deref() {
            return Err(ResumeError::ProgramChanged);
        }
        let journal = Journal::resume(paused.observed, (paused.pending, decision)).map_err(ResumeError::Diverged)?;
        let call = ToolCall::new(call_id, EXECUTE, paused.arguments).with_context(paused.context);
        let output = self.execute(call, Some(journal.clone()), cancel).await;
        match journal.divergence() {
            Some(diverged) => Err(ResumeError::Diverged(diverged)),
            None => Ok(output),
        }
    }

    /// Runs a program: with a journal when a call may pause it (a resumed run brings its
    /// own), so that a pause can be sealed into a resume token.
    async fn execute(
        &self,
        mut call: ToolCall,
        journal: Option<Journal>,
        cancel: Option<&CancellationToken>,
    ) -> ToolOutput {
        call.name = self.tools.program().to_owned();
        call.program = Some(self.grant.clone());
        // Interceptors may defer a call too.
        let may_pause = !self.grant.must_approve.is_empty() || !self.interceptors.is_empty();
        let journal = journal.or_else(|| may_pause.then(Journal::record));
        // What a pause seals besides what the run observed.
        let sealed = journal.as_ref().map(|_| (call.arguments.to_text(), call.context.clone()));
        let journaled = journal.as_ref().map(|journal| Journaled {
            journal,
            limits: None,
            dirs: None,
            interceptors: Some(&self.interceptors),
        });
        let mut output = self.runtime.runner().run_in_span(call, cancel, None, journaled).await;
        EXECUTE.clone_into(&mut output.tool);
        if let (
            Some(CallError::ApprovalRequired { tool, arguments: pending, resume_token }),
            Some(journal),
            Some((arguments, context)),
        ) = (&mut output.error, &journal, sealed)
        {
            match (journal.recorded(), self.program_digest()) {
                (Ok(observed), Some(digest)) => {
                    let call = PendingCall { tool: tool.clone(), arguments: pending.clone() };
                    let paused = Paused::new(digest, arguments, context, observed, call);
                    *resume_token = paused.seal(&self.runtime.runner().version.shared.resume_key);
                    // The message for a program's pause (it resumes), now that it has a token.
                    let error = CallError::ApprovalRequired {
                        tool: tool.clone(),
                        arguments: pending.clone(),
                        resume_token: resume_token.clone(),
                    };
                    output.content = error.to_string();
                }
                (Err(too_much), _) => {
                    let message = format!("the program cannot pause for approval: {too_much}");
                    output.content = CallError::Internal { message: message.clone() }.to_string();
                    output.error = Some(CallError::Internal { message });
                }
                (Ok(_), None) => {}
            }
        }
        output
    }

    /// The program tool's digest, as hex.
    fn program_digest(&self) -> Option<String> {
        let version = &self.runtime.runner().version;
        version.tools.get(self.tools.program()).map(|entry| crate::sandbox::journal::to_hex(&entry.tool.digest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, annotations: ToolAnnotations) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            title: None,
            description: format!("The {name} tool."),
            version: "1.0.0".into(),
            parameters: json!({"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}),
            output_schema: None,
            annotations,
        }
    }

    fn read_only() -> ToolAnnotations {
        ToolAnnotations {
            read_only: Some(true),
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(false),
        }
    }

    #[test]
    fn every_tool_but_the_program_by_default_or_those_the_policy_names() {
        let tools =
            [tool("python", read_only()), tool("calculator", read_only()), tool("files", ToolAnnotations::default())];
        let all = CodeModeTools::new(&CodeModePolicy::new(), &tools).unwrap();
        let names = |tools: &CodeModeTools| tools.callable().iter().map(|tool| tool.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&all), ["calculator", "files"]);
        let execute = &all.definitions()[1];
        assert_eq!((execute.name.as_str(), execute.parameters.clone()), ("execute", tools[0].parameters.clone()));
        assert_eq!(execute.annotations.read_only, Some(false), "files says nothing, so it may write");
        assert_eq!(execute.annotations.destructive, Some(true));

        let named = CodeModeTools::new(&CodeModePolicy::new().tools(["calculator", "absent"]), &tools).unwrap();
        assert_eq!(names(&named), ["calculator"]);
        assert_eq!(named.definitions()[1].annotations.read_only, Some(true));

        let missing = CodeModeTools::new(&CodeModePolicy::new().program("ruby"), &tools).unwrap_err();
        assert_eq!(missing, CodeModeError::ProgramNotLoaded { program: "ruby".into() });
        assert!(missing.to_string().contains("`[code_mode] program`"), "{missing}");
    }

    #[test]
    fn search_calls_answer_json_or_say_what_to_fix() {
        let tools = [tool("python", read_only()), tool("calculator", read_only()), tool("files", read_only())];
        let code_mode = CodeModeTools::new(&CodeModePolicy::new(), &tools).unwrap();
        let output = code_mode.search_call(&ToolCall::new("1", SEARCH, json!({"query": "calculator", "detail": true})));
        let result = output.value().unwrap();
        assert_eq!(result["tools"][0]["name"], "calculator");
        assert_eq!(result["tools"][0]["signature"], "tools.calculator(code: str) -> Any");
        assert_eq!(result["tools"][0]["parameters"], tools[1].parameters);
        assert_eq!(result["callable"], 2);

        let listed =
            code_mode.search_call(&ToolCall::new("2", SEARCH, json!({"query": "", "limit": 1}))).value().unwrap();
        assert_eq!(listed["tools"].as_array().unwrap().len(), 1);
        let nothing = code_mode.search_call(&ToolCall::new("3", SEARCH, json!({"query": "zebra"}))).value().unwrap();
        assert_eq!(
            nothing["hint"],
            "No tool matches. Programs may call: calculator, files. Search with other words, or an empty query to list them."
        );

        // A client's query is bounded before anything is tokenized: in characters, and the
        // arguments in bytes.
        let long = code_mode.search_call(&ToolCall::new("5", SEARCH, json!({"query": "units ".repeat(200)})));
        assert!(matches!(long.error, Some(CallError::InvalidArguments { .. })), "{long:?}");
        let huge = code_mode.search_call(&ToolCall::new("6", SEARCH, json!({"query": "x", "pad": "y".repeat(9000)})));
        assert!(matches!(huge.error, Some(CallError::ArgumentsTooLarge { .. })), "{huge:?}");

        let wrong = code_mode.search_call(&ToolCall::new("4", SEARCH, json!({"query": 7, "limit": 0})));
        assert!(
            matches!(wrong.error, Some(CallError::InvalidArguments { ref violations }) if violations.len() == 2),
            "{wrong:?}"
        );
    }
}
