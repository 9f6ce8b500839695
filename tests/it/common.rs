//! Shared fixtures: one runtime over the test guests, built once for the whole suite.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;
use toolcell_runtime::{LimitOverrides, Runtime, RuntimeBuilder, ToolCall, ToolOutput};

/// Compiled components, kept between test runs (compiling every guest takes seconds).
pub const COMPILE_CACHE: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache");

/// Every test guest that loads cleanly.
pub const CALLABLE_GUESTS: &[&str] = &[
    toolcell_tests::ABORT,
    toolcell_tests::BAD_OUTPUT,
    toolcell_tests::BIG_OUTPUT,
    toolcell_tests::CALLER,
    toolcell_tests::CHATTY,
    toolcell_tests::COUNTER,
    toolcell_tests::ECHO,
    toolcell_tests::EXIT_NONZERO,
    toolcell_tests::EXIT_ZERO,
    toolcell_tests::FAILS_RETRYABLY,
    toolcell_tests::HTTP_FIELDS_BOMB,
    toolcell_tests::INFINITE_LOOP,
    toolcell_tests::MEMORY_BOMB,
    toolcell_tests::MEMORY_GROW_BOMB,
    toolcell_tests::NON_JSON_OUTPUT,
    toolcell_tests::PANIC,
    toolcell_tests::PROBE,
    toolcell_tests::REFUSED_THEN_FAILS,
    toolcell_tests::REJECTS_ARGUMENTS,
    toolcell_tests::SLEEPER,
    toolcell_tests::STACK_OVERFLOW,
    toolcell_tests::TABLE_BOMB,
];

/// A runtime over [`CALLABLE_GUESTS`] and the eight standard tools, shared by every test.
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        // Built on a runtime of its own: the tests' runtimes come and go.
        std::thread::spawn(|| {
            let tokio = tokio::runtime::Runtime::new().expect("tokio runtime");
            tokio.block_on(async {
                let builder = Runtime::builder().tools_dir(toolcell_tools::DIR).compile_cache(COMPILE_CACHE);
                let builder = CALLABLE_GUESTS.iter().fold(builder, |builder, path| builder.component_file(path));
                let runtime = builder.build().await.expect("runtime builds");
                assert_eq!(runtime.diagnostics(), &[], "every callable guest loads");
                runtime
            })
        })
        .join()
        .expect("runtime thread")
    })
}

/// A builder over the standard tools folder and the suite's compile cache, once [`runtime`]
/// has compiled them into it: tests run at once, and each runtime would otherwise compile
/// what the cache lacks (python's 21 MB component is about 20 s of CPU).
pub fn standard_tools() -> RuntimeBuilder {
    runtime();
    Runtime::builder().tools_dir(toolcell_tools::DIR).compile_cache(COMPILE_CACHE)
}

/// Calls `tool` on the shared runtime.
pub async fn call(tool: &str, arguments: impl Into<toolcell_runtime::Arguments>) -> ToolOutput {
    runtime().call(ToolCall::new("call-1", tool, arguments)).await
}

/// Calls `tool` on the shared runtime under extra limits.
pub async fn call_with(tool: &str, arguments: Value, limits: LimitOverrides) -> ToolOutput {
    runtime().call(ToolCall::new("call-1", tool, arguments).with_limits(limits)).await
}

/// The output's error kind, or a panic showing the whole output when it succeeded.
pub fn kind(output: &ToolOutput) -> &'static str {
    match &output.error {
        Some(error) => {
            assert!(output.is_error, "an error output is flagged: {output:?}");
            error.kind()
        }
        None => panic!("expected an error, got {output:#?}"),
    }
}

/// The output's result, or a panic showing the whole output when it failed.
pub fn value(output: &ToolOutput) -> Value {
    assert!(!output.is_error, "expected success, got {output:#?}");
    output.value().expect("a successful output is JSON")
}

/// A tools folder of its own per test, removed at the end. `name` must be unique in the suite.
pub struct Folder(pub PathBuf);

impl Folder {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("toolcell-it-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn put(&self, file: &str, guest: &str) {
        std::fs::copy(guest, self.0.join(file)).unwrap();
    }

    pub fn write(&self, file: &str, text: &str) {
        std::fs::write(self.0.join(file), text).unwrap();
    }

    pub fn source(&self, file: &str) -> String {
        self.0.join(file).display().to_string()
    }

    pub async fn runtime(&self) -> Runtime {
        Runtime::builder().tools_dir(&self.0).compile_cache(COMPILE_CACHE).build().await.unwrap()
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
