//! toolcell's seven standard tools, compiled to `wasm32-wasip2` components by this crate's
//! build script: `calculator`, `json_query`, `regex`, `datetime`, `unit_convert`, and the two
//! that need grants to do anything, `http_fetch` and `files`.
//!
//! [`DIR`] is a tools folder holding exactly these seven `<name>.wasm` files; [`ALL`] has the
//! same components as bytes, for a binary that embeds them. The per-tool constants (e.g.
//! [`CALCULATOR`]) are the paths of the individual files.

/// A tools folder holding the seven standard tools.
pub const DIR: &str = concat!(env!("OUT_DIR"), "/tools");

include!(concat!(env!("OUT_DIR"), "/tools.rs"));
