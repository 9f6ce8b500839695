//! A progress bar on stderr while tools compile: a first run compiles for seconds, and a
//! silent terminal looks hung. Shown only when stderr is a terminal, and only once something
//! compiles (a warm start from the cache shows nothing).

use std::io::IsTerminal as _;
use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use toolcell_runtime::load::LoadEvent;

/// A reporter for `RuntimeBuilder::on_load_progress`, or `None` when stderr is not a terminal.
pub(crate) fn compile_progress() -> Option<impl Fn(LoadEvent<'_>) + Send + Sync + 'static> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr()).with_style(
        ProgressStyle::with_template("{spinner} compiling {pos}/{len} tools: {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(move |event: LoadEvent<'_>| match event {
        LoadEvent::Compiling { source } => {
            bar.inc_length(1);
            bar.set_message(file_name(source));
            bar.enable_steady_tick(std::time::Duration::from_millis(100));
        }
        LoadEvent::Compiled { .. } => {
            bar.inc(1);
            if Some(bar.position()) == bar.length() {
                bar.finish_and_clear();
            }
        }
        _ => {}
    })
}

/// `calculator.wasm` for `/tools/calculator.wasm` or `builtin:calculator.wasm`.
fn file_name(source: &str) -> String {
    let name = source.rsplit(':').next().unwrap_or(source);
    Path::new(name).file_name().map_or_else(|| name.to_owned(), |file| file.to_string_lossy().into_owned())
}
