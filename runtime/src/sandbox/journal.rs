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

/// Recording or replaying one call: shared by the call's clocks, random sources and calls
/// import. Cheap to clone.
#[derive(Clone)]
pub(crate) enum Journal {
    Recording(Arc<Recording>),
    Replaying(Arc<Replaying>),
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Recording(_) => "Journal::Recording",
            Self::Replaying(_) => "Journal::Replaying",
        })
    }
}

/// A call being recorded.
#[derive(Default)]
pub(crate) struct Recording {
    observed: Mutex<Observed>,
    /// Set when the call observed more than a record keeps.
    overflowed: Mutex<Option<String>>,
}

/// A call being replayed from what it observed.
pub(crate) struct Replaying {
    observed: Observed,
    random: Vec<u8>,
    insecure_random: Vec<u8>,
    next: Mutex<Cursors>,
    /// The first thing the run asked for that the record does not have.
    diverged: Mutex<Option<String>>,
}

#[derive(Default)]
struct Cursors {
    wall: usize,
    monotonic: usize,
    random: usize,
    insecure_random: usize,
    calls: usize,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Journal {
    /// Starts recording.
    pub(crate) fn record() -> Self {
        Self::Recording(Arc::default())
    }

    /// Replays `observed`.
    ///
    /// # Errors
    /// When its random bytes are not hex.
    pub(crate) fn replay(observed: Observed) -> Result<Self, String> {
        let random = from_hex(&observed.random_hex).ok_or("its random bytes are not hex")?;
        let insecure_random = from_hex(&observed.insecure_random_hex).ok_or("its insecure random bytes are not hex")?;
        Ok(Self::Replaying(Arc::new(Replaying {
            observed,
            random,
            insecure_random,
            next: Mutex::default(),
            diverged: Mutex::default(),
        })))
    }

    /// Gives the call's WASI context this journal's clocks and random sources.
    pub(crate) fn install(&self, wasi: &mut WasiCtxBuilder) {
        wasi.wall_clock(WallClock(self.clone()))
            .monotonic_clock(MonotonicClock(self.clone()))
            .secure_random(Random { journal: self.clone(), insecure: false })
            .insecure_random(Random { journal: self.clone(), insecure: true });
        let seed = match self {
            Self::Recording(recording) => {
                let mut bytes = [0u8; 16];
                // An unreadable system source leaves the seed zero: it is recorded either way.
                let _ = getrandom::fill(&mut bytes);
                lock(&recording.observed).insecure_seed_hex = to_hex(&bytes);
                u128::from_le_bytes(bytes)
            }
            Self::Replaying(replaying) => from_hex(&replaying.observed.insecure_seed_hex)
                .and_then(|bytes| <[u8; 16]>::try_from(bytes).ok())
                .map_or_else(
                    || {
                        replaying.diverge("its insecure seed is not 16 bytes of hex".into());
                        0
                    },
                    u128::from_le_bytes,
                ),
        };
        wasi.insecure_random_seed(seed);
    }

    /// The list `callable` answers, when replaying: the recorded one.
    pub(crate) fn replayed_callable(&self) -> Option<Vec<CallableTool>> {
        match self {
            Self::Recording(_) => None,
            Self::Replaying(replaying) => Some(replaying.observed.callable.clone().unwrap_or_else(|| {
                replaying.diverge("the tool asked which tools it may call, which the recorded run never did".into());
                Vec::new()
            })),
        }
    }

    /// Keeps what `callable` answered, when recording.
    pub(crate) fn record_callable(&self, tools: &[CallableTool]) {
        if let Self::Recording(recording) = self {
            lock(&recording.observed).callable = Some(tools.to_vec());
        }
    }

    /// The answer to the next nested call, when replaying: the recorded one when the call is
    /// the one recorded next, else `Err` with how the run diverged.
    pub(crate) fn replayed_call(&self, name: &str, arguments: &str) -> Option<Result<NestedCall, String>> {
        let Self::Replaying(replaying) = self else { return None };
        let index = {
            let mut next = lock(&replaying.next);
            next.calls += 1;
            next.calls - 1
        };
        let answer = match replaying.observed.calls.get(index) {
            Some(recorded) if recorded.name == name && recorded.arguments == arguments => Ok(recorded.clone()),
            Some(recorded) => Err(format!(
                "nested call {} asked for `{name}` with {arguments}; the record has `{}` with {}",
                index + 1,
                recorded.name,
                recorded.arguments
            )),
            None => Err(format!(
                "nested call {} asked for `{name}`; the recorded run made only {} calls",
                index + 1,
                replaying.observed.calls.len()
            )),
        };
        if let Err(diverged) = &answer {
            replaying.diverge(diverged.clone());
        }
        Some(answer)
    }

    /// Keeps a nested call and its answer, when recording.
    pub(crate) fn record_call(&self, call: NestedCall) {
        if let Self::Recording(recording) = self {
            lock(&recording.observed).calls.push(call);
        }
    }

    /// What was recorded, or why it could not be.
    pub(crate) fn recorded(&self) -> Result<Observed, String> {
        match self {
            Self::Recording(recording) => match lock(&recording.overflowed).clone() {
                Some(overflowed) => Err(overflowed),
                None => Ok(lock(&recording.observed).clone()),
            },
            Self::Replaying(_) => Err("a replay records nothing".into()),
        }
    }

    /// How the replay diverged from the record, if it did: the first thing it asked for that
    /// the record does not have, or the calls it left unmade.
    pub(crate) fn divergence(&self) -> Option<String> {
        let Self::Replaying(replaying) = self else { return None };
        if let Some(diverged) = lock(&replaying.diverged).clone() {
            return Some(diverged);
        }
        let made = lock(&replaying.next).calls;
        let recorded = replaying.observed.calls.len();
        (made < recorded).then(|| format!("the run made {made} nested calls; the recorded run made {recorded}"))
    }
}

impl Recording {
    fn overflow(&self, what: &str) {
        lock(&self.overflowed).get_or_insert_with(|| format!("the call {what}, more than a record keeps"));
    }
}

impl Replaying {
    fn diverge(&self, how: String) {
        lock(&self.diverged).get_or_insert(how);
    }
}

/// `wasi:clocks/wall-clock`, recorded or replayed.
struct WallClock(Journal);

impl HostWallClock for WallClock {
    fn resolution(&self) -> Duration {
        wasmtime_wasi::clocks::wall_clock().resolution()
    }

    fn now(&self) -> Duration {
        match &self.0 {
            Journal::Recording(recording) => {
                let now = wasmtime_wasi::clocks::wall_clock().now();
                let mut observed = lock(&recording.observed);
                if observed.wall_clock_ns.len() < MAX_RECORDED_CLOCK_READINGS {
                    observed.wall_clock_ns.push(u64::try_from(now.as_nanos()).unwrap_or(u64::MAX));
                } else {
                    recording.overflow("read the wall clock more than a million times");
                }
                now
            }
            Journal::Replaying(replaying) => {
                let index = next_index(&replaying.next, |next| &mut next.wall);
                match replaying.observed.wall_clock_ns.get(index) {
                    Some(ns) => Duration::from_nanos(*ns),
                    None => {
                        replaying.diverge(read_more("wall clock", index, replaying.observed.wall_clock_ns.len()));
                        Duration::ZERO
                    }
                }
            }
        }
    }
}

/// `wasi:clocks/monotonic-clock`, recorded or replayed.
struct MonotonicClock(Journal);

impl HostMonotonicClock for MonotonicClock {
    fn resolution(&self) -> u64 {
        wasmtime_wasi::clocks::monotonic_clock().resolution()
    }

    fn now(&self) -> u64 {
        match &self.0 {
            Journal::Recording(recording) => {
                let now = wasmtime_wasi::clocks::monotonic_clock().now();
                let mut observed = lock(&recording.observed);
                if observed.monotonic_clock_ns.len() < MAX_RECORDED_CLOCK_READINGS {
                    observed.monotonic_clock_ns.push(now);
                } else {
                    recording.overflow("read the monotonic clock more than a million times");
                }
                now
            }
            Journal::Replaying(replaying) => {
                let index = next_index(&replaying.next, |next| &mut next.monotonic);
                replaying.observed.monotonic_clock_ns.get(index).copied().unwrap_or_else(|| {
                    replaying.diverge(read_more("monotonic clock", index, replaying.observed.monotonic_clock_ns.len()));
                    0
                })
            }
        }
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
        match &self.journal {
            Journal::Recording(recording) => {
                // The system's source, as wasmtime-wasi's default does for both.
                if getrandom::fill(dest).is_err() {
                    dest.fill(0);
                }
                let mut observed = lock(&recording.observed);
                let kept = if self.insecure { &mut observed.insecure_random_hex } else { &mut observed.random_hex };
                if kept.len() / 2 + dest.len() <= MAX_RECORDED_RANDOM_BYTES {
                    kept.push_str(&to_hex(dest));
                } else {
                    recording.overflow("read more than 16 MiB of random bytes");
                }
            }
            Journal::Replaying(replaying) => {
                let (bytes, cursor) = {
                    let mut next = lock(&replaying.next);
                    let cursor = if self.insecure { &mut next.insecure_random } else { &mut next.random };
                    let start = *cursor;
                    *cursor += dest.len();
                    (if self.insecure { &replaying.insecure_random } else { &replaying.random }, start)
                };
                match bytes.get(cursor..cursor + dest.len()) {
                    Some(recorded) => dest.copy_from_slice(recorded),
                    None => {
                        let source = if self.insecure { "insecure random" } else { "random" };
                        replaying
                            .diverge(format!("the tool read more {source} bytes than the {} recorded", bytes.len()));
                        dest.fill(0);
                    }
                }
            }
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

fn from_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
}
