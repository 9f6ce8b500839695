//! An OTLP/HTTP protobuf receiver on loopback for tests: it decodes what an exporter sends
//! to `/v1/traces` and `/v1/metrics` with the OpenTelemetry protocol's own message types,
//! answers as the OTLP/HTTP spec says, and keeps every span and data point for assertions.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use opentelemetry_proto::tonic::collector::metrics::v1::{ExportMetricsServiceRequest, ExportMetricsServiceResponse};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
use prost::Message as _;
use serde_json::{Map, Value};

/// One span as received.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    /// The span's name.
    pub name: String,
    /// 32 hex digits.
    pub trace_id: String,
    /// 16 hex digits.
    pub span_id: String,
    /// 16 hex digits, or empty for a root span.
    pub parent_span_id: String,
    /// 0 unset, 1 ok, 2 error.
    pub status_code: i32,
    /// The status description.
    pub status_message: String,
    /// The span's attributes, as JSON values.
    pub attributes: Map<String, Value>,
    /// The attributes of the resource that sent it.
    pub resource: Map<String, Value>,
}

/// One data point of one metric, as received.
#[derive(Debug, Clone)]
pub struct ReceivedPoint {
    /// The metric's name.
    pub metric: String,
    /// The metric's unit.
    pub unit: String,
    /// The point's attributes, as JSON values.
    pub attributes: Map<String, Value>,
    /// A sum's value, or a histogram's sum.
    pub value: f64,
    /// A histogram's count and buckets.
    pub count: u64,
    /// A histogram's count in each bucket.
    pub bucket_counts: Vec<u64>,
}

#[derive(Debug, Default)]
struct Received {
    spans: Vec<ReceivedSpan>,
    points: Vec<ReceivedPoint>,
    /// The headers of each export.
    headers: Vec<HeaderMap>,
}

/// A running receiver; it stops when dropped.
#[derive(Debug)]
pub struct OtlpReceiver {
    /// The base URL an exporter is given (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub endpoint: String,
    received: Arc<Mutex<Received>>,
    server: tokio::task::JoinHandle<()>,
}

impl OtlpReceiver {
    /// Listens on a free loopback port.
    pub async fn start() -> Self {
        let received = Arc::new(Mutex::new(Received::default()));
        let app = axum::Router::new()
            .route("/v1/traces", axum::routing::post(traces))
            .route("/v1/metrics", axum::routing::post(metrics))
            .with_state(received.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("the receiver serves");
        });
        Self { endpoint, received, server }
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.lock().spans.clone()
    }

    /// Every data point received so far, oldest first.
    pub fn points(&self) -> Vec<ReceivedPoint> {
        self.lock().points.clone()
    }

    /// The headers of every export so far.
    pub fn headers(&self) -> Vec<HeaderMap> {
        self.lock().headers.clone()
    }

    /// Waits up to `within` for a span `wanted` accepts.
    pub async fn span(&self, within: Duration, wanted: impl Fn(&ReceivedSpan) -> bool) -> Option<ReceivedSpan> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(span) = self.spans().into_iter().find(&wanted) {
                return Some(span);
            }
            if tokio::time::Instant::now() > deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The latest data point of `metric` whose attributes include all of `attributes`.
    pub fn latest_point(&self, metric: &str, attributes: &[(&str, &str)]) -> Option<ReceivedPoint> {
        self.points().into_iter().rev().find(|point| {
            point.metric == metric
                && attributes
                    .iter()
                    .all(|(key, value)| point.attributes.get(*key).and_then(Value::as_str) == Some(value))
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Received> {
        self.received.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

type Shared = State<Arc<Mutex<Received>>>;

async fn traces(State(received): Shared, headers: HeaderMap, body: Bytes) -> impl IntoResponse {
    let Some(request) = decode::<ExportTraceServiceRequest>(&headers, &body) else {
        return StatusCode::UNSUPPORTED_MEDIA_TYPE.into_response();
    };
    let mut received = received.lock().unwrap_or_else(PoisonError::into_inner);
    received.headers.push(headers);
    for resource_spans in request.resource_spans {
        let resource = attributes(&resource_spans.resource.map(|resource| resource.attributes).unwrap_or_default());
        for span in resource_spans.scope_spans.into_iter().flat_map(|scope| scope.spans) {
            let status = span.status.unwrap_or_default();
            received.spans.push(ReceivedSpan {
                name: span.name,
                trace_id: hex(&span.trace_id),
                span_id: hex(&span.span_id),
                parent_span_id: hex(&span.parent_span_id),
                status_code: status.code,
                status_message: status.message,
                attributes: attributes(&span.attributes),
                resource: resource.clone(),
            });
        }
    }
    protobuf(ExportTraceServiceResponse::default().encode_to_vec())
}

async fn metrics(State(received): Shared, headers: HeaderMap, body: Bytes) -> impl IntoResponse {
    let Some(request) = decode::<ExportMetricsServiceRequest>(&headers, &body) else {
        return StatusCode::UNSUPPORTED_MEDIA_TYPE.into_response();
    };
    let mut received = received.lock().unwrap_or_else(PoisonError::into_inner);
    received.headers.push(headers);
    let all = request.resource_metrics.into_iter().flat_map(|resource| resource.scope_metrics);
    for metric in all.flat_map(|scope| scope.metrics) {
        let point = |attributes_of: &[KeyValue], value: f64, count: u64, bucket_counts: Vec<u64>| ReceivedPoint {
            metric: metric.name.clone(),
            unit: metric.unit.clone(),
            attributes: attributes(attributes_of),
            value,
            count,
            bucket_counts,
        };
        let points: Vec<ReceivedPoint> = match &metric.data {
            Some(metric::Data::Sum(sum)) => {
                sum.data_points.iter().map(|p| point(&p.attributes, number(p.value.as_ref()), 0, Vec::new())).collect()
            }
            Some(metric::Data::Gauge(gauge)) => gauge
                .data_points
                .iter()
                .map(|p| point(&p.attributes, number(p.value.as_ref()), 0, Vec::new()))
                .collect(),
            Some(metric::Data::Histogram(histogram)) => histogram
                .data_points
                .iter()
                .map(|p| point(&p.attributes, p.sum.unwrap_or_default(), p.count, p.bucket_counts.clone()))
                .collect(),
            _ => Vec::new(),
        };
        received.points.extend(points);
    }
    protobuf(ExportMetricsServiceResponse::default().encode_to_vec())
}

/// The request, if it is protobuf (OTLP/HTTP JSON is not what our exporter sends).
fn decode<M: prost::Message + Default>(headers: &HeaderMap, body: &[u8]) -> Option<M> {
    let content_type = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    if content_type != "application/x-protobuf" {
        return None;
    }
    M::decode(body).ok()
}

fn protobuf(body: Vec<u8>) -> axum::response::Response {
    ([(header::CONTENT_TYPE, "application/x-protobuf")], body).into_response()
}

fn number(value: Option<&number_data_point::Value>) -> f64 {
    match value {
        Some(number_data_point::Value::AsInt(int)) => *int as f64,
        Some(number_data_point::Value::AsDouble(double)) => *double,
        None => f64::NAN,
    }
}

fn attributes(pairs: &[KeyValue]) -> Map<String, Value> {
    pairs.iter().map(|pair| (pair.key.clone(), any(pair.value.as_ref()))).collect()
}

fn any(value: Option<&AnyValue>) -> Value {
    match value.and_then(|value| value.value.as_ref()) {
        Some(any_value::Value::StringValue(text)) => Value::String(text.clone()),
        Some(any_value::Value::BoolValue(flag)) => Value::Bool(*flag),
        Some(any_value::Value::IntValue(int)) => Value::from(*int),
        Some(any_value::Value::DoubleValue(double)) => Value::from(*double),
        Some(any_value::Value::ArrayValue(array)) => Value::Array(array.values.iter().map(|v| any(Some(v))).collect()),
        Some(other) => Value::String(format!("{other:?}")),
        None => Value::Null,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
