//! Paths of the test guests, built by this crate's build script: one constant per guest
//! (`ECHO`, `INFINITE_LOOP`, ...) and [`foreach_guest!`] over all of them. And an OTLP
//! receiver ([`otlp`]) for the telemetry tests, and a real OCI registry ([`registry`]).

pub mod otlp;
pub mod registry;

include!(concat!(env!("OUT_DIR"), "/guests.rs"));
