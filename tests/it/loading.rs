//! Loading a tools folder: one bad file never stops the others, and each says what is wrong.

use std::path::{Path, PathBuf};

use toolcell_runtime::{LimitOverrides, Runtime, RuntimeError};

/// A fresh, empty folder under the system temp dir.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolcell-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_into(dir: &Path, guest: &str) {
    let source = Path::new(guest);
    std::fs::copy(source, dir.join(source.file_name().unwrap())).unwrap();
}

#[tokio::test]
async fn each_bad_component_becomes_a_diagnostic() {
    let dir = temp_dir("diagnostics");
    for guest in [
        toolcell_tests::ECHO,
        toolcell_tests::ECHO_DUPLICATE,
        toolcell_tests::CLI_COMMAND,
        toolcell_tests::INVALID_NAME,
        toolcell_tests::LONG_DESCRIPTION,
        toolcell_tests::INVALID_SCHEMA,
        toolcell_tests::NON_OBJECT_SCHEMA,
        toolcell_tests::METADATA_PANICS,
        toolcell_tools::CALCULATOR,
    ] {
        copy_into(&dir, guest);
    }
    std::fs::write(dir.join("corrupt.wasm"), b"\0asm\x0d\0\x01\0this is not a component").unwrap();
    std::fs::write(dir.join("core_module.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(dir.join("notes.wasm"), b"just some text").unwrap();
    std::fs::write(dir.join("README.md"), b"not a .wasm file: ignored").unwrap();

    let runtime = Runtime::builder().tools_dir(&dir).build().await.unwrap();

    let names: Vec<&str> = runtime.definitions().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["calculator", "echo"], "the good tools load despite the bad ones");
    assert!(runtime.source("echo").unwrap().ends_with("echo.wasm"), "the first file by name wins");

    let reason = |file: &str| {
        runtime
            .diagnostics()
            .iter()
            .find(|diagnostic| diagnostic.source.ends_with(file))
            .unwrap_or_else(|| panic!("no diagnostic for {file}: {:#?}", runtime.diagnostics()))
            .reason
            .clone()
    };
    assert!(reason("echo_duplicate.wasm").contains("already defines"), "{}", reason("echo_duplicate.wasm"));
    assert!(reason("echo_duplicate.wasm").contains("echo.wasm"), "names both files");
    assert!(reason("cli_command.wasm").contains("does not export the `toolcell:tool/tool` world"));
    assert!(reason("invalid_name.wasm").contains("`bad name!` is invalid"));
    assert!(reason("long_description.wasm").contains("at most 1024"));
    assert!(reason("invalid_schema.wasm").contains("is not a valid JSON Schema"), "{}", reason("invalid_schema.wasm"));
    assert!(reason("non_object_schema.wasm").contains("\"type\": \"object\""));
    assert!(reason("metadata_panics.wasm").contains("metadata()"));
    assert!(reason("corrupt.wasm").contains("could not be compiled"));
    assert!(reason("core_module.wasm").contains("core WebAssembly module, not a component"));
    assert!(reason("notes.wasm").contains("not a WebAssembly file"));
    assert_eq!(runtime.diagnostics().len(), 10, "{:#?}", runtime.diagnostics());
    std::fs::remove_dir_all(dir).unwrap();
}

#[tokio::test]
async fn a_missing_tools_folder_is_an_error() {
    let missing = std::env::temp_dir().join("toolcell-it-does-not-exist");
    let err = Runtime::builder().tools_dir(&missing).build().await.unwrap_err();
    assert!(matches!(err, RuntimeError::ToolsDir { .. }));
    assert!(err.to_string().contains("toolcell-it-does-not-exist"), "{err}");
}

#[tokio::test]
async fn limits_for_a_tool_that_is_not_loaded_are_reported() {
    let runtime = Runtime::builder()
        .component_file(toolcell_tools::CALCULATOR)
        .tool_limits("calculater", LimitOverrides::new().fuel(1))
        .build()
        .await
        .unwrap();
    assert_eq!(runtime.diagnostics().len(), 1);
    assert!(runtime.diagnostics()[0].reason.contains("`calculater`"));
}

#[tokio::test]
async fn per_tool_limits_apply_to_that_tool_only() {
    let runtime = Runtime::builder()
        .component_file(toolcell_tests::INFINITE_LOOP)
        .component_file(toolcell_tests::ECHO)
        .tool_limits("infinite_loop", LimitOverrides::new().fuel(1_000_000))
        .build()
        .await
        .unwrap();
    assert_eq!(runtime.limits("infinite_loop").unwrap().fuel, 1_000_000);
    assert_eq!(runtime.limits("echo").unwrap().fuel, toolcell_runtime::Limits::default().fuel);
    let output = runtime.call(toolcell_runtime::ToolCall::new("1", "infinite_loop", "{}")).await;
    assert_eq!(output.error, Some(toolcell_runtime::CallError::FuelExhausted { limit: 1_000_000 }));
}

#[tokio::test]
async fn a_compile_cache_entry_swapped_for_another_components_is_not_loaded() {
    let cache = temp_dir("cache-swap");
    let load = || {
        Runtime::builder()
            .component_file(toolcell_tests::ECHO)
            .component_file(toolcell_tools::CALCULATOR)
            .compile_cache(&cache)
            .build()
    };
    assert_eq!(load().await.unwrap().definitions().len(), 2);
    let mut entries = compiled_entries(&cache);
    entries.sort();
    assert_eq!(entries.len(), 2, "{entries:?}");
    // Each entry is valid on its own; swapped, each sits under the other component's name.
    let (first, second) = (std::fs::read(&entries[0]).unwrap(), std::fs::read(&entries[1]).unwrap());
    std::fs::write(&entries[0], &second).unwrap();
    std::fs::write(&entries[1], &first).unwrap();

    let runtime = load().await.unwrap();
    assert_eq!(runtime.diagnostics(), &[]);
    assert!(runtime.source("echo").unwrap().ends_with("echo.wasm"), "{:?}", runtime.source("echo"));
    assert!(runtime.source("calculator").unwrap().ends_with("calculator.wasm"));
    let sum = runtime.call(toolcell_runtime::ToolCall::new("1", "calculator", r#"{"expression": "6 * 7"}"#)).await;
    assert_eq!(sum.content, r#"{"value":42.0}"#);
    assert_eq!(std::fs::read(&entries[0]).unwrap(), first, "the entries were rewritten");
    std::fs::remove_dir_all(&cache).unwrap();
    let _ = std::fs::remove_file(cache.with_extension("key"));
}

#[tokio::test]
async fn only_tool_loads_the_file_named_after_it_or_else_everything() {
    let dir = temp_dir("only-tool");
    copy_into(&dir, toolcell_tools::CALCULATOR);
    // `echo.wasm` holds the counter tool: its file name says nothing certain.
    std::fs::copy(toolcell_tests::COUNTER, dir.join("echo.wasm")).unwrap();
    std::fs::write(dir.join("toolcell.toml"), "[tools.echo.limits]\nfuel = 1000\n").unwrap();
    let load = |tool: &str| {
        Runtime::builder().tools_dir(&dir).compile_cache(crate::common::COMPILE_CACHE).only_tool(tool).build()
    };
    let names = |runtime: &Runtime| runtime.definitions().map(|tool| tool.name.clone()).collect::<Vec<_>>();

    let calculator = load("calculator").await.unwrap();
    assert_eq!(names(&calculator), ["calculator"]);
    assert_eq!(calculator.diagnostics(), &[], "the policy's grants for other tools are not checked");

    for tool in ["echo", "counter", "../calculator"] {
        let everything = load(tool).await.unwrap();
        assert_eq!(names(&everything), ["calculator", "counter"], "{tool}: a full load");
        let unmatched = &everything.diagnostics()[0];
        assert!(unmatched.reason.contains("no loaded tool has that name"), "{tool}: {unmatched:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn compiling_is_reported_one_component_at_a_time_smallest_first_and_reading_the_cache_is_not() {
    use std::sync::{Arc, Mutex};
    use toolcell_runtime::load::LoadEvent;

    let cache = temp_dir("progress-cache");
    let file_name = |source: &str| Path::new(source).file_name().unwrap().to_string_lossy().into_owned();
    let load = || {
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = events.clone();
        let builder = Runtime::builder()
            .component_file(toolcell_tests::COUNTER)
            .component_file(toolcell_tests::ECHO)
            .compile_cache(&cache)
            .on_load_progress(move |event| {
                let event = match event {
                    LoadEvent::Compiling { source, bytes } => format!("compiling {} {bytes}", file_name(source)),
                    LoadEvent::Compiled { source, ok, .. } => format!("compiled {} {ok}", file_name(source)),
                    _ => "other".to_owned(),
                };
                seen.lock().unwrap().push(event);
            });
        async move {
            let runtime = builder.build().await.unwrap();
            assert_eq!(runtime.definitions().count(), 2);
            events.lock().unwrap().clone()
        }
    };
    let mut files: Vec<(u64, &str)> = [toolcell_tests::COUNTER, toolcell_tests::ECHO]
        .into_iter()
        .map(|path| (std::fs::metadata(path).unwrap().len(), path))
        .collect();
    files.sort();
    let expected: Vec<String> = files
        .iter()
        .flat_map(|(bytes, path)| {
            let name = file_name(path);
            [format!("compiling {name} {bytes}"), format!("compiled {name} true")]
        })
        .collect();
    assert_eq!(load().await, expected, "each compiled before the next starts, the smaller first");
    assert_eq!(load().await, Vec::<String>::new(), "from the cache: nothing to report");
    std::fs::remove_dir_all(&cache).unwrap();
    let _ = std::fs::remove_file(cache.with_extension("key"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_start_takes_what_the_cache_holds_and_compiles_and_reports_only_the_rest() {
    use std::sync::{Arc, Mutex};
    use toolcell_runtime::load::LoadEvent;

    let cache = temp_dir("partly-cached");
    let load = |components: &[&str]| {
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = events.clone();
        let builder = components.iter().fold(Runtime::builder(), |builder, path| builder.component_file(path));
        let builder = builder.compile_cache(&cache).on_load_progress(move |event| {
            if let LoadEvent::Compiling { source, .. } = event {
                seen.lock().unwrap().push(Path::new(source).file_name().unwrap().to_string_lossy().into_owned());
            }
        });
        async move { (builder.build().await.unwrap(), events.lock().unwrap().clone()) }
    };
    let entries = || compiled_entries(&cache);
    let added = |before: &[PathBuf]| entries().into_iter().find(|entry| !before.contains(entry)).unwrap();
    assert_eq!(load(&[toolcell_tests::ECHO]).await.1, ["echo.wasm"]);
    let echo_entry = entries().pop().unwrap();
    let before = entries();
    assert_eq!(load(&[toolcell_tests::COUNTER]).await.1, ["counter.wasm"]);
    let counter_entry = added(&before);
    assert_eq!(load(&[toolcell_tests::PANIC]).await.1, ["panic.wasm"]);
    // Swapped: the counter's entry now holds the echo's compiled code. Without the records of
    // what each tool said (as an older toolcell left the cache), a start reads every entry.
    std::fs::copy(&echo_entry, &counter_entry).unwrap();
    remove_records(&cache);

    let guests = [toolcell_tests::COUNTER, toolcell_tests::ECHO, toolcell_tests::PANIC];
    let (runtime, compiled) = load(&guests).await;
    assert_eq!(compiled, ["counter.wasm"], "only what the cache does not hold (authentic) is compiled, and reported");
    let names: Vec<String> = runtime.definitions().map(|tool| tool.name.clone()).collect();
    assert_eq!(names, ["counter", "echo", "panic"]);
    let counted = runtime.call(toolcell_runtime::ToolCall::new("c", "counter", "{}")).await;
    assert!(!counted.is_error, "{counted:#?}");
    let (_, compiled) = load(&guests).await;
    assert!(compiled.is_empty(), "all from the cache now: {compiled:?}");
    std::fs::remove_dir_all(&cache).unwrap();
    let _ = std::fs::remove_file(cache.with_extension("key"));
}

#[tokio::test]
async fn a_load_keeps_what_each_tool_said_of_itself_beside_its_compiled_code_once() {
    let cache = crate::common::Folder::new("said-records");
    let records = || -> Vec<(std::path::PathBuf, std::time::SystemTime)> {
        let mut records: Vec<_> = std::fs::read_dir(cache.0.join("cache"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|extension| extension == "said"))
            .map(|path| {
                let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
                (path, modified)
            })
            .collect();
        records.sort();
        records
    };
    let build = || {
        Runtime::builder()
            .component_file(toolcell_tests::ECHO)
            .component_file(toolcell_tests::COUNTER)
            .compile_cache(cache.0.join("cache"))
            .build()
    };
    drop(build().await.unwrap());
    let kept = records();
    assert_eq!(kept.len(), 2, "one record per tool: {kept:?}");
    let echo = kept
        .iter()
        .map(|(path, _)| std::fs::read(path).unwrap())
        .find(|record| String::from_utf8_lossy(record).contains(r#""name":"echo""#));
    assert!(echo.is_some(), "echo's record names it");
    drop(build().await.unwrap());
    assert_eq!(records(), kept, "a warm start writes nothing again");
}

#[tokio::test]
async fn a_tool_listed_from_its_record_runs_the_bytes_it_was_listed_from_never_a_swapped_entry() {
    use std::sync::{Arc, Mutex};
    use toolcell_runtime::load::LoadEvent;

    let folder = crate::common::Folder::new("listed-from-records");
    let cache = folder.0.join("cache");
    let counter = folder.0.join("counter.wasm");
    std::fs::copy(toolcell_tests::COUNTER, &counter).unwrap();
    let compiling = Arc::new(Mutex::new(Vec::new()));
    let load = |components: &[&Path]| {
        let seen = compiling.clone();
        let builder = components.iter().fold(Runtime::builder(), |builder, path| builder.component_file(path));
        builder
            .compile_cache(&cache)
            .on_load_progress(move |event| {
                if let LoadEvent::Compiling { source, .. } = event {
                    seen.lock().unwrap().push(source.to_owned());
                }
            })
            .build()
    };
    drop(load(&[Path::new(toolcell_tests::ECHO)]).await.unwrap());
    let echo_entry = compiled_entries(&cache).pop().unwrap();
    drop(load(&[&counter]).await.unwrap());
    let counter_entry = compiled_entries(&cache).into_iter().find(|entry| *entry != echo_entry).unwrap();
    compiling.lock().unwrap().clear();

    // The counter's entry swapped for the echo's, its record left: the counter is listed from
    // its record, and its code checked when it is first needed.
    std::fs::copy(&echo_entry, &counter_entry).unwrap();
    let runtime = load(&[&counter]).await.unwrap();
    assert_eq!(runtime.definitions().map(|tool| tool.name.as_str()).collect::<Vec<_>>(), ["counter"]);
    assert_eq!(*compiling.lock().unwrap(), Vec::<String>::new(), "listed from its record, not compiled to list it");
    assert_eq!(runtime.link_code().await, [], "its code linked");
    assert_eq!(compiling.lock().unwrap().len(), 1, "compiled (and reported) when its code was linked");
    let counted = runtime.call(toolcell_runtime::ToolCall::new("1", "counter", "{}")).await;
    assert_eq!(crate::common::value(&counted), serde_json::json!(1), "the counter's own code ran, compiled afresh");
    drop(runtime);
    assert_ne!(std::fs::read(&counter_entry).unwrap(), std::fs::read(&echo_entry).unwrap(), "its entry replaced");

    // The file replaced by another component after the tool was listed, and the entry gone:
    // the code linked is the code of the bytes it was listed from (the file is not read again).
    let runtime = load(&[&counter]).await.unwrap();
    std::fs::copy(toolcell_tests::ECHO, &counter).unwrap();
    std::fs::remove_file(&counter_entry).unwrap();
    let counted = runtime.call(toolcell_runtime::ToolCall::new("2", "counter", "{}")).await;
    assert_eq!(crate::common::value(&counted), serde_json::json!(1));
}

/// Removes the records of what each tool said of itself from a compile cache's folder.
fn remove_records(cache: &Path) {
    for entry in std::fs::read_dir(cache).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|extension| extension == "said") {
            std::fs::remove_file(path).unwrap();
        }
    }
}

/// The compiled components in a compile cache's folder (not the records beside them).
fn compiled_entries(cache: &Path) -> Vec<PathBuf> {
    let paths = std::fs::read_dir(cache).unwrap().map(|entry| entry.unwrap().path());
    paths.filter(|path| path.extension().is_some_and(|extension| extension == "cwasm")).collect()
}
