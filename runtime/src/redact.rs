//! Keeping secrets (the secret values of granted environment variables) out of everything
//! the host reports: results, error messages, diagnostics and logs.
//!
//! Copies are caught verbatim and in the escaped spellings the host itself produces (JSON
//! strings, Rust debug output); a tool that encodes a secret otherwise (base64, reversed)
//! can still return it. Grant secrets only to tools you trust with them.

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
        let mut spellings: Vec<String> =
            secrets.into_iter().filter(|secret| !secret.is_empty()).flat_map(spellings).collect();
        spellings.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        spellings.dedup();
        Self { secrets: spellings }
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

    /// Like [`Self::text`], for text that was cut short (a capped capture of stdout): also
    /// drops a tail that is the start of a secret, so a cut never leaves half a secret.
    pub(crate) fn cut_text(&self, text: &mut String) {
        self.text(text);
        let partial = self
            .secrets
            .iter()
            .filter_map(|secret| {
                (1..secret.len()).rev().find(|&len| secret.is_char_boundary(len) && text.ends_with(&secret[..len]))
            })
            .max();
        if let Some(len) = partial {
            text.truncate(text.len() - len);
            text.push_str(REDACTED);
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

/// The ways a secret can appear in text the host writes: as is, escaped inside a JSON string,
/// and escaped by Rust's `Debug`.
fn spellings(secret: String) -> Vec<String> {
    let json = serde_json::to_string(&secret).unwrap_or_default();
    let debug = format!("{secret:?}");
    let inner = |quoted: &str| quoted.get(1..quoted.len().saturating_sub(1)).map(str::to_owned);
    [Some(secret.clone()), inner(&json), inner(&debug)].into_iter().flatten().filter(|s| !s.is_empty()).collect()
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
    fn escaped_spellings_and_cut_tails_are_redacted() {
        let redactor = Redactor::new([r#"pa"ss\word"#.to_owned()]);
        for text in [r#"pa"ss\word"#, r#"pa\"ss\\word"#] {
            let mut text = format!("x {text} y");
            redactor.text(&mut text);
            assert_eq!(text, format!("x {REDACTED} y"));
        }
        let redactor = Redactor::new(["tok-3f9a7c1e55".to_owned()]);
        let mut cut = "the token is tok-3f9a".to_owned();
        redactor.cut_text(&mut cut);
        assert_eq!(cut, format!("the token is {REDACTED}"));
        let mut whole = "no secret here".to_owned();
        redactor.cut_text(&mut whole);
        assert_eq!(whole, "no secret here");
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
