//! Paths of the test guests, built by this crate's build script: one constant per guest
//! (`ECHO`, `INFINITE_LOOP`, ...) and [`foreach_guest!`] over all of them. And an OTLP
//! receiver ([`otlp`]) for the telemetry tests.

pub mod otlp;

include!(concat!(env!("OUT_DIR"), "/guests.rs"));
