//! Compiling a component, or taking its code from what the program ships or the compile
//! cache, and linking it: what loading a tool and linking a deferred tool's code share.

use std::time::Duration;

use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

use super::cache::CompileCache;
use super::precompiled::Precompiled;
use crate::bindings::ToolCorePre;
use crate::bindings::annotations::AnnotationsExportPre;
use crate::bindings::capabilities::CapabilityRequestsPre;
use crate::sandbox::Sandbox;
use crate::sandbox::engine::Pooling;
use crate::sandbox::link::Linkers;

/// What loading is doing, for a progress display. Only compilation is reported: a component
/// read from the compile cache is ready in milliseconds, one compiled takes seconds.
/// Components are compiled one at a time, smallest first (each compilation uses every core),
/// so each is in the cache as soon as it is done.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum LoadEvent<'a> {
    /// A component (named by its file or label) is being compiled: it was not in the cache.
    Compiling {
        /// The file or label.
        source: &'a str,
        /// The component's size.
        bytes: usize,
    },
    /// That compilation ended, in a compiled component or an error.
    Compiled {
        /// The file or label.
        source: &'a str,
        /// How long it took.
        elapsed: Duration,
        /// Whether it compiled (and, with a cache, is kept there for the next start).
        ok: bool,
    },
}

/// Reports compilation as it happens ([`crate::RuntimeBuilder::on_load_progress`]).
pub(crate) type Progress = std::sync::Arc<dyn Fn(LoadEvent<'_>) + Send + Sync>;

/// A component compiled and linked (without HTTP), its exports found.
pub(crate) struct Prepared {
    pub(super) component: Component,
    pub(super) core: ToolCorePre<Sandbox>,
    /// Absent for tools built before the `capabilities` export existed.
    pub(super) capabilities: Option<CapabilityRequestsPre<Sandbox>>,
    /// Absent for tools built before the `annotations` export existed.
    pub(super) annotations: Option<AnnotationsExportPre<Sandbox>>,
    /// It imports `wasi:http`'s outgoing handler: it makes HTTP requests.
    pub(super) uses_http: bool,
}

/// Where a component's code comes from without compiling it: the code the program ships,
/// then the compile cache.
#[derive(Clone, Copy)]
pub(crate) struct Code<'a> {
    pub(crate) shipped: &'a Precompiled,
    pub(crate) cache: Option<&'a CompileCache>,
    /// The pool it is loaded into, whose limits a component must fit to load: a record of what
    /// a component said of itself holds under the same pool only.
    pub(crate) pooling: Option<Pooling>,
}

impl Code<'_> {
    /// What the cache's record says the component whose digest is `digest` said of itself
    /// when it loaded under the same settings ([`CompileCache::said`]).
    pub(crate) fn said(&self, engine: &Engine, digest: &[u8; 32]) -> Option<Vec<u8>> {
        self.cache?.said(engine, digest, self.load_settings().as_bytes())
    }

    /// Keeps, unless the cache has it already, what a component said of itself when it loaded.
    pub(crate) fn keep_said(&self, engine: &Engine, digest: &[u8; 32], payload: &[u8]) {
        let Some(cache) = self.cache else { return };
        if self.said(engine, digest).as_deref() != Some(payload) {
            cache.keep_said(engine, digest, self.load_settings().as_bytes(), payload);
        }
    }

    /// What decides, beside the component and the engine, whether it loads: whether a slot of
    /// the pool fits it (the pool's other sizes bound calls, not components).
    fn load_settings(&self) -> String {
        match self.pooling {
            None => "on demand".to_owned(),
            Some(pooling) => format!("pooled, memories of at most {} bytes", pooling.max_memory_bytes),
        }
    }

    /// Whether any component could come from either.
    pub(crate) fn has_any(&self) -> bool {
        self.cache.is_some() || !self.shipped.is_empty()
    }

    fn compiled(&self, engine: &Engine, digest: &[u8; 32]) -> Option<Component> {
        self.shipped.component(engine, digest).or_else(|| self.cache?.cached(engine, digest))
    }
}

/// Whether [`prepare`] may compile.
#[derive(Clone, Copy)]
pub(crate) enum Compile<'a> {
    /// Only from shipped code or the compile cache: `Ok(None)` when neither has it.
    CachedOnly,
    /// Compile it, calling this first, and store it in the cache (the caller has looked for
    /// its code already, with [`Compile::CachedOnly`]).
    Announced(&'a dyn Fn()),
}

/// Compiles (or takes from shipped code or the cache) and links a component. Blocking:
/// compilation takes hundreds of milliseconds or more.
pub(crate) fn prepare(
    engine: &Engine,
    linkers: &Linkers,
    code: Code<'_>,
    bytes: &[u8],
    digest: &[u8; 32],
    compile: Compile<'_>,
) -> Result<Option<Prepared>, String> {
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
    let compiled = match (compile, code.cache) {
        (Compile::CachedOnly, _) => match code.compiled(engine, digest) {
            Some(component) => Ok(component),
            None => return Ok(None),
        },
        (Compile::Announced(compiling), Some(cache)) => cache.compile_and_store(engine, bytes, digest, compiling),
        (Compile::Announced(compiling), None) => {
            compiling();
            Component::from_binary(engine, bytes)
        }
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
    let annotations = match component.get_export_index(None, "annotations") {
        Some(_) => Some(AnnotationsExportPre::new(pre.clone()).map_err(|err| {
            format!("exports `annotations` with the wrong type ({err}); rebuild it with the current toolcell-guest")
        })?),
        None => None,
    };
    let core = ToolCorePre::new(pre).map_err(|err| {
        format!(
            "does not export the `toolcell:tool/tool` world ({err}); \
             is it a tool built with toolcell-guest's #[tool]? A `wasi:cli` command is not a tool"
        )
    })?;
    let uses_http =
        component.component_type().imports(engine).any(|(name, _)| name.starts_with("wasi:http/outgoing-handler"));
    Ok(Some(Prepared { component, core, capabilities, annotations, uses_http }))
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

pub(super) fn link(
    linker: &Linker<Sandbox>,
    component: &Component,
) -> Result<wasmtime::component::InstancePre<Sandbox>, String> {
    linker.instantiate_pre(component).map_err(|err| {
        format!("cannot be linked: {err}. A tool may import only WASI 0.2 interfaces that toolcell provides")
    })
}

impl Prepared {
    /// Its code and the code linked (without `wasi:http`).
    pub(super) fn into_code(self) -> (Component, ToolCorePre<Sandbox>) {
        (self.component, self.core)
    }
}
