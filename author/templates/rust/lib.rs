//! The `{{name}}` tool. Make the example below your own: the function's doc comment is the
//! description a model reads to decide when to call the tool, each parameter's doc comment
//! describes that argument, and the signature becomes the JSON Schema the host checks every
//! call against before the tool runs.
//!
//! `toolcell build` compiles it to a component; `cargo test` runs the tests below natively.

use toolcell_guest::{ToolError, json, tool};

/// What to count.
#[json]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Runs of characters between whitespace.
    Words,
    /// Lines of text.
    Lines,
    /// Characters (Unicode scalar values).
    Characters,
}

/// Count the words, lines or characters in a text. Use it when asked how long a text is.
#[tool(title = "{{title}}", read_only, idempotent)]
pub fn {{function}}(
    /// The text to measure.
    #[schemars(length(min = 1, max = 100_000))]
    text: String,
    /// What to count; words when omitted.
    unit: Option<Unit>,
) -> Result<usize, ToolError> {
    let count = match unit.unwrap_or(Unit::Words) {
        Unit::Words => text.split_whitespace().count(),
        Unit::Lines => text.lines().count(),
        Unit::Characters => text.chars().count(),
    };
    if count == 0 {
        // A tool's own refusal: the model is told to change its arguments.
        return Err(ToolError::invalid_arguments("`text` is only whitespace: give the text to measure"));
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use toolcell_guest::{Context, Tool, ToolError};

    use super::{{tool_struct}};

    fn invoke(arguments: &str) -> Result<String, ToolError> {
        {{tool_struct}}::invoke(arguments, Context::default())
    }

    #[test]
    fn counts_words_unless_told_otherwise() {
        assert_eq!(invoke(r#"{"text": "one two  three"}"#).unwrap(), "3");
        assert_eq!(invoke(r#"{"text": "one\ntwo", "unit": "lines"}"#).unwrap(), "2");
    }

    #[test]
    fn checks_the_arguments_against_the_schema_as_the_host_does() {
        // Natively as in the host, the arguments are checked against the schema before the
        // function runs, and refused in the words a model would read.
        let error = invoke(r#"{"text": ""}"#).unwrap_err();
        let ToolError::InvalidArguments(message) = error else { panic!("{error}") };
        assert!(message.contains("/text: must not be empty"), "{message}");
        let error = invoke(r#"{"text": "a", "unit": "pages"}"#).unwrap_err();
        assert!(error.message().contains("/unit"), "{error}");
    }

    #[test]
    fn refuses_a_text_of_only_whitespace() {
        let error = invoke(r#"{"text": "   "}"#).unwrap_err();
        assert_eq!(error, ToolError::invalid_arguments("`text` is only whitespace: give the text to measure"));
    }
}
