//! The host side of `wit/tool.wit`, generated once per world the host calls.
//!
//! The host binds the two parts of the `tool` world separately: every tool exports
//! `tool-core`, while `capability-requests` is optional (tools built before it existed do
//! not export it).

pub(crate) use core::*;

mod core {
    wasmtime::component::bindgen!({
        world: "tool-core",
        path: "../wit",
        exports: { default: async },
    });
}

pub(crate) mod capabilities {
    wasmtime::component::bindgen!({
        world: "capability-requests",
        path: "../wit",
        exports: { default: async },
    });
}
