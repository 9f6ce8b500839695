//! What a call observes of the host beyond its input: clock readings, random bytes, the tools
//! it may call and their answers. Recording keeps each in order; replaying answers each from
//! the record, so the guest runs the same instructions again (the same result, the same
//! fuel), and a run that asks for something the record does not have has diverged: it is
//! told so, never answered by the live host.
//!
//! [`crate::record`] makes records and replays them.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rand_core::{Infallible, TryRng};
use serde::{Deserialize, Serialize};
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtxBuilder};

/// The most random bytes one record keeps; a call that reads more is not recorded.
pub(crate) const MAX_RECORDED_RANDOM_BYTES: usize = 16 << 20;
/// The most clock readings one record keeps.
pub(crate) const MAX_RECORDED_CLOCK_READINGS: usize = 1 << 20;
/// The most bytes of HTTP response bodies one record keeps.
pub(crate) const MAX_RECORDED_HTTP_BYTES: usize = 16 << 20;

/// What one call observed, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Observed {
    /// `wasi:clocks/wall-clock` readings, in nanoseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wall_clock_ns: Vec<u64>,
    /// `wasi:clocks/monotonic-clock` readings, in nanoseconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub monotonic_clock_ns: Vec<u64>,
    /// The bytes `wasi:random/random` gave, as hex.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub random_hex: String,
    /// The bytes `wasi:random/insecure` gave, as hex.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub insecure_random_hex: String,
    /// The seed `wasi:random/insecure-seed` gave, as hex.
    pub insecure_seed_hex: String,
    /// What the `calls` import's `callable` answered, when the guest asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callable: Option<Vec<CallableTool>>,
    /// The calls the guest made to other tools, and their answers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<NestedCall>,
    /// The HTTP requests the guest sent, and what came back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http: Vec<HttpExchange>,
}

/// One HTTP request a call sent, and what came back. Secrets are redacted from both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct HttpExchange {
    /// `GET https://example.com/path`.
    pub request: String,
    /// What came back.
    pub answer: HttpAnswer,
}

/// What an HTTP request got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HttpAnswer {
    /// A response: the body as the guest read it, and how reading it ended when it did not
    /// end well (its cap, a cut connection), in `wasi:http`'s words.
    Response {
        /// The status code.
        status: u16,
        /// The headers, values as text.
        headers: Vec<(String, String)>,
        /// The body as the guest read it, as hex.
        body_hex: String,
        /// How reading the body ended, when it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body_error: Option<String>,
    },
    /// Refused by the host before it left: `reason`, and the grant that would allow it;
    /// `in_flight` when too many requests were in flight.
    Refused {
        /// The request as the refusal quotes it.
        request: String,
        /// Which rule refused it.
        reason: String,
        /// The `allow_hosts` entry that would allow it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grant: Option<String>,
        /// The narrowest rule that would allow it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
        /// Whether it was refused for too many requests in flight.
        #[serde(default)]
        in_flight: bool,
    },
    /// Failed on the way (no address, refused, a timeout), in `wasi:http`'s words.
    Failed {
        /// The error code.
        error: String,
    },
}

/// How to answer an HTTP request of a journaled call.
pub(crate) enum HttpReplay {
    /// Live: send it (and keep what it gets, when recording).
    Live,
    /// From the record.
    Replayed(HttpAnswer),
    /// The run asked for a request the record does not have.
    Diverged(String),
}

/// A tool the guest could call, as `callable` listed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallableTool {
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its parameters' JSON Schema, as text.
    pub parameters_schema: String,
}

/// One call the guest made to another tool, and what came back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NestedCall {
    /// The tool called.
    pub name: String,
    /// The arguments, as the guest passed them.
    pub arguments: String,
    /// The result, or the error `kind`, `message` and `retryable`.
    pub answer: NestedAnswer,
    /// The fuel the call used, charged to the caller.
    pub fuel: u64,
}

/// What a nested call answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum NestedAnswer {
    /// Its result.
    Result(String),
    /// Its error.
    Error {
        /// The error's kind.
        kind: String,
        /// The message the guest read.
        message: String,
        /// Whether a retry may succeed.
        retryable: bool,
    },
}

/// A nested call that waits for a person's approval (code mode), with its arguments redacted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingCall {
    /// The tool the program called.
    pub tool: String,
    /// The arguments, as the program passed them (secrets redacted).
    pub arguments: String,
}

/// What a person decided about a [`PendingCall`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run it.
    Approved,
    /// Do not: the program gets `ToolCallError(kind="denied")` and may carry on.
    Denied,
}

/// How the journal answers the next nested call.
pub(crate) enum Answer {
    /// From the record: no tool runs.
    Replayed(NestedCall),
    /// Live: the call runs (and is recorded). `approved`: a person approved this very call.
    Live { approved: bool },
    /// The run asked for what the record does not have.
    Diverged(String),
}

/// Recording, replaying or resuming one call: shared by the call's clocks, random sources and
/// calls import. Cheap to clone.
///
/// - Recording: everything observed is kept.
/// - Replaying: everything is answered from a record; past its end the run has diverged.
/// - Resuming (code mode's approvals): answered from a record up to its end, then, after the
///   decided call, live; everything is kept, the replayed part included, so the run can
///   stop again at the next call that waits for approval.
#[derive(Clone)]
pub(crate) struct Journal(Arc<Inner>);

struct Inner {
    /// What the run is answered from first.
    replay: Option<Replay>,
    /// Past the replayed part: live (resuming), or diverged (replaying).
    then_live: bool,
    /// What the run observed, when it is kept.
    kept: Option<Mutex<Observed>>,
    /// Set when the run observed more than a record keeps.
    overflowed: Mutex<Option<String>>,
    /// The first thing the run asked for that the record does not have.
    diverged: Mutex<Option<String>>,
    /// A person's decision on the call the record stopped at.
    decision: Option<(PendingCall, Decision)>,
}

struct Replay {
    observed: Observed,
    random: Vec<u8>,
    insecure_random: Vec<u8>,
    next: Mutex<Cursors>,
}

#[derive(Default)]
struct Cursors {
    wall: usize,
    monotonic: usize,
    random: usize,
    insecure_random: usize,
    calls: usize,
    http: usize,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match (&self.0.replay, self.0.then_live) {
            (None, _) => "recording",
            (Some(_), false) => "replaying",
            (Some(_), true) => "resuming",
        };
        write!(f, "Journal({mode})")
    }
}

impl Journal {
    /// Starts recording.
    pub(crate) fn record() -> Self {
        Self::new(None, false, None)
    }

    /// Replays `observed`.
    ///
    /// # Errors
    /// When its random bytes or seed are not hex.
    pub(crate) fn replay(observed: Observed) -> Result<Self, String> {
        Ok(Self::new(Some(Replay::of(observed)?), false, None))
    }

    /// Resumes a run that stopped at `decided.0`: replays `observed`, answers that call as
    /// decided, and goes on live, keeping everything.
    ///
    /// # Errors
    /// As [`Journal::replay`].
    pub(crate) fn resume(observed: Observed, decided: (PendingCall, Decision)) -> Result<Self, String> {
        Ok(Self::new(Some(Replay::of(observed)?), true, Some(decided)))
    }

    fn new(replay: Option<Replay>, then_live: bool, decision: Option<(PendingCall, Decision)>) -> Self {
        let keeps = replay.is_none() || then_live;
        Self(Arc::new(Inner {
            replay,
            then_live,
            kept: keeps.then(Mutex::default),
            overflowed: Mutex::default(),
            diverged: Mutex::default(),
            decision,
        }))
    }

    /// Gives the call's WASI context this journal's clocks and random sources.
    pub(crate) fn install(&self, wasi: &mut WasiCtxBuilder) {
        wasi.wall_clock(WallClock(self.clone()))
            .monotonic_clock(MonotonicClock(self.clone()))
            .secure_random(Random { journal: self.clone(), insecure: false })
            .insecure_random(Random { journal: self.clone(), insecure: true });
        let seed = match &self.0.replay {
            Some(replay) => from_hex(&replay.observed.insecure_seed_hex)
                .and_then(|bytes| <[u8; 16]>::try_from(bytes).ok())
                .unwrap_or_else(|| {
                    self.diverge("its insecure seed is not 16 bytes of hex".into());
                    [0; 16]
                }),
            None => {
                let mut bytes = [0u8; 16];
                // An unreadable system source leaves the seed zero: it is kept either way.
                let _ = getrandom::fill(&mut bytes);
                bytes
            }
        };
        self.keep(|observed| observed.insecure_seed_hex = to_hex(&seed));
        wasi.insecure_random_seed(u128::from_le_bytes(seed));
    }

    /// The list `callable` answers when the record has it; `None`: ask the host (and keep
    /// its answer with [`Journal::record_callable`]).
    pub(crate) fn replayed_callable(&self) -> Option<Vec<CallableTool>> {
        let replay = self.0.replay.as_ref()?;
        match &replay.observed.callable {
            Some(tools) => {
                self.record_callable(tools);
                Some(tools.clone())
            }
            None if self.0.then_live => None,
            None => {
                self.diverge("the tool asked which tools it may call, which the recorded run never did".into());
                Some(Vec::new())
            }
        }
    }

    /// Keeps what `callable` answered.
    pub(crate) fn record_callable(&self, tools: &[CallableTool]) {
        self.keep(|observed| observed.callable = Some(tools.to_vec()));
    }

    /// How to answer the next nested call, to `name` with `arguments` (redacted).
    pub(crate) fn answer(&self, name: &str, arguments: &str) -> Answer {
        let Some(replay) = &self.0.replay else { return Answer::Live { approved: false } };
        let index = {
            let mut next = lock(&replay.next);
            next.calls += 1;
            next.calls - 1
        };
        let recorded = replay.observed.calls.len();
        let answer = match replay.observed.calls.get(index) {
            Some(call) if call.name == name && call.arguments == arguments => Answer::Replayed(call.clone()),
            Some(call) => Answer::Diverged(format!(
                "nested call {} asked for `{name}` with {arguments}; the record has `{}` with {}",
                index + 1,
                call.name,
                call.arguments
            )),
            None if self.0.then_live => match &self.0.decision {
                // The call the run stopped at: answered as decided, once.
                Some((pending, decision)) if index == recorded => {
                    if pending.tool != name || pending.arguments != arguments {
                        Answer::Diverged(format!(
                            "nested call {} asked for `{name}` with {arguments}; the call waiting for approval was \
                             `{}` with {}",
                            index + 1,
                            pending.tool,
                            pending.arguments
                        ))
                    } else if *decision == Decision::Approved {
                        Answer::Live { approved: true }
                    } else {
                        Answer::Replayed(denied(name, arguments))
                    }
                }
                _ => Answer::Live { approved: false },
            },
            None => Answer::Diverged(format!(
                "nested call {} asked for `{name}`; the recorded run made only {recorded} calls",
                index + 1
            )),
        };
        match &answer {
            Answer::Replayed(call) => self.record_call(call.clone()),
            Answer::Diverged(how) => self.diverge(how.clone()),
            Answer::Live { .. } => {}
        }
        answer
    }

    /// How to answer the next HTTP request of the call, `request` (redacted).
    pub(crate) fn answer_http(&self, request: &str) -> HttpReplay {
        let Some(replay) = &self.0.replay else { return HttpReplay::Live };
        let index = next_index(&replay.next, |next| &mut next.http);
        let answer = match replay.observed.http.get(index) {
            Some(recorded) if recorded.request == request => HttpReplay::Replayed(recorded.answer.clone()),
            Some(recorded) => HttpReplay::Diverged(format!(
                "HTTP request {} was `{request}`; the record has `{}`",
                index + 1,
                recorded.request
            )),
            None if self.0.then_live => HttpReplay::Live,
            None => HttpReplay::Diverged(format!(
                "HTTP request {} was `{request}`; the recorded run sent only {}",
                index + 1,
                replay.observed.http.len()
            )),
        };
        match &answer {
            HttpReplay::Replayed(answer) => {
                let exchange = HttpExchange { request: request.to_owned(), answer: answer.clone() };
                self.keep(|observed| observed.http.push(exchange));
            }
            HttpReplay::Diverged(how) => self.diverge(how.clone()),
            HttpReplay::Live => {}
        }
        answer
    }

    /// Keeps an HTTP request and what it got, within the bound on bodies.
    pub(crate) fn record_http(&self, exchange: HttpExchange) {
        let mut overflowed = false;
        self.keep(|observed| {
            let body = |exchange: &HttpExchange| match &exchange.answer {
                HttpAnswer::Response { body_hex, .. } => body_hex.len() / 2,
                _ => 0,
            };
            let kept: usize = observed.http.iter().map(body).sum();
            if kept + body(&exchange) <= MAX_RECORDED_HTTP_BYTES {
                observed.http.push(exchange);
            } else {
                overflowed = true;
            }
        });
        if overflowed {
            self.overflow("read more than 16 MiB of HTTP responses");
        }
    }

    /// Keeps a nested call and its answer.
    pub(crate) fn record_call(&self, call: NestedCall) {
        self.keep(|observed| observed.calls.push(call));
    }

    /// What was kept, or why it could not be.
    pub(crate) fn recorded(&self) -> Result<Observed, String> {
        if let Some(overflowed) = lock(&self.0.overflowed).clone() {
            return Err(overflowed);
        }
        self.0.kept.as_ref().map(|kept| lock(kept).clone()).ok_or_else(|| "a replay keeps nothing".to_owned())
    }

    /// How the run diverged from the record, if it did: the first thing it asked for that
    /// the record does not have, or (replaying) the calls it left unmade.
    pub(crate) fn divergence(&self) -> Option<String> {
        if let Some(diverged) = lock(&self.0.diverged).clone() {
            return Some(diverged);
        }
        let replay = self.0.replay.as_ref()?;
        let (made, sent) = {
            let next = lock(&replay.next);
            (next.calls, next.http)
        };
        let (recorded, recorded_http) = (replay.observed.calls.len(), replay.observed.http.len());
        if made < recorded {
            return Some(format!("the run made {made} nested calls; the recorded run made {recorded}"));
        }
        (sent < recorded_http && !self.0.then_live)
            .then(|| format!("the run sent {sent} HTTP requests; the recorded run sent {recorded_http}"))
    }

    fn keep(&self, change: impl FnOnce(&mut Observed)) {
        if let Some(kept) = &self.0.kept {
            change(&mut lock(kept));
        }
    }

    fn overflow(&self, what: &str) {
        lock(&self.0.overflowed).get_or_insert_with(|| format!("the call {what}, more than a record keeps"));
    }

    fn diverge(&self, how: String) {
        lock(&self.0.diverged).get_or_insert(how);
    }

    /// The next recorded reading of a clock, when the record has one; `None` past its end
    /// (after noting the divergence when replaying).
    fn replayed_reading(
        &self,
        clock: &str,
        readings: impl Fn(&Observed) -> &Vec<u64>,
        cursor: fn(&mut Cursors) -> &mut usize,
    ) -> Option<u64> {
        let replay = self.0.replay.as_ref()?;
        let index = next_index(&replay.next, cursor);
        let recorded = readings(&replay.observed);
        match recorded.get(index) {
            Some(reading) => Some(*reading),
            None if self.0.then_live => None,
            None => {
                self.diverge(read_more(clock, index, recorded.len()));
                Some(0)
            }
        }
    }

    /// Keeps a clock reading, within the bound.
    fn keep_reading(&self, readings: fn(&mut Observed) -> &mut Vec<u64>, reading: u64, clock: &str) {
        let mut overflowed = false;
        self.keep(|observed| {
            let readings = readings(observed);
            if readings.len() < MAX_RECORDED_CLOCK_READINGS {
                readings.push(reading);
            } else {
                overflowed = true;
            }
        });
        if overflowed {
            self.overflow(&format!("read the {clock} more than a million times"));
        }
    }
}

/// The answer a denied call gives the program.
fn denied(name: &str, arguments: &str) -> NestedCall {
    NestedCall {
        name: name.to_owned(),
        arguments: arguments.to_owned(),
        answer: NestedAnswer::Error {
            kind: "denied".to_owned(),
            message: format!(
                "The user denied this call of `{name}`: it did not run. Carry on without it, or explain why it is \
                 needed."
            ),
            retryable: false,
        },
        fuel: 0,
    }
}

impl Replay {
    fn of(observed: Observed) -> Result<Self, String> {
        let random = from_hex(&observed.random_hex).ok_or("its random bytes are not hex")?;
        let insecure_random = from_hex(&observed.insecure_random_hex).ok_or("its insecure random bytes are not hex")?;
        Ok(Self { observed, random, insecure_random, next: Mutex::default() })
    }
}

/// `wasi:clocks/wall-clock`, recorded or replayed.
struct WallClock(Journal);

impl HostWallClock for WallClock {
    fn resolution(&self) -> Duration {
        wasmtime_wasi::clocks::wall_clock().resolution()
    }

    fn now(&self) -> Duration {
        let journal = &self.0;
        let reading = journal
            .replayed_reading("wall clock", |observed| &observed.wall_clock_ns, |next| &mut next.wall)
            .unwrap_or_else(|| u64::try_from(wasmtime_wasi::clocks::wall_clock().now().as_nanos()).unwrap_or(u64::MAX));
        journal.keep_reading(|observed| &mut observed.wall_clock_ns, reading, "wall clock");
        Duration::from_nanos(reading)
    }
}

/// `wasi:clocks/monotonic-clock`, recorded or replayed.
struct MonotonicClock(Journal);

impl HostMonotonicClock for MonotonicClock {
    fn resolution(&self) -> u64 {
        wasmtime_wasi::clocks::monotonic_clock().resolution()
    }

    fn now(&self) -> u64 {
        let journal = &self.0;
        let reading = journal
            .replayed_reading("monotonic clock", |observed| &observed.monotonic_clock_ns, |next| &mut next.monotonic)
            .unwrap_or_else(|| wasmtime_wasi::clocks::monotonic_clock().now());
        journal.keep_reading(|observed| &mut observed.monotonic_clock_ns, reading, "monotonic clock");
        reading
    }
}

/// How a run that read `clock` more often than the record diverged.
fn read_more(clock: &str, index: usize, recorded: usize) -> String {
    format!(
        "the tool read the {clock} more often than the recorded run, which read it {recorded} times (this was \
         reading {})",
        index + 1
    )
}

fn next_index(next: &Mutex<Cursors>, cursor: impl FnOnce(&mut Cursors) -> &mut usize) -> usize {
    let mut next = lock(next);
    let cursor = cursor(&mut next);
    *cursor += 1;
    *cursor - 1
}

/// `wasi:random/random` (or `insecure`), recorded or replayed.
struct Random {
    journal: Journal,
    insecure: bool,
}

impl Random {
    fn fill(&mut self, dest: &mut [u8]) {
        let journal = &self.journal.0;
        let source = if self.insecure { "insecure random" } else { "random" };
        let replayed = journal.replay.as_ref().and_then(|replay| {
            let start = {
                let mut next = lock(&replay.next);
                let cursor = if self.insecure { &mut next.insecure_random } else { &mut next.random };
                *cursor += dest.len();
                *cursor - dest.len()
            };
            let bytes = if self.insecure { &replay.insecure_random } else { &replay.random };
            match bytes.get(start..start + dest.len()) {
                Some(recorded) => {
                    dest.copy_from_slice(recorded);
                    Some(())
                }
                None if journal.then_live => None,
                None => {
                    self.journal
                        .diverge(format!("the tool read more {source} bytes than the {} recorded", bytes.len()));
                    dest.fill(0);
                    Some(())
                }
            }
        });
        // Live: the system's source, as wasmtime-wasi's default does for both.
        if replayed.is_none() && getrandom::fill(dest).is_err() {
            dest.fill(0);
        }
        let mut overflowed = false;
        let insecure = self.insecure;
        self.journal.keep(|observed| {
            let kept = if insecure { &mut observed.insecure_random_hex } else { &mut observed.random_hex };
            if kept.len() / 2 + dest.len() <= MAX_RECORDED_RANDOM_BYTES {
                kept.push_str(&to_hex(dest));
            } else {
                overflowed = true;
            }
        });
        if overflowed {
            self.journal.overflow("read more than 16 MiB of random bytes");
        }
    }
}

impl TryRng for Random {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        let mut bytes = [0u8; 4];
        self.fill(&mut bytes);
        Ok(u32::from_le_bytes(bytes))
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let mut bytes = [0u8; 8];
        self.fill(&mut bytes);
        Ok(u64::from_le_bytes(bytes))
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), Infallible> {
        self.fill(dest);
        Ok(())
    }
}

/// `bytes` as lower-case hex.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    })
}

pub(crate) fn from_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
}
