//! Refused HTTP requests appended to a JSON Lines file (`RuntimeBuilder::record_denials`), one
//! [`Denial`] per line, for `toolcell policy suggest` to turn into rules an operator reviews.
//!
//! What it holds was redacted before it got here (a URL can carry a secret). The file is
//! created readable by its owner only, and stops growing at [`MAX_DENIALS_FILE_BYTES`]: a tool
//! that loops on refused requests cannot fill the disk. Each call writes at most the
//! refusals it keeps ([`crate::sandbox::http::MAX_KEPT_DENIALS`]).

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::questions::Denial;

/// The most a denials file grows to; past it, refusals are no longer written (a warning says
/// so, once).
pub(crate) const MAX_DENIALS_FILE_BYTES: u64 = 16 << 20;

/// A denials file, shared by every call of a runtime.
#[derive(Debug, Clone)]
pub(crate) struct DenialLog {
    writer: Arc<Mutex<Writer>>,
}

#[derive(Debug)]
struct Writer {
    file: File,
    size: u64,
    full: bool,
}

impl DenialLog {
    /// Opens `path` to append to (created, owner-only, if missing). Refused when it is a
    /// symlink, or a file with another name too (a hard link): either could put it where a
    /// tool may write, past the check that no grant holds it.
    pub(crate) fn open(path: &Path) -> std::io::Result<Self> {
        let mut options = std::fs::OpenOptions::new();
        options.append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
        }
        let file = options.open(path).map_err(|err| {
            if path.is_symlink() { std::io::Error::other("it is a symbolic link; name the file itself") } else { err }
        })?;
        let metadata = file.metadata()?;
        if !metadata.is_file() {
            return Err(std::io::Error::other("it is not a regular file"));
        }
        #[cfg(unix)]
        if std::os::unix::fs::MetadataExt::nlink(&metadata) > 1 {
            return Err(std::io::Error::other(
                "it has other names (hard links), one of which could be where a tool may write; use a new file",
            ));
        }
        Ok(Self { writer: Arc::new(Mutex::new(Writer { file, size: metadata.len(), full: false })) })
    }

    /// Appends `denials` of one call, each one whole line, while the file has room.
    pub(crate) fn record(&self, denials: impl IntoIterator<Item = Denial>) {
        let at = SystemTime::now().duration_since(UNIX_EPOCH).map(|since| since.as_secs()).ok();
        let mut lines = Vec::new();
        for mut denial in denials {
            denial.at = at;
            if let Ok(line) = serde_json::to_string(&denial) {
                lines.extend_from_slice(line.as_bytes());
                lines.push(b'\n');
            }
        }
        if lines.is_empty() {
            return;
        }
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        if writer.size + lines.len() as u64 > MAX_DENIALS_FILE_BYTES {
            if !writer.full {
                writer.full = true;
                tracing::warn!(
                    limit_bytes = MAX_DENIALS_FILE_BYTES,
                    "the denials file is full: further refused requests are not written to it; read it with \
                     `toolcell policy suggest` and start a new one"
                );
            }
            return;
        }
        // One write per call's lines: appends from concurrent calls never interleave within a line.
        match writer.file.write_all(&lines) {
            Ok(()) => writer.size += lines.len() as u64,
            Err(err) => tracing::warn!(%err, "a refused request could not be written to the denials file"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_stops_growing_at_its_cap_and_every_line_is_whole() {
        let path = std::env::temp_dir().join(format!("toolcell-denials-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let log = DenialLog::open(&path).expect("open");
        let long = "x".repeat(100_000);
        for i in 0..300 {
            log.record([Denial::new("flood", format!("GET https://evil.net/{i}/{long}\n\"injected\": true"), "no")]);
        }
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.len() as u64 <= MAX_DENIALS_FILE_BYTES, "{}", text.len());
        let lines: Vec<Denial> = text.lines().map(|line| serde_json::from_str(line).expect("a whole line")).collect();
        assert!(lines.len() > 100 && lines.len() < 300, "{}", lines.len());
        assert!(lines[0].request.ends_with("\n\"injected\": true") && lines[0].at.is_some());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("metadata").permissions().mode();
            assert_eq!(mode & 0o077, 0, "only its owner reads it: {mode:o}");
        }
        // A symlink or a second name for the file is refused.
        let link = path.with_extension("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&path, &link).expect("symlink");
        assert!(DenialLog::open(&link).expect_err("a symlink").to_string().contains("symbolic link"));
        std::fs::remove_file(&link).expect("remove");
        std::fs::hard_link(&path, &link).expect("hard link");
        assert!(DenialLog::open(&path).expect_err("two names").to_string().contains("hard links"));
        let _ = std::fs::remove_file(&link);
        let _ = std::fs::remove_file(&path);
    }
}
