//! Paths of the test guests, built by this crate's build script: one constant per guest
//! (`ECHO`, `INFINITE_LOOP`, ...) and [`foreach_guest!`] over all of them. And an OTLP
//! receiver ([`otlp`]) for the telemetry tests, a real OCI registry ([`registry`]), and an OAuth
//! issuer's keys and tokens ([`issuer`]).

pub mod issuer;
pub mod otlp;
pub mod registry;

include!(concat!(env!("OUT_DIR"), "/guests.rs"));
