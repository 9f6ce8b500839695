//! Tools listed before they compile: each component's `toolcell-metadata` section announces its
//! tool, a runtime that is still loading ([`RuntimeBuilder::start`]) lists what they announce
//! and compiles the tool a call needs next, and once compiled, the exports decide.
//!
//! [`RuntimeBuilder::start`]: toolcell_runtime::RuntimeBuilder::start

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use toolcell_runtime::load::LoadEvent;
use toolcell_runtime::{Runtime, ToolCall};

/// The standard tools' announcements, written into their components by their build.
const DEFINITIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/definitions.json");

/// An empty compile cache of its own: every component compiles.
fn empty_cache(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolcell-it-announce-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn remove_cache(cache: &Path) {
    let _ = std::fs::remove_dir_all(cache);
    let _ = std::fs::remove_file(cache.with_extension("key"));
}

/// `guest`'s component, announcing what the shared runtime loaded from it (with `edit` made).
fn announcing(guest: &str, tool: &str, edit: impl FnOnce(&mut Map<String, Value>)) -> Vec<u8> {
    let payload = crate::common::runtime().announcement(tool).expect("loaded");
    let mut announcement: Map<String, Value> = serde_json::from_slice(&payload).unwrap();
    edit(&mut announcement);
    let bytes = std::fs::read(guest).unwrap();
    toolcell_guest_build::with_metadata_section(&bytes, &serde_json::to_vec(&announcement).unwrap())
}

#[test]
fn standard_tools_announce_what_they_export() {
    let runtime = crate::common::runtime();
    let mut exported = Map::new();
    for (file, _) in toolcell_tools::ALL {
        let name = file.trim_end_matches(".wasm");
        let payload = runtime.announcement(name).expect("a standard tool is loaded");
        exported.insert(name.to_owned(), serde_json::from_slice(&payload).unwrap());
    }
    let exported = Value::Object(exported);
    if std::env::var_os("UPDATE_DEFINITIONS").is_some() {
        std::fs::write(DEFINITIONS, serde_json::to_string_pretty(&exported).unwrap() + "\n").unwrap();
    }
    let written: Value = serde_json::from_str(&std::fs::read_to_string(DEFINITIONS).unwrap()).unwrap();
    assert!(
        written == exported,
        "tools/definitions.json is not what the standard tools export: run this test with UPDATE_DEFINITIONS=1, \
         then build again"
    );
    for (file, bytes) in toolcell_tools::ALL {
        let name = file.trim_end_matches(".wasm");
        let section = toolcell_guest_build::metadata_section(bytes).unwrap_or_else(|| panic!("{file} announces"));
        let announced: Value = serde_json::from_slice(section).unwrap();
        assert_eq!(announced, exported[name], "{file} announces what it exports");
    }
}

#[tokio::test]
async fn a_cold_start_lists_announced_tools_and_the_exports_decide() {
    let cache = empty_cache("lies");
    let lying = announcing(toolcell_tests::ECHO, "echo", |announcement| {
        announcement.insert("description".into(), json!("Deletes every file."));
    });
    let renamed = announcing(toolcell_tests::COUNTER, "counter", |announcement| {
        announcement.insert("name".into(), json!("counter_v2"));
    });
    let loading = Runtime::builder()
        .component_bytes("echo.wasm", lying)
        .component_bytes("counter.wasm", renamed)
        .compile_cache(&cache)
        .start()
        .await
        .unwrap();
    for tool in loading.tools().await.unwrap() {
        let description = &tool.definition.description;
        match (tool.definition.name.as_str(), tool.compiled) {
            ("echo", false) => assert_eq!(description, "Deletes every file.", "listed as announced"),
            ("counter_v2", false) | ("counter", true) => {}
            ("echo", true) => assert_ne!(description, "Deletes every file.", "once compiled, the exports decide"),
            other => panic!("{other:?} listed"),
        }
    }
    // A call to a name only announced: its component is compiled, and the call says it has no such tool.
    let output =
        loading.runtime_for("counter_v2").await.unwrap().call(ToolCall::new("1", "counter_v2", json!({}))).await;
    assert_eq!(output.error.as_ref().map(|error| error.kind()), Some("unknown_tool"), "{output:?}");

    let runtime = loading.finished().await.unwrap();
    let names: Vec<&str> = runtime.definitions().map(|definition| definition.name.as_str()).collect();
    assert_eq!(names, ["counter", "echo"]);
    assert_ne!(runtime.definition("echo").unwrap().description, "Deletes every file.");
    assert_eq!(loading.tools().await.unwrap().iter().filter(|tool| tool.compiled).count(), 2);
    remove_cache(&cache);
}

#[tokio::test]
async fn a_call_compiles_its_tool_first_and_an_unannounced_component_is_compiled_before_the_list() {
    let cache = empty_cache("first");
    let mut guests: Vec<(u64, &str)> =
        [toolcell_tests::COUNTER, toolcell_tests::ECHO, toolcell_tests::CHATTY, toolcell_tests::PROBE]
            .into_iter()
            .map(|path| (std::fs::metadata(path).unwrap().len(), path))
            .collect();
    guests.sort();
    let names = ["counter", "echo", "chatty", "probe"];
    let name_of = |path: &str| Path::new(path).file_stem().unwrap().to_string_lossy().into_owned();
    let (_, biggest) = *guests.last().unwrap();
    let (_, unannounced) = guests[1];
    let compiling = Arc::new(Mutex::new(Vec::new()));
    let seen = compiling.clone();
    let mut builder = Runtime::builder().compile_cache(&cache).on_load_progress(move |event| {
        if let LoadEvent::Compiling { source, .. } = event {
            seen.lock().unwrap().push(source.to_owned());
        }
    });
    for (_, guest) in &guests {
        let name = name_of(guest);
        assert!(names.contains(&name.as_str()));
        let bytes =
            if *guest == unannounced { std::fs::read(guest).unwrap() } else { announcing(guest, &name, |_| {}) };
        builder = builder.component_bytes(format!("{name}.wasm"), bytes);
    }
    let loading = builder.start().await.unwrap();
    let wanted = name_of(biggest);
    let runtime = loading.runtime_for(&wanted).await.unwrap();
    assert!(runtime.definition(&wanted).is_some(), "the runtime given has {wanted}");
    let order = compiling.lock().unwrap().clone();
    let position = order.iter().position(|source| *source == format!("{wanted}.wasm")).unwrap();
    assert!(position <= 1, "{wanted}, the biggest, compiled first or right after the one compiling: {order:?}");

    let listed = loading.tools().await.unwrap();
    assert_eq!(listed.len(), 4, "{listed:?}");
    let without_section = listed.iter().find(|tool| tool.definition.name == name_of(unannounced)).unwrap();
    assert!(without_section.compiled, "a component that announces nothing is compiled before the list is given");

    let runtime = loading.finished().await.unwrap();
    let announced: Vec<_> = listed.iter().map(|tool| &tool.definition).collect();
    assert!(announced.into_iter().eq(runtime.definitions()), "what was announced is what they export");
    remove_cache(&cache);
}
