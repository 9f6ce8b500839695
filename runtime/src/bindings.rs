//! The host side of `wit/tool.wit`, generated once.

wasmtime::component::bindgen!({
    world: "tool",
    path: "../wit",
    exports: { default: async },
});
