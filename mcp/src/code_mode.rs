//! Code mode over MCP (`toolcell serve --code-mode`): `search` and `execute` in place of the
//! folder's tools, or beside them. `search` answers from the tools' definitions (while they
//! compile, as their components announce them); `execute` waits for every tool, since a
//! program may call any of them.

use std::sync::{Mutex, PoisonError};

use toolcell_runtime::ToolDefinition;
use toolcell_runtime::code_mode::{CodeModeTools, EXECUTE, SEARCH};
use toolcell_runtime::loading::ListedTool;
use toolcell_runtime::policy::CodeModePolicy;

/// Which tools `tools/list` offers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodeModeServing {
    /// The folder's tools only.
    #[default]
    Off,
    /// `search` and `execute` only: a model reaches the tools through programs.
    Only,
    /// The folder's tools and `search` and `execute`; a folder tool with one of those names is
    /// not listed (code mode's takes the name).
    Also,
}

impl CodeModeServing {
    /// Whether `name` is one of code mode's tools when serving this way.
    pub(crate) fn serves(self, name: &str) -> bool {
        self != CodeModeServing::Off && (name == SEARCH || name == EXECUTE)
    }

    /// Whether the folder's tool `name` is listed and called directly.
    pub(crate) fn serves_directly(self, name: &str) -> bool {
        match self {
            CodeModeServing::Off => true,
            CodeModeServing::Only => false,
            CodeModeServing::Also => name != SEARCH && name != EXECUTE,
        }
    }
}

/// Code mode's tools for the definitions last listed, kept until they change: building them
/// indexes every tool for `search`.
#[derive(Debug, Default)]
pub(crate) struct CodeModeCache {
    last: Mutex<Option<(Vec<ToolDefinition>, CodeModePolicy, CodeModeTools)>>,
}

impl CodeModeCache {
    /// Code mode's tools over `listed` with `settings`.
    ///
    /// # Errors
    /// When the program tool is not among `listed`.
    pub(crate) fn tools(&self, settings: &CodeModePolicy, listed: &[ListedTool]) -> Result<CodeModeTools, String> {
        let definitions: Vec<ToolDefinition> = listed.iter().map(|tool| tool.definition.clone()).collect();
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((cached, cached_settings, tools)) = &*last
            && *cached == definitions
            && cached_settings == settings
        {
            return Ok(tools.clone());
        }
        let tools = CodeModeTools::new(settings, &definitions).map_err(|err| err.to_string())?;
        *last = Some((definitions, settings.clone(), tools.clone()));
        Ok(tools)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which name goes where: a folder tool named like one of code mode's never takes its
    /// calls, and with code mode only no folder tool is called by name.
    #[test]
    fn code_modes_names_win_and_only_hides_the_tools() {
        use CodeModeServing::{Also, Off, Only};
        for name in [SEARCH, EXECUTE] {
            assert!(!Off.serves(name) && Off.serves_directly(name), "off: the folder's {name}");
            assert!(Only.serves(name) && !Only.serves_directly(name));
            assert!(Also.serves(name) && !Also.serves_directly(name), "also: code mode's {name}");
        }
        assert!(!Only.serves("calculator") && !Only.serves_directly("calculator"));
        assert!(!Also.serves("calculator") && Also.serves_directly("calculator"));
    }
}
