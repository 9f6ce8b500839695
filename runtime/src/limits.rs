//! The limits every call runs under, their defaults, and overrides per tool and per call.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The resources one call may use. Every call gets a fresh instance with exactly these.
///
/// The defaults suit pure-compute tools answering a model: generous for real work (a few
/// hundred milliseconds of CPU is far beyond what parsing, querying or formatting needs),
/// small enough that a runaway tool is stopped before a user notices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Limits {
    /// WebAssembly fuel: one unit per WebAssembly operator executed. Deterministic, unlike
    /// the timeout. Default: 10,000,000,000 (about a second of busy computation on the
    /// machine this was measured on).
    pub fuel: u64,
    /// Wall-clock time for the whole call, including time blocked in host calls.
    /// Default: 5 s.
    #[serde(with = "duration_ms", rename = "timeout_ms")]
    pub timeout: Duration,
    /// Linear memory plus table storage of the instance, in bytes. Default: 64 MiB.
    pub memory_bytes: u64,
    /// Size of the arguments JSON. Default: 1 MiB.
    pub max_argument_bytes: u64,
    /// Size of the result JSON (and of a tool's error message). Default: 1 MiB.
    pub max_output_bytes: u64,
    /// Guest stdout and stderr kept for diagnostics, each; the rest is counted and dropped.
    /// Default: 64 KiB.
    pub max_stdio_bytes: u64,
    /// Size of one HTTP response body a tool may read; reading past it fails the read.
    /// Default: 10 MiB.
    pub max_http_response_bytes: u64,
    /// Calls to other tools one call may make (code mode), counting those of the tools it
    /// calls, and refused calls (a tool it may not call, too deep, no such tool) as well as
    /// those that ran; only tools whose policy has `call_tools` make any. Default: 64.
    pub max_nested_calls: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            fuel: 10_000_000_000,
            timeout: Duration::from_secs(5),
            memory_bytes: 64 << 20,
            max_argument_bytes: 1 << 20,
            max_output_bytes: 1 << 20,
            max_stdio_bytes: 64 << 10,
            max_http_response_bytes: 10 << 20,
            max_nested_calls: 64,
        }
    }
}

impl Limits {
    /// These limits with every limit `overrides` sets replaced.
    #[must_use]
    pub fn with(mut self, overrides: &LimitOverrides) -> Self {
        let LimitOverrides {
            fuel,
            timeout,
            memory_bytes,
            max_argument_bytes,
            max_output_bytes,
            max_stdio_bytes,
            max_http_response_bytes,
            max_nested_calls,
        } = *overrides;
        self.fuel = fuel.unwrap_or(self.fuel);
        self.timeout = timeout.unwrap_or(self.timeout);
        self.memory_bytes = memory_bytes.unwrap_or(self.memory_bytes);
        self.max_argument_bytes = max_argument_bytes.unwrap_or(self.max_argument_bytes);
        self.max_output_bytes = max_output_bytes.unwrap_or(self.max_output_bytes);
        self.max_stdio_bytes = max_stdio_bytes.unwrap_or(self.max_stdio_bytes);
        self.max_http_response_bytes = max_http_response_bytes.unwrap_or(self.max_http_response_bytes);
        self.max_nested_calls = max_nested_calls.unwrap_or(self.max_nested_calls);
        self
    }

    /// These limits lowered by `overrides`: an override below a limit replaces it, one above
    /// it is ignored. How a per-call override applies unless the embedding opted in to
    /// raising limits ([`RuntimeBuilder::allow_raising_limits_per_call`]).
    ///
    /// [`RuntimeBuilder::allow_raising_limits_per_call`]: crate::RuntimeBuilder::allow_raising_limits_per_call
    #[must_use]
    pub fn with_at_most(self, overrides: &LimitOverrides) -> Self {
        let lower = |limit: u64, wanted: Option<u64>| wanted.map_or(limit, |wanted| wanted.min(limit));
        Self {
            fuel: lower(self.fuel, overrides.fuel),
            timeout: overrides.timeout.map_or(self.timeout, |wanted| wanted.min(self.timeout)),
            memory_bytes: lower(self.memory_bytes, overrides.memory_bytes),
            max_argument_bytes: lower(self.max_argument_bytes, overrides.max_argument_bytes),
            max_output_bytes: lower(self.max_output_bytes, overrides.max_output_bytes),
            max_stdio_bytes: lower(self.max_stdio_bytes, overrides.max_stdio_bytes),
            max_http_response_bytes: lower(self.max_http_response_bytes, overrides.max_http_response_bytes),
            max_nested_calls: lower(self.max_nested_calls, overrides.max_nested_calls),
        }
    }
}

/// Some limits to replace, for one tool or one call; `None` keeps the current value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LimitOverrides {
    /// See [`Limits::fuel`].
    pub fuel: Option<u64>,
    /// See [`Limits::timeout`].
    #[serde(with = "option_duration_ms", rename = "timeout_ms", default)]
    pub timeout: Option<Duration>,
    /// See [`Limits::memory_bytes`].
    pub memory_bytes: Option<u64>,
    /// See [`Limits::max_argument_bytes`].
    pub max_argument_bytes: Option<u64>,
    /// See [`Limits::max_output_bytes`].
    pub max_output_bytes: Option<u64>,
    /// See [`Limits::max_stdio_bytes`].
    pub max_stdio_bytes: Option<u64>,
    /// See [`Limits::max_http_response_bytes`].
    pub max_http_response_bytes: Option<u64>,
    /// See [`Limits::max_nested_calls`].
    pub max_nested_calls: Option<u64>,
}

impl LimitOverrides {
    /// Overrides nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// The lower of each limit set in either.
    pub(crate) fn tightest(&self, other: &LimitOverrides) -> LimitOverrides {
        fn lower<T: Ord + Copy>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        }
        LimitOverrides {
            fuel: lower(self.fuel, other.fuel),
            timeout: lower(self.timeout, other.timeout),
            memory_bytes: lower(self.memory_bytes, other.memory_bytes),
            max_argument_bytes: lower(self.max_argument_bytes, other.max_argument_bytes),
            max_output_bytes: lower(self.max_output_bytes, other.max_output_bytes),
            max_stdio_bytes: lower(self.max_stdio_bytes, other.max_stdio_bytes),
            max_http_response_bytes: lower(self.max_http_response_bytes, other.max_http_response_bytes),
            max_nested_calls: lower(self.max_nested_calls, other.max_nested_calls),
        }
    }

    /// Replaces the fuel limit.
    #[must_use]
    pub fn fuel(mut self, fuel: u64) -> Self {
        self.fuel = Some(fuel);
        self
    }

    /// Replaces the timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Replaces the memory limit.
    #[must_use]
    pub fn memory_bytes(mut self, bytes: u64) -> Self {
        self.memory_bytes = Some(bytes);
        self
    }

    /// Replaces the argument size limit.
    #[must_use]
    pub fn max_argument_bytes(mut self, bytes: u64) -> Self {
        self.max_argument_bytes = Some(bytes);
        self
    }

    /// Replaces the output size limit.
    #[must_use]
    pub fn max_output_bytes(mut self, bytes: u64) -> Self {
        self.max_output_bytes = Some(bytes);
        self
    }

    /// These overrides with every value `later` sets replaced.
    #[must_use]
    pub fn merged(&self, later: &LimitOverrides) -> Self {
        Self {
            fuel: later.fuel.or(self.fuel),
            timeout: later.timeout.or(self.timeout),
            memory_bytes: later.memory_bytes.or(self.memory_bytes),
            max_argument_bytes: later.max_argument_bytes.or(self.max_argument_bytes),
            max_output_bytes: later.max_output_bytes.or(self.max_output_bytes),
            max_stdio_bytes: later.max_stdio_bytes.or(self.max_stdio_bytes),
            max_http_response_bytes: later.max_http_response_bytes.or(self.max_http_response_bytes),
            max_nested_calls: later.max_nested_calls.or(self.max_nested_calls),
        }
    }

    /// Replaces the HTTP response size limit.
    #[must_use]
    pub fn max_http_response_bytes(mut self, bytes: u64) -> Self {
        self.max_http_response_bytes = Some(bytes);
        self
    }

    /// Replaces the limit on calls to other tools.
    #[must_use]
    pub fn max_nested_calls(mut self, calls: u64) -> Self {
        self.max_nested_calls = Some(calls);
        self
    }

    /// Replaces the stdout/stderr capture limit.
    #[must_use]
    pub fn max_stdio_bytes(mut self, bytes: u64) -> Self {
        self.max_stdio_bytes = Some(bytes);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_at_most_only_lower() {
        let ceiling = Limits::default();
        let overrides = LimitOverrides::new().fuel(u64::MAX).timeout(Duration::from_millis(10)).memory_bytes(1 << 40);
        let limits = ceiling.with_at_most(&overrides);
        assert_eq!(limits.fuel, ceiling.fuel, "raising is ignored");
        assert_eq!(limits.timeout, Duration::from_millis(10), "lowering applies");
        assert_eq!(limits.memory_bytes, ceiling.memory_bytes);
        assert_eq!(ceiling.with(&overrides).fuel, u64::MAX, "`with` replaces");
    }
}

mod duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        u64::deserialize(deserializer).map(Duration::from_millis)
    }
}

mod option_duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(duration: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
        match duration {
            Some(duration) => super::duration_ms::serialize(duration, serializer),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
        Option::<u64>::deserialize(deserializer).map(|ms| ms.map(Duration::from_millis))
    }
}
