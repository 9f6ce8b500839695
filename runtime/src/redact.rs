//! Keeping secrets (the values of granted environment variables) out of everything the host
//! reports: results, error messages, diagnostics and logs.
//!
//! Only verbatim copies are caught: a tool that encodes a secret (base64, reversed) can still
//! return it. Grant secrets only to tools you trust with them.

use serde_json::Value;

use crate::policy::REDACTED;

/// Replaces known secret values with [`REDACTED`].
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    /// Longest first, so a secret containing another is replaced whole.
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    pub(crate) fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<String> = secrets.into_iter().filter(|secret| !secret.is_empty()).collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        Self { secrets }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every secret replaced.
    pub(crate) fn text(&self, text: &mut String) {
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                *text = text.replace(secret.as_str(), REDACTED);
            }
        }
    }

    /// Redacts every string, object key and number in a JSON value; returns whether anything changed.
    pub(crate) fn json(&self, value: &mut Value) -> bool {
        match value {
            Value::String(text) => self.changed(text),
            Value::Array(items) => items.iter_mut().fold(false, |changed, item| self.json(item) | changed),
            Value::Object(map) => {
                let mut changed = false;
                let entries = std::mem::take(map);
                for (mut key, mut item) in entries {
                    changed |= self.changed(&mut key);
                    changed |= self.json(&mut item);
                    map.insert(key, item);
                }
                changed
            }
            // A numeric secret (a PIN) printed as a JSON number becomes a string.
            Value::Number(number) => {
                let text = number.to_string();
                let secret = self.secrets.iter().any(|secret| text.contains(secret.as_str()));
                if secret {
                    *value = Value::String(REDACTED.to_owned());
                }
                secret
            }
            Value::Null | Value::Bool(_) => false,
        }
    }

    fn changed(&self, text: &mut String) -> bool {
        let found = self.secrets.iter().any(|secret| text.contains(secret.as_str()));
        if found {
            self.text(text);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn replaces_the_longest_secret_first_everywhere() {
        let redactor = Redactor::new(["abc".to_owned(), "abcdef".to_owned(), String::new()]);
        let mut text = "x abcdef y abc".to_owned();
        redactor.text(&mut text);
        assert_eq!(text, format!("x {REDACTED} y {REDACTED}"));
    }

    #[test]
    fn redacts_json_strings_keys_and_numbers() {
        let redactor = Redactor::new(["s3cr\"et".to_owned(), "42".to_owned()]);
        let mut value = json!({"token": "Bearer s3cr\"et", "s3cr\"et": [1, "42"], "n": 42});
        assert!(redactor.json(&mut value));
        assert_eq!(value, json!({"token": format!("Bearer {REDACTED}"), REDACTED: [1, REDACTED], "n": REDACTED}));
        let mut clean = json!({"a": "b"});
        assert!(!redactor.json(&mut clean));
    }
}
