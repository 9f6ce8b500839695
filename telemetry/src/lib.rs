//! Sends toolcell's spans and metrics to an OpenTelemetry collector over OTLP, as
//! HTTP/protobuf or gRPC.
//!
//! The runtime only emits: `tracing` spans carrying OpenInference attributes, and metrics
//! through the `opentelemetry` API. This crate is the optional other half, set up once where
//! a process starts. The `toolcell` CLI uses it. An embedding can use it too, or bring its
//! own pipeline.
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt as _;
//! use tracing_subscriber::util::SubscriberInitExt as _;
//!
//! # fn demo() -> Result<(), toolcell_telemetry::OtlpError> {
//! // On when an OTEL_EXPORTER_OTLP_*ENDPOINT variable is set; install before building the runtime.
//! let otlp = toolcell_telemetry::Otlp::from_env()?;
//! tracing_subscriber::registry().with(otlp.as_ref().and_then(|otlp| otlp.layer())).init();
//! // ... build the runtime, run the agent ...
//! if let Some(otlp) = otlp {
//!     otlp.shutdown()?; // exports what is still buffered
//! }
//! # Ok(()) }
//! ```

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{
    MetricExporter, SpanExporter, WithExportConfig as _, WithHttpConfig as _, WithTonicConfig as _,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::registry::LookupSpan;

/// The service name spans and metrics carry unless `OTEL_SERVICE_NAME` (or `service.name`
/// in `OTEL_RESOURCE_ATTRIBUTES`) names another.
pub const DEFAULT_SERVICE_NAME: &str = "toolcell";

/// How long [`Otlp::shutdown`] waits for the last export.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// An OTLP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Protocol {
    /// Protobuf over HTTP (`http/protobuf`, port 4318 by convention): the signal's path
    /// (`/v1/traces`, `/v1/metrics`) is appended to the endpoint.
    HttpProtobuf,
    /// gRPC (`grpc`, port 4317 by convention). Needs a tokio runtime entered while the
    /// exporters are built and while they shut down.
    Grpc,
}

impl Protocol {
    /// Reads an `OTEL_EXPORTER_OTLP_PROTOCOL` value.
    fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "grpc" => Some(Self::Grpc),
            "http/protobuf" => Some(Self::HttpProtobuf),
            _ => None,
        }
    }
}

/// Why export could not be set up or shut down.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtlpError {
    /// An OTLP variable has a value this build does not support.
    #[error("{variable}=`{value}` is not supported: use `grpc` or `http/protobuf` (or unset it for http/protobuf)")]
    UnsupportedProtocol {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: String,
    },
    /// The exporter for a signal could not be built (a malformed endpoint, a bad header).
    #[error(
        "cannot export {signal} over OTLP: {source}; check the OTEL_EXPORTER_OTLP_* variables or the endpoint given"
    )]
    Build {
        /// `traces` or `metrics`.
        signal: &'static str,
        /// What the exporter said.
        source: opentelemetry_otlp::ExporterBuildError,
    },
    /// A header name or value cannot be sent.
    #[error("the OTLP header `{name}` cannot be sent: {reason}")]
    Header {
        /// The header's name.
        name: String,
        /// Why.
        reason: String,
    },
    /// The last export at shutdown failed (the collector is down or refused it).
    #[error("exporting the last {signal} at shutdown failed: {reason}; is the collector at the OTLP endpoint running?")]
    Shutdown {
        /// `traces` or `metrics`.
        signal: &'static str,
        /// What the SDK said.
        reason: String,
    },
}

/// OTLP export in progress: keep it for the life of the process and call
/// [`Otlp::shutdown`] before exiting, or what is still buffered is lost.
#[derive(Debug)]
#[must_use = "spans and metrics still buffered are lost unless `shutdown` is called"]
pub struct Otlp {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

impl Otlp {
    /// Export as the standard `OTEL_*` variables say, or `None` when none asks for it.
    ///
    /// Traces are exported when `OTEL_EXPORTER_OTLP_ENDPOINT` or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (and `OTEL_TRACES_EXPORTER` is not `none`);
    /// metrics when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` is
    /// set (and `OTEL_METRICS_EXPORTER` is not `none`). `OTEL_SDK_DISABLED=true` turns both
    /// off. The exporters read the rest themselves: `*_PROTOCOL`, `*_HEADERS`, `*_TIMEOUT`,
    /// `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`,
    /// `OTEL_METRIC_EXPORT_INTERVAL`.
    ///
    /// # Errors
    /// When a protocol variable names a transport other than `grpc` or `http/protobuf`, or
    /// an exporter cannot be built from the variables.
    pub fn from_env() -> Result<Option<Self>, OtlpError> {
        let env = |name: &str| std::env::var(name).ok().filter(|value| !value.trim().is_empty());
        if env("OTEL_SDK_DISABLED").is_some_and(|value| value.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let wanted = |endpoint: &str, exporter: &str| {
            (env("OTEL_EXPORTER_OTLP_ENDPOINT").is_some() || env(endpoint).is_some())
                && !env(exporter).is_some_and(|value| value.trim().eq_ignore_ascii_case("none"))
        };
        let traces = wanted("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER");
        let metrics = wanted("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_METRICS_EXPORTER");
        if !traces && !metrics {
            return Ok(None);
        }
        let protocol = |signal_variable: &'static str| -> Result<Option<Protocol>, OtlpError> {
            for variable in [signal_variable, "OTEL_EXPORTER_OTLP_PROTOCOL"] {
                if let Some(value) = env(variable) {
                    return Protocol::parse(&value).map(Some).ok_or(OtlpError::UnsupportedProtocol { variable, value });
                }
            }
            Ok(None)
        };
        let builder = Otlp::builder().traces(traces).metrics(metrics);
        let builder = OtlpBuilder {
            traces_protocol: protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")?,
            metrics_protocol: protocol("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")?,
            ..builder
        };
        builder.build().map(Some)
    }

    /// Export configured in code; anything not set falls back to the `OTEL_*` variables.
    pub fn builder() -> OtlpBuilder {
        OtlpBuilder {
            endpoint: None,
            traces_protocol: None,
            metrics_protocol: None,
            headers: HashMap::new(),
            service_name: None,
            resource: Vec::new(),
            traces: true,
            metrics: true,
            metric_interval: None,
        }
    }

    /// A `tracing` layer sending spans to the collector (`None` when traces are off). Give
    /// it a filter that lets `toolcell_runtime` spans at INFO through.
    pub fn layer<S>(&self) -> Option<impl Layer<S> + use<S>>
    where
        S: Subscriber + for<'span> LookupSpan<'span>,
    {
        let tracer = self.tracer.as_ref()?.tracer("toolcell");
        Some(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                // Code locations, threads and busy/idle times say little about a tool call.
                .with_location(false)
                .with_threads(false)
                .with_target(false)
                .with_tracked_inactivity(false),
        )
    }

    /// Whether spans are exported.
    pub fn exports_traces(&self) -> bool {
        self.tracer.is_some()
    }

    /// Whether metrics are exported.
    pub fn exports_metrics(&self) -> bool {
        self.meter.is_some()
    }

    /// Exports what is buffered now, without stopping.
    ///
    /// # Errors
    /// When an export fails.
    pub fn flush(&self) -> Result<(), OtlpError> {
        if let Some(tracer) = &self.tracer {
            tracer.force_flush().map_err(|error| shutdown_error("traces", &error))?;
        }
        if let Some(meter) = &self.meter {
            meter.force_flush().map_err(|error| shutdown_error("metrics", &error))?;
        }
        Ok(())
    }

    /// Exports what is still buffered (spans that have ended, the metrics so far) and
    /// stops. Blocks the calling thread, at most 5 s per signal: in async code call it
    /// outside the runtime or from `spawn_blocking` (and with gRPC, while the runtime
    /// still runs).
    ///
    /// # Errors
    /// When the last export fails; both signals are still shut down.
    pub fn shutdown(self) -> Result<(), OtlpError> {
        let traces = self.tracer.map(|tracer| tracer.shutdown_with_timeout(SHUTDOWN_TIMEOUT));
        let metrics = self.meter.map(|meter| meter.shutdown_with_timeout(SHUTDOWN_TIMEOUT));
        if let Some(Err(error)) = traces {
            return Err(shutdown_error("traces", &error));
        }
        if let Some(Err(error)) = metrics {
            return Err(shutdown_error("metrics", &error));
        }
        Ok(())
    }
}

fn shutdown_error(signal: &'static str, error: &impl std::fmt::Display) -> OtlpError {
    OtlpError::Shutdown { signal, reason: error.to_string() }
}

/// Builds one signal's exporter: from the environment alone when nothing was set in code,
/// else over the chosen transport with the endpoint (HTTP: plus `/v1/<signal>`) and headers.
/// A macro because the two signals' builders share their methods but no trait.
macro_rules! exporter {
    ($settings:expr, $builder:expr, $protocol:expr, $signal:literal) => {{
        let settings: &OtlpBuilder = $settings;
        let fail = |source| OtlpError::Build { signal: $signal, source };
        match $protocol {
            None if settings.endpoint.is_none() && settings.headers.is_empty() => $builder.build().map_err(fail),
            Some(Protocol::Grpc) => {
                let mut tonic = $builder.with_tonic().with_metadata(settings.metadata()?);
                if let Some(endpoint) = &settings.endpoint {
                    tonic = tonic.with_endpoint(endpoint.clone());
                }
                tonic.build().map_err(fail)
            }
            None | Some(Protocol::HttpProtobuf) => {
                let mut http = $builder.with_http().with_headers(settings.headers.clone());
                if let Some(endpoint) = &settings.endpoint {
                    http = http.with_endpoint(format!("{endpoint}/v1/{}", $signal));
                }
                http.build().map_err(fail)
            }
        }
    }};
}

/// Configures [`Otlp`] in code.
#[derive(Debug, Clone)]
pub struct OtlpBuilder {
    endpoint: Option<String>,
    traces_protocol: Option<Protocol>,
    metrics_protocol: Option<Protocol>,
    headers: HashMap<String, String>,
    service_name: Option<String>,
    resource: Vec<KeyValue>,
    traces: bool,
    metrics: bool,
    metric_interval: Option<Duration>,
}

impl OtlpBuilder {
    /// The collector: a base URL such as `http://127.0.0.1:4318` for HTTP (the signal's
    /// path is appended) or `http://127.0.0.1:4317` for gRPC. Without it the exporters read
    /// `OTEL_EXPORTER_OTLP_*ENDPOINT`, then use those defaults.
    #[must_use]
    pub fn endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into().trim_end_matches('/').to_owned());
        self
    }

    /// The transport for both signals (default: `OTEL_EXPORTER_OTLP_PROTOCOL`, else HTTP).
    #[must_use]
    pub fn protocol(mut self, protocol: Protocol) -> Self {
        self.traces_protocol = Some(protocol);
        self.metrics_protocol = Some(protocol);
        self
    }

    /// A header (HTTP) or metadata entry (gRPC) sent with every export, such as an API key.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// The `service.name` of everything exported (default: `OTEL_SERVICE_NAME`, else
    /// `toolcell`).
    #[must_use]
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// The project an OpenInference receiver such as Arize Phoenix files the spans under
    /// (the resource attribute `openinference.project.name`).
    #[must_use]
    pub fn project(mut self, name: impl Into<String>) -> Self {
        self.resource.push(KeyValue::new("openinference.project.name", name.into()));
        self
    }

    /// Whether to export spans (default on).
    #[must_use]
    pub fn traces(mut self, on: bool) -> Self {
        self.traces = on;
        self
    }

    /// Whether to export metrics (default on). Some receivers take only traces (Phoenix
    /// answers metrics with 405).
    #[must_use]
    pub fn metrics(mut self, on: bool) -> Self {
        self.metrics = on;
        self
    }

    /// How often metrics are exported (default: `OTEL_METRIC_EXPORT_INTERVAL`, else 60 s);
    /// they are also exported at shutdown.
    #[must_use]
    pub fn metric_interval(mut self, interval: Duration) -> Self {
        self.metric_interval = Some(interval);
        self
    }

    /// Starts exporting, and installs the meter provider globally so that runtimes built
    /// from now on record into it. With gRPC, call it inside a tokio runtime.
    ///
    /// # Errors
    /// When an exporter cannot be built (a malformed endpoint or header).
    pub fn build(self) -> Result<Otlp, OtlpError> {
        let resource = self.resource();
        let tracer = match self.traces {
            false => None,
            true => Some(
                SdkTracerProvider::builder()
                    .with_resource(resource.clone())
                    .with_batch_exporter(self.span_exporter()?)
                    .build(),
            ),
        };
        let meter = match self.metrics {
            false => None,
            true => {
                let mut reader = PeriodicReader::builder(self.metric_exporter()?);
                if let Some(interval) = self.metric_interval {
                    reader = reader.with_interval(interval);
                }
                let meter = SdkMeterProvider::builder().with_resource(resource).with_reader(reader.build()).build();
                opentelemetry::global::set_meter_provider(meter.clone());
                Some(meter)
            }
        };
        Ok(Otlp { tracer, meter })
    }

    /// The resource: the service name unless the environment names one, toolcell's version,
    /// and what was added in code.
    fn resource(&self) -> Resource {
        let mut builder = Resource::builder();
        let named_by_env = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|name| !name.trim().is_empty())
            || std::env::var("OTEL_RESOURCE_ATTRIBUTES")
                .is_ok_and(|attributes| attributes.split(',').any(|pair| pair.trim().starts_with("service.name=")));
        match &self.service_name {
            Some(name) => builder = builder.with_service_name(name.clone()),
            None if !named_by_env => builder = builder.with_service_name(DEFAULT_SERVICE_NAME),
            None => {}
        }
        builder
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .with_attributes(self.resource.iter().cloned())
            .build()
    }

    fn span_exporter(&self) -> Result<SpanExporter, OtlpError> {
        exporter!(self, SpanExporter::builder(), self.traces_protocol, "traces")
    }

    fn metric_exporter(&self) -> Result<MetricExporter, OtlpError> {
        exporter!(self, MetricExporter::builder(), self.metrics_protocol, "metrics")
    }

    /// The headers as gRPC metadata.
    fn metadata(&self) -> Result<opentelemetry_otlp::tonic_types::metadata::MetadataMap, OtlpError> {
        let mut headers = http::HeaderMap::new();
        for (name, value) in &self.headers {
            let invalid = |reason: String| OtlpError::Header { name: name.clone(), reason };
            let key = http::HeaderName::try_from(name.as_str()).map_err(|error| invalid(error.to_string()))?;
            let value = http::HeaderValue::try_from(value.as_str()).map_err(|error| invalid(error.to_string()))?;
            headers.insert(key, value);
        }
        Ok(opentelemetry_otlp::tonic_types::metadata::MetadataMap::from_headers(headers))
    }
}
