//! Every call is a span with OpenInference's TOOL attributes and toolcell's own.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};
use toolcell_runtime::{LimitOverrides, ToolCall};
use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use crate::common::runtime;

/// A span's fields, each as text.
pub type Fields = BTreeMap<String, String>;

/// Records every open span's fields, and keeps the `tool_call` spans that close while a test
/// watches for their call id's prefix, with every event (log line) in them, at every level,
/// with its level and the span's `tool_call.id`. Only what is watched is kept: kept for the
/// whole binary, the spans and events of every call of every test grew the suite to gigabytes.
#[derive(Clone, Default)]
struct Recorder {
    open: Arc<Mutex<HashMap<u64, (String, Fields)>>>,
    /// The call id prefixes tests are watching now.
    watched: Arc<Mutex<Vec<String>>>,
    closed: Arc<Mutex<Vec<Fields>>>,
    events: Arc<Mutex<Vec<Fields>>>,
}

impl Recorder {
    fn watched(&self, call: &str) -> bool {
        self.watched.lock().unwrap().iter().any(|prefix| call.starts_with(prefix.as_str()))
    }
}

struct Collect<'a>(&'a mut Fields);

impl Visit for Collect<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, context: Context<'_, S>) {
        let mut fields = Fields::new();
        attributes.record(&mut Collect(&mut fields));
        let parent = if attributes.is_contextual() {
            context.current_span().id().cloned()
        } else {
            attributes.parent().cloned()
        };
        let mut open = self.open.lock().unwrap();
        // The parent's call id, when the parent is a tool call: how nesting shows.
        let parent_call = parent.and_then(|parent| open.get(&parent.into_u64())?.1.get("tool_call.id").cloned());
        if let Some(parent_call) = parent_call {
            fields.insert("parent.tool_call.id".into(), parent_call);
        }
        open.insert(id.into_u64(), (attributes.metadata().name().to_owned(), fields));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        if let Some((_, fields)) = self.open.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Collect(fields));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, context: Context<'_, S>) {
        // Only the events of calls (in a call's span or one inside it, as wasmtime's spans
        // around host calls): not those of compilation and loading.
        let call = context.event_scope(event).and_then(|scope| {
            let open = self.open.lock().unwrap();
            scope.into_iter().find_map(|span| open.get(&span.id().into_u64())?.1.get("tool_call.id").cloned())
        });
        let Some(call) = call.filter(|call| self.watched(call)) else { return };
        let mut fields = Fields::new();
        event.record(&mut Collect(&mut fields));
        fields.insert("level".into(), event.metadata().level().to_string());
        fields.insert("target".into(), event.metadata().target().to_owned());
        fields.insert("tool_call.id".into(), call);
        self.events.lock().unwrap().push(fields);
    }

    fn on_close(&self, id: Id, _: Context<'_, S>) {
        let Some((name, fields)) = self.open.lock().unwrap().remove(&id.into_u64()) else { return };
        if name == "tool_call" && fields.get("tool_call.id").is_some_and(|call| self.watched(call)) {
            self.closed.lock().unwrap().push(fields);
        }
    }
}

/// Records `tool_call` spans for the whole test binary. One global subscriber, because
/// `tracing` caches whether a callsite is enabled across threads: a subscriber set for one
/// test's thread alone misses spans now and then while other tests run in parallel.
fn recorder() -> &'static Recorder {
    static RECORDER: OnceLock<Recorder> = OnceLock::new();
    RECORDER.get_or_init(|| {
        let recorder = Recorder::default();
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(recorder.clone()))
            .expect("no other global subscriber in this test binary");
        recorder
    })
}

/// Runs `future` and returns its output and the `tool_call` spans of the calls whose id
/// starts with `id_prefix` (each test uses its own), in the order they closed.
pub async fn tool_call_spans<F: Future>(id_prefix: &str, future: F) -> (F::Output, Vec<Fields>) {
    let (output, spans, _) = tool_call_spans_and_events(id_prefix, future).await;
    (output, spans)
}

/// [`tool_call_spans`], and the events (log lines, at every level) that happened in those
/// calls' spans.
pub async fn tool_call_spans_and_events<F: Future>(
    id_prefix: &str,
    future: F,
) -> (F::Output, Vec<Fields>, Vec<Fields>) {
    let recorder = recorder();
    recorder.watched.lock().unwrap().push(id_prefix.to_owned());
    let output = future.await;
    let mut watched = recorder.watched.lock().unwrap();
    if let Some(at) = watched.iter().position(|prefix| prefix == id_prefix) {
        watched.remove(at);
    }
    drop(watched);
    let ours = |fields: &Fields| fields.get("tool_call.id").is_some_and(|id| id.starts_with(id_prefix));
    let spans = take(&recorder.closed, ours);
    let events = take(&recorder.events, ours);
    (output, spans, events)
}

/// Takes the entries of `kept` that are `ours`, in order, and leaves the others.
fn take(kept: &Mutex<Vec<Fields>>, ours: impl Fn(&Fields) -> bool) -> Vec<Fields> {
    let mut kept = kept.lock().unwrap();
    let (taken, left) = std::mem::take(&mut *kept).into_iter().partition(|fields| ours(fields));
    *kept = left;
    taken
}

#[tokio::test]
async fn a_successful_call_is_an_openinference_tool_span() {
    let arguments = json!({"expression": "6 * 7"});
    let call = ToolCall::new("spans-success", "calculator", arguments.clone());
    let (output, spans) = tool_call_spans("spans-success", runtime().call(call)).await;
    let [span] = spans.as_slice() else { panic!("one span: {spans:?}") };
    let definition = runtime().definition("calculator").unwrap();
    assert_eq!(span["otel.name"], "calculator");
    assert_eq!(span["openinference.span.kind"], "TOOL");
    assert_eq!(span["tool.name"], "calculator");
    assert_eq!(span["tool_call.id"], "spans-success");
    assert_eq!(span["tool.description"], definition.description);
    assert_eq!(serde_json::from_str::<Value>(&span["tool.parameters"]).unwrap(), definition.parameters);
    assert_eq!(serde_json::from_str::<Value>(&span["input.value"]).unwrap(), arguments);
    assert_eq!(span["input.mime_type"], "application/json");
    assert_eq!(span["output.value"], output.content);
    assert_eq!(span["output.mime_type"], "application/json");
    assert_eq!(span["otel.status_code"], "OK");
    assert_eq!(span["toolcell.tool.version"], "1.0.0");
    assert!(span["toolcell.tool.source"].ends_with("calculator.wasm"), "{span:?}");
    assert_eq!(span["toolcell.fuel_consumed"], output.usage.fuel_consumed.to_string());
    assert_eq!(span["toolcell.peak_memory_bytes"], output.usage.peak_memory_bytes.to_string());
    assert!(!span.contains_key("toolcell.error.kind"));
}

#[tokio::test]
async fn a_failed_call_carries_its_kind_message_and_the_limit_it_hit() {
    let call = ToolCall::new("spans-fuel", "infinite_loop", json!({})).with_limits(LimitOverrides::new().fuel(200_000));
    let (output, spans) = tool_call_spans("spans-fuel", runtime().call(call)).await;
    let span = &spans[0];
    assert_eq!(span["otel.status_code"], "ERROR");
    assert_eq!(span["otel.status_description"], format!("fuel_exhausted: {}", output.content));
    assert_eq!(span["toolcell.error.kind"], "fuel_exhausted");
    assert_eq!(span["toolcell.error.retryable"], "false");
    assert_eq!(span["toolcell.limit"], "fuel");
    assert_eq!(span["output.mime_type"], "text/plain");

    let (_, spans) =
        tool_call_spans("spans-unknown", runtime().call(ToolCall::new("spans-unknown", "calculater", json!({})))).await;
    assert_eq!(spans[0]["toolcell.error.kind"], "unknown_tool");
    assert!(!spans[0].contains_key("tool.description"), "no tool, no definition");
}
