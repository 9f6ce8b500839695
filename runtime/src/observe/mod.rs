//! What the runtime tells an operator: each call and each load as a `tracing` span with
//! OpenInference's attributes ([`spans`]), and calls, errors, latency and fuel per tool
//! ([`metrics`]).

pub(crate) mod metrics;
pub(crate) mod spans;
