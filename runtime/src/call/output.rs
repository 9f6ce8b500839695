//! A tool's result held to its contract: JSON, the output size limit and the output schema,
//! with secrets redacted first, so the checks see exactly what the model will read.

use serde_json::Value;

use crate::redact::Redactor;
use crate::tool::error::CallError;
use toolcell_schema::{CompiledSchema, OutputReport};

/// The result as the model will read it, or why it cannot be given to the model.
pub(crate) fn check_output(
    result: String,
    schema: Option<&CompiledSchema>,
    max_bytes: u64,
    redactor: &Redactor,
) -> Result<String, CallError> {
    let too_large = |size: usize| CallError::OutputTooLarge { size: size as u64, limit: max_bytes };
    // Without secrets the text is final: refuse an oversized result before parsing it.
    if redactor.is_empty() && result.len() as u64 > max_bytes {
        return Err(too_large(result.len()));
    }
    let value: Value = serde_json::from_str(&result)
        .map_err(|err| CallError::InvalidOutput { reason: format!("it is not JSON ({err})") })?;
    // The unredacted value is kept only when redaction changed something: to tell whether
    // redaction alone broke the output schema.
    let (value, original) = match redact(value, redactor) {
        Redacted::Unchanged(value) => (value, None),
        Redacted::Changed { redacted, original } => (redacted, Some(original)),
    };
    let text = if original.is_some() { value.to_string() } else { result };
    if text.len() as u64 > max_bytes {
        return Err(too_large(text.len()));
    }
    if let Some(schema) = schema {
        check_schema(schema, &value, original.as_ref())?;
    }
    Ok(text)
}

enum Redacted {
    Unchanged(Value),
    Changed { redacted: Value, original: Value },
}

/// The value with secrets replaced; copied only when the tool has secrets.
fn redact(value: Value, redactor: &Redactor) -> Redacted {
    if redactor.is_empty() {
        return Redacted::Unchanged(value);
    }
    let mut redacted = value.clone();
    if redactor.json(&mut redacted) {
        Redacted::Changed { redacted, original: value }
    } else {
        Redacted::Unchanged(value)
    }
}

/// Checks the redacted result against the output schema. When only redaction broke it
/// (`original` passes), says so rather than blaming the tool's result.
fn check_schema(schema: &CompiledSchema, redacted: &Value, original: Option<&Value>) -> Result<(), CallError> {
    let violations = schema.violations(redacted);
    if violations.is_empty() {
        return Ok(());
    }
    if original.is_some_and(|original| schema.violations(original).is_empty()) {
        return Err(CallError::InvalidOutput {
            reason: "it contains a secret value, and with the secret replaced by [REDACTED] it no longer matches the \
                     tool's output schema, so it was withheld"
                .into(),
        });
    }
    Err(CallError::InvalidOutput { reason: OutputReport(&violations).to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(text: &str) -> CompiledSchema {
        CompiledSchema::compile(text).expect("a schema").1
    }

    #[test]
    fn redaction_comes_before_the_size_check() {
        let redactor = Redactor::new(["x".repeat(8)]);
        // Every 8-byte secret becomes the 10 bytes of [REDACTED]: the text the model would
        // read is over the limit although the tool's own result was not.
        let short = serde_json::Value::from(vec!["xxxxxxxx"; 50]).to_string();
        let limit = short.len() as u64 + 1;
        assert!(matches!(check_output(short, None, limit, &redactor), Err(CallError::OutputTooLarge { .. })));
    }

    #[test]
    fn redaction_that_breaks_the_output_schema_fails_the_call_saying_so() {
        let redactor = Redactor::new(["12345678".to_owned()]);
        let numbers = schema(r#"{"type": "object", "properties": {"value": {"type": "number"}}}"#);
        let err = check_output(r#"{"value": 12345678}"#.into(), Some(&numbers), 1000, &redactor).expect_err("withheld");
        let CallError::InvalidOutput { reason } = err else { panic!("{err:?}") };
        assert!(reason.contains("secret"), "{reason}");
        assert_eq!(
            check_output(r#"{"value": 42}"#.into(), Some(&numbers), 1000, &redactor).as_deref(),
            Ok(r#"{"value": 42}"#)
        );
    }

    #[test]
    fn violation_messages_never_quote_a_secret() {
        let secret = r#"s3cr"et\value"#;
        let redactor = Redactor::new([secret.to_owned()]);
        let strings = schema(r#"{"type": "object", "properties": {"value": {"type": "integer"}}}"#);
        let result = serde_json::json!({"value": secret}).to_string();
        let err = check_output(result, Some(&strings), 1000, &redactor).expect_err("invalid");
        let text = format!("{err} {err:?}");
        assert!(!text.contains("s3cr"), "{text}");
    }
}
