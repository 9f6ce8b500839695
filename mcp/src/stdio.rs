//! stdin and stdout for an MCP session.
//!
//! tokio's `stdin()` and `stdout()` read and write on a blocking thread, so every message
//! crosses threads twice more than it must. When the client gives the server pipes (as every
//! client that starts a server does), they are read and written on the tokio reactor
//! instead (a `tools/call` round trip went from 0.22 to 0.19 ms p50 in the serve
//! benchmark). Anything else (a terminal, a file) keeps tokio's portable stdio.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::either::Either;

/// The session's input and output, and the flags to put back when the session ends (hold
/// it until then). Must run inside a tokio runtime.
pub(crate) fn open() -> (impl AsyncRead + Send + Unpin + 'static, impl AsyncWrite + Send + Unpin + 'static, Restore) {
    let mut restore = Restore(Vec::new());
    let input = match pipes::input(&mut restore.0) {
        Some(pipe) => Either::Left(pipe),
        None => Either::Right(tokio::io::stdin()),
    };
    let output = match pipes::output(&mut restore.0) {
        Some(pipe) => Either::Left(pipe),
        None => Either::Right(tokio::io::stdout()),
    };
    (input, output, restore)
}

/// Puts stdin's and stdout's file flags back as they were when dropped.
pub(crate) struct Restore(Vec<pipes::RestoreFlags>);

#[cfg(unix)]
mod pipes {
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::fs::{FileTypeExt, MetadataExt};

    use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
    use tokio::net::unix::pipe;

    pub(crate) type Input = pipe::Receiver;
    pub(crate) type Output = pipe::Sender;

    /// Puts a file description's flags back as they were: the reactor needs `O_NONBLOCK`, and
    /// the description may be shared with the process that started the server.
    pub(crate) struct RestoreFlags {
        fd: OwnedFd,
        flags: OFlags,
    }

    impl Drop for RestoreFlags {
        fn drop(&mut self) {
            let _ = fcntl_setfl(&self.fd, self.flags);
        }
    }

    /// stdin as a reactor pipe, when it is a pipe.
    pub(crate) fn input(restore: &mut Vec<RestoreFlags>) -> Option<Input> {
        let stdin = std::io::stdin();
        let fd = is_fifo(stdin.as_fd())?;
        remember(&fd, restore)?;
        pipe::Receiver::from_owned_fd(fd).ok()
    }

    /// stdout as a reactor pipe, when it is a pipe that stderr does not share: logs are
    /// written to stderr with blocking writes, which a non-blocking description would break.
    pub(crate) fn output(restore: &mut Vec<RestoreFlags>) -> Option<Output> {
        let stdout = std::io::stdout();
        let stderr = std::io::stderr();
        let fd = is_fifo(stdout.as_fd())?;
        if same_file(fd.as_fd(), stderr.as_fd()) {
            return None;
        }
        remember(&fd, restore)?;
        pipe::Sender::from_owned_fd(fd).ok()
    }

    /// A duplicate of `fd` when it is a pipe.
    fn is_fifo(fd: BorrowedFd<'_>) -> Option<OwnedFd> {
        let fd = fd.try_clone_to_owned().ok()?;
        let file = std::fs::File::from(fd);
        file.metadata().ok()?.file_type().is_fifo().then(|| file.into())
    }

    fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
        let metadata = |fd: BorrowedFd<'_>| {
            let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
            file.metadata().ok().map(|metadata| (metadata.dev(), metadata.ino()))
        };
        matches!((metadata(a), metadata(b)), (Some(a), Some(b)) if a == b)
    }

    fn remember(fd: &OwnedFd, restore: &mut Vec<RestoreFlags>) -> Option<()> {
        let flags = fcntl_getfl(fd).ok()?;
        restore.push(RestoreFlags { fd: fd.try_clone().ok()?, flags });
        Some(())
    }
}

#[cfg(not(unix))]
mod pipes {
    pub(crate) type Input = tokio::io::Stdin;
    pub(crate) type Output = tokio::io::Stdout;
    pub(crate) struct RestoreFlags;

    pub(crate) fn input(_: &mut Vec<RestoreFlags>) -> Option<Input> {
        None
    }

    pub(crate) fn output(_: &mut Vec<RestoreFlags>) -> Option<Output> {
        None
    }
}
