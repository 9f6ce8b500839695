//! Shipped precompiled code (`Runtime::precompile`, `RuntimeBuilder::precompiled`): a
//! component it has code for loads without compiling; anything else, including code for other
//! bytes or code the engine refuses, is compiled as if none were shipped.

use std::sync::{Arc, Mutex};

use toolcell_runtime::load::{LoadEvent, Precompiled};
use toolcell_runtime::{Runtime, RuntimeBuilder, ToolCall};

use crate::common::Folder;

/// `component` compiled ahead of time by a runtime with no tools.
async fn precompiled(component: &str) -> Vec<u8> {
    let compiler = Runtime::builder().build().await.unwrap();
    compiler.precompile(&std::fs::read(component).unwrap()).unwrap()
}

/// Ships `artifacts`; the test built them with `Runtime::precompile` (or from its output).
fn shipping(artifacts: Vec<Vec<u8>>) -> Precompiled {
    // SAFETY: each artifact is this process's own `precompile` output, or a corruption of it
    // that wasmtime must refuse before running anything (the point of the test).
    #[expect(unsafe_code, reason = "code this test compiled itself")]
    unsafe { Precompiled::new(artifacts) }.unwrap()
}

/// Builds `builder`, and returns it with the file names of the components it compiled.
async fn build_noting_compiles(builder: RuntimeBuilder) -> (Runtime, Vec<String>) {
    let compiled = Arc::new(Mutex::new(Vec::new()));
    let seen = compiled.clone();
    let runtime = builder
        .on_load_progress(move |event| {
            if let LoadEvent::Compiling { source, .. } = event {
                let file = std::path::Path::new(source).file_name().unwrap().to_string_lossy().into_owned();
                seen.lock().unwrap().push(file);
            }
        })
        .build()
        .await
        .unwrap();
    let compiled = compiled.lock().unwrap().clone();
    (runtime, compiled)
}

/// Calls `echo` (or the impostor of that name, with `count: None`), which must echo "hi".
async fn echoes(runtime: &Runtime, count: Option<u32>) {
    let arguments = match count {
        Some(count) => serde_json::json!({"text": "hi", "count": count}),
        None => serde_json::json!({"text": "hi"}),
    };
    let output = runtime.call(ToolCall::new("c", "echo", arguments.to_string())).await;
    assert!(!output.is_error && output.content.contains("hi"), "{output:#?}");
}

#[tokio::test]
async fn a_component_with_shipped_code_loads_without_compiling_and_its_code_stays_out_of_the_cache() {
    let cache = Folder::new("precompiled-cache");
    let shipped = shipping(vec![precompiled(toolcell_tests::ECHO).await]);
    let builder = || {
        Runtime::builder()
            .component_file(toolcell_tests::ECHO)
            .component_file(toolcell_tests::COUNTER)
            .compile_cache(cache.0.join("cache"))
            .precompiled(shipped.clone())
    };
    let (runtime, compiled) = build_noting_compiles(builder()).await;
    assert_eq!(compiled, ["counter.wasm"], "echo's code was shipped");
    echoes(&runtime, Some(1)).await;
    let kinds = || {
        let mut kinds: Vec<String> = std::fs::read_dir(cache.0.join("cache"))
            .unwrap()
            .map(|entry| entry.unwrap().path().extension().unwrap().to_string_lossy().into_owned())
            .collect();
        kinds.sort();
        kinds
    };
    assert_eq!(kinds(), ["cwasm", "said", "said"], "the counter's code and what each tool said");
    // Listed from the records next time, echo's code taken from what is shipped when needed.
    let (runtime, compiled) = build_noting_compiles(builder()).await;
    assert_eq!(compiled, Vec::<String>::new());
    echoes(&runtime, Some(1)).await;
    assert_eq!(kinds(), ["cwasm", "said", "said"], "echo's code never enters the cache");
}

#[tokio::test]
async fn shipped_code_is_used_only_for_the_exact_bytes_it_was_compiled_from() {
    // Code for one component, and another (a newer version of a tool, say) in its place.
    let builder = Runtime::builder()
        .component_file(toolcell_tests::ECHO_DUPLICATE)
        .precompiled(shipping(vec![precompiled(toolcell_tests::ECHO).await]));
    let (runtime, compiled) = build_noting_compiles(builder).await;
    assert_eq!(compiled, ["echo_duplicate.wasm"]);
    echoes(&runtime, None).await;
}

#[tokio::test]
async fn shipped_code_the_engine_refuses_is_compiled_instead() {
    let artifact = precompiled(toolcell_tests::ECHO).await;
    // Cut short, and as another wasmtime would have compiled it: both refused by wasmtime's
    // own checks, before anything runs.
    let truncated = artifact[..artifact.len() / 2].to_vec();
    let mut other_version = artifact.clone();
    // wasmtime's engine section: a format byte, the version's length, the version (its major).
    let version = b"\x00\x0248";
    let found: Vec<usize> = other_version
        .windows(version.len())
        .enumerate()
        .filter(|(_, window)| window == version)
        .map(|(at, _)| at)
        .collect();
    assert_eq!(found.len(), 1, "the artifact names the wasmtime (48) that compiled it, once");
    other_version[found[0] + version.len() - 1] = b'9';
    for refused in [truncated, other_version] {
        let builder = Runtime::builder().component_file(toolcell_tests::ECHO).precompiled(shipping(vec![refused]));
        let (runtime, compiled) = build_noting_compiles(builder).await;
        assert_eq!(compiled, ["echo.wasm"]);
        echoes(&runtime, Some(1)).await;
    }
}

#[tokio::test]
async fn portable_code_loads_here_without_compiling_and_is_not_this_cpus_code() {
    let compiler = Runtime::builder().build().await.unwrap();
    let component = std::fs::read(toolcell_tests::ECHO).unwrap();
    let portable = compiler.precompile_portable(&component).unwrap();
    // Any x86-64 CPU of the last fifteen years has features beyond the baseline (SSE4.1, say)
    // that code for this CPU uses and portable code leaves off.
    #[cfg(target_arch = "x86_64")]
    assert_ne!(portable, compiler.precompile(&component).unwrap(), "the code uses this CPU's features");
    let builder = Runtime::builder().component_file(toolcell_tests::ECHO).precompiled(shipping(vec![portable]));
    let (runtime, compiled) = build_noting_compiles(builder).await;
    assert!(compiled.is_empty(), "compiled {compiled:?}");
    echoes(&runtime, Some(1)).await;
}
