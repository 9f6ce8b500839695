//! Keeping secrets (the secret values of granted environment variables) out of everything
//! the host reports: results, error messages, diagnostics, spans and logs.
//!
//! Copies are caught verbatim and in the escaped spellings the host itself produces (JSON
//! strings, Rust debug output); a tool that encodes a secret otherwise (base64, reversed)
//! can still return it. Grant secrets only to tools you trust with them.
//!
//! A call is redacted with the secrets of its tool and, for a call one tool made to another
//! (code mode), those of every caller above it: a caller's secret passed to a tool it calls
//! is as secret there. Every secret granted in the process is also remembered for log
//! output: [`RedactingWriter`] replaces them in whatever a log line carries, whoever wrote it
//! (the MCP library logs whole requests at `debug`).

use std::borrow::Cow;
use std::io::Write;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use serde_json::Value;
use toolcell_schema::words::truncated;

/// What a secret is replaced with wherever the host reports text.
pub const REDACTED: &str = "[REDACTED]";

/// How much of the start of a secret, at the end of a body cut short, is redacted: fewer
/// bytes would blank ordinary endings that happen to begin a secret.
const MIN_PARTIAL_BYTES: usize = 4;

/// Replaces known secret values with [`REDACTED`].
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    /// Longest first, so a secret containing another is replaced whole. Shared: a call's
    /// redactor is cloned into its sandbox and into the calls it makes.
    secrets: Arc<[String]>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    pub(crate) fn new(secrets: impl IntoIterator<Item = String>) -> Self {
        let spellings = secrets.into_iter().filter(|secret| !secret.is_empty()).flat_map(spellings).collect();
        Self::from_spellings(spellings)
    }

    /// A redactor of the secrets granted to a tool, which log output keeps out from now on
    /// (see [`RedactingWriter`]).
    pub(crate) fn granted(secrets: impl IntoIterator<Item = String>) -> Self {
        let redactor = Self::new(secrets);
        if !redactor.is_empty() {
            let mut logged = LOGGED.write().unwrap_or_else(PoisonError::into_inner);
            if redactor.secrets.iter().any(|secret| !logged.secrets.contains(secret)) {
                *logged = logged.union(&redactor);
            }
        }
        redactor
    }

    fn from_spellings(mut spellings: Vec<String>) -> Self {
        spellings.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        spellings.dedup();
        Self { secrets: spellings.into() }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// Replaces the secrets of both: a nested call's redactor, its caller's with its own.
    pub(crate) fn union(&self, other: &Redactor) -> Redactor {
        if other.is_empty() {
            return self.clone();
        }
        if self.is_empty() {
            return other.clone();
        }
        Self::from_spellings(self.secrets.iter().chain(other.secrets.iter()).cloned().collect())
    }

    /// `text` redacted and cut to at most `max_bytes` (a `…` marks the cut), without reading
    /// more of it than the cut needs and without leaving the start of a secret at the cut:
    /// for names, ids and values of any size that go into spans and errors.
    pub(crate) fn cut(&self, text: &str, max_bytes: usize) -> String {
        if self.is_empty() {
            return truncated(text, max_bytes);
        }
        // Any secret that starts before the cut ends within the window.
        let longest = self.secrets.first().map_or(0, String::len);
        let mut window = max_bytes.saturating_add(longest).min(text.len());
        while !text.is_char_boundary(window) {
            window += 1;
        }
        let mut head = text[..window].to_owned();
        self.text(&mut head);
        if window == text.len() && head.len() <= max_bytes {
            return head;
        }
        let mut end = max_bytes.saturating_sub('…'.len_utf8()).min(head.len());
        while !head.is_char_boundary(end) {
            end -= 1;
        }
        head.truncate(end);
        self.drop_partial_tail(&mut head);
        head.push('…');
        head
    }

    /// JSON text as spans record it, when it does not parse as a value to redact with
    /// [`Self::json`]: its escapes decoded (so `\u0073ecret` is seen as `secret`), redacted,
    /// and cut to `max_bytes`.
    pub(crate) fn json_text(&self, text: &str, max_bytes: usize) -> String {
        if self.is_empty() {
            return truncated(text, max_bytes);
        }
        let longest = self.secrets.first().map_or(0, String::len);
        // An escape is at most 12 bytes (a surrogate pair) for one character of a secret.
        let mut window = max_bytes.saturating_add(longest.saturating_mul(12)).min(text.len());
        while !text.is_char_boundary(window) {
            window += 1;
        }
        let decoded = decode_escapes(&text[..window]);
        let cut = self.cut(&decoded, max_bytes);
        if window < text.len() && !cut.ends_with('…') {
            let mut cut = cut;
            cut.push('…');
            return cut;
        }
        cut
    }

    /// The longest spelling of a secret, in bytes.
    pub(crate) fn longest(&self) -> usize {
        self.secrets.first().map_or(0, String::len)
    }

    /// `data` with every secret replaced, or `None` when it holds none: for bytes that need
    /// not be text (a response body).
    pub(crate) fn bytes(&self, data: &[u8]) -> Option<Vec<u8>> {
        // Only where a secret's first byte is can one start: a table lookup per byte, and the
        // comparisons only there (a body streams through this).
        let mut starts = [false; 256];
        for secret in self.secrets.iter() {
            if let Some(&first) = secret.as_bytes().first() {
                starts[usize::from(first)] = true;
            }
        }
        let found = |at: usize| {
            if !starts[usize::from(data[at])] {
                return None;
            }
            self.secrets.iter().find(|secret| data[at..].starts_with(secret.as_bytes()))
        };
        let mut redacted: Option<Vec<u8>> = None;
        let (mut at, mut copied) = (0, 0);
        while at < data.len() {
            match found(at) {
                Some(secret) => {
                    let out = redacted.get_or_insert_with(|| Vec::with_capacity(data.len()));
                    out.extend_from_slice(&data[copied..at]);
                    out.extend_from_slice(REDACTED.as_bytes());
                    at += secret.len();
                    copied = at;
                }
                None => at += 1,
            }
        }
        let mut redacted = redacted?;
        redacted.extend_from_slice(&data[copied..]);
        Some(redacted)
    }

    /// Whether `data`, read case-insensitively, holds a secret: for header names, which are
    /// lower case whatever was sent.
    pub(crate) fn bytes_ignoring_case(&self, data: &[u8]) -> bool {
        let data = data.to_ascii_lowercase();
        self.secrets.iter().any(|secret| {
            let secret = secret.to_ascii_lowercase();
            data.windows(secret.len().max(1)).any(|window| window == secret.as_bytes())
        })
    }

    /// Replaces a tail of `data` that is the start of a secret (at least [`MIN_PARTIAL_BYTES`]
    /// of it) with [`REDACTED`]: the end of a body cut short.
    pub(crate) fn redact_partial_tail(&self, data: &mut Vec<u8>) {
        let partial = self
            .secrets
            .iter()
            .filter_map(|secret| {
                let secret = secret.as_bytes();
                (MIN_PARTIAL_BYTES..secret.len()).rev().find(|&len| data.ends_with(&secret[..len]))
            })
            .max();
        if let Some(len) = partial {
            data.truncate(data.len() - len);
            data.extend_from_slice(REDACTED.as_bytes());
        }
    }

    /// `text` with every secret replaced.
    pub(crate) fn text(&self, text: &mut String) {
        for secret in self.secrets.iter() {
            if text.contains(secret.as_str()) {
                *text = text.replace(secret.as_str(), REDACTED);
            }
        }
    }

    /// Like [`Self::text`], for text that was cut short (a capped capture of stdout): also
    /// drops a tail that is the start of a secret, so a cut never leaves half a secret.
    pub(crate) fn cut_text(&self, text: &mut String) {
        self.text(text);
        if self.drop_partial_tail(text) {
            text.push_str(REDACTED);
        }
    }

    /// Drops a tail of `text` that is the start of a secret; returns whether it did.
    fn drop_partial_tail(&self, text: &mut String) -> bool {
        let partial = self
            .secrets
            .iter()
            .filter_map(|secret| {
                (1..secret.len()).rev().find(|&len| secret.is_char_boundary(len) && text.ends_with(&secret[..len]))
            })
            .max();
        if let Some(len) = partial {
            text.truncate(text.len() - len);
        }
        partial.is_some()
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

/// Every secret granted to a tool in this process: what [`RedactingWriter`] replaces.
static LOGGED: LazyLock<RwLock<Redactor>> = LazyLock::new(RwLock::default);

/// `text` with JSON string escapes (`\n`, `\"`, `\u0073`, surrogate pairs) decoded, as far
/// as they are well formed; the rest is kept as it is.
fn decode_escapes(text: &str) -> Cow<'_, str> {
    if !text.contains('\\') {
        return Cow::Borrowed(text);
    }
    let mut decoded = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        decoded.push_str(&rest[..at]);
        rest = &rest[at..];
        let (character, len) = match rest.as_bytes().get(1) {
            Some(b'"') => (Some('"'), 2),
            Some(b'\\') => (Some('\\'), 2),
            Some(b'/') => (Some('/'), 2),
            Some(b'b') => (Some('\u{8}'), 2),
            Some(b'f') => (Some('\u{c}'), 2),
            Some(b'n') => (Some('\n'), 2),
            Some(b'r') => (Some('\r'), 2),
            Some(b't') => (Some('\t'), 2),
            Some(b'u') => unicode_escape(rest),
            _ => (None, 1),
        };
        match character {
            Some(character) => decoded.push(character),
            None => decoded.push_str(&rest[..len]),
        }
        rest = &rest[len..];
    }
    decoded.push_str(rest);
    Cow::Owned(decoded)
}

/// The character of a `\uXXXX` escape (or a surrogate pair of two) at the start of `text`,
/// and the bytes it takes; `(None, 1)` when it is not one.
fn unicode_escape(text: &str) -> (Option<char>, usize) {
    let unit = |at: usize| {
        text.get(at..at + 6)
            .filter(|escape| escape.starts_with("\\u"))
            .and_then(|escape| u16::from_str_radix(&escape[2..], 16).ok())
    };
    match unit(0) {
        Some(high @ 0xD800..=0xDBFF) => match unit(6) {
            Some(low @ 0xDC00..=0xDFFF) => (char::decode_utf16([high, low]).next().and_then(Result::ok), 12),
            _ => (None, 1),
        },
        Some(unit) => match char::from_u32(u32::from(unit)) {
            Some(character) => (Some(character), 6),
            None => (None, 1),
        },
        None => (None, 1),
    }
}

/// A writer for log output that replaces every secret granted to a tool in this process (in
/// the spellings [`REDACTED`] replaces everywhere) before it writes to `inner`.
///
/// It holds what it is given until it is flushed or dropped, so a secret split across writes
/// is still caught: make one per log line, as `tracing-subscriber`'s `fmt` layer does with
/// `.with_writer(|| RedactingWriter::new(std::io::stderr()))`. Log lines of the runtime
/// itself are redacted where they are made; this catches what other libraries log (an MCP
/// library logging whole requests at `debug`).
#[derive(Debug)]
pub struct RedactingWriter<W: Write> {
    inner: W,
    held: Vec<u8>,
}

impl<W: Write> RedactingWriter<W> {
    /// Writes to `inner`, redacted.
    pub fn new(inner: W) -> Self {
        Self { inner, held: Vec::new() }
    }

    fn write_held(&mut self) -> std::io::Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        let held = std::mem::take(&mut self.held);
        let logged = LOGGED.read().unwrap_or_else(PoisonError::into_inner).clone();
        if logged.is_empty() {
            return self.inner.write_all(&held);
        }
        let mut text =
            String::from_utf8(held).unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned());
        logged.text(&mut text);
        self.inner.write_all(text.as_bytes())
    }
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.held.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.write_held()?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for RedactingWriter<W> {
    fn drop(&mut self) {
        // Nowhere to report a failed log write.
        let _ = self.write_held();
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
    fn a_cut_redacts_first_and_never_leaves_the_start_of_a_secret() {
        let redactor = Redactor::new(["tok-3f9a7c1e55".to_owned()]);
        assert_eq!(redactor.cut("a tok-3f9a7c1e55 b", 100), format!("a {REDACTED} b"));
        // What could be the start of a secret at the cut is dropped, not kept.
        let cut = redactor.cut(&format!("{}tok-3f9a{}", "x".repeat(10), "y".repeat(1000)), 16);
        assert_eq!(cut, format!("{}…", "x".repeat(10)));
        // A secret that starts before the cut and ends after it is redacted whole.
        let cut = redactor.cut(&format!("ab tok-3f9a7c1e55 {}", "z".repeat(1 << 20)), 20);
        assert!(cut.len() <= 20 && !cut.contains("tok-3f9") && cut.ends_with('…'), "{cut}");
        assert_eq!(Redactor::default().cut(&"n".repeat(100), 10), format!("{}…", "n".repeat(7)));
    }

    #[test]
    fn json_text_decodes_escapes_before_redacting() {
        let redactor = Redactor::new(["sk-live-1234".to_owned()]);
        let text = r#"{"key": "\u0073k-live-1234", "pair": "\ud83d\ude00", "bad": "\uzz\"#;
        assert_eq!(redactor.json_text(text, 1000), format!(r#"{{"key": "{REDACTED}", "pair": "😀", "bad": "\uzz\"#));
        assert_eq!(Redactor::default().json_text(text, 1000), text, "nothing to hide: as it was");
    }

    #[test]
    fn a_union_redacts_the_secrets_of_both() {
        let union = Redactor::new(["first-secret".to_owned()]).union(&Redactor::new(["second-secret".to_owned()]));
        let mut text = "first-secret second-secret".to_owned();
        union.text(&mut text);
        assert_eq!(text, format!("{REDACTED} {REDACTED}"));
    }

    #[test]
    fn the_log_writer_redacts_every_granted_secret_even_split_across_writes() {
        let _granted = Redactor::granted(["log-writer-secret-1".to_owned()]);
        let mut out = Vec::new();
        {
            let mut writer = RedactingWriter::new(&mut out);
            writer.write_all(b"the key log-writer-").unwrap();
            writer.write_all(b"secret-1 and \"log-writer-secret-1\"\n").unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), format!("the key {REDACTED} and \"{REDACTED}\"\n"));
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
