//! The `[code_mode]` table: which tool runs code mode's programs and which tools a program
//! may call.

/// What an operator allows code mode ([`crate::code_mode`]): the tool that runs programs
/// (`program`, default `python`) and the tools a program may call (`tools`, default every
/// loaded tool but the program tool). Code mode is off unless a policy has the table (or the
/// embedding sets one, [`crate::Policy::set_code_mode`]).
///
/// ```toml
/// [code_mode]
/// tools = ["calculator", "json_query", "unit_convert"]
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CodeModePolicy {
    /// The tool that runs programs; `None`: `python`.
    pub program: Option<String>,
    /// The tools a program may call; `None`: every loaded tool but the program tool.
    pub tools: Option<Vec<String>>,
}

/// The tool that runs programs when the policy does not name one.
pub const DEFAULT_PROGRAM_TOOL: &str = "python";

impl CodeModePolicy {
    /// Code mode with its defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs programs in `tool` (a tool taking `code` and `inputs`, as `python` does).
    #[must_use]
    pub fn program(mut self, tool: impl Into<String>) -> Self {
        self.program = Some(tool.into());
        self
    }

    /// Lets programs call exactly these tools.
    #[must_use]
    pub fn tools<S: Into<String>>(mut self, tools: impl IntoIterator<Item = S>) -> Self {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// The program tool's name.
    pub fn program_tool(&self) -> &str {
        self.program.as_deref().unwrap_or(DEFAULT_PROGRAM_TOOL)
    }

    /// Whether a program may call `tool`: one `tools` lists, or without a list any tool but
    /// the program tool.
    pub fn may_call(&self, tool: &str) -> bool {
        match &self.tools {
            Some(allowed) => allowed.iter().any(|allowed| allowed == tool),
            None => tool != self.program_tool(),
        }
    }

    /// `other`'s settings over these: what it sets wins.
    pub(crate) fn merge(&mut self, other: CodeModePolicy) {
        if other.program.is_some() {
            self.program = other.program;
        }
        if other.tools.is_some() {
            self.tools = other.tools;
        }
    }
}
