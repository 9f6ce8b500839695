//! `toolcell serve` end to end: the real binary, driven by `rmcp`'s client over stdio and
//! streamable HTTP, and by raw requests where the wire itself is the point.

mod clients;
mod code_mode;
mod cold;
mod common;
mod http;
mod metrics;
mod oauth;
mod otlp;
mod reload;
mod schemas;
mod stdio;
mod tasks;
