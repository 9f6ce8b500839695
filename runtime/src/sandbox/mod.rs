//! The per-call world a guest runs in: a WASI context that grants exactly the tool's
//! [`Access`] (nothing by default), HTTP behind the allow-list gate, bounded host resources,
//! a memory limiter that remembers what it refused, and bounded captures of stdout and
//! stderr.
//!
//! Here too: the engine every instance runs in ([`engine`]), what a tool's imports are
//! linked to ([`link`]), and the host side of those imports the host wraps or provides:
//! open files ([`files`]), outbound HTTP ([`http`]) and calls to other tools ([`nested`]).
//! [`execute`] runs one export of a tool in a fresh instance under its limits; [`ready`]
//! makes a tool's next instance before its call.

pub(crate) mod engine;
pub(crate) mod execute;
pub(crate) mod files;
pub(crate) mod http;
pub(crate) mod journal;
mod lines;
pub(crate) mod link;
pub(crate) mod nested;
pub(crate) mod ready;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use bytes::Bytes;
use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use self::engine::TABLE_ELEMENT_BYTES;
use self::files::{FileSlots, FilesView, OpenFiles};
use self::http::{HttpGate, RequestSlots, Resolver};
use self::journal::Journal;
use self::lines::LineForwarder;
use self::nested::{CallsView, NestedCalls};
use crate::policy::Access;
use crate::redact::Redactor;
use crate::tool::io::StdoutLines;
use crate::tool::limits::Limits;

/// Host resources (open files, streams, pollables, HTTP requests, responses and header
/// fields) one call may hold at once. A tool that needs more is stopped with
/// `resource_limit`: each handle costs the host memory the tool's own limit does not see.
pub(crate) const MAX_RESOURCE_HANDLES: usize = 1024;
/// The most one set of HTTP header fields may hold, in bytes (roughly: names, values and
/// their in-memory overhead). Together with [`MAX_RESOURCE_HANDLES`] this bounds the header
/// memory a call can make the host hold to 16 MiB.
pub(crate) const MAX_HEADER_FIELDS_BYTES: usize = 16 << 10;

/// What every call of a runtime shares: how outbound HTTP resolves names, and the
/// runtime-wide bounds on requests in flight and on open files.
#[derive(Debug, Clone, Default)]
pub(crate) struct Network {
    pub(crate) resolver: Resolver,
    pub(crate) request_slots: RequestSlots,
    pub(crate) file_slots: FileSlots,
}

/// What a run is given beyond its tool's grants.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Given<'a> {
    /// The command line of a `wasi:cli` command ([`crate::command`]); empty for a tool's exports.
    pub(crate) args: &'a [String],
    /// Where a call's stdout goes, a line at a time, while it runs.
    pub(crate) stdout_lines: Option<&'a StdoutLines>,
    /// Recording or replaying what the call observes ([`journal`]).
    pub(crate) journal: Option<&'a Journal>,
}

/// The store data of one call.
pub(crate) struct Sandbox {
    wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    http: WasiHttpCtx,
    /// The files the guest holds open, within the call's and the runtime's bounds.
    pub(crate) files: OpenFiles,
    pub(crate) gate: HttpGate,
    pub(crate) memory: MemoryLimiter,
    pub(crate) stdout: CapturedOutput,
    pub(crate) stderr: CapturedOutput,
    /// When the epoch callback stops the guest.
    pub(crate) deadline: Instant,
    /// What the guest may call through the `calls` import.
    pub(crate) calls: NestedCalls,
    /// Recording or replaying what the call observes.
    pub(crate) journal: Option<Journal>,
}

impl Sandbox {
    /// `given` is what the run gets beyond its grants: its command line (empty for a tool's
    /// exports) and where its stdout goes while it runs.
    ///
    /// # Errors
    /// When a granted directory can no longer be opened.
    pub(crate) fn new(
        limits: &Limits,
        access: &Access,
        redactor: &Redactor,
        network: &Network,
        calls: NestedCalls,
        deadline: Instant,
        given: Given<'_>,
    ) -> Result<Self, String> {
        let stdout = CapturedOutput::new(limits.max_stdio_bytes);
        if let Some(sink) = given.stdout_lines {
            stdout.forward_lines(LineForwarder::new(sink.clone(), redactor.clone()));
        }
        let stderr = CapturedOutput::new(limits.max_stdio_bytes);
        // WasiCtxBuilder's defaults already grant no files, env, args or addresses; the
        // explicit calls make the policy visible here and immune to changed defaults. HTTP
        // goes through the gate, never through sockets.
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(stdout.clone())
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        // A tool's exports get none; a command (a test binary) its command line.
        wasi.args(given.args);
        if let Some(journal) = given.journal {
            journal.install(&mut wasi);
        }
        for (name, value) in &access.env {
            wasi.env(name, value);
        }
        for dir in &access.dirs {
            let perms = if dir.writable { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
            wasi.preopened_dir(dir.reopen_path(), &dir.guest, perms)
                .map_err(|err| format!("the granted directory {} cannot be opened: {err}", dir.host.display()))?;
        }
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCE_HANDLES);
        let mut http = WasiHttpCtx::new();
        http.set_field_size_limit(MAX_HEADER_FIELDS_BYTES);
        Ok(Self {
            wasi: wasi.build(),
            table,
            http,
            files: OpenFiles::new(network.file_slots.clone()),
            gate: HttpGate::new(
                access.egress.clone(),
                limits.max_http_response_bytes,
                network.resolver.clone(),
                network.request_slots.clone(),
                redactor.clone(),
            )
            .with_journal(given.journal.cloned()),
            memory: MemoryLimiter::new(limits.memory_bytes),
            stdout,
            stderr,
            deadline,
            calls,
            journal: given.journal.cloned(),
        })
    }
}

impl Sandbox {
    /// Gives an instance made before its call ([`ready`]) what only the call has: its
    /// deadline, the tools it may call, its secrets (for HTTP refusals and streamed lines)
    /// and where its stdout goes while it runs.
    pub(crate) fn bind(
        &mut self,
        deadline: Instant,
        calls: NestedCalls,
        redactor: &Redactor,
        stdout_lines: Option<&StdoutLines>,
    ) {
        self.deadline = deadline;
        self.calls = calls;
        self.gate.set_redactor(redactor.clone());
        if let Some(sink) = stdout_lines {
            self.stdout.forward_lines(LineForwarder::new(sink.clone(), redactor.clone()));
        }
    }
}

impl FilesView for Sandbox {
    fn open_files(&mut self) -> (&mut OpenFiles, &ResourceTable) {
        (&mut self.files, &self.table)
    }
}

impl CallsView for Sandbox {
    fn nested_calls(&mut self) -> &mut NestedCalls {
        &mut self.calls
    }

    fn deadline(&self) -> Instant {
        self.deadline
    }

    fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }
}

impl WasiView for Sandbox {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for Sandbox {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.gate }
    }
}

/// Caps the linear memories and tables of an instance, together, and records both the peak
/// and any growth it refused.
///
/// A Rust guest turns a refused allocation into an abort, which looks like any other
/// `unreachable` trap; the recorded refusal is how the host tells "memory limit" apart.
#[derive(Debug)]
pub(crate) struct MemoryLimiter {
    limit: u64,
    in_use: u64,
    pub(crate) peak: u64,
    /// The total the guest asked for when it was refused, if it ever was.
    pub(crate) refused: Option<u64>,
}

impl MemoryLimiter {
    fn new(limit: u64) -> Self {
        Self { limit, in_use: 0, peak: 0, refused: None }
    }

    /// Whether the instance may grow a memory or table from `current` to `desired` bytes.
    /// `maximum` is the memory's or table's own maximum (declared, or the pool slot's size):
    /// growth past it fails in wasmtime anyway, so it is refused without being counted. Our
    /// limit is checked first: a refusal by the operator's limit is always recorded.
    fn grow(&mut self, current: u64, desired: u64, maximum: Option<u64>) -> bool {
        let total = self.in_use.saturating_sub(current).saturating_add(desired);
        if total > self.limit {
            self.refused = Some(self.refused.map_or(total, |earlier| earlier.max(total)));
            return false;
        }
        if maximum.is_some_and(|maximum| desired > maximum) {
            return false;
        }
        self.in_use = total;
        self.peak = self.peak.max(total);
        true
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(self.grow(current as u64, desired as u64, maximum.map(|maximum| maximum as u64)))
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        let bytes = |elements: usize| (elements as u64).saturating_mul(TABLE_ELEMENT_BYTES);
        Ok(self.grow(bytes(current), bytes(desired), maximum.map(bytes)))
    }
}

/// A guest's stdout or stderr: keeps the first `capacity` bytes, counts and drops the rest.
///
/// Unlike wasmtime-wasi's `MemoryOutputPipe`, it never fails a write, so a chatty tool is
/// not turned into a crashed one by its logging.
#[derive(Debug, Clone)]
pub(crate) struct CapturedOutput {
    capacity: usize,
    state: Arc<Mutex<Captured>>,
}

#[derive(Debug, Default)]
struct Captured {
    kept: Vec<u8>,
    dropped: u64,
    /// Where each line goes as it is written, when the caller asked.
    lines: Option<LineForwarder>,
}

impl CapturedOutput {
    fn new(capacity: u64) -> Self {
        Self { capacity: usize::try_from(capacity).unwrap_or(usize::MAX), state: Arc::default() }
    }

    fn forward_lines(&self, forwarder: LineForwarder) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).lines = Some(forwarder);
    }

    fn append(&self, bytes: &[u8]) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(lines) = &mut state.lines {
            lines.write(bytes);
        }
        let room = self.capacity.saturating_sub(state.kept.len());
        let kept = bytes.len().min(room);
        state.kept.extend_from_slice(&bytes[..kept]);
        state.dropped += (bytes.len() - kept) as u64;
    }

    /// What was kept, as text, and how many bytes were dropped.
    pub(crate) fn take(&self) -> (String, u64) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = std::mem::take(&mut state.kept);
        (String::from_utf8_lossy(&kept).into_owned(), state.dropped)
    }
}

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl OutputStream for CapturedOutput {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        self.append(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        // Always ready: excess is dropped, not refused.
        Ok(64 << 10)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CapturedOutput {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for CapturedOutput {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.append(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limiter_counts_all_memories_together_and_records_refusals() {
        let mut limiter = MemoryLimiter::new(100);
        assert!(limiter.grow(0, 60, None));
        assert!(limiter.grow(0, 30, None));
        assert!(!limiter.grow(30, 50, None), "60 + 50 > 100");
        assert_eq!(limiter.refused, Some(110));
        assert_eq!(limiter.peak, 90);
    }

    #[test]
    fn growth_past_a_maximum_is_refused_without_being_counted() {
        let mut limiter = MemoryLimiter::new(100);
        assert!(!limiter.grow(0, 40, Some(30)), "past its own maximum");
        assert_eq!((limiter.refused, limiter.peak), (None, 0), "not a memory-limit refusal, nothing in use");
        assert!(limiter.grow(0, 90, None), "the refused growth took none of the limit");
        assert!(!limiter.grow(0, 20, Some(30)), "over the limit is recorded even under a maximum");
        assert_eq!(limiter.refused, Some(110));
    }

    #[test]
    fn captured_output_keeps_the_head_and_counts_the_rest() {
        let output = CapturedOutput::new(4);
        output.append(b"abc");
        output.append(b"defg");
        assert_eq!(output.take(), ("abcd".to_owned(), 3));
    }
}
