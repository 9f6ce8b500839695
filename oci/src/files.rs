//! Reading and writing the files beside registries (the store's blobs, `toolcell.lock`, keys)
//! so that what is planted there cannot steer the host: a read takes a regular file only, up to
//! a size, and never waits on a FIFO; a write goes to a new temporary file (never through a
//! symlink planted at its name), synced, then renamed into place.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

/// Whether a read may follow a symlink at the path itself (a key or lockfile mounted as a
/// symlink, as Kubernetes does with Secrets) or must not (the store's own files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Links {
    Follow,
    Refuse,
}

/// The bytes of the regular file at `path`, at most `max` of them; `None` when there is none.
///
/// # Errors
/// When it cannot be read, is not a regular file (a FIFO, a device, a folder; with
/// [`Links::Refuse`], a symlink), or is larger than `max`.
pub(crate) fn read_regular(path: &Path, max: u64, links: Links) -> std::io::Result<Option<Vec<u8>>> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading would wait for a writer: never wait.
        let mut flags = libc::O_NONBLOCK;
        if links == Links::Refuse {
            flags |= libc::O_NOFOLLOW;
        }
        options.custom_flags(flags);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
    };
    // The kernel's files look regular, and say what no diagnostic should quote
    // (`/proc/self/environ`): a policy, key or lockfile linked to one is refused.
    if let Ok(real) = std::fs::canonicalize(path)
        && (real.starts_with("/proc") || real.starts_with("/sys"))
    {
        return Err(std::io::Error::other(format!(
            "it is {}, a file of the kernel's, not one of yours",
            real.display()
        )));
    }
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    if meta.len() > max {
        return Err(std::io::Error::other(format!("it is {} bytes, more than the {max} read", meta.len())));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // A file growing while it is read is still cut at `max`.
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other(format!("it grew past the {max} bytes read")));
    }
    Ok(Some(bytes))
}

/// The bytes of a file of the operator's (a key, a policy's neighbour): a regular file
/// (symlinks followed, as a mounted Secret is one), at most `max` bytes, read without waiting
/// on a FIFO.
///
/// # Errors
/// When it is missing, cannot be read, is not a regular file, or is larger than `max`.
pub fn read_operator_file(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    read_regular(path, max, Links::Follow)?.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
}

/// Writes `bytes` to `path` whole: a new temporary file beside it (created, never opened
/// through an existing name or symlink), synced, renamed over `path` (a symlink at `path` is
/// replaced, not written through).
///
/// # Errors
/// When it cannot be written.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let partial = temporary_name(path);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    let written = options.open(&partial).and_then(|mut file: File| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    if let Err(err) = written.and_then(|()| std::fs::rename(&partial, path)) {
        let _ = std::fs::remove_file(&partial);
        return Err(err);
    }
    Ok(())
}

/// A name beside `path` no one can predict: a planted file there makes a write fail, never go
/// elsewhere.
fn temporary_name(path: &Path) -> PathBuf {
    let mut random = [0u8; 8];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut random).expect("randomness");
    let suffix: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
    let name = path.file_name().map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.partial-{suffix}"))
}

/// Why `dir` (which exists) cannot be a private folder of this user's: another user owns it, or
/// others may write or read it.
#[cfg(unix)]
pub(crate) fn not_private(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(err) => return Some(err.to_string()),
    };
    if !meta.is_dir() {
        return Some("it is not a folder (a symlink is not taken)".to_owned());
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Some(format!("it belongs to the user {} and toolcell runs as {me}", meta.uid()));
    }
    if meta.mode() & 0o077 != 0 {
        return Some(format!("its mode is {:o}: others may read or write it (make it 0700)", meta.mode() & 0o777));
    }
    None
}

/// On other systems, folders are taken as they are.
#[cfg(not(unix))]
pub(crate) fn not_private(_dir: &Path) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("toolcell-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        dir
    }

    #[cfg(unix)]
    #[test]
    fn a_read_takes_only_a_regular_file_up_to_its_size_and_never_waits_on_a_fifo() {
        let dir = dir("read");
        std::fs::write(dir.join("small"), b"12345").expect("file");
        assert_eq!(read_regular(&dir.join("small"), 5, Links::Refuse).expect("read"), Some(b"12345".to_vec()));
        assert!(read_regular(&dir.join("small"), 4, Links::Refuse).is_err(), "larger than max");
        assert_eq!(read_regular(&dir.join("missing"), 5, Links::Refuse).expect("none"), None);
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero")).expect("link");
        assert!(read_regular(&dir.join("zero"), 1 << 20, Links::Follow).is_err(), "a device is refused");
        std::os::unix::fs::symlink(dir.join("small"), dir.join("link")).expect("link");
        assert!(read_regular(&dir.join("link"), 5, Links::Refuse).is_err(), "a symlink is refused");
        assert!(read_regular(&dir.join("link"), 5, Links::Follow).expect("followed").is_some());
        let fifo = dir.join("fifo");
        let path = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        assert!(read_regular(&fifo, 5, Links::Follow).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "no wait on a FIFO");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_write_never_goes_through_a_symlink_at_the_name_and_replaces_one_at_the_path() {
        let dir = dir("write");
        let victim = dir.join("victim");
        std::fs::write(&victim, b"the operator's file").expect("victim");
        let target = dir.join("toolcell.lock");
        std::os::unix::fs::symlink(&victim, &target).expect("link");
        write_whole(&target, b"new").expect("write");
        assert_eq!(std::fs::read(&victim).expect("victim"), b"the operator's file");
        assert!(!std::fs::symlink_metadata(&target).expect("meta").file_type().is_symlink());
        let leftovers: Vec<_> = std::fs::read_dir(&dir).expect("list").filter_map(Result::ok).collect();
        assert_eq!(leftovers.len(), 2, "no temporary file left: {leftovers:?}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
