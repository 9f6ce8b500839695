//! The standard tools, embedded in the extension as in the `toolcell` binary: loaded from
//! memory beside a tools folder's, with their own policy (the interpreter's limits) beneath
//! the operator's. A folder's file of the same name replaces one.

use std::path::Path;
use std::sync::OnceLock;

use toolcell_runtime::load::Precompiled;
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
    let builder = builder.default_policy(defaults).precompiled(shipped_code().clone());
    loaded.into_iter().fold(builder, |builder, (file, bytes)| builder.component_bytes(format!("builtin:{file}"), bytes))
}

/// The standard tools' code the extension ships: none, unless it was built with
/// `TOOLCELL_PRECOMPILED_DIR` ([`toolcell_tools::PRECOMPILED`], `toolcell precompile`).
fn shipped_code() -> &'static Precompiled {
    static SHIPPED: OnceLock<Precompiled> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        // SAFETY: the artifacts are part of this extension, embedded at build time from what
        // `toolcell precompile` wrote (toolcell-tools' build script checked each one's header
        // and that it names a tool it embeds); nothing read at run time can change them.
        #[expect(unsafe_code, reason = "code embedded in this extension when it was built")]
        let shipped = unsafe { Precompiled::new(toolcell_tools::PRECOMPILED.iter().copied()) };
        shipped.unwrap_or_else(|err| unreachable!("the build script checked every artifact's header: {err}"))
    })
}
