//! What compiling looks like on stderr: a first run compiles for seconds per tool, and a
//! silent process looks hung. On a terminal, a progress bar; otherwise (a log, an MCP
//! client's stderr) a line when each tool starts and ends compiling. Nothing is shown for a
//! warm start from the cache.

use std::io::IsTerminal as _;
use std::path::Path;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use toolcell_runtime::load::LoadEvent;
use toolcell_schema::words::human_bytes;

use crate::print::human_duration;

/// A reporter for `RuntimeBuilder::on_load_progress`: a bar when stderr is a terminal, lines
/// when it is not.
pub(crate) fn compile_progress() -> Box<dyn Fn(LoadEvent<'_>) + Send + Sync + 'static> {
    if std::io::stderr().is_terminal() { Box::new(progress_bar()) } else { Box::new(progress_lines) }
}

fn progress_bar() -> impl Fn(LoadEvent<'_>) + Send + Sync + 'static {
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr()).with_style(
        ProgressStyle::with_template("{spinner} compiling {pos}/{len} tools, once (then cached): {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    move |event: LoadEvent<'_>| match event {
        LoadEvent::Compiling { source, bytes } => {
            bar.inc_length(1);
            bar.set_message(format!("{} ({})", file_name(source), human_bytes(bytes as u64)));
            bar.enable_steady_tick(std::time::Duration::from_millis(100));
        }
        LoadEvent::Compiled { .. } => {
            bar.inc(1);
            if Some(bar.position()) == bar.length() {
                bar.finish_and_clear();
            }
        }
        _ => {}
    }
}

fn progress_lines(event: LoadEvent<'_>) {
    if let Some(line) = progress_line(event) {
        eprintln!("{line}");
    }
}

/// One line of progress, for stderr that is not a terminal.
fn progress_line(event: LoadEvent<'_>) -> Option<String> {
    match event {
        LoadEvent::Compiling { source, bytes } => Some(format!(
            "toolcell: compiling {} ({}); it is kept in the compile cache, so this happens once",
            file_name(source),
            human_bytes(bytes as u64)
        )),
        LoadEvent::Compiled { source, elapsed, ok } => Some(format!(
            "toolcell: {} {} in {}",
            if ok { "compiled" } else { "failed to compile" },
            file_name(source),
            human_duration(std::time::Duration::from_millis(elapsed.as_millis() as u64))
        )),
        _ => None,
    }
}

/// `calculator.wasm` for `/tools/calculator.wasm` or `builtin:calculator.wasm`.
fn file_name(source: &str) -> String {
    let name = source.rsplit(':').next().unwrap_or(source);
    Path::new(name).file_name().map_or_else(|| name.to_owned(), |file| file.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn lines_name_the_file_its_size_and_the_time_taken() {
        let compiling = LoadEvent::Compiling { source: "builtin:python.wasm", bytes: 20_741_902 };
        assert_eq!(
            progress_line(compiling).unwrap(),
            "toolcell: compiling python.wasm (19.8 MiB); it is kept in the compile cache, so this happens once"
        );
        let compiled =
            LoadEvent::Compiled { source: "/tools/echo.wasm", elapsed: Duration::from_micros(1_234_567), ok: true };
        assert_eq!(progress_line(compiled).unwrap(), "toolcell: compiled echo.wasm in 1.234 s");
        let failed = LoadEvent::Compiled { source: "/tools/bad.wasm", elapsed: Duration::from_millis(20), ok: false };
        assert_eq!(progress_line(failed).unwrap(), "toolcell: failed to compile bad.wasm in 20 ms");
    }
}
