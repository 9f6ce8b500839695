//! The host side of `wit/tool.wit`, generated once per world the host calls.
//!
//! The host binds the parts of the `tool` world separately: every tool exports `tool-core`,
//! while `capability-requests` (0.1.1) and `tool-annotations` (0.1.2) are optional (tools
//! built before they existed do not export them).

pub(crate) use core::*;

mod core {
    wasmtime::component::bindgen!({
        world: "tool-core",
        path: "wit",
        exports: { default: async },
    });
}

pub(crate) mod capabilities {
    wasmtime::component::bindgen!({
        world: "capability-requests",
        path: "wit",
        exports: { default: async },
    });
}

/// `tool-annotations` names both a world and its record, and bindings name a world's Rust
/// type after the world: bound directly, the two would clash. A host-side world includes it
/// under another name (`AnnotationsExportPre`), leaving the record `ToolAnnotations`.
pub(crate) mod annotations {
    wasmtime::component::bindgen!({
        inline: "
            package toolcell:host;
            world annotations-export {
                include toolcell:tool/tool-annotations@0.1.3;
            }
        ",
        path: "wit",
        world: "annotations-export",
        exports: { default: async },
    });
}
