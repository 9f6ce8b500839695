//! Turning what the model sent into the JSON object a tool receives.

use std::io;

use serde_json::Value;

use crate::tool::error::CallError;
use crate::tool::io::Arguments;
use crate::tool::limits::Limits;
use toolcell_schema::CompiledSchema;

/// Parses the arguments, enforcing the size limit before anything else is done with them.
///
/// Empty or all-whitespace text counts as `{}`: providers send it for tools without
/// parameters.
pub(crate) fn parse(arguments: Arguments, max_bytes: u64) -> Result<Value, CallError> {
    match arguments {
        Arguments::Json(text) => {
            check_size(text.len() as u64, max_bytes)?;
            if text.trim().is_empty() {
                return Ok(Value::Object(Default::default()));
            }
            serde_json::from_str(&text).map_err(|err| CallError::MalformedArguments {
                error: json_error_message(&err),
                line: err.line(),
                column: err.column(),
            })
        }
        Arguments::Value(value) => {
            check_size(serialized_len(&value), max_bytes)?;
            // Text is held to serde_json's nesting limit while parsing; hold values to the same.
            if nesting_depth_exceeds(&value, MAX_NESTING) {
                return Err(CallError::MalformedArguments {
                    error: format!("the arguments nest deeper than {MAX_NESTING} levels"),
                    line: 1,
                    column: 1,
                });
            }
            Ok(value)
        }
    }
}

/// serde_json's recursion limit when parsing text.
const MAX_NESTING: usize = 128;

/// Whether arrays and objects nest deeper than `max`, checked without recursion.
fn nesting_depth_exceeds(value: &Value, max: usize) -> bool {
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth + 1 > max {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

fn check_size(size: u64, limit: u64) -> Result<(), CallError> {
    if size > limit { Err(CallError::ArgumentsTooLarge { size, limit }) } else { Ok(()) }
}

/// serde_json's message without its trailing " at line L column C" (reported separately).
fn json_error_message(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(cut) => text[..cut].to_owned(),
        None => text,
    }
}

/// The length of `value` as compact JSON, without building the string.
fn serialized_len(value: &Value) -> u64 {
    struct Counter(u64);
    impl io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing a Value to an infallible writer cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// The arguments as one JSON value within the size limit, checked against the tool's schema.
pub(crate) fn parse_and_validate(
    arguments: Arguments,
    parameters: &CompiledSchema,
    limits: &Limits,
) -> Result<Value, CallError> {
    let arguments = parse(arguments, limits.max_argument_bytes)?;
    let violations = parameters.violations(&arguments);
    if violations.is_empty() { Ok(arguments) } else { Err(CallError::InvalidArguments { violations }) }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn malformed_json_reports_line_and_column() {
        let err = parse(Arguments::from("{\n  \"a\": 1,\n  \"b\": }"), 1000).unwrap_err();
        match err {
            CallError::MalformedArguments { line, column, error } => {
                assert_eq!((line, column), (3, 8));
                assert!(error.contains("expected value"), "{error}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn empty_text_is_an_empty_object() {
        assert_eq!(parse(Arguments::from("  "), 10).unwrap(), json!({}));
    }

    #[test]
    fn size_is_checked_for_text_and_values() {
        let text = Arguments::from(r#"{"a": "0123456789"}"#);
        assert!(matches!(parse(text, 10), Err(CallError::ArgumentsTooLarge { size: 19, limit: 10 })));
        let value = Arguments::from(json!({"a": "0123456789"}));
        assert!(matches!(parse(value, 10), Err(CallError::ArgumentsTooLarge { size: 18, limit: 10 })));
    }

    #[test]
    fn deeply_nested_values_are_refused() {
        let mut value = json!(1);
        for _ in 0..200 {
            value = json!([value]);
        }
        assert!(matches!(parse(Arguments::from(value), u64::MAX), Err(CallError::MalformedArguments { .. })));
        assert!(parse(Arguments::from(json!({"a": [[[1]]]})), u64::MAX).is_ok());
    }

    #[test]
    fn deep_nesting_is_malformed_not_a_crash() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(matches!(parse(Arguments::from(deep), u64::MAX), Err(CallError::MalformedArguments { .. })));
    }
}
