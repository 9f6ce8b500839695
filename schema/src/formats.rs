//! The string formats JSON Schema defines, each with the plain words a model reads for it.
//!
//! This is the one list of them in toolcell: the explainer says "must be a date like
//! 2024-03-10" from it, and the host asks [`is_standard`] which `format`s it checks. The
//! Python and JavaScript SDKs hold copies, which the shared test corpus
//! (`schema/corpus/formats.json`) keeps equal to this table.
//!
//! The integer and float formats schemars writes for Rust types (`uint32`, `int8`, `double`,
//! ...) are not in it: JSON Schema does not define them, and the explainer reads them as
//! bounds on a number instead.

/// Every format of JSON Schema 2020-12's format vocabulary, in the specification's order,
/// with what a value of it looks like, in words.
pub const STANDARD: &[(&str, &str)] = &[
    ("date-time", "a date-time like 2024-03-10T08:30:00Z"),
    ("date", "a date like 2024-03-10"),
    ("time", "a time like 08:30:00Z"),
    ("duration", "an ISO 8601 duration like P1DT2H"),
    ("email", "an email address"),
    ("idn-email", "an email address"),
    ("hostname", "a host name"),
    ("idn-hostname", "a host name"),
    ("ipv4", "an IPv4 address"),
    ("ipv6", "an IPv6 address"),
    ("uri", "an absolute URI"),
    ("uri-reference", "a URI or relative reference"),
    ("iri", "an absolute URI"),
    ("iri-reference", "a URI or relative reference"),
    ("uuid", "a UUID"),
    ("uri-template", "a URI template"),
    ("json-pointer", "a JSON Pointer like /a/0"),
    ("relative-json-pointer", "a relative JSON Pointer like 1/a"),
    ("regex", "a valid regular expression"),
];

/// Whether `format` is one JSON Schema 2020-12 defines (`date-time`, `email`, `uuid`, ...),
/// as opposed to a tool's own or an integer format such as `uint32`. Case matters:
/// `Date` is not `date`.
#[must_use]
pub fn is_standard(format: &str) -> bool {
    words(format).is_some()
}

/// What a value of a standard `format` looks like, for a model: `"a date like 2024-03-10"`
/// for `date`. `None` for a format JSON Schema does not define.
#[must_use]
pub fn words(format: &str) -> Option<&'static str> {
    STANDARD.iter().find(|(name, _)| *name == format).map(|(_, words)| *words)
}

/// The range of schemars' integer formats (`uint8` ... `uint64`, `int8` ... `int32`), where
/// it says more than "an integer": `(low, high)`, either open; `(None, None)` for any other
/// format. `uint64` is `(Some(0), None)`.
#[must_use]
pub fn integer_range(format: &str) -> (Option<i64>, Option<i64>) {
    match format {
        "uint8" => (Some(0), Some(u8::MAX.into())),
        "uint16" => (Some(0), Some(u16::MAX.into())),
        "uint32" => (Some(0), Some(u32::MAX.into())),
        "uint" | "uint64" | "uint128" | "usize" => (Some(0), None),
        "int8" => (Some(i8::MIN.into()), Some(i8::MAX.into())),
        "int16" => (Some(i16::MIN.into()), Some(i16::MAX.into())),
        "int32" => (Some(i32::MIN.into()), Some(i32::MAX.into())),
        _ => (None, None),
    }
}

/// schemars' float formats: they say no more than "a number".
pub(crate) fn is_float(format: &str) -> bool {
    matches!(format, "float" | "double")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 2020-12 format vocabulary, as the runtime's `is_checked_format` lists it.
    const VOCABULARY: [&str; 19] = [
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    ];

    #[test]
    fn the_standard_formats_are_exactly_the_vocabulary() {
        let names: Vec<&str> = STANDARD.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, VOCABULARY);
        assert!(VOCABULARY.iter().all(|format| is_standard(format)));
    }

    #[test]
    fn other_formats_are_not_standard() {
        for format in ["uint32", "int64", "double", "float", "color", "Date", "", "date-time "] {
            assert!(!is_standard(format), "{format}");
            assert_eq!(words(format), None, "{format}");
        }
    }

    #[test]
    fn every_standard_format_has_words() {
        assert_eq!(words("date"), Some("a date like 2024-03-10"));
        assert!(STANDARD.iter().all(|(_, words)| words.starts_with("a ") || words.starts_with("an ")));
    }

    #[test]
    fn integer_formats_are_ranges() {
        assert_eq!(integer_range("uint8"), (Some(0), Some(255)));
        assert_eq!(integer_range("int32"), (Some(-2_147_483_648), Some(2_147_483_647)));
        assert_eq!(integer_range("usize"), (Some(0), None));
        assert_eq!(integer_range("int64"), (None, None));
        assert!(is_float("double") && !is_float("uint8"));
    }
}
