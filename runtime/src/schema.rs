//! JSON Schemas from tools: checked once at load, then used to validate every call.

use std::panic::{AssertUnwindSafe, catch_unwind};

use jsonschema::Validator;
use serde_json::Value;

use crate::error::Violation;

/// At most this many violations are reported for one value: enough to fix a call, short
/// enough for a model's context.
const MAX_VIOLATIONS: usize = 20;
/// Violation messages quote the offending value; long values are cut to this many chars.
const MAX_VIOLATION_CHARS: usize = 300;

/// The drafts whose meta-schemas toolcell knows. Another `$schema` is refused at load
/// rather than silently validated by other rules.
const KNOWN_DRAFTS: [&str; 5] = [
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-04/schema",
];

/// A compiled schema from a tool.
#[derive(Debug)]
pub(crate) struct CompiledSchema {
    validator: Validator,
}

impl CompiledSchema {
    /// Parses, meta-validates and compiles a schema a tool declared. The error says what is
    /// wrong, for a load diagnostic.
    pub(crate) fn compile(text: &str) -> Result<(Value, Self), String> {
        let schema: Value = serde_json::from_str(text).map_err(|err| format!("is not JSON: {err}"))?;
        if let Some(draft) = schema.get("$schema") {
            let known = draft.as_str().is_some_and(|draft| KNOWN_DRAFTS.contains(&draft.trim_end_matches('#')));
            if !known {
                return Err(format!("declares an unsupported `$schema` {draft}; use {}", KNOWN_DRAFTS[0]));
            }
        }
        // jsonschema documents panics on some inputs; a tool's schema must never take the host down.
        let checked = catch_unwind(AssertUnwindSafe(|| {
            jsonschema::meta::validate(&schema).map_err(|err| {
                let at = err.instance_path().as_str().to_owned();
                format!("is not a valid JSON Schema: {err} (at `{}`)", if at.is_empty() { "/" } else { &at })
            })?;
            jsonschema::validator_for(&schema).map_err(|err| format!("cannot be compiled: {err}"))
        }));
        match checked {
            Ok(Ok(validator)) => Ok((schema, Self { validator })),
            Ok(Err(reason)) => Err(reason),
            Err(_) => Err("made the JSON Schema validator panic".to_owned()),
        }
    }

    /// Every way `value` breaks the schema (at most [`MAX_VIOLATIONS`]); empty when it fits.
    pub(crate) fn violations(&self, value: &Value) -> Vec<Violation> {
        let collected = catch_unwind(AssertUnwindSafe(|| {
            self.validator
                .iter_errors(value)
                .take(MAX_VIOLATIONS)
                .map(|err| Violation {
                    pointer: err.instance_path().as_str().to_owned(),
                    message: truncate_chars(&err.to_string(), MAX_VIOLATION_CHARS),
                })
                .collect::<Vec<_>>()
        }));
        collected.unwrap_or_else(|_| {
            vec![Violation { pointer: String::new(), message: "the value could not be validated".to_owned() }]
        })
    }
}

pub(crate) fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
