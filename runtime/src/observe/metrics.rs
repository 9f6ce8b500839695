//! Per-tool call counts, errors by kind, latency and fuel histograms, and calls in flight.
//!
//! Two readers see the same numbers: the embedding, through [`crate::Runtime::metrics`] (kept
//! here in atomics), and an OpenTelemetry pipeline, through the `opentelemetry` metrics API.
//! The runtime only records; the process that installs a meter provider decides where the
//! numbers go (OTLP, Prometheus). Without one the instruments are no-ops.
//!
//! The instruments come from the global meter provider when the runtime is built, so a
//! process installs its provider first.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram as OtelHistogram, UpDownCounter};
use serde::Serialize;

/// A runtime's calls right now. The default: none running or waiting, and a limit of 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CallsInFlight {
    /// Calls running in an instance.
    pub running: usize,
    /// Calls queued for a free place.
    pub waiting: usize,
    /// How many calls may run at once.
    pub limit: usize,
}

/// The meter's name in an OpenTelemetry pipeline.
pub const METER_NAME: &str = "toolcell";

/// Upper bounds of the latency buckets, in seconds (100 µs to 30 s).
const DURATION_BOUNDS_S: [f64; 16] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 30.0];

/// Upper bounds of the fuel buckets (a thousand to ten billion instructions).
const FUEL_BOUNDS: [f64; 8] = [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];

/// A runtime's metrics at one moment, from [`crate::Runtime::metrics`]. The default has
/// nothing recorded (what a reader's tests start from: the fields are public).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Metrics {
    /// Calls running and waiting across all tools, and the limit.
    pub in_flight: CallsInFlight,
    /// Calls naming a tool that is not loaded (not counted under any tool).
    pub unknown_tool_calls: u64,
    /// Each loaded tool, by name, and each tool a reload removed after it was called: a tool
    /// keeps its counts across reloads.
    pub tools: BTreeMap<String, ToolMetrics>,
}

/// One tool's metrics since the runtime was built. The default has nothing recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolMetrics {
    /// Calls finished (successful or not).
    pub calls: u64,
    /// Failed calls by [`crate::CallError::kind`].
    pub errors: BTreeMap<String, u64>,
    /// Calls running or waiting now.
    pub in_flight: u64,
    /// Calls that ran in an instance made ready before them; the others (a tool's first
    /// call, calls in quick succession, recorded and replayed calls) made their own.
    pub ready_instance_calls: u64,
    /// Wall-clock time per call, in seconds.
    pub duration_seconds: Histogram,
    /// Fuel consumed per call.
    pub fuel: Histogram,
}

/// A fixed-bucket histogram: `counts[i]` calls had a value at most `bounds[i]` (and above
/// the bound before); the last count is everything above the last bound. The default has no
/// bounds, so one bucket (everything), empty.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Histogram {
    /// Upper bounds of the buckets.
    pub bounds: Vec<f64>,
    /// One count per bucket, plus one for values above the last bound.
    pub counts: Vec<u64>,
    /// How many values were recorded.
    pub count: u64,
    /// Their sum.
    pub sum: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self { bounds: Vec::new(), counts: vec![0], count: 0, sum: 0.0 }
    }
}

impl Histogram {
    /// The bucket bound below which at least `quantile` (0 to 1) of the values fall, or
    /// `None` when empty or above the last bound.
    pub fn quantile_bound(&self, quantile: f64) -> Option<f64> {
        let wanted = (quantile.clamp(0.0, 1.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (count, bound) in self.counts.iter().zip(&self.bounds) {
            seen += count;
            if seen >= wanted {
                return Some(*bound);
            }
        }
        None
    }
}

/// Everything the runtime records, shared by all versions of a runtime.
#[derive(Debug)]
pub(crate) struct Recorder {
    tools: Mutex<BTreeMap<String, Arc<ToolCounters>>>,
    unknown_tool_calls: AtomicU64,
    instruments: Instruments,
}

impl Recorder {
    /// A recorder whose instruments come from the global meter provider installed now.
    pub(crate) fn new() -> Self {
        Self { tools: Mutex::default(), unknown_tool_calls: AtomicU64::new(0), instruments: Instruments::new() }
    }

    /// The counters of a tool, the same ones across reloads.
    pub(crate) fn tool(&self, name: &str) -> Arc<ToolCounters> {
        let mut tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        tools.entry(name.to_owned()).or_insert_with(|| Arc::new(ToolCounters::new(name))).clone()
    }

    /// A call is starting (waiting included). The returned guard records its end.
    pub(crate) fn start<'a>(&'a self, tool: Option<&'a Arc<ToolCounters>>) -> CallRecord<'a> {
        if let Some(tool) = tool {
            tool.in_flight.fetch_add(1, Ordering::Relaxed);
            self.instruments.in_flight.add(1, &tool.attributes);
        }
        CallRecord { recorder: self, tool, finished: false }
    }

    /// Everything, now.
    pub(crate) fn snapshot(&self, in_flight: CallsInFlight) -> Metrics {
        let tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        Metrics {
            in_flight,
            unknown_tool_calls: self.unknown_tool_calls.load(Ordering::Relaxed),
            tools: tools
                .iter()
                .map(|(name, counters)| (name, counters, counters.snapshot()))
                // Held by a version of the runtime, or called once: not a tool refused at load.
                .filter(|(_, counters, metrics)| Arc::strong_count(counters) > 1 || metrics.calls > 0)
                .map(|(name, _, metrics)| (name.clone(), metrics))
                .collect(),
        }
    }
}

/// One call's place in the metrics; dropping it without [`CallRecord::finish`] (a caller
/// that gave up on the call) still takes the call out of the in-flight count.
#[derive(Debug)]
pub(crate) struct CallRecord<'a> {
    recorder: &'a Recorder,
    tool: Option<&'a Arc<ToolCounters>>,
    finished: bool,
}

impl CallRecord<'_> {
    /// The call ended: with `error_kind` when it failed.
    pub(crate) fn finish(mut self, error_kind: Option<&'static str>, duration: Duration, fuel: u64) {
        self.finished = true;
        let Some(tool) = self.tool else {
            self.recorder.unknown_tool_calls.fetch_add(1, Ordering::Relaxed);
            let attributes = [KeyValue::new("error.type", "unknown_tool")];
            self.recorder.instruments.errors.add(1, &attributes);
            return;
        };
        tool.record(error_kind, duration, fuel);
        let instruments = &self.recorder.instruments;
        instruments.in_flight.add(-1, &tool.attributes);
        instruments.calls.add(1, &tool.attributes);
        instruments.duration.record(duration.as_secs_f64(), &tool.attributes);
        instruments.fuel.record(fuel, &tool.attributes);
        if let Some(kind) = error_kind {
            let attributes = [tool.attributes[0].clone(), KeyValue::new("error.type", kind)];
            instruments.errors.add(1, &attributes);
        }
    }
}

impl Drop for CallRecord<'_> {
    fn drop(&mut self) {
        if let (false, Some(tool)) = (self.finished, self.tool) {
            tool.in_flight.fetch_sub(1, Ordering::Relaxed);
            self.recorder.instruments.in_flight.add(-1, &tool.attributes);
        }
    }
}

/// One tool's counts, updated without locks except to count an error's kind.
#[derive(Debug)]
pub(crate) struct ToolCounters {
    /// `tool.name`, for the OpenTelemetry instruments.
    attributes: [KeyValue; 1],
    calls: AtomicU64,
    in_flight: AtomicI64,
    ready: AtomicU64,
    errors: Mutex<BTreeMap<&'static str, u64>>,
    duration: Buckets,
    fuel: Buckets,
}

impl ToolCounters {
    fn new(name: &str) -> Self {
        Self {
            attributes: [KeyValue::new("tool.name", name.to_owned())],
            calls: AtomicU64::new(0),
            in_flight: AtomicI64::new(0),
            ready: AtomicU64::new(0),
            errors: Mutex::default(),
            duration: Buckets::new(&DURATION_BOUNDS_S),
            fuel: Buckets::new(&FUEL_BOUNDS),
        }
    }

    fn record(&self, error_kind: Option<&'static str>, duration: Duration, fuel: u64) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.duration.record(duration.as_secs_f64());
        self.fuel.record(fuel as f64);
        if let Some(kind) = error_kind {
            *self.errors.lock().unwrap_or_else(PoisonError::into_inner).entry(kind).or_default() += 1;
        }
    }

    /// Counts a call that ran in an instance made ready before it.
    pub(crate) fn ran_ready(&self) {
        self.ready.fetch_add(1, Ordering::Relaxed);
    }

    fn snapshot(&self) -> ToolMetrics {
        let errors = self.errors.lock().unwrap_or_else(PoisonError::into_inner);
        ToolMetrics {
            calls: self.calls.load(Ordering::Relaxed),
            errors: errors.iter().map(|(kind, count)| ((*kind).to_owned(), *count)).collect(),
            in_flight: self.in_flight.load(Ordering::Relaxed).max(0).unsigned_abs(),
            ready_instance_calls: self.ready.load(Ordering::Relaxed),
            duration_seconds: self.duration.snapshot(),
            fuel: self.fuel.snapshot(),
        }
    }
}

/// A histogram in atomics.
#[derive(Debug)]
struct Buckets {
    bounds: &'static [f64],
    counts: Vec<AtomicU64>,
    /// The sum, as `f64` bits.
    sum: AtomicU64,
}

impl Buckets {
    fn new(bounds: &'static [f64]) -> Self {
        Self { bounds, counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(), sum: AtomicU64::new(0) }
    }

    fn record(&self, value: f64) {
        let bucket = self.bounds.partition_point(|bound| *bound < value);
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        // A lost race here costs a retry, not a value.
        let _ = self
            .sum
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| Some((f64::from_bits(bits) + value).to_bits()));
    }

    fn snapshot(&self) -> Histogram {
        let counts: Vec<u64> = self.counts.iter().map(|count| count.load(Ordering::Relaxed)).collect();
        Histogram {
            bounds: self.bounds.to_vec(),
            count: counts.iter().sum(),
            counts,
            sum: f64::from_bits(self.sum.load(Ordering::Relaxed)),
        }
    }
}

/// The OpenTelemetry instruments (no-ops when no meter provider is installed).
#[derive(Debug)]
struct Instruments {
    calls: Counter<u64>,
    errors: Counter<u64>,
    in_flight: UpDownCounter<i64>,
    duration: OtelHistogram<f64>,
    fuel: OtelHistogram<u64>,
}

impl Instruments {
    fn new() -> Self {
        let meter = opentelemetry::global::meter(METER_NAME);
        Self {
            calls: meter
                .u64_counter("toolcell.tool.calls")
                .with_description("Tool calls finished")
                .with_unit("{call}")
                .build(),
            errors: meter
                .u64_counter("toolcell.tool.errors")
                .with_description("Tool calls that failed, by error.type (the toolcell error kind)")
                .with_unit("{call}")
                .build(),
            in_flight: meter
                .i64_up_down_counter("toolcell.tool.calls_in_flight")
                .with_description("Tool calls running or waiting for a slot")
                .with_unit("{call}")
                .build(),
            duration: meter
                .f64_histogram("toolcell.tool.duration")
                .with_description("Wall-clock time of a tool call, validation and waiting included")
                .with_unit("s")
                .with_boundaries(DURATION_BOUNDS_S.to_vec())
                .build(),
            fuel: meter
                .u64_histogram("toolcell.tool.fuel")
                .with_description("Fuel a tool call consumed (about one per WebAssembly instruction)")
                .with_unit("{fuel}")
                .with_boundaries(FUEL_BOUNDS.to_vec())
                .build(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_count_each_value_once_at_its_upper_bound() {
        let buckets = Buckets::new(&[1.0, 10.0]);
        for value in [0.5, 1.0, 1.5, 10.0, 11.0, 1e9] {
            buckets.record(value);
        }
        let histogram = buckets.snapshot();
        assert_eq!(histogram.counts, vec![2, 2, 2]);
        assert_eq!(histogram.count, 6);
        assert!((histogram.sum - (0.5 + 1.0 + 1.5 + 10.0 + 11.0 + 1e9)).abs() < 1e-6);
        assert_eq!(histogram.quantile_bound(0.5), Some(10.0));
        assert_eq!(histogram.quantile_bound(0.3), Some(1.0));
        assert_eq!(histogram.quantile_bound(1.0), None);
    }

    #[test]
    fn a_call_dropped_before_it_finishes_leaves_the_in_flight_count() {
        let recorder = Recorder::new();
        let tool = recorder.tool("calculator");
        let record = recorder.start(Some(&tool));
        assert_eq!(tool.snapshot().in_flight, 1);
        drop(record);
        let metrics = tool.snapshot();
        assert_eq!((metrics.in_flight, metrics.calls), (0, 0));
        recorder.start(Some(&tool)).finish(Some("timeout"), Duration::from_millis(3), 42);
        let metrics = tool.snapshot();
        assert_eq!((metrics.in_flight, metrics.calls), (0, 1));
        assert_eq!(metrics.errors.get("timeout"), Some(&1));
        assert_eq!(metrics.fuel.counts[0], 1);
    }
}
