//! Titles and behaviour hints (the `tool-annotations` export, 0.1.2): declared, derived for
//! tools that say nothing, and checked at load.

use serde_json::json;
use toolcell_runtime::{Runtime, policy::Grants, tool::ToolAnnotations};

use crate::common::{COMPILE_CACHE, runtime};

fn hints(
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
) -> ToolAnnotations {
    let mut annotations = ToolAnnotations::default();
    annotations.read_only = read_only;
    annotations.destructive = destructive;
    annotations.idempotent = idempotent;
    annotations.open_world = open_world;
    annotations
}

#[tokio::test]
async fn a_tool_declares_a_title_and_every_hint() {
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::ANNOTATED)
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    assert_eq!(runtime.diagnostics(), &[]);
    let definition = runtime.definition("annotated").unwrap();
    assert_eq!(definition.title.as_deref(), Some("Annotated tool"), "trimmed");
    // It requests an HTTP host, but what it declares wins over what would be derived.
    assert_eq!(runtime.requested("annotated").unwrap().http_hosts, ["example.com"]);
    assert_eq!(definition.annotations, hints(Some(false), Some(false), Some(true), Some(false)));

    let serialized = serde_json::to_value(definition).unwrap();
    assert_eq!(serialized["title"], "Annotated tool");
    assert_eq!(
        serialized["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false})
    );
}

#[tokio::test]
async fn a_tool_built_before_annotations_loads_with_none_and_a_derived_closed_world() {
    // `table_bomb` exports only the 0.1.0 `tool-core` world.
    let definition = runtime().definition("table_bomb").unwrap();
    assert_eq!(definition.title, None);
    assert_eq!(definition.annotations, hints(None, None, None, Some(false)), "no hosts requested: a closed world");

    let serialized = serde_json::to_value(definition).unwrap();
    assert!(serialized.get("title").is_none(), "{serialized}");
    assert_eq!(serialized["annotations"], json!({"openWorldHint": false}));
}

#[tokio::test]
async fn a_tool_requesting_http_hosts_and_saying_nothing_is_open_world() {
    assert_eq!(runtime().requested("http_fields_bomb").unwrap().http_hosts, ["example.com"]);
    let definition = runtime().definition("http_fields_bomb").unwrap();
    assert_eq!(definition.title, None);
    assert_eq!(definition.annotations, hints(None, None, None, Some(true)));
    // A tool with the export that declares nothing is derived the same way.
    assert_eq!(runtime().definition("echo").unwrap().annotations, hints(None, None, None, Some(false)));
}

#[tokio::test]
async fn a_tool_granted_http_hosts_and_saying_nothing_is_open_world() {
    let grants = Grants::new().allow_host("example.com".parse().unwrap());
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::ECHO)
        .compile_cache(COMPILE_CACHE)
        .grant("echo", grants)
        .build()
        .await
        .unwrap();
    assert!(runtime.requested("echo").unwrap().http_hosts.is_empty());
    assert_eq!(runtime.definition("echo").unwrap().annotations, hints(None, None, None, Some(true)));
}

#[tokio::test]
async fn an_annotations_export_of_the_wrong_type_is_a_load_diagnostic() {
    let runtime = Runtime::builder().component_file(toolcell_tests::WRONG_ANNOTATIONS).build().await.unwrap();
    assert_eq!(runtime.definitions().len(), 0);
    let [diagnostic] = runtime.diagnostics() else { panic!("{:#?}", runtime.diagnostics()) };
    assert!(diagnostic.reason.contains("exports `annotations` with the wrong type"), "{}", diagnostic.reason);
    assert!(diagnostic.reason.contains("rebuild it with the current toolcell-guest"), "{}", diagnostic.reason);
}

#[tokio::test]
async fn a_bad_title_or_contradictory_hints_are_load_diagnostics() {
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::BAD_TITLE)
        .component_file(toolcell_tests::CONTRADICTORY_HINTS)
        .compile_cache(COMPILE_CACHE)
        .build()
        .await
        .unwrap();
    assert_eq!(runtime.definitions().len(), 0);
    assert_eq!(runtime.diagnostics().len(), 2, "{:#?}", runtime.diagnostics());
    let reason = |file: &str| {
        let diagnostic = runtime.diagnostics().iter().find(|diagnostic| diagnostic.source.ends_with(file));
        diagnostic.unwrap_or_else(|| panic!("no diagnostic for {file}: {:#?}", runtime.diagnostics())).reason.as_str()
    };
    assert_eq!(
        reason("bad_title.wasm"),
        "tool `bad_title` has a title containing the control character U+000A: a title is one line of plain text; \
         remove it"
    );
    assert_eq!(
        reason("contradictory_hints.wasm"),
        "tool `contradictory_hints` declares itself both read-only and destructive, which contradict each other: \
         a read-only tool changes nothing. Declare only the one that is true"
    );
}
