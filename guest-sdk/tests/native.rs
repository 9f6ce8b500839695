//! A tool called natively checks its arguments and result against its own schemas, as the
//! host does, and refuses what the host would refuse in the host's words.

use toolcell_guest::{Context, Tool, ToolError, json, tool};

/// A page of results.
#[json]
pub struct Page {
    /// The items on it.
    pub items: Vec<String>,
    /// How many there are: at most 3, the declared contract.
    #[schemars(range(max = 3))]
    pub total: u32,
}

/// Repeat a word. Use it to make a list.
#[tool(output_schema)]
pub fn repeat(
    /// The word.
    #[schemars(length(min = 1, max = 10))]
    word: String,
    /// How many times.
    #[schemars(range(min = 1, max = 5))]
    count: u32,
) -> Result<Page, ToolError> {
    // Counts of 4 and 5 break the output schema's `total` maximum: a bug the host would catch.
    Ok(Page { items: vec![word; count as usize], total: count })
}

fn invoke(arguments: &str) -> Result<String, ToolError> {
    RepeatTool::invoke(arguments, Context::default())
}

#[test]
fn arguments_within_the_schema_reach_the_function() {
    assert_eq!(invoke(r#"{"word": "hi", "count": 2}"#).unwrap(), r#"{"items":["hi","hi"],"total":2}"#);
}

#[test]
fn a_value_out_of_range_is_refused_as_the_host_refuses_it() {
    // Serde alone accepts `count: 0`; the schema's minimum does not.
    let error = invoke(r#"{"word": "hi", "count": 0}"#).unwrap_err();
    assert_eq!(
        error,
        ToolError::invalid_arguments(
            "The arguments do not match the tool's parameters schema (1 problem):\n\
             - /count: must be at least 1; got 0\n\
             Fix these and call the tool again."
        )
    );
}

#[test]
fn every_violation_is_listed_with_its_pointer() {
    let error = invoke(r#"{"word": "", "count": 9, "extra": true}"#).unwrap_err();
    let ToolError::InvalidArguments(message) = &error else { panic!("{error:?}") };
    assert!(message.contains("(3 problems)"), "{message}");
    for pointer in ["/word", "/count", "extra"] {
        assert!(message.contains(pointer), "{pointer} in {message}");
    }
}

#[test]
fn arguments_that_are_not_json_are_refused_with_what_to_send() {
    let error = invoke("{word: hi}").unwrap_err();
    let ToolError::InvalidArguments(message) = &error else { panic!("{error:?}") };
    assert!(message.starts_with("The arguments are not valid JSON"), "{message}");
}

#[test]
fn a_result_that_breaks_the_output_schema_fails_as_the_host_would_report_it() {
    let error = invoke(r#"{"word": "a", "count": 4}"#).unwrap_err();
    assert_eq!(
        error,
        ToolError::failed(
            "the tool returned an invalid result: it does not match the tool's output schema \
             (at `/total`: must be at most 3; got 4); a host would report it as `invalid_output`"
        )
    );
}
