//! toolcell's eight standard tools, compiled to `wasm32-wasip2` components by this crate's
//! build script: `calculator`, `json_query`, `regex`, `datetime`, `unit_convert`, the two
//! that need grants to do anything, `http_fetch` and `files`, and `python`, a Python
//! interpreter that runs a model's program (and, with `call_tools`, calls other tools).
//!
//! [`DIR`] is a tools folder holding exactly these eight `<name>.wasm` files and their
//! policy, [`POLICY`], as `toolcell.toml`; [`ALL`] has the same components as bytes, for a
//! binary that embeds them. The per-tool constants (e.g. [`CALCULATOR`]) are the paths of
//! the individual files. [`PRECOMPILED`] is their code compiled ahead of time, when the crate
//! was built with `TOOLCELL_PRECOMPILED_DIR` (see `toolcell precompile`).

#![deny(clippy::unwrap_used, clippy::expect_used)]

/// A tools folder holding the eight standard tools and their policy file.
pub const DIR: &str = concat!(env!("OUT_DIR"), "/tools");

/// The standard tools' policy (`toolcell.toml`): the limits of the tools that need other than
/// the runtime's defaults (an interpreter needs more fuel, time and memory). It grants
/// nothing. A runtime loading [`DIR`] reads it from there; one loading [`ALL`] should apply it
/// under the operator's own policy.
pub const POLICY: &str = include_str!("../toolcell.toml");

include!(concat!(env!("OUT_DIR"), "/tools.rs"));
include!(concat!(env!("OUT_DIR"), "/precompiled.rs"));
