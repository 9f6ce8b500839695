//! A hundred tools generated from an OpenAPI-like description (`tests/guests/api/api.json`, an
//! online shop's back office; see `tests/build/api_tools.rs`): they load as any tool does,
//! announce exactly what their exports say, and code mode's `search` finds the operation a
//! request means among them and the standard tools, for `execute` to call.

use serde_json::{Value, json};
use toolcell_runtime::code_mode::EXECUTE;
use toolcell_runtime::policy::CodeModePolicy;
use toolcell_runtime::{Runtime, ToolCall};
use toolcell_tests::API_TOOLS_DIR;

use crate::common::{COMPILE_CACHE, standard_tools, value};

/// The operations of api.json, by `operationId`.
fn operations() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/guests/api/api.json");
    let api: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("read api.json")).unwrap();
    api["operations"].as_array().unwrap().clone()
}

async fn api_tools() -> Runtime {
    Runtime::builder().tools_dir(API_TOOLS_DIR).compile_cache(COMPILE_CACHE).build().await.expect("runtime builds")
}

#[tokio::test]
async fn every_api_tool_loads_as_its_operation_describes_it() {
    let runtime = api_tools().await;
    assert_eq!(runtime.diagnostics(), &[], "every API tool loads");
    let operations = operations();
    assert_eq!(operations.len(), 100);
    assert_eq!(runtime.definitions().len(), 100);
    for operation in &operations {
        let name = operation["operationId"].as_str().unwrap();
        let tool = runtime.definition(name).unwrap_or_else(|| panic!("`{name}` is loaded"));
        assert_eq!(tool.description, operation["summary"], "{name}");
        assert_eq!(tool.parameters, operation["parameters"], "{name}");
        let read_only = operation["method"] == "GET";
        assert_eq!(tool.annotations.read_only, Some(read_only), "{name}");
        assert_eq!(tool.annotations.destructive, (operation["method"] == "DELETE").then_some(true), "{name}");
    }
}

#[tokio::test]
async fn every_api_tool_announces_what_it_exports() {
    // A cold `toolcell serve` lists the announcement; once compiled, the exports decide, and
    // a difference would change the list under the client.
    let runtime = api_tools().await;
    for tool in runtime.definitions() {
        let file = std::path::Path::new(API_TOOLS_DIR).join(format!("{}.wasm", tool.name));
        let component = std::fs::read(&file).unwrap();
        let section = toolcell_guest_build::metadata_section(&component).expect("a toolcell-metadata section");
        let announced: Value = serde_json::from_slice(section).unwrap();
        let exported: Value = serde_json::from_slice(&runtime.announcement(&tool.name).unwrap()).unwrap();
        assert_eq!(announced, exported, "{}", tool.name);
    }
}

#[tokio::test]
async fn an_api_tool_answers_its_canned_result_to_valid_arguments_only() {
    let runtime = api_tools().await;
    let call = ToolCall::new("1", "orders_get", json!({"order_id": "ord_12345678"}));
    assert_eq!(value(&runtime.call(call).await), json!({"operation": "orders_get", "status": "ok"}));
    let missing = runtime.call(ToolCall::new("2", "orders_get", json!({}))).await;
    assert!(missing.is_error && missing.content.contains("order_id"), "{}", missing.content);
}

#[tokio::test]
async fn search_ranks_the_operation_a_request_means_first_among_107_tools() {
    let runtime = standard_tools().tools_dir(API_TOOLS_DIR).code_mode(CodeModePolicy::new()).build().await.unwrap();
    assert_eq!(runtime.diagnostics(), &[]);
    let code_mode = runtime.code_mode().expect("code mode is on");
    assert_eq!(code_mode.tools().callable().len(), 107, "100 API tools and 7 standard ones (python runs programs)");
    let expected = [
        ("refund a payment", "refunds_create"),
        ("cancel an order", "orders_cancel"),
        ("list a customer's invoices", "invoices_list"),
        ("track a shipment", "shipments_track"),
        ("move stock from one warehouse to another", "inventory_transfer"),
        ("best-selling products last month", "reports_top_products"),
        ("email the invoice PDF to the customer", "invoices_send"),
        ("convert miles to kilometers", "unit_convert"),
    ];
    let missed: Vec<String> = expected
        .iter()
        .filter_map(|&(query, name)| {
            let found: Vec<String> = code_mode.tools().search(query, 3).into_iter().map(|hit| hit.name).collect();
            (found.first().map(String::as_str) != Some(name)).then(|| format!("`{query}`: {found:?}, not {name}"))
        })
        .collect();
    assert!(missed.is_empty(), "not ranked first:\n{}", missed.join("\n"));
}

#[tokio::test]
async fn execute_runs_a_program_that_calls_two_api_tools() {
    let runtime = standard_tools().tools_dir(API_TOOLS_DIR).code_mode(CodeModePolicy::new()).build().await.unwrap();
    let code_mode = runtime.code_mode().expect("code mode is on");
    let code = r#"
cancelled = tools.orders_cancel(order_id="ord_12345678", reason="customer_request")
refunded = tools.refunds_create(payment_id="pay_12345678", reason="requested_by_customer")
[cancelled, refunded]
"#;
    let output = code_mode.call(ToolCall::new("1", EXECUTE, json!({"code": code}))).await;
    let run = value(&output);
    assert_eq!(
        run["value"],
        json!([
            {"operation": "orders_cancel", "status": "accepted"},
            {"operation": "refunds_create", "status": "accepted"},
        ]),
        "{run:#}"
    );
    assert_eq!(output.usage.nested_calls, 2);
}
