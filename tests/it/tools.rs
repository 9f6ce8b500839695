//! The five standard tools, end to end through the runtime.

use serde_json::json;

use crate::common::{call, kind, runtime, value};

#[tokio::test]
async fn all_five_standard_tools_load_with_valid_definitions() {
    for name in ["calculator", "json_query", "regex", "datetime", "unit_convert"] {
        let definition = runtime().definition(name).unwrap_or_else(|| panic!("{name} is loaded"));
        assert_eq!(definition.version, "1.0.0");
        assert_eq!(definition.parameters["type"], "object");
        assert!(definition.parameters["required"].is_array(), "{name} always lists required properties");
    }
}

#[tokio::test]
async fn calculator_evaluates_and_names_the_position_of_errors() {
    assert_eq!(value(&call("calculator", json!({"expression": "2 * (3 + 4)"})).await)["value"], json!(14.0));
    let output = call("calculator", json!({"expression": "1 / (2 - 2)"})).await;
    assert_eq!(kind(&output), "rejected_arguments");
    assert!(output.content.contains("column"), "{}", output.content);
}
