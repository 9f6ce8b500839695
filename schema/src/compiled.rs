//! JSON Schemas from tools: checked once at load, then used to validate every call.

use std::panic::{AssertUnwindSafe, catch_unwind};

use jsonschema::Validator;
use serde_json::Value;

use crate::Violation;

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
pub struct CompiledSchema {
    /// The schema as declared: read to explain violations in words.
    schema: Value,
    validator: Validator,
}

impl CompiledSchema {
    /// Parses, meta-validates and compiles a schema a tool declared. The error says what is
    /// wrong, for a load diagnostic.
    ///
    /// # Errors
    /// What is wrong with the schema, as the end of a sentence (`is not JSON: ...`).
    pub fn compile(text: &str) -> Result<(Value, Self), String> {
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
            Ok(Ok(validator)) => Ok((schema.clone(), Self { schema, validator })),
            Ok(Err(reason)) => Err(reason),
            Err(_) => Err("made the JSON Schema validator panic".to_owned()),
        }
    }

    /// Every way `value` breaks the schema, explained for a model (at most 20); empty when
    /// it fits.
    pub fn violations(&self, value: &Value) -> Vec<Violation> {
        if self.validator.is_valid(value) {
            return Vec::new();
        }
        let explained =
            catch_unwind(AssertUnwindSafe(|| crate::explain::explain(&self.schema, self.validator.iter_errors(value))));
        explained.unwrap_or_else(|_| {
            vec![Violation { pointer: String::new(), message: "the value could not be validated".to_owned() }]
        })
    }
}
