//! What toolcell is measured against: the same `add` as a native function, as a call into one
//! component instance reused across calls (what most plugin hosts do), and as a process per
//! call.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

const ARGUMENTS: &str = r#"{"a": 1.5, "b": 2.25}"#;

#[derive(serde::Deserialize)]
struct AddArguments {
    a: f64,
    b: f64,
}

/// `add` in Rust, with serde_json in and out: the floor.
pub fn native(calls: usize) -> Vec<Duration> {
    (0..calls)
        .map(|_| {
            let started = Instant::now();
            let arguments: AddArguments = serde_json::from_str(std::hint::black_box(ARGUMENTS)).expect("arguments");
            let output = serde_json::to_string(&(arguments.a + arguments.b)).expect("a number");
            std::hint::black_box(output);
            started.elapsed()
        })
        .collect()
}

wasmtime::component::bindgen!({ world: "tool-core", path: "../wit" });

struct Host {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Host {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// The `add` component instantiated once and called again and again in the same store, with
/// fuel on (topped up per call) but no validation, limits or fresh state: the price of
/// isolation is the difference to a fresh instance per call.
pub fn reused_instance(component_file: &Path, calls: usize) -> Vec<Duration> {
    let mut config = Config::new();
    config.consume_fuel(true);
    let engine = Engine::new(&config).expect("engine");
    let component = Component::from_file(&engine, component_file).expect("the add component");
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).expect("WASI");
    let host = Host { wasi: WasiCtx::builder().build(), table: ResourceTable::new() };
    let mut store = Store::new(&engine, host);
    store.set_fuel(u64::MAX / 2).expect("fuel");
    let tool = ToolCore::instantiate(&mut store, &component, &linker).expect("instantiate");
    let context = CallContext { call_id: "bench".into(), host_context: "{}".into() };
    (0..calls)
        .map(|_| {
            let started = Instant::now();
            store.set_fuel(10_000_000_000).expect("fuel");
            let output = tool.call_invoke(&mut store, ARGUMENTS, &context).expect("call").expect("a sum");
            std::hint::black_box(output);
            started.elapsed()
        })
        .collect()
}

/// A process per call: spawn `add-process`, write the arguments, read the sum.
pub fn process_per_call(binary: &Path, calls: usize) -> Vec<Duration> {
    (0..calls)
        .map(|_| {
            let started = Instant::now();
            let mut child = Command::new(binary)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn add-process");
            child.stdin.take().expect("stdin").write_all(ARGUMENTS.as_bytes()).expect("write");
            let output = child.wait_with_output().expect("wait");
            assert_eq!(output.stdout, b"3.75");
            started.elapsed()
        })
        .collect()
}
