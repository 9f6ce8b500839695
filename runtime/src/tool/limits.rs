//! The limits every call runs under, their defaults, and overrides per tool and per call.
//!
//! Each limit is declared once, in the table at the [`limits!`] call below: its field, type,
//! default, policy-file key and docs. [`Limits`], [`LimitOverrides`] with its setters, how
//! overrides combine, their JSON form and the policy file's `limits` keys all come from it:
//! adding a limit is one entry there (plus where the host enforces it).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A limit's value: a count or a duration, written in the policy file and in JSON as a
/// number (a duration in milliseconds).
pub(crate) trait LimitValue: Copy + Ord {
    /// The value a policy file or JSON number stands for.
    fn from_number(number: u64) -> Self;
    /// The value as that number.
    fn to_number(self) -> u64;
}

impl LimitValue for u64 {
    fn from_number(number: u64) -> Self {
        number
    }

    fn to_number(self) -> u64 {
        self
    }
}

impl LimitValue for Duration {
    fn from_number(number: u64) -> Self {
        Duration::from_millis(number)
    }

    fn to_number(self) -> u64 {
        u64::try_from(self.as_millis()).unwrap_or(u64::MAX)
    }
}

/// Declares every limit: `field: type = default, "policy key", "setter's doc";` with the
/// field's docs above it.
macro_rules! limits {
    ($(
        $(#[doc = $doc:literal])*
        $field:ident: $ty:ty = $default:expr, $key:literal, $setter_doc:literal;
    )*) => {
        /// The resources one call may use. Every call gets a fresh instance with exactly these.
        ///
        /// The defaults suit pure-compute tools answering a model: generous for real work (a few
        /// hundred milliseconds of CPU is far beyond what parsing, querying or formatting needs),
        /// small enough that a runaway tool is stopped before a user notices.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        #[non_exhaustive]
        pub struct Limits {
            $(
                $(#[doc = $doc])*
                #[serde(with = "number", rename = $key)]
                pub $field: $ty,
            )*
        }

        impl Default for Limits {
            fn default() -> Self {
                Self { $($field: $default,)* }
            }
        }

        impl Limits {
            /// These limits with every limit `overrides` sets replaced.
            #[must_use]
            pub fn with(self, overrides: &LimitOverrides) -> Self {
                Self { $($field: overrides.$field.unwrap_or(self.$field),)* }
            }

            /// These limits lowered by `overrides`: an override below a limit replaces it, one
            /// above it is ignored. How a per-call override applies unless the embedding opted
            /// in to raising limits ([`RuntimeBuilder::allow_raising_limits_per_call`]).
            ///
            /// [`RuntimeBuilder::allow_raising_limits_per_call`]: crate::RuntimeBuilder::allow_raising_limits_per_call
            #[must_use]
            pub fn with_at_most(self, overrides: &LimitOverrides) -> Self {
                Self { $($field: overrides.$field.map_or(self.$field, |wanted| wanted.min(self.$field)),)* }
            }
        }

        /// Some limits to replace, for one tool or one call; `None` keeps the current value.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[non_exhaustive]
        pub struct LimitOverrides {
            $(
                #[doc = concat!("See [`Limits::", stringify!($field), "`].")]
                #[serde(with = "option_number", rename = $key, default)]
                pub $field: Option<$ty>,
            )*
        }

        impl LimitOverrides {
            /// The policy file's keys for the limits, in the order they are declared.
            pub(crate) const KEYS: &[&str] = &[$($key),*];

            $(
                #[doc = $setter_doc]
                #[must_use]
                pub fn $field(mut self, $field: $ty) -> Self {
                    self.$field = Some($field);
                    self
                }
            )*

            /// Every limit of `limits`, set.
            pub(crate) fn all_of(limits: &Limits) -> LimitOverrides {
                LimitOverrides { $($field: Some(limits.$field),)* }
            }

            /// The lower of each limit set in either.
            pub(crate) fn tightest(&self, other: &LimitOverrides) -> LimitOverrides {
                fn lower<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
                    match (a, b) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    }
                }
                LimitOverrides { $($field: lower(self.$field, other.$field),)* }
            }

            /// These overrides with every value `later` sets replaced.
            #[must_use]
            pub fn merged(&self, later: &LimitOverrides) -> Self {
                Self { $($field: later.$field.or(self.$field),)* }
            }

            /// Sets the limit a policy file names by `key` to `number` (in the key's unit);
            /// `false` when no limit has that key.
            pub(crate) fn set_by_key(&mut self, key: &str, number: u64) -> bool {
                match key {
                    $($key => self.$field = Some(LimitValue::from_number(number)),)*
                    _ => return false,
                }
                true
            }
        }
    };
}

limits! {
    /// WebAssembly fuel: one unit per WebAssembly operator executed. Deterministic, unlike
    /// the timeout. Default: 10,000,000,000 (about a second of busy computation on the
    /// machine this was measured on).
    fuel: u64 = 10_000_000_000, "fuel", "Replaces the fuel limit.";
    /// Wall-clock time for the whole call, including time blocked in host calls.
    /// Default: 5 s.
    timeout: Duration = Duration::from_secs(5), "timeout_ms", "Replaces the timeout.";
    /// Linear memory plus table storage of the instance, in bytes. Default: 64 MiB.
    memory_bytes: u64 = 64 << 20, "memory_bytes", "Replaces the memory limit.";
    /// Size of the arguments JSON. Default: 1 MiB.
    max_argument_bytes: u64 = 1 << 20, "max_argument_bytes", "Replaces the argument size limit.";
    /// Size of the result JSON (and of a tool's error message). Default: 1 MiB.
    max_output_bytes: u64 = 1 << 20, "max_output_bytes", "Replaces the output size limit.";
    /// Guest stdout and stderr kept for diagnostics, each; the rest is counted and dropped.
    /// Default: 64 KiB.
    max_stdio_bytes: u64 = 64 << 10, "max_stdio_bytes", "Replaces the stdout/stderr capture limit.";
    /// Size of one HTTP response body a tool may read; reading past it fails the read.
    /// Default: 10 MiB.
    max_http_response_bytes: u64 = 10 << 20, "max_http_response_bytes", "Replaces the HTTP response size limit.";
    /// Calls to other tools one call may make (code mode), counting those of the tools it
    /// calls, and refused calls (a tool it may not call, too deep, no such tool) as well as
    /// those that ran; only tools whose policy has `call_tools` make any. Default: 64.
    max_nested_calls: u64 = 64, "max_nested_calls", "Replaces the limit on calls to other tools.";
}

impl LimitOverrides {
    /// Overrides nothing.
    pub fn new() -> Self {
        Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_numbers_in_json_with_the_timeout_in_milliseconds() {
        let json = serde_json::to_value(Limits::default()).unwrap();
        assert_eq!(json["timeout_ms"], 5000);
        assert_eq!(json["fuel"], 10_000_000_000_u64);
        assert_eq!(json.as_object().unwrap().len(), LimitOverrides::KEYS.len());
        assert_eq!(serde_json::from_value::<Limits>(json).unwrap(), Limits::default());
        let overrides: LimitOverrides = serde_json::from_str(r#"{"timeout_ms": 250, "fuel": null}"#).unwrap();
        assert_eq!(overrides, LimitOverrides::new().timeout(Duration::from_millis(250)));
        assert_eq!(serde_json::to_value(overrides).unwrap()["timeout_ms"], 250);
    }

    #[test]
    fn a_policy_key_sets_its_limit_in_its_unit() {
        let mut overrides = LimitOverrides::new();
        assert!(overrides.set_by_key("timeout_ms", 1500));
        assert!(overrides.set_by_key("max_nested_calls", 3));
        assert!(!overrides.set_by_key("timeout", 1));
        assert_eq!(overrides, LimitOverrides::new().timeout(Duration::from_millis(1500)).max_nested_calls(3));
    }

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

/// A limit in JSON: a number (a duration in milliseconds).
mod number {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::LimitValue;

    pub fn serialize<T: LimitValue, S: Serializer>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(value.to_number())
    }

    pub fn deserialize<'de, T: LimitValue, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
        u64::deserialize(deserializer).map(T::from_number)
    }
}

/// An override in JSON: a number, or `null` for none.
mod option_number {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::LimitValue;

    pub fn serialize<T: LimitValue, S: Serializer>(value: &Option<T>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => serializer.serialize_u64(value.to_number()),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: LimitValue, D: Deserializer<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
        Option::<u64>::deserialize(deserializer).map(|number| number.map(T::from_number))
    }
}
