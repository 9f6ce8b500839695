//! Progress lines a build script shows while it works, on a terminal and through a pipe.
//!
//! Cargo shows nothing of a running build script: its stderr is kept for a failure, and its
//! `cargo:warning=` lines are printed only once it has finished (checked with cargo 1.95). A
//! nested build of the guests takes minutes the first time, and `cargo run ... 2>&1 | cat`
//! then looks hung. So these lines go to the stderr of the cargo that runs the script (on
//! Linux, `/proc/<parent>/fd/2`), where cargo writes its own `Compiling` lines, and only
//! when that is a terminal or a pipe: a file opened anew would be written at another offset
//! than cargo's, and the two would overwrite each other. Elsewhere, nothing is shown live;
//! the build script's own stderr still has everything, for a failure.

use std::fs::File;
use std::io::Write as _;
use std::time::Duration;

/// Where a build script's progress lines go while it runs.
#[derive(Debug)]
pub struct Progress {
    live: Option<Live>,
}

#[derive(Debug)]
struct Live {
    file: File,
    /// A terminal, where cargo redraws a progress bar: a line first clears it.
    terminal: bool,
}

impl Progress {
    /// The stderr of the cargo running this build script, when it is a terminal or a pipe.
    pub fn to_cargo() -> Self {
        Self { live: open_cargo_stderr() }
    }

    /// Progress that shows nothing (outside a build script, or in tests).
    pub fn hidden() -> Self {
        Self { live: None }
    }

    /// Whether lines are shown live.
    pub fn is_live(&self) -> bool {
        self.live.is_some()
    }

    /// Shows `line` as cargo shows its own: `verb` right-aligned in 12 columns (and, on a
    /// terminal, in cargo's bold green).
    pub fn status(&mut self, verb: &str, rest: &str) {
        match self.live.as_ref().is_some_and(|live| live.terminal) {
            true => self.line(&format!("\x1b[1m\x1b[92m{verb:>12}\x1b[0m {rest}")),
            false => self.line(&format!("{verb:>12} {rest}")),
        }
    }

    /// Shows `line` as it is. A failed write only loses the line.
    pub fn line(&mut self, line: &str) {
        let Some(live) = self.live.as_mut() else { return };
        // On a terminal, clear cargo's progress bar first; cargo draws it again below.
        let clear = if live.terminal { "\r\x1b[2K" } else { "" };
        let _ = live.file.write_all(format!("{clear}{line}\n").as_bytes());
    }
}

#[cfg(target_os = "linux")]
fn open_cargo_stderr() -> Option<Live> {
    use std::os::unix::fs::FileTypeExt as _;

    let parent = std::os::unix::process::parent_id();
    // Only cargo's: a build script run by anything else writes to its own stderr.
    let name = std::fs::read_to_string(format!("/proc/{parent}/comm")).ok()?;
    if name.trim_end() != "cargo" {
        return None;
    }
    let path = format!("/proc/{parent}/fd/2");
    let kind = std::fs::metadata(&path).ok()?.file_type();
    let terminal = kind.is_char_device();
    if !(terminal || kind.is_fifo() || kind.is_socket()) {
        return None;
    }
    let file = std::fs::OpenOptions::new().append(true).open(&path).ok()?;
    Some(Live { file, terminal })
}

#[cfg(not(target_os = "linux"))]
fn open_cargo_stderr() -> Option<Live> {
    None
}

/// A cargo status line (`   Compiling serde v1.0.229`): its verb and the rest. Cargo
/// right-aligns the verb in 12 columns; warnings, errors and their source lines are not.
pub fn status_line(line: &str) -> Option<(&str, &str)> {
    let (head, rest) = (line.get(..12)?, line.get(12..)?);
    let verb = head.trim_start();
    let rest = rest.strip_prefix(' ')?;
    let word =
        verb.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && verb.chars().all(|c| c.is_ascii_alphabetic());
    (word && !rest.is_empty()).then_some((verb, rest))
}

/// `2m 31s` or `12.3s`, as cargo writes a build's time.
pub fn elapsed(time: Duration) -> String {
    let seconds = time.as_secs();
    if seconds >= 60 {
        format!("{}m {:02}s", seconds / 60, seconds % 60)
    } else {
        format!("{:.1}s", time.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_status_lines_are_told_apart_from_diagnostics() {
        assert_eq!(status_line("   Compiling serde v1.0.229"), Some(("Compiling", "serde v1.0.229")));
        assert_eq!(
            status_line("    Blocking waiting for file lock on build directory"),
            Some(("Blocking", "waiting for file lock on build directory"))
        );
        assert_eq!(
            status_line("  Downloaded 3 crates (1.2 MB) in 0.5s"),
            Some(("Downloaded", "3 crates (1.2 MB) in 0.5s"))
        );
        for other in [
            "warning: unused variable: `x`",
            "error[E0425]: cannot find value `y` in this scope",
            "  --> src/lib.rs:3:9",
            "   |",
            "12 | let x = 1;",
            "",
            "   Compiling",
            "   compiling serde",
        ] {
            assert_eq!(status_line(other), None, "{other:?}");
        }
    }

    #[test]
    fn times_read_as_cargo_writes_them() {
        assert_eq!(elapsed(Duration::from_millis(12_345)), "12.3s");
        assert_eq!(elapsed(Duration::from_secs(151)), "2m 31s");
        assert_eq!(elapsed(Duration::from_secs(60)), "1m 00s");
    }

    #[test]
    fn hidden_progress_shows_nothing() {
        let mut progress = Progress::hidden();
        assert!(!progress.is_live());
        progress.status("Compiling", "nothing");
    }
}
