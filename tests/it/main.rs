//! toolcell's integration tests: the runtime against real and deliberately misbehaving
//! components.

mod annotations;
mod capabilities;
mod common;
mod containment;
mod errors;
mod guests;
mod loading;
mod messages;
mod pooling;
mod soak;
mod tools;
