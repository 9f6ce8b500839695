//! toolcell's integration tests: the runtime against real and deliberately misbehaving
//! components.

mod annotations;
mod announce;
mod cancellation;
mod capabilities;
mod code_mode;
mod commands;
mod common;
mod containment;
mod errors;
mod formats;
mod guests;
mod loading;
mod messages;
mod metrics;
mod policy_boundary;
mod pooling;
mod python;
mod redaction;
mod reload;
mod sdk_guests;
mod search_execute;
mod soak;
mod spans;
mod tools;
mod toolsets;
