//! What the runtime tells an operator: each call and each load as a `tracing` span with
//! OpenInference's attributes ([`spans`]), calls, errors, latency and fuel per tool
//! ([`metrics`]), and the HTTP requests it refused ([`denials`]).

pub(crate) mod denials;
pub(crate) mod metrics;
pub(crate) mod spans;
