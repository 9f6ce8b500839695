//! What a tool's imports are linked to: WASI 0.2 and `toolcell:tool/calls` (which refuses
//! every call of a tool the policy lets call none) for every tool, and `wasi:http` only for
//! tools the operator granted HTTP hosts.
//!
//! A tool without an HTTP grant that imports `wasi:http` (a fetching tool nobody has
//! configured yet) still loads, so it can be listed and inspected, but every `wasi:http`
//! function it calls traps with [`HttpNotGranted`]: it cannot create a single host-side
//! header, request or future, so it cannot make the host hold memory for it.

use std::fmt;

use wasmtime::Engine;
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{Component, Linker, ResourceType};

use super::{Sandbox, files, nested};

/// The error a `wasi:http` function raises in a tool that has no HTTP grant.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HttpNotGranted;

impl fmt::Display for HttpNotGranted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the tool called wasi:http, but it has no HTTP grant (`allow_hosts`)")
    }
}

impl std::error::Error for HttpNotGranted {}

/// The two linkers every tool is prepared with, built once per runtime.
#[derive(Clone)]
pub(crate) struct Linkers {
    wasi: Linker<Sandbox>,
    wasi_and_http: Linker<Sandbox>,
}

impl Linkers {
    pub(crate) fn new(engine: &Engine) -> wasmtime::Result<Self> {
        let mut wasi = Linker::<Sandbox>::new(engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut wasi)?;
        files::add_to_linker(&mut wasi)?;
        nested::add_to_linker(&mut wasi)?;
        let mut wasi_and_http = wasi.clone();
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut wasi_and_http)?;
        Ok(Self { wasi, wasi_and_http })
    }

    /// The linker for a tool with an HTTP grant.
    pub(crate) fn with_http(&self) -> &Linker<Sandbox> {
        &self.wasi_and_http
    }

    /// The linker for `component` without an HTTP grant: WASI, with every `wasi:http` import
    /// the component has defined as a function that fails with [`HttpNotGranted`]. Any other
    /// import stays undefined, so linking still refuses what toolcell does not provide.
    pub(crate) fn without_http(&self, engine: &Engine, component: &Component) -> wasmtime::Result<Linker<Sandbox>> {
        let mut linker = self.wasi.clone();
        // Resources are listed again wherever an interface `use`s them; only their first
        // appearance may be defined (later ones must be the same type).
        let mut seen_resources: Vec<ResourceType> = Vec::new();
        for (name, item) in component.component_type().imports(engine) {
            let ComponentItem::ComponentInstance(interface) = item.ty else { continue };
            let stubbed = name.starts_with("wasi:http/");
            let mut instance = if stubbed { Some(linker.instance(name)?) } else { None };
            for (export, item) in interface.exports(engine) {
                match (item.ty, instance.as_mut()) {
                    (ComponentItem::Resource(resource), instance) if !seen_resources.contains(&resource) => {
                        seen_resources.push(resource);
                        if let Some(instance) = instance {
                            instance.resource(export, ResourceType::host::<HttpNotGranted>(), |_, _| Ok(()))?;
                        }
                    }
                    (ComponentItem::ComponentFunc(_), Some(instance)) => {
                        instance.func_new(export, |_, _, _, _| Err(wasmtime::Error::new(HttpNotGranted)))?;
                    }
                    _ => {}
                }
            }
        }
        Ok(linker)
    }
}
