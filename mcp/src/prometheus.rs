//! What `GET /metrics` answers: the Prometheus text exposition format 0.0.4, rendered from the
//! runtime's [`Metrics`] and the HTTP server's gauges.
//!
//! The names are what an OpenTelemetry-to-Prometheus exporter makes of the runtime's
//! instruments (`toolcell.tool.duration`, unit `s`, becomes `toolcell_tool_duration_seconds`;
//! `tool.name` becomes `tool_name`), so one dashboard reads either path.
//!
//! The output is bounded by what the operator loaded: one set of series per tool the runtime
//! keeps (loaded, or called before a reload removed it) and per error kind (a fixed set). No
//! label takes a value a client chose: a call to a tool that is not loaded is counted under
//! `error_type="unknown_tool"`, never by its name.

use std::fmt::Write as _;

use toolcell_runtime::metrics::{Histogram, Metrics};

/// The media type of the text format, version 0.0.4.
pub(crate) const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Everything one scrape shows.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scrape {
    /// Whether every tool is loaded (the first start compiles them).
    pub(crate) ready: bool,
    /// The tools loaded so far, and the calls made to them: `None` before the first is.
    pub(crate) tools: Option<Tools>,
    /// The HTTP server's connections and sessions.
    pub(crate) server: ServerGauges,
}

/// What the runtime serving now knows.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tools {
    /// How many tools it serves.
    pub(crate) loaded: usize,
    /// Its metrics.
    pub(crate) metrics: Metrics,
}

/// Connections and sessions open now, and their caps.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ServerGauges {
    pub(crate) connections: usize,
    pub(crate) max_connections: usize,
    pub(crate) sessions: usize,
    pub(crate) max_sessions: usize,
}

/// The scrape in the text format. While the tools load, it says so
/// (`toolcell_tools_ready 0`) and shows the series of those loaded so far (calls run on them
/// meanwhile), rather than failing: a cold start is not an outage.
pub(crate) fn render(scrape: &Scrape) -> String {
    let mut out = Exposition::default();
    out.family("toolcell_build_info", "gauge", "The toolcell that serves: always 1, with its version as a label.");
    out.sample("toolcell_build_info", &[("version", env!("CARGO_PKG_VERSION"))], 1);
    out.family("toolcell_tools_ready", "gauge", "1 once the tools are loaded; 0 while they still load (compile).");
    out.sample("toolcell_tools_ready", &[], u64::from(scrape.ready));
    let server = scrape.server;
    out.gauge("toolcell_http_connections", "HTTP connections open.", server.connections);
    out.gauge("toolcell_http_connections_limit", "HTTP connections that may be open at once.", server.max_connections);
    out.gauge("toolcell_mcp_sessions", "MCP sessions open.", server.sessions);
    out.gauge("toolcell_mcp_sessions_limit", "MCP sessions that may be open at once.", server.max_sessions);
    if let Some(tools) = &scrape.tools {
        out.gauge("toolcell_tools_loaded", "Tools served.", tools.loaded);
        runtime(&mut out, &tools.metrics);
    }
    out.text
}

/// The runtime's metrics: calls in flight, then one family per instrument.
fn runtime(out: &mut Exposition, metrics: &Metrics) {
    let calls = metrics.in_flight;
    out.gauge("toolcell_calls_running", "Tool calls running in an instance.", calls.running);
    out.gauge("toolcell_calls_waiting", "Tool calls queued for a free instance.", calls.waiting);
    out.gauge("toolcell_calls_limit", "Tool calls that may run at once (--max-concurrent-calls).", calls.limit);

    let tools = &metrics.tools;
    out.family("toolcell_tool_calls_total", "counter", "Tool calls finished, successful or not.");
    for (name, tool) in tools {
        out.sample("toolcell_tool_calls_total", &[("tool_name", name)], tool.calls);
    }
    out.family(
        "toolcell_tool_errors_total",
        "counter",
        "Tool calls that failed, by error_type (the toolcell error kind); calls to a tool that is not loaded have \
         only error_type=\"unknown_tool\".",
    );
    for (name, tool) in tools {
        for (kind, count) in &tool.errors {
            out.sample("toolcell_tool_errors_total", &[("tool_name", name), ("error_type", kind)], *count);
        }
    }
    if metrics.unknown_tool_calls > 0 {
        out.sample("toolcell_tool_errors_total", &[("error_type", "unknown_tool")], metrics.unknown_tool_calls);
    }
    out.family("toolcell_tool_calls_in_flight", "gauge", "Tool calls running or waiting for a slot.");
    for (name, tool) in tools {
        out.sample("toolcell_tool_calls_in_flight", &[("tool_name", name)], tool.in_flight);
    }
    out.family(
        "toolcell_tool_calls_ready_total",
        "counter",
        "Tool calls that ran in an instance made ready before them (the others made their own).",
    );
    for (name, tool) in tools {
        out.sample("toolcell_tool_calls_ready_total", &[("tool_name", name)], tool.ready_instance_calls);
    }
    histograms(
        out,
        "toolcell_tool_duration_seconds",
        "Wall-clock time of a tool call, validation and waiting included.",
        tools.iter().map(|(name, tool)| (name, &tool.duration_seconds)),
    );
    histograms(
        out,
        "toolcell_tool_fuel",
        "Fuel a tool call consumed (about one per WebAssembly instruction).",
        tools.iter().map(|(name, tool)| (name, &tool.fuel)),
    );
}

/// One histogram family, a histogram per tool: cumulative `_bucket{le}` counts up to `+Inf`,
/// then `_sum` and `_count`.
fn histograms<'a>(
    out: &mut Exposition,
    name: &str,
    help: &str,
    tools: impl Iterator<Item = (&'a String, &'a Histogram)>,
) {
    out.family(name, "histogram", help);
    let bucket = format!("{name}_bucket");
    for (tool, histogram) in tools {
        let mut cumulative = 0;
        for (bound, count) in histogram.bounds.iter().zip(&histogram.counts) {
            cumulative += count;
            out.sample(&bucket, &[("tool_name", tool), ("le", &number(*bound))], cumulative);
        }
        // `count` is the sum of every bucket, the one above the last bound included.
        out.sample(&bucket, &[("tool_name", tool), ("le", "+Inf")], histogram.count);
        out.sample_float(&format!("{name}_sum"), &[("tool_name", tool)], histogram.sum);
        out.sample(&format!("{name}_count"), &[("tool_name", tool)], histogram.count);
    }
}

/// A float as the format writes one: `+Inf`, `-Inf`, `NaN`, or decimal digits (Rust's
/// `Display` never uses an exponent, and is exact).
fn number(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_owned()
    } else if value.is_infinite() {
        if value > 0.0 { "+Inf" } else { "-Inf" }.to_owned()
    } else {
        value.to_string()
    }
}

/// The text being written.
#[derive(Debug, Default)]
struct Exposition {
    text: String,
}

impl Exposition {
    /// `# HELP` and `# TYPE`; the family's samples follow, all together.
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        // `write!` to a String cannot fail.
        let _ = writeln!(self.text, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.text, "# TYPE {name} {kind}");
    }

    /// A gauge family of one sample without labels.
    fn gauge(&mut self, name: &str, help: &str, value: usize) {
        self.family(name, "gauge", help);
        self.sample(name, &[], u64::try_from(value).unwrap_or(u64::MAX));
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: u64) {
        self.series(name, labels);
        let _ = writeln!(self.text, " {value}");
    }

    fn sample_float(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.series(name, labels);
        let _ = writeln!(self.text, " {}", number(value));
    }

    fn series(&mut self, name: &str, labels: &[(&str, &str)]) {
        self.text.push_str(name);
        if labels.is_empty() {
            return;
        }
        self.text.push('{');
        for (n, (label, value)) in labels.iter().enumerate() {
            if n > 0 {
                self.text.push(',');
            }
            self.text.push_str(label);
            self.text.push_str("=\"");
            push_label_value(&mut self.text, value);
            self.text.push('"');
        }
        self.text.push('}');
    }
}

/// A label value as the format quotes it: backslash, double quote and line feed escaped.
/// (Tool names are `[a-zA-Z0-9_-]`, but the format's rules do not depend on that.)
fn push_label_value(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str(r"\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str(r"\n"),
            c => out.push(c),
        }
    }
}

/// Help text as the format writes it: backslash and line feed escaped.
fn escape_help(help: &str) -> String {
    help.replace('\\', r"\\").replace('\n', r"\n")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use toolcell_runtime::metrics::{CallsInFlight, ToolMetrics};

    use super::*;

    fn histogram(bounds: &[f64], counts: &[u64], sum: f64) -> Histogram {
        let mut histogram = Histogram::default();
        histogram.bounds = bounds.to_vec();
        histogram.counts = counts.to_vec();
        histogram.count = counts.iter().sum();
        histogram.sum = sum;
        histogram
    }

    fn tool(calls: u64, errors: &[(&str, u64)]) -> ToolMetrics {
        let mut tool = ToolMetrics::default();
        tool.calls = calls;
        tool.errors = errors.iter().map(|(kind, count)| ((*kind).to_owned(), *count)).collect();
        tool.in_flight = 1;
        tool.ready_instance_calls = 3;
        tool.duration_seconds = histogram(&[0.001, 0.25, 30.0], &[2, 0, 1, 1], 31.5005);
        tool.fuel = histogram(&[1e3, 1e10], &[1, 2, 1], 2e10);
        tool
    }

    fn scrape(tools: BTreeMap<String, ToolMetrics>, unknown: u64) -> Scrape {
        let mut metrics = Metrics::default();
        metrics.tools = tools;
        metrics.unknown_tool_calls = unknown;
        let mut in_flight = CallsInFlight::default();
        in_flight.running = 2;
        in_flight.waiting = 1;
        in_flight.limit = 16;
        metrics.in_flight = in_flight;
        let server = ServerGauges { connections: 3, max_connections: 512, sessions: 1, max_sessions: 1024 };
        Scrape { ready: true, tools: Some(Tools { loaded: 1, metrics }), server }
    }

    #[test]
    fn every_family_has_help_and_type_and_histograms_are_cumulative_up_to_inf() {
        let tools = BTreeMap::from([("calculator".to_owned(), tool(4, &[("timeout", 1), ("invalid_arguments", 2)]))]);
        let text = render(&scrape(tools, 5));
        let expected = [
            "# TYPE toolcell_tools_ready gauge\ntoolcell_tools_ready 1\n",
            "toolcell_http_connections 3\n",
            "toolcell_http_connections_limit 512\n",
            "toolcell_mcp_sessions 1\n",
            "toolcell_mcp_sessions_limit 1024\n",
            "toolcell_tools_loaded 1\n",
            "toolcell_calls_running 2\n",
            "toolcell_calls_waiting 1\n",
            "toolcell_calls_limit 16\n",
            "# TYPE toolcell_tool_calls_total counter\ntoolcell_tool_calls_total{tool_name=\"calculator\"} 4\n",
            "toolcell_tool_errors_total{tool_name=\"calculator\",error_type=\"invalid_arguments\"} 2\n\
             toolcell_tool_errors_total{tool_name=\"calculator\",error_type=\"timeout\"} 1\n\
             toolcell_tool_errors_total{error_type=\"unknown_tool\"} 5\n",
            "toolcell_tool_calls_in_flight{tool_name=\"calculator\"} 1\n",
            "# TYPE toolcell_tool_calls_ready_total counter\ntoolcell_tool_calls_ready_total{tool_name=\"calculator\"} 3\n",
            "# TYPE toolcell_tool_duration_seconds histogram\n\
             toolcell_tool_duration_seconds_bucket{tool_name=\"calculator\",le=\"0.001\"} 2\n\
             toolcell_tool_duration_seconds_bucket{tool_name=\"calculator\",le=\"0.25\"} 2\n\
             toolcell_tool_duration_seconds_bucket{tool_name=\"calculator\",le=\"30\"} 3\n\
             toolcell_tool_duration_seconds_bucket{tool_name=\"calculator\",le=\"+Inf\"} 4\n\
             toolcell_tool_duration_seconds_sum{tool_name=\"calculator\"} 31.5005\n\
             toolcell_tool_duration_seconds_count{tool_name=\"calculator\"} 4\n",
            "toolcell_tool_fuel_bucket{tool_name=\"calculator\",le=\"1000\"} 1\n\
             toolcell_tool_fuel_bucket{tool_name=\"calculator\",le=\"10000000000\"} 3\n\
             toolcell_tool_fuel_bucket{tool_name=\"calculator\",le=\"+Inf\"} 4\n\
             toolcell_tool_fuel_sum{tool_name=\"calculator\"} 20000000000\n\
             toolcell_tool_fuel_count{tool_name=\"calculator\"} 4\n",
        ];
        for part in expected {
            assert!(text.contains(part), "{part}\nnot in:\n{text}");
        }
        // Every family: HELP, then TYPE, then its samples, each family once.
        let mut families = Vec::new();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            let help = line.strip_prefix("# HELP ").unwrap_or_else(|| panic!("a family starts with HELP: {line}"));
            let name = help.split(' ').next().unwrap().to_owned();
            let kind = lines.next().and_then(|line| line.strip_prefix(&format!("# TYPE {name} "))).unwrap();
            assert!(["gauge", "counter", "histogram"].contains(&kind), "{kind}");
            while let Some(sample) = lines.next_if(|line| !line.starts_with('#')) {
                assert!(sample.starts_with(&name), "{sample} under {name}");
            }
            assert!(!families.contains(&name), "{name} twice");
            families.push(name);
        }
        assert_eq!(families.len(), 16, "{families:?}");
    }

    #[test]
    fn while_the_tools_load_the_scrape_says_so_and_has_no_series_that_needs_them() {
        let text = render(&Scrape::default());
        assert!(text.contains("\ntoolcell_tools_ready 0\n"), "{text}");
        assert!(text.contains("toolcell_mcp_sessions 0\n"), "{text}");
        assert!(text.starts_with("# HELP toolcell_build_info "), "{text}");
        assert!(text.contains(&format!("toolcell_build_info{{version=\"{}\"}} 1\n", env!("CARGO_PKG_VERSION"))));
        for absent in ["toolcell_tools_loaded", "toolcell_calls_", "toolcell_tool_"] {
            assert!(!text.contains(absent), "{absent} in:\n{text}");
        }
    }

    #[test]
    fn label_values_and_help_are_escaped_so_no_name_can_break_a_line_or_a_quote() {
        let name = "a\"b\\c\nd} 1\ninjected 2";
        let text = render(&scrape(BTreeMap::from([(name.to_owned(), tool(1, &[]))]), 0));
        assert!(text.contains(r#"toolcell_tool_calls_total{tool_name="a\"b\\c\nd} 1\ninjected 2"} 1"#), "{text}");
        assert!(!text.lines().any(|line| line.starts_with("injected")), "{text}");
        assert_eq!(escape_help("a\\b\nc \"q\""), r#"a\\b\nc "q""#);
    }

    #[test]
    fn floats_are_written_in_the_formats_spelling() {
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(f64::NEG_INFINITY), "-Inf");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(0.00025), "0.00025");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(1e10), "10000000000");
    }

    #[test]
    fn the_size_grows_with_the_tools_and_error_kinds_only() {
        let one = render(&scrape(BTreeMap::from([("a".to_owned(), tool(1, &[("timeout", 1)]))]), 1));
        let busier = render(&scrape(BTreeMap::from([("a".to_owned(), tool(u64::MAX, &[("timeout", 9)]))]), 1_000_000));
        assert_eq!(one.lines().count(), busier.lines().count());
    }
}
