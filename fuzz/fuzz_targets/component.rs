//! Arbitrary bytes as a component for the loader: whatever the input, building a runtime
//! from it must either load a tool or report a diagnostic, never panic. A tool that does
//! load is called once.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use std::time::Duration;

use toolcell_runtime::{LimitOverrides, Limits, Runtime, ToolCall};

static TOKIO: LazyLock<tokio::runtime::Runtime> =
    LazyLock::new(|| tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap());

fuzz_target!(|data: &[u8]| {
    TOKIO.block_on(async {
        // Tighter than the defaults, so a component that spins in `metadata` costs the
        // fuzzer a fraction of a second.
        let limits =
            Limits::default().with(&LimitOverrides::new().fuel(100_000_000).timeout(Duration::from_millis(500)));
        let built = Runtime::builder().component_bytes("fuzz.wasm", data.to_vec()).limits(limits).build().await;
        let runtime = built.expect("bytes never fail the whole build, only their own load");
        let loaded = runtime.definitions().len();
        assert_eq!(loaded + runtime.diagnostics().len(), 1, "exactly one outcome: {runtime:?}");
        let names: Vec<String> = runtime.definitions().map(|definition| definition.name.clone()).collect();
        for name in names {
            let output = runtime.call(ToolCall::new("fuzz", name, "{}")).await;
            assert_eq!(output.is_error, output.error.is_some(), "{output:#?}");
        }
    });
});
