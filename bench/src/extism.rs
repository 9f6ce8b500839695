//! The same `add` as an Extism plugin (`extism-add/`, built by `build.rs`), through the
//! `extism` crate: one plugin reused across calls, and a fresh plugin per call.

use std::path::Path;
use std::time::{Duration, Instant};

use extism::{CompiledPlugin, Plugin, PluginBuilder};

const ARGUMENTS: &str = r#"{"a": 1.5, "b": 2.25}"#;
/// Fuel on, as in toolcell (Extism always has epoch interruption on).
const FUEL: u64 = 10_000_000_000;

fn builder(wasm: &[u8]) -> PluginBuilder<'_> {
    // No WASI (the plugin needs none) and no on-disk compile cache.
    PluginBuilder::new(wasm).with_wasi(false).with_fuel_limit(FUEL).with_cache_disabled()
}

/// Calls the plugin's `add` and checks the sum.
fn add(plugin: &mut Plugin) {
    let sum: String = plugin.call("add", ARGUMENTS).expect("Extism add");
    assert_eq!(sum, "3.75");
}

fn timed(mut f: impl FnMut()) -> Duration {
    let started = Instant::now();
    f();
    started.elapsed()
}

/// One plugin, instantiated once and called again and again: what Extism hosts usually do.
pub fn reused(plugin_file: &Path, calls: usize) -> Vec<Duration> {
    let wasm = std::fs::read(plugin_file).expect("the Extism add plugin");
    let mut plugin = builder(&wasm).build().expect("Extism plugin");
    (0..calls).map(|_| timed(|| add(&mut plugin))).collect()
}

/// A fresh plugin per call from a module compiled once (`Plugin::new_from_compiled`): the
/// isolation toolcell gives every call, with compiling kept off the path as toolcell's is.
pub fn fresh(plugin_file: &Path, calls: usize) -> Vec<Duration> {
    let wasm = std::fs::read(plugin_file).expect("the Extism add plugin");
    let compiled = CompiledPlugin::new(builder(&wasm)).expect("compile the Extism plugin");
    (0..calls).map(|_| timed(|| add(&mut Plugin::new_from_compiled(&compiled).expect("Extism plugin")))).collect()
}

/// A fresh plugin per call built from the bytes (`Plugin::new`), which compiles the plugin
/// and Extism's kernel every time: the naive use.
pub fn fresh_compiling(plugin_file: &Path, calls: usize) -> Vec<Duration> {
    let wasm = std::fs::read(plugin_file).expect("the Extism add plugin");
    (0..calls).map(|_| timed(|| add(&mut builder(&wasm).build().expect("Extism plugin")))).collect()
}
