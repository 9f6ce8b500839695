//! From the bytes of a (possibly truncated) body to what the model reads: text, parsed JSON,
//! or only a note that binary content is not returned.

use serde_json::value::RawValue;

/// The Unicode replacement character, shown where bytes could not be decoded.
const REPLACEMENT: char = '\u{FFFD}';

/// A parsed `Content-Type`: the media type in lower case and the `charset` parameter.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct MediaType {
    /// `type/subtype`, e.g. `text/html`; `None` when the header is absent or empty.
    pub(crate) essence: Option<String>,
    /// The `charset` parameter in lower case, without quotes.
    pub(crate) charset: Option<String>,
}

impl MediaType {
    /// Parses a `Content-Type` value such as `text/html; charset="UTF-8"`. Lenient: a malformed
    /// value yields whatever parts can be read.
    pub(crate) fn parse(value: Option<&str>) -> Self {
        let Some(value) = value else { return Self::default() };
        let mut parts = value.split(';');
        let essence = parts.next().map(|essence| essence.trim().to_ascii_lowercase()).filter(|e| !e.is_empty());
        let charset = parts.find_map(|parameter| {
            let (name, value) = parameter.split_once('=')?;
            name.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| value.trim().trim_matches(|c| c == '"' || c == '\'').trim().to_ascii_lowercase())
        });
        Self { essence, charset: charset.filter(|charset| !charset.is_empty()) }
    }
}

/// How a media type's body is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Text: decoded and returned.
    Text,
    /// JSON: returned parsed when complete and valid, otherwise as text.
    Json,
    /// Binary: not returned.
    Binary,
    /// Unknown or absent: returned as text if the bytes are UTF-8 text, else treated as binary.
    Sniff,
}

/// `application/` subtypes that are text. (Tables like this one are kept out of rustfmt,
/// which would put every entry on a line of its own.)
#[rustfmt::skip]
const TEXT_APPLICATION_TYPES: &[&str] = &[
    "xml", "javascript", "ecmascript", "x-javascript", "x-ecmascript", "x-ndjson", "ndjson", "jsonl", "json-seq",
    "x-www-form-urlencoded", "yaml", "x-yaml", "toml", "sql", "graphql", "x-sh", "x-csh", "x-tex", "x-latex", "csv",
    "rtf", "x-httpd-php", "x-python", "x-perl",
];

/// `application/` subtypes that are binary.
#[rustfmt::skip]
const BINARY_APPLICATION_TYPES: &[&str] = &[
    "pdf", "zip", "gzip", "x-gzip", "x-tar", "x-bzip2", "x-xz", "zstd", "x-7z-compressed", "x-rar-compressed",
    "vnd.rar", "java-archive", "wasm", "msword", "x-msdownload", "x-executable", "x-sharedlib", "x-mach-binary",
    "x-sqlite3", "vnd.sqlite3", "cbor", "msgpack", "x-msgpack", "protobuf", "x-protobuf", "x-shockwave-flash",
    "postscript", "x-apple-diskimage", "x-iso9660-image", "vnd.android.package-archive", "x-bittorrent", "pkcs12",
    "x-pkcs12", "vnd.apache.parquet", "x-parquet", "vnd.apache.arrow.file",
];

/// Prefixes of `application/` subtypes that are binary: office documents.
const BINARY_APPLICATION_PREFIXES: &[&str] = &["vnd.ms-", "vnd.openxmlformats-", "vnd.oasis.opendocument."];

/// Classifies a media type (lower case, no parameters).
pub(crate) fn classify(essence: Option<&str>) -> Kind {
    let Some(essence) = essence else { return Kind::Sniff };
    let Some((top, subtype)) = essence.split_once('/') else { return Kind::Sniff };
    // A structured-syntax suffix says what the bytes are, whatever the top-level type:
    // `image/svg+xml` is text, `application/epub+zip` is not.
    if let Some((_, suffix)) = subtype.rsplit_once('+') {
        match suffix {
            "json" => return Kind::Json,
            "xml" | "yaml" | "toml" => return Kind::Text,
            "zip" | "gzip" | "cbor" | "der" | "wbxml" | "sqlite3" => return Kind::Binary,
            _ => {}
        }
    }
    match top {
        "text" | "message" => Kind::Text,
        "image" | "audio" | "video" | "font" | "model" => Kind::Binary,
        "application" if subtype == "json" => Kind::Json,
        "application" if TEXT_APPLICATION_TYPES.contains(&subtype) => Kind::Text,
        "application"
            if BINARY_APPLICATION_TYPES.contains(&subtype)
                || BINARY_APPLICATION_PREFIXES.iter().any(|prefix| subtype.starts_with(prefix)) =>
        {
            Kind::Binary
        }
        // Anything else, `application/octet-stream` included (servers use it for any file they
        // cannot name, source code and Markdown too): look at the bytes.
        _ => Kind::Sniff,
    }
}

/// Whether `bytes` look like text: UTF-8 (an incomplete character at the end is allowed when
/// the body was `truncated` there) without NULs or other control characters than tab, line
/// breaks, form feed and escape.
pub(crate) fn looks_like_text(bytes: &[u8], truncated: bool) -> bool {
    let mut chunks = bytes.utf8_chunks().peekable();
    while let Some(chunk) = chunks.next() {
        let controls =
            chunk.valid().chars().any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\x0c' | '\x1b'));
        if controls {
            return false;
        }
        let invalid = chunk.invalid();
        let cut_at_the_end = chunks.peek().is_none() && truncated && is_incomplete_utf8(invalid);
        if !invalid.is_empty() && !cut_at_the_end {
            return false;
        }
    }
    true
}

/// Whether `bytes` (at most 3) are the start of a UTF-8 character cut off before its end.
fn is_incomplete_utf8(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).err().is_some_and(|error| error.error_len().is_none())
}

/// The text of a body and what the model should know about how it was decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decoded {
    pub(crate) text: String,
    pub(crate) note: Option<String>,
}

/// The encodings the tool converts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Utf8,
    /// Also used for `us-ascii` and `iso-8859-1`, as browsers do (the WHATWG Encoding
    /// standard maps those labels to it): it agrees with both on every byte they define.
    Windows1252,
    Utf16Le,
    Utf16Be,
}

/// Decodes a text body. A byte-order mark wins over `charset`, as in browsers; without either,
/// the body is UTF-8 if it decodes as such, else windows-1252. When `truncated`, a character
/// cut in two at the end is dropped rather than shown as a replacement character.
pub(crate) fn decode(bytes: &[u8], charset: Option<&str>, truncated: bool) -> Decoded {
    let (encoding, bytes, mut note) = if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        (Encoding::Utf8, rest, None)
    } else if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        (Encoding::Utf16Le, rest, None)
    } else if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        (Encoding::Utf16Be, rest, None)
    } else {
        match charset {
            None if looks_like_utf8(bytes, truncated) => (Encoding::Utf8, bytes, None),
            None => (
                Encoding::Windows1252,
                bytes,
                Some("no charset was declared and the body is not UTF-8: it was decoded as windows-1252".to_owned()),
            ),
            Some(label) => match encoding_for_label(label) {
                Some(encoding) => (encoding, bytes, None),
                None => (
                    Encoding::Utf8,
                    bytes,
                    Some(format!(
                        "the body declares charset `{label}`, which the tool does not convert: it was decoded as \
                         UTF-8, so non-ASCII characters may be wrong"
                    )),
                ),
            },
        }
    };
    let (text, replaced) = match encoding {
        Encoding::Utf8 => decode_utf8(bytes, truncated),
        Encoding::Windows1252 => (bytes.iter().map(|&byte| windows_1252(byte)).collect(), 0),
        Encoding::Utf16Le => decode_utf16(bytes, truncated, u16::from_le_bytes),
        Encoding::Utf16Be => decode_utf16(bytes, truncated, u16::from_be_bytes),
    };
    if replaced > 0 {
        let replaced_note = format!("{replaced} undecodable byte sequence(s) are shown as U+FFFD");
        note = Some(match note {
            Some(note) => format!("{note}; {replaced_note}"),
            None => replaced_note,
        });
    }
    Decoded { text, note }
}

/// The encoding a `charset` label names, for the labels the tool converts (WHATWG names).
fn encoding_for_label(label: &str) -> Option<Encoding> {
    match label {
        "utf-8" | "utf8" | "unicode-1-1-utf-8" | "unicode11utf8" | "unicode20utf8" | "x-unicode20utf8" => {
            Some(Encoding::Utf8)
        }
        "us-ascii" | "ascii" | "ansi_x3.4-1968" | "iso-8859-1" | "iso8859-1" | "iso88591" | "iso_8859-1"
        | "iso_8859-1:1987" | "latin1" | "l1" | "cp819" | "ibm819" | "iso-ir-100" | "csisolatin1" | "windows-1252"
        | "cp1252" | "x-cp1252" => Some(Encoding::Windows1252),
        "utf-16" | "utf-16le" | "unicode" | "ucs-2" | "csunicode" | "iso-10646-ucs-2" | "unicodefeff" => {
            Some(Encoding::Utf16Le)
        }
        "utf-16be" | "unicodefffe" => Some(Encoding::Utf16Be),
        _ => None,
    }
}

/// Whether `bytes` are valid UTF-8, allowing a character cut off at the end when `truncated`.
fn looks_like_utf8(bytes: &[u8], truncated: bool) -> bool {
    match std::str::from_utf8(bytes) {
        Ok(_) => true,
        Err(error) => truncated && error.error_len().is_none(),
    }
}

/// UTF-8 with invalid sequences replaced; returns the text and how many were replaced.
fn decode_utf8(bytes: &[u8], truncated: bool) -> (String, usize) {
    let mut text = String::with_capacity(bytes.len());
    let mut replaced = 0;
    let mut chunks = bytes.utf8_chunks().peekable();
    while let Some(chunk) = chunks.next() {
        text.push_str(chunk.valid());
        let invalid = chunk.invalid();
        if invalid.is_empty() || (chunks.peek().is_none() && truncated && is_incomplete_utf8(invalid)) {
            continue;
        }
        text.push(REPLACEMENT);
        replaced += 1;
    }
    (text, replaced)
}

/// UTF-16 in the byte order `unit` reads; returns the text and how many units were replaced.
fn decode_utf16(bytes: &[u8], truncated: bool, unit: fn([u8; 2]) -> u16) -> (String, usize) {
    let mut units: Vec<u16> = bytes.chunks_exact(2).map(|pair| unit([pair[0], pair[1]])).collect();
    let odd_byte = bytes.len() % 2 == 1;
    if truncated && units.last().is_some_and(|&last| (0xD800..0xDC00).contains(&last)) {
        // A high surrogate whose partner was cut off.
        units.pop();
    }
    let mut replaced = 0;
    let mut text: String = char::decode_utf16(units)
        .map(|decoded| {
            decoded.unwrap_or_else(|_| {
                replaced += 1;
                REPLACEMENT
            })
        })
        .collect();
    if odd_byte && !truncated {
        text.push(REPLACEMENT);
        replaced += 1;
    }
    (text, replaced)
}

/// One windows-1252 byte as a character. The five bytes the encoding leaves undefined map to
/// the C1 controls of the same value, as in the WHATWG standard.
fn windows_1252(byte: u8) -> char {
    const HIGH: [char; 32] = [
        '\u{20AC}', '\u{0081}', '\u{201A}', '\u{0192}', '\u{201E}', '\u{2026}', '\u{2020}', '\u{2021}', '\u{02C6}',
        '\u{2030}', '\u{0160}', '\u{2039}', '\u{0152}', '\u{008D}', '\u{017D}', '\u{008F}', '\u{0090}', '\u{2018}',
        '\u{2019}', '\u{201C}', '\u{201D}', '\u{2022}', '\u{2013}', '\u{2014}', '\u{02DC}', '\u{2122}', '\u{0161}',
        '\u{203A}', '\u{0153}', '\u{009D}', '\u{017E}', '\u{0178}',
    ];
    match byte {
        0x80..=0x9F => HIGH[usize::from(byte - 0x80)],
        _ => char::from(byte),
    }
}

/// A complete JSON body, validated and kept exactly as sent; the parse error otherwise.
pub(crate) fn parse_json(text: &str) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::from_str::<Box<RawValue>>(text)
}
