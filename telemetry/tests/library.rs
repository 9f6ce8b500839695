//! An embedding exporting over OTLP with the builder: spans parented by the caller's span or
//! trace context, the project and headers set in code, and metrics that agree with
//! `Runtime::metrics`. One test: the meter provider is process-global.

use serde_json::json;
use toolcell_runtime::{Runtime, ToolCall, trace::TraceParent};
use toolcell_telemetry::Otlp;
use toolcell_tests::otlp::OtlpReceiver;
use tracing::Instrument as _;
use tracing_subscriber::layer::SubscriberExt as _;

const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

// Multi-threaded: `shutdown` blocks this thread until the receiver, served from another,
// has taken the last export. The test's own future still runs on this thread, under the
// subscriber set for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_builder_exports_parented_spans_and_metrics_that_match_the_runtimes() {
    let receiver = OtlpReceiver::start().await;
    let otlp = Otlp::builder()
        .endpoint(&receiver.endpoint)
        .project("agents")
        .service_name("my-agent")
        .header("authorization", "Bearer t0ken")
        .build()
        .unwrap();
    let subscriber = tracing_subscriber::registry().with(otlp.layer());
    let _default = tracing::subscriber::set_default(subscriber);
    // Built after the meter provider is installed, so its instruments record into it.
    let runtime = Runtime::builder()
        .tools_dir(toolcell_tools::DIR)
        .compile_cache(concat!(env!("CARGO_TARGET_TMPDIR"), "/compile-cache"))
        .build()
        .await
        .unwrap();

    let run = tracing::info_span!("agent_run");
    let by_span = runtime.call(ToolCall::new("lib-1", "calculator", json!({"expression": "1 + 2"})));
    by_span.instrument(run.clone()).await;
    let parallel = runtime.call_all([
        ToolCall::new("lib-3", "regex", json!({"pattern": "a+", "text": "caaab"})),
        ToolCall::new("lib-4", "json_query", json!({"document": {"a": 1}, "query": "$.a"})),
    ]);
    parallel.instrument(run.clone()).await;
    let parent = TraceParent::parse(TRACEPARENT, Some("vendor=abc")).unwrap();
    let by_context = ToolCall::new("lib-2", "unit_convert", json!({"value": 1, "from": "km", "to": "parsec"}));
    runtime.call(by_context.with_trace_parent(parent)).await;
    drop(run);
    otlp.shutdown().unwrap();

    let spans = receiver.spans();
    let span = |name: &str| spans.iter().find(|span| span.name == name).unwrap_or_else(|| panic!("{name}: {spans:#?}"));
    let (agent_run, calculator, convert) = (span("agent_run"), span("calculator"), span("unit_convert"));
    assert_eq!(calculator.parent_span_id, agent_run.span_id, "the current span parents the call");
    assert_eq!(calculator.trace_id, agent_run.trace_id);
    for parallel in [span("regex"), span("json_query")] {
        assert_eq!(parallel.parent_span_id, agent_run.span_id, "call_all's calls are children too");
    }
    assert_eq!(
        (convert.trace_id.as_str(), convert.parent_span_id.as_str()),
        (&TRACEPARENT[3..35], &TRACEPARENT[36..52])
    );
    assert_eq!(convert.attributes["toolcell.error.kind"], "invalid_arguments");
    assert_eq!(calculator.resource["openinference.project.name"], "agents");
    assert_eq!(calculator.resource["service.name"], "my-agent");
    assert!(receiver.headers().iter().all(|headers| headers["authorization"] == "Bearer t0ken"));

    let metrics = runtime.metrics();
    for tool in ["calculator", "unit_convert"] {
        let exported = receiver.latest_point("toolcell.tool.fuel", &[("tool.name", tool)]).expect("a fuel histogram");
        assert_eq!(exported.count, metrics.tools[tool].fuel.count, "{tool}");
        assert_eq!(exported.value, metrics.tools[tool].fuel.sum, "{tool}");
        let calls = receiver.latest_point("toolcell.tool.calls", &[("tool.name", tool)]).expect("a call count");
        assert_eq!(calls.value, metrics.tools[tool].calls as f64);
    }
    let errors = receiver.latest_point("toolcell.tool.errors", &[("tool.name", "unit_convert")]).unwrap();
    assert_eq!((errors.attributes["error.type"].as_str(), errors.value), (Some("invalid_arguments"), 1.0));
}
