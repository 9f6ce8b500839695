//! A call's stdout, forwarded a line at a time while the tool runs
//! ([`ToolCall::on_stdout_line`](crate::ToolCall::on_stdout_line)): each line redacted with
//! the call's secrets and cut, and at most so many per call, so a chatty tool can neither
//! flood the caller nor leak what a result would not.

use crate::redact::Redactor;
use crate::tool::io::{MAX_STREAMED_LINE_BYTES, MAX_STREAMED_LINES, StdoutLines};

/// Splits what a guest writes into lines and hands each to the caller's sink.
#[derive(Debug)]
pub(crate) struct LineForwarder {
    sink: StdoutLines,
    redactor: Redactor,
    /// The line being written, up to what a cut line needs (the rest of it is dropped).
    pending: Vec<u8>,
    /// Lines handed on so far.
    sent: usize,
}

impl LineForwarder {
    pub(crate) fn new(sink: StdoutLines, redactor: Redactor) -> Self {
        Self { sink, redactor, pending: Vec::new(), sent: 0 }
    }

    /// Takes `bytes` the guest wrote; hands on each line they complete.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for piece in bytes.split_inclusive(|&byte| byte == b'\n') {
            if self.sent >= MAX_STREAMED_LINES {
                return;
            }
            // Room for a secret that starts before the cut, so the cut can redact it whole.
            let room = (2 * MAX_STREAMED_LINE_BYTES).saturating_sub(self.pending.len());
            let (line, ends) = match piece.strip_suffix(b"\n") {
                Some(line) => (line, true),
                None => (piece, false),
            };
            self.pending.extend_from_slice(&line[..line.len().min(room)]);
            if ends {
                self.hand_on();
            }
        }
    }

    fn hand_on(&mut self) {
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        let line = self.redactor.cut(text.trim_end_matches('\r'), MAX_STREAMED_LINE_BYTES);
        self.sent += 1;
        (self.sink.0)(&line);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    fn forwarder(secrets: &[&str]) -> (LineForwarder, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let seen = lines.clone();
        let sink = StdoutLines::new(move |line| seen.lock().unwrap().push(line.to_owned()));
        let redactor = Redactor::granted(secrets.iter().map(|secret| (*secret).to_owned()));
        (LineForwarder::new(sink, redactor), lines)
    }

    #[test]
    fn complete_lines_are_handed_on_redacted_across_writes() {
        let (mut forwarder, lines) = forwarder(&["hunter2-secret"]);
        forwarder.write(b"one\r\ntw");
        forwarder.write(b"o\nthe key is hunter2-");
        forwarder.write(b"secret\nno newline yet");
        assert_eq!(*lines.lock().unwrap(), ["one", "two", "the key is [REDACTED]"]);
    }

    #[test]
    fn a_long_line_is_cut_and_lines_are_bounded_per_call() {
        let (mut forwarder, lines) = forwarder(&[]);
        forwarder.write(&vec![b'x'; 10 * MAX_STREAMED_LINE_BYTES]);
        forwarder.write(b"\n");
        let first = lines.lock().unwrap()[0].clone();
        assert!(first.len() <= MAX_STREAMED_LINE_BYTES && first.ends_with('…'), "{}", first.len());
        forwarder.write(&b"line\n".repeat(2 * MAX_STREAMED_LINES));
        assert_eq!(lines.lock().unwrap().len(), MAX_STREAMED_LINES);
    }
}
