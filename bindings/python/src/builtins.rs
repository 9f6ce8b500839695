//! The standard tools, embedded in the extension as in the `toolcell` binary: loaded from
//! memory beside a tools folder's, with their own policy (the interpreter's limits) beneath
//! the operator's. A folder's file of the same name replaces one.

use std::path::Path;

use toolcell_runtime::{Policy, RuntimeBuilder};

/// `builder` with the standard tools the tools folder does not replace, and their policy.
pub(crate) fn add(builder: RuntimeBuilder, tools_dir: Option<&Path>) -> RuntimeBuilder {
    let replaced = |file: &str| tools_dir.is_some_and(|dir| dir.join(file).is_file());
    let loaded: Vec<(&str, &'static [u8])> =
        toolcell_tools::ALL.iter().copied().filter(|(file, _)| !replaced(file)).collect();
    let mut defaults = Policy::new();
    if let Ok(policy) = Policy::parse(toolcell_tools::POLICY, Path::new(".")) {
        let is_loaded = |tool: &str| loaded.iter().any(|(file, _)| file.strip_suffix(".wasm") == Some(tool));
        for (tool, grants) in policy.tools().filter(|(tool, _)| is_loaded(tool)) {
            defaults.grant(tool, grants.clone());
        }
    }
    let builder = builder.default_policy(defaults);
    loaded.into_iter().fold(builder, |builder, (file, bytes)| builder.component_bytes(format!("builtin:{file}"), bytes))
}
