//! `toolcell`: list, inspect and invoke WebAssembly tools.

mod parse;
mod progress;
mod schema_text;

use std::io::{IsTerminal as _, Read as _};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Map, Value, json};
use toolcell_author::shell_quote;
use toolcell_mcp::{Catalog, ContextHeader, HttpOptions};
use toolcell_runtime::{
    CallError, Format, LimitOverrides, Limits, Policy, Runtime, RuntimeBuilder, ToolCall,
    policy::{DirGrant, EnvGrant, Grants, HostPattern, RequestedCapabilities},
    tool::ToolAnnotations,
    trace::TraceParent,
};

/// Exit code when the tool call itself failed (the printed output says how).
const EXIT_TOOL_ERROR: u8 = 1;
/// Exit code for a usage error: bad flags, unreadable files, a tool that cannot be loaded.
const EXIT_USAGE: u8 = 2;
/// Exit code when stdout was closed early (`toolcell list | head -1`): what a shell reports
/// for a program ended by SIGPIPE.
const EXIT_STDOUT_CLOSED: i32 = 141;

/// `println!`, except that a closed stdout ends the process quietly instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(err) = writeln!(std::io::stdout(), $($arg)*) {
            stdout_failed(err);
        }
    }};
}

fn stdout_failed(err: std::io::Error) -> ! {
    if err.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(EXIT_STDOUT_CLOSED);
    }
    eprintln!("error: cannot write to stdout: {err}");
    std::process::exit(EXIT_USAGE.into())
}

/// Run sandboxed WebAssembly tools for LLM agents.
///
/// Tools come from --tools-dir (or TOOLCELL_TOOLS_DIR); without either, from the eight
/// standard tools built into this binary (calculator, json_query, regex, datetime,
/// unit_convert, http_fetch, files, python). A NAME|FILE argument that names a `.wasm` file loads just that file.
#[derive(Debug, Parser)]
#[command(name = "toolcell", version, propagate_version = true)]
struct Cli {
    /// Load tools from this folder (every *.wasm in it) instead of the built-in tools.
    #[arg(long, global = true, env = "TOOLCELL_TOOLS_DIR", value_name = "DIR")]
    tools_dir: Option<PathBuf>,

    /// Keep compiled tools here [default: $XDG_CACHE_HOME/toolcell or ~/.cache/toolcell].
    #[arg(long, global = true, env = "TOOLCELL_CACHE_DIR", value_name = "DIR")]
    cache_dir: Option<PathBuf>,

    /// Compile every tool afresh; read and write no cache.
    #[arg(long, global = true)]
    no_cache: bool,

    /// Grant capabilities from this policy file, on top of the tools folder's toolcell.toml.
    #[arg(long, global = true, env = "TOOLCELL_POLICY", value_name = "FILE")]
    policy: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the tools: name, version, title, description, and what each requests and is
    /// granted.
    /// Components that failed to load are reported as warnings.
    List {
        /// Print JSON: {"tools": [definitions with "requested" and "granted"], "diagnostics": [...]}.
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// Print the tools as a provider's request takes them, ready to paste into its
        /// `tools` field: openai, openai-strict, openai-responses, openai-responses-strict,
        /// anthropic, anthropic-strict, gemini, gemini-json-schema, mcp.
        #[arg(long, value_name = "FORMAT")]
        format: Option<Format>,
    },
    /// Check one component as a tool: report what is wrong with its metadata, or what it is
    /// and the capabilities it requests. Exit code 0 when it loads, 1 when it does not.
    Check {
        /// The .wasm file.
        file: PathBuf,
    },
    /// Show one tool's definition: description, parameters, limits, capabilities.
    Schema {
        /// A tool name, or the path of a .wasm file.
        tool: String,
        /// Print the definition as JSON.
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// Print the tool in a provider's format (see `list --format`).
        #[arg(long, value_name = "FORMAT")]
        format: Option<Format>,
    },
    /// Call a tool and print its output as JSON. Exit code 0 when the call succeeded, 1 when
    /// it failed (the output says why), 2 for a usage error.
    Invoke(Box<InvokeArgs>),
    /// Run the tool calls in a model's message at once and print the message(s) that answer
    /// them, in the same provider's shape, as a JSON array. Exit code 0 when the message was
    /// read (a failed call is in its answer, for the model), 2 when it was not.
    Respond {
        /// The shape of the message: openai, openai-strict, openai-responses,
        /// openai-responses-strict, anthropic, anthropic-strict, gemini, gemini-json-schema
        /// (the format the model was given the tools in).
        #[arg(long, value_name = "FORMAT")]
        format: Format,
        /// A JSON file holding the model's message (or whole response); `-` reads stdin.
        #[arg(value_name = "FILE", default_value = "-")]
        message: PathBuf,
    },
    /// Serve every tool to MCP clients, over stdio (the default) or streamable HTTP at /mcp.
    /// Policy, cache and limits apply as for `invoke`. Logs go to stderr (TOOLCELL_LOG).
    Serve(Box<ServeArgs>),
    /// Create a tool project: an example tool function and its tests, ready to test natively
    /// and to `toolcell build`. Rust by default; Python and JavaScript build with the SDKs in
    /// the toolcell source tree (sdk/).
    New {
        /// The tool's name: lower case letters, digits, `_` and `-`, starting with a letter.
        name: String,
        /// The folder to create [default: ./NAME].
        #[arg(long, value_name = "DIR")]
        path: Option<PathBuf>,
        /// The language to write the tool in.
        #[arg(long, value_enum, default_value_t = Lang::Rust)]
        lang: Lang,
    },
    /// Build a tool project into a component (release, for wasm32-wasip2), check that it
    /// loads as a tool, and copy it into a tools folder as NAME.wasm. Exit code 0 when every
    /// component built and loads, 1 when not.
    Build {
        /// The project's folder.
        #[arg(value_name = "PATH", default_value = ".")]
        path: PathBuf,
        /// The tools folder to copy the component into [default: --tools-dir, else ./tools].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
}

impl Command {
    /// Whether the command runs tool calls, and so exports spans and metrics when OTLP is
    /// configured.
    fn runs_calls(&self) -> bool {
        matches!(self, Command::Invoke(_) | Command::Respond { .. } | Command::Serve(_))
    }
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// stdio: one client on stdin/stdout. http: streamable HTTP at http://LISTEN/mcp.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    transport: Transport,
    /// Where the HTTP server listens. Off loopback, --token is required.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8000")]
    listen: SocketAddr,
    /// Bearer token HTTP clients must send (`Authorization: Bearer TOKEN`); at least 16
    /// characters. Prefer the environment variable: a flag is visible to other users in `ps`.
    #[arg(long, env = "TOOLCELL_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    token: Option<String>,
    /// Allow browser pages from this origin (e.g. https://app.example.com:443) besides
    /// loopback ones; requests from other origins get 403. Repeatable.
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Copy an HTTP request header into each call's host context: HEADER=key, e.g.
    /// X-User-Id=user_id. Never part of the schema. Repeatable.
    #[arg(long, value_name = "HEADER=KEY")]
    context_header: Vec<ContextHeader>,
    /// Keep no session state for clients of revisions before 2026-07-28 either, so that any
    /// replica behind a load balancer can serve any request. They then get no list-change
    /// notifications.
    #[arg(long)]
    stateless: bool,
    /// Largest HTTP request body accepted, e.g. 4MiB.
    #[arg(long, value_name = "SIZE", value_parser = parse::size, default_value = "4MiB")]
    max_body: u64,
    /// On SIGINT or SIGTERM, how long calls in flight may take to finish before they are stopped.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration, default_value = "10s")]
    shutdown_grace: Duration,
    /// Do not watch --tools-dir. By default, adding, replacing or removing a .wasm file or
    /// editing toolcell.toml reloads the tools without a restart.
    #[arg(long)]
    no_reload: bool,
    /// How many calls run at once, each in an instance slot allocated at start (about 2 MiB
    /// resident each once used); later calls wait in a queue [default: 4 per CPU core, at
    /// least 4].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_concurrent_calls: Option<u32>,
    /// How many calls may wait for a slot; a call past them fails at once as `overloaded`
    /// (retryable) [default: 64 per call that may run at once].
    #[arg(long, value_name = "N")]
    max_queued_calls: Option<u32>,
    /// How many bytes of arguments the waiting calls may hold together; a call past them
    /// fails at once as `overloaded` (retryable) [default: 64 MiB].
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    max_queued_bytes: Option<u64>,
    /// HTTP connections open at once; past it a new one gets 503 and is closed. At most half
    /// the open-files limit, which serve raises to its hard limit at start.
    #[arg(long, env = "TOOLCELL_MAX_CONNECTIONS", value_name = "N", default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: u32,
    /// HTTP connections one client address (an IPv6 /64) may hold; past it a new one gets 429.
    /// Behind a reverse proxy every client is the proxy: raise it to --max-connections.
    #[arg(long, env = "TOOLCELL_MAX_CONNECTIONS_PER_CLIENT", value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_connections_per_client: u32,
    /// How long an HTTP client may take to send a request's headers, and a kept-alive
    /// connection may sit idle, before it is closed.
    #[arg(long, env = "TOOLCELL_HEADER_TIMEOUT", value_name = "DURATION", value_parser = parse::duration,
          default_value = "10s")]
    header_timeout: Duration,
    /// MCP sessions open at once; past it `initialize` gets 503.
    #[arg(long, env = "TOOLCELL_MAX_SESSIONS", value_name = "N", default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_sessions: u32,
    /// MCP sessions one client address may hold; past it `initialize` gets 429. Behind a
    /// reverse proxy, raise it to --max-sessions.
    #[arg(long, env = "TOOLCELL_MAX_SESSIONS_PER_CLIENT", value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_sessions_per_client: u32,
    /// How long an MCP session lives without a request; its client then gets 404 and starts
    /// a new one.
    #[arg(long, env = "TOOLCELL_SESSION_IDLE", value_name = "DURATION", value_parser = parse::duration,
          default_value = "2m")]
    session_idle: Duration,
    /// Request-body bytes received at once over all HTTP requests (the first 16 KiB of each
    /// body not counted); past it a request gets 503 and Retry-After [default: 4 × --max-body].
    #[arg(long, env = "TOOLCELL_MAX_BUFFERED_BYTES", value_name = "SIZE", value_parser = parse::size)]
    max_buffered_bytes: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Lang {
    Rust,
    Python,
    #[value(alias = "javascript")]
    Js,
}

impl From<Lang> for toolcell_author::Language {
    fn from(lang: Lang) -> Self {
        match lang {
            Lang::Rust => Self::Rust,
            Lang::Python => Self::Python,
            Lang::Js => Self::JavaScript,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Transport {
    Stdio,
    Http,
}

#[derive(Debug, Args)]
struct InvokeArgs {
    /// A tool name, or the path of a .wasm file.
    tool: String,
    /// The arguments as a JSON object; `-` reads them from stdin. Default: {}.
    #[arg(value_name = "ARGS_JSON", conflicts_with = "args_file")]
    arguments: Option<String>,
    /// Read the arguments from this file.
    #[arg(long, value_name = "FILE")]
    args_file: Option<PathBuf>,
    /// Host context for the tool, as a JSON object (never part of the schema).
    #[arg(long, value_name = "JSON")]
    context: Option<String>,
    /// The call id given to the tool.
    #[arg(long, default_value = "cli")]
    id: String,
    /// Continue this W3C trace: the call's span becomes a child of it (with OTLP export on).
    #[arg(long, env = "TRACEPARENT", value_name = "00-TRACE_ID-SPAN_ID-FLAGS", value_parser = parse::trace_parent)]
    traceparent: Option<TraceParent>,
    /// Fuel limit (about one unit per WebAssembly instruction).
    #[arg(long, value_name = "N")]
    fuel: Option<u64>,
    /// Wall-clock limit, e.g. 500ms, 2s, 1m; a bare number is seconds.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    timeout: Option<Duration>,
    /// Memory limit, e.g. 32MiB, 512KiB, 1GiB, or bytes.
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    memory: Option<u64>,
    /// Largest result accepted, e.g. 64KiB.
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    max_output: Option<u64>,
    /// Allow HTTP requests to this host for this call: `example.com`, `*.example.com`,
    /// `localhost:8080`. Repeatable.
    #[arg(long, value_name = "HOST")]
    allow_host: Vec<HostPattern>,
    /// Preopen a directory for this call: HOST_DIR:GUEST_DIR[:ro|rw] (read-only unless :rw).
    /// Repeatable.
    #[arg(long, value_name = "HOST:GUEST[:ro|rw]")]
    dir: Vec<DirGrant>,
    /// Set an environment variable for this call: KEY=VALUE (a plain value), or KEY to pass
    /// the host's value through as a secret, redacted from the output. Repeatable.
    #[arg(long, value_name = "KEY[=VALUE]")]
    env: Vec<EnvGrant>,
}

impl InvokeArgs {
    /// The one-off grants of the command line.
    fn grants(&self) -> Grants {
        let mut grants = Grants::new();
        grants.allow_hosts.clone_from(&self.allow_host);
        grants.dirs.clone_from(&self.dir);
        grants.env.clone_from(&self.env);
        grants
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let _ = err.print();
            return if err.use_stderr() { ExitCode::from(EXIT_USAGE) } else { ExitCode::SUCCESS };
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let otlp = match cli.command.runs_calls() {
        // gRPC export needs the async runtime entered while it is set up.
        true => match runtime.block_on(async { toolcell_telemetry::Otlp::from_env() }) {
            Ok(otlp) => otlp,
            Err(err) => {
                eprintln!("error: {err}");
                return ExitCode::from(EXIT_USAGE);
            }
        },
        false => None,
    };
    init_logging(otlp.as_ref());
    let code = match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", error_text(&err));
            ExitCode::from(EXIT_USAGE)
        }
    };
    // Every call's span has ended by now; export what is buffered while the runtime lives.
    if let Some(Err(err)) = otlp.map(toolcell_telemetry::Otlp::shutdown) {
        eprintln!("warning: {err}");
    }
    code
}

/// Logs to stderr as `TOOLCELL_LOG` says (errors only by default), and, when OTLP export is
/// on, every call's span to the collector whatever `TOOLCELL_LOG` says.
/// An error and its causes, each cause once: many of our errors already say their cause.
fn error_text(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1).map(ToString::to_string) {
        if !text.contains(&cause) {
            text = format!("{text}: {cause}");
        }
    }
    text
}

fn init_logging(otlp: Option<&toolcell_telemetry::Otlp>) {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let log = tracing_subscriber::fmt::layer()
        // Every log line, at every level and from every library (rmcp logs whole requests at
        // `debug`), without the secrets granted to tools.
        .with_writer(|| toolcell_runtime::policy::RedactingWriter::new(std::io::stderr()))
        // Colour codes only for a person at a terminal, never in a log file or a client's pipe.
        .with_ansi(std::io::stderr().is_terminal())
        .with_filter(tracing_subscriber::EnvFilter::from_env("TOOLCELL_LOG"));
    let spans = otlp.and_then(toolcell_telemetry::Otlp::layer).map(|layer| {
        let toolcell = tracing_subscriber::filter::Targets::new()
            .with_target("toolcell_runtime", tracing::Level::INFO)
            .with_target("toolcell_mcp", tracing::Level::INFO);
        layer.with_filter(toolcell)
    });
    tracing_subscriber::registry().with(log).with(spans).init();
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let cache = if cli.no_cache { None } else { cli.cache_dir.clone().or_else(default_cache_dir) };
    let policy = match &cli.policy {
        Some(file) => Policy::from_file(file)?,
        None => Policy::new(),
    };
    let source = Source {
        tools_dir: cli.tools_dir.as_deref(),
        cache: cache.as_deref(),
        policy: &policy,
        call_memory_bytes: None,
    };
    match cli.command {
        Command::List { json, format } => list(source, json, format).await,
        Command::Check { file } => check(source, &file).await,
        Command::Schema { tool, json, format } => schema(source, &tool, json, format).await,
        Command::Invoke(args) => invoke(source, *args).await,
        Command::Respond { format, message } => respond(source, format, &message).await,
        Command::Serve(args) => serve(source, *args).await,
        Command::New { name, path, lang } => new_tool(&name, path, lang.into()),
        Command::Build { path, out } => build(source, &path, out).await,
    }
}

/// Where the tools come from, what they are granted, and where compiled ones are kept.
#[derive(Debug, Clone, Copy)]
struct Source<'a> {
    tools_dir: Option<&'a Path>,
    cache: Option<&'a Path>,
    policy: &'a Policy,
    /// A memory limit the calls will ask for: the pool's slots are made at least this large,
    /// so `invoke --memory` is never capped below what it asked.
    call_memory_bytes: Option<u64>,
}

fn default_cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("toolcell"))
}

async fn list(source: Source<'_>, as_json: bool, format: Option<Format>) -> anyhow::Result<ExitCode> {
    let runtime = load(source, None, None).await?;
    if let Some(format) = format {
        warn_diagnostics(&runtime);
        print_json(&format.tools(runtime.definitions())?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if as_json {
        let tools: Vec<Value> = runtime
            .definitions()
            .map(|tool| {
                let mut entry = serde_json::to_value(tool).unwrap_or_default();
                entry["requested"] = json!(runtime.requested(&tool.name));
                entry["granted"] = json!(runtime.grants(&tool.name));
                entry
            })
            .collect();
        print_json(&json!({ "tools": tools, "diagnostics": runtime.diagnostics() }))?;
        return Ok(ExitCode::SUCCESS);
    }
    warn_diagnostics(&runtime);
    let rows: Vec<[String; 4]> = runtime
        .definitions()
        .map(|tool| {
            let title = tool.title.as_deref().map_or_else(|| "-".to_owned(), |title| cut(title, MAX_TITLE_COLUMN));
            [tool.name.clone(), tool.version.clone(), title, summary(&tool.description)]
        })
        .collect();
    let width = |column: usize, header: &str| {
        rows.iter().map(|row| row[column].chars().count()).max().unwrap_or(0).max(header.len())
    };
    let (name_width, version_width, title_width) = (width(0, "NAME"), width(1, "VERSION"), width(2, "TITLE"));
    out!("{:name_width$}  {:version_width$}  {:title_width$}  DESCRIPTION", "NAME", "VERSION", "TITLE");
    for [name, version, title, description] in rows {
        out!("{name:name_width$}  {version:version_width$}  {title:title_width$}  {description}");
    }
    let mut header = false;
    for tool in runtime.definitions() {
        let requested = runtime.requested(&tool.name).map(describe_requested).unwrap_or_default();
        let granted = runtime.grants(&tool.name).map(describe_granted).unwrap_or_default();
        if requested.is_empty() && granted.is_empty() {
            continue;
        }
        if !header {
            out!("\nCAPABILITIES (requested / granted)");
            header = true;
        }
        let or_none = |items: Vec<String>| if items.is_empty() { "nothing".to_owned() } else { items.join("; ") };
        out!("{:name_width$}  requests {}", tool.name, or_none(requested));
        out!("{:name_width$}  granted  {}", "", or_none(granted));
    }
    Ok(ExitCode::SUCCESS)
}

async fn check(source: Source<'_>, file: &Path) -> anyhow::Result<ExitCode> {
    if !file.is_file() {
        bail!("{}", not_a_file(file));
    }
    let runtime = load(Source { tools_dir: None, ..source }, Some(file), None).await?;
    if let Some(diagnostic) = runtime.diagnostics().first() {
        out!("{}: not a loadable tool: {}", file.display(), diagnostic.reason);
        return Ok(ExitCode::from(EXIT_TOOL_ERROR));
    }
    let tool = runtime.definitions().next().context("the file defines no tool")?;
    let properties = tool.parameters["properties"].as_object().map_or(0, serde_json::Map::len);
    out!("{}: ok", file.display());
    out!("tool: {} {}", tool.name, tool.version);
    if let Some(title) = &tool.title {
        out!("title: {title}");
    }
    out!("description: {}", summary(&tool.description));
    out!("hints: {}", describe_annotations(&tool.annotations));
    out!("parameters: {properties}; output schema: {}", if tool.output_schema.is_some() { "yes" } else { "no" });
    let undocumented = schema_text::undocumented(&tool.parameters);
    if !undocumented.is_empty() {
        out!(
            "warning: no description for the parameter(s) {}: a model sees only their names and types; \
             describe each (a `///` comment in Rust, the docstring's Args: section in Python, `description` in JavaScript)",
            undocumented.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
        );
    }
    let requested = runtime.requested(&tool.name).map(describe_requested).unwrap_or_default();
    if requested.is_empty() {
        out!("requests: nothing (pure computation)");
    } else {
        out!("requests:");
        for item in requested {
            out!("  {item}");
        }
        out!("(requests grant nothing: grant them in toolcell.toml, or with invoke --allow-host/--dir/--env)");
    }
    Ok(ExitCode::SUCCESS)
}

fn new_tool(name: &str, path: Option<PathBuf>, language: toolcell_author::Language) -> anyhow::Result<ExitCode> {
    let dir = path.unwrap_or_else(|| PathBuf::from(name));
    let created = toolcell_author::create(name, &dir, language)?;
    out!("created the {} tool `{name}` in {}:", language.name(), dir.display());
    for file in &created.files {
        out!("  {}", file.display());
    }
    out!("next, in {}:", dir.display());
    out!("  {}    # run its tests natively", created.test_command);
    out!("  toolcell build    # compile it into tools/{name}.wasm (the first build takes a minute or two)");
    out!("  toolcell --tools-dir tools invoke {name} {}", shell_quote(&created.example_arguments));
    Ok(ExitCode::SUCCESS)
}

async fn build(source: Source<'_>, path: &Path, out: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let out_dir = out.or_else(|| source.tools_dir.map(Path::to_path_buf)).unwrap_or_else(|| PathBuf::from("tools"));
    let built = match toolcell_author::build(path) {
        Ok(built) => built,
        Err(err) => {
            eprintln!("error: {err}");
            return Ok(ExitCode::from(EXIT_TOOL_ERROR));
        }
    };
    let mut names = Vec::new();
    for component in built {
        let runtime = load(Source { tools_dir: None, ..source }, Some(&component.wasm), None).await?;
        if let Some(diagnostic) = runtime.diagnostics().first() {
            eprintln!(
                "error: {} built {}, but it is not a loadable tool: {}",
                component.project.display(),
                component.wasm.display(),
                diagnostic.reason
            );
            return Ok(ExitCode::from(EXIT_TOOL_ERROR));
        }
        let tool = runtime.definitions().next().context("the component defines no tool")?;
        std::fs::create_dir_all(&out_dir).with_context(|| format!("cannot create {}", out_dir.display()))?;
        let dest = out_dir.join(format!("{}.wasm", tool.name));
        std::fs::copy(&component.wasm, &dest)
            .with_context(|| format!("cannot copy the component to {}", dest.display()))?;
        let size = std::fs::metadata(&dest).map_or(0, |metadata| metadata.len());
        out!("built {} {} -> {} ({} KiB)", tool.name, tool.version, dest.display(), size.div_ceil(1024));
        names.push(tool.name.clone());
    }
    let tools_dir = shell_quote(&out_dir.display().to_string());
    for name in names {
        out!("try: toolcell --tools-dir {tools_dir} schema {name}");
    }
    Ok(ExitCode::SUCCESS)
}

/// "there is no tool named …", with the closest names and the rest of the list.
fn no_such_tool(runtime: &Runtime, tool: &str) -> String {
    let names: Vec<&str> = runtime.definitions().map(|tool| tool.name.as_str()).collect();
    if names.is_empty() {
        return format!("there is no tool named `{tool}`: no tool is loaded");
    }
    let mut message = format!("there is no tool named `{tool}`");
    if let Some(best) = toolcell_schema::words::closest(tool, names.iter().copied(), 1).first() {
        message.push_str(&format!("; did you mean `{best}`?"));
    }
    message.push_str(&format!(" Available: {}", names.join(", ")));
    message
}

/// "… is not a file", with the closest `.wasm` file of its folder when there is one.
fn not_a_file(path: &Path) -> String {
    let what = if path.exists() { "is not a file" } else { "does not exist" };
    let mut message = format!("{} {what}", path.display());
    let folder = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let names: Vec<String> = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.ends_with(".wasm"))
        .collect();
    let wanted = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    if let Some(best) = toolcell_schema::words::closest(&wanted, names.iter().map(String::as_str), 1).first() {
        message.push_str(&format!("; did you mean {}?", folder.join(best).display()));
    }
    message
}

/// A `toolcell` command line that loads the same tools as this one: `toolcell [--tools-dir
/// DIR] <rest>`.
fn command_line(source: Source<'_>, rest: &str) -> String {
    match source.tools_dir {
        Some(dir) => format!("toolcell --tools-dir {} {rest}", shell_quote(&dir.display().to_string())),
        None => format!("toolcell {rest}"),
    }
}

/// `read-only, idempotent, closed world`: the hints a tool declares (or the host derived),
/// in MCP's order.
fn describe_annotations(annotations: &ToolAnnotations) -> String {
    let words = [
        annotations.read_only.map(|yes| if yes { "read-only" } else { "modifies its environment" }),
        annotations.destructive.map(|yes| if yes { "destructive" } else { "not destructive" }),
        annotations.idempotent.map(|yes| if yes { "idempotent" } else { "not idempotent" }),
        annotations.open_world.map(|yes| if yes { "open world" } else { "closed world" }),
    ];
    let words: Vec<&str> = words.into_iter().flatten().collect();
    if words.is_empty() { "none declared".to_owned() } else { words.join(", ") }
}

/// `http example.com`, `dir /workspace (read-only)`, `env API_KEY`.
fn describe_requested(requested: &RequestedCapabilities) -> Vec<String> {
    let hosts = requested.http_hosts.iter().map(|host| format!("http {host}"));
    let dirs = requested
        .directories
        .iter()
        .map(|dir| format!("dir {} ({})", dir.guest_path, if dir.writable { "read-write" } else { "read-only" }));
    let env = requested.env.iter().map(|name| format!("env {name}"));
    hosts.chain(dirs).chain(env).collect()
}

/// `http example.com`, `dir /workspace = /home/me/project (read-only)`, `env API_KEY`.
fn describe_granted(grants: &Grants) -> Vec<String> {
    let hosts = grants.allow_hosts.iter().map(|host| format!("http {host}"));
    let dirs = grants.dirs.iter().map(|dir| {
        let mode = if dir.writable { "read-write" } else { "read-only" };
        format!("dir {} = {} ({mode})", dir.guest, dir.host.display())
    });
    let env = grants.env.iter().map(|grant| format!("env {}", grant.name));
    let calls = grants.call_tools.iter().map(|tool| format!("calls {tool}"));
    hosts.chain(dirs).chain(env).chain(calls).collect()
}

async fn schema(source: Source<'_>, tool: &str, as_json: bool, format: Option<Format>) -> anyhow::Result<ExitCode> {
    let (runtime, name) = load_one(source, tool, &Grants::new()).await?;
    let Some(definition) = runtime.definition(&name) else {
        warn_diagnostics(&runtime);
        bail!("{}", no_such_tool(&runtime, tool));
    };
    if let Some(format) = format {
        print_json(&definition.to_format(format)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if as_json {
        print_json(definition)?;
        return Ok(ExitCode::SUCCESS);
    }
    out!("{} {}", definition.name, definition.version);
    if let Some(title) = &definition.title {
        out!("title: {title}");
    }
    out!("source: {}", runtime.source(&name).unwrap_or("?"));
    out!("hints: {}", describe_annotations(&definition.annotations));
    out!("\n{}\n", definition.description);
    out!("parameters:");
    for line in schema_text::property_lines(&definition.parameters) {
        out!("{line}");
    }
    if let Some(limits) = runtime.limits(&name) {
        out!(
            "\nlimits: fuel {}, timeout {} ms, memory {} bytes, arguments {} bytes, output {} bytes",
            limits.fuel,
            limits.timeout.as_millis(),
            limits.memory_bytes,
            limits.max_argument_bytes,
            limits.max_output_bytes
        );
    }
    let requested = runtime.requested(&name).map(describe_requested).unwrap_or_default();
    let granted = runtime.grants(&name).map(describe_granted).unwrap_or_default();
    out!("\ncapabilities:");
    out!("  requests: {}", if requested.is_empty() { "nothing".to_owned() } else { requested.join("; ") });
    out!("  granted:  {}", if granted.is_empty() { "nothing".to_owned() } else { granted.join("; ") });
    out!("\nFull JSON Schema: {} --json", command_line(source, &format!("schema {}", shell_quote(tool))));
    Ok(ExitCode::SUCCESS)
}

async fn invoke(source: Source<'_>, args: InvokeArgs) -> anyhow::Result<ExitCode> {
    let arguments = match (&args.arguments, &args.args_file) {
        (Some(dash), None) if dash == "-" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read the arguments from stdin (they must be UTF-8 JSON)")?;
            text
        }
        (Some(text), None) => text.clone(),
        (None, Some(file)) => std::fs::read_to_string(file)
            .with_context(|| format!("cannot read the arguments file {} (it must be UTF-8 JSON)", file.display()))?,
        (None, None) => "{}".to_owned(),
        (Some(_), Some(_)) => bail!("give the arguments either inline or with --args-file, not both"),
    };
    let context = match &args.context {
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => bail!("--context must be a JSON object, e.g. '{{\"time_zone\": \"Europe/Paris\"}}'"),
            Err(err) => bail!("--context is not valid JSON: {err}"),
        },
        None => Map::new(),
    };
    let mut limits = LimitOverrides::new();
    limits.fuel = args.fuel;
    limits.timeout = args.timeout;
    limits.memory_bytes = args.memory;
    limits.max_output_bytes = args.max_output;

    // An unknown name is not a usage error here: the output shows what a model would get.
    let source = Source { call_memory_bytes: args.memory, ..source };
    let (runtime, name) = load_one(source, &args.tool, &args.grants()).await?;
    let mut call = ToolCall::new(args.id, name.clone(), arguments).with_context(context).with_limits(limits);
    if let Some(parent) = args.traceparent {
        call = call.with_trace_parent(parent);
    }
    let output = runtime.call(call).await;
    print_json(&output)?;
    if output.is_error {
        for hint in operator_hints(&runtime, &name, output.error.as_ref()) {
            eprintln!("hint: {hint}");
        }
    }
    Ok(if output.is_error { ExitCode::from(EXIT_TOOL_ERROR) } else { ExitCode::SUCCESS })
}

async fn respond(source: Source<'_>, format: Format, message: &Path) -> anyhow::Result<ExitCode> {
    let text = if message == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the message from stdin (it must be UTF-8 JSON)")?;
        text
    } else {
        std::fs::read_to_string(message)
            .with_context(|| format!("cannot read the message file {} (it must be UTF-8 JSON)", message.display()))?
    };
    let message: Value = serde_json::from_str(&text).context("the message is not valid JSON")?;
    let runtime = load(source, None, None).await?;
    warn_diagnostics(&runtime);
    print_json(&runtime.respond(format, &message).await?)?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(source: Source<'_>, args: ServeArgs) -> anyhow::Result<ExitCode> {
    // Every connection, tool file and cached component is a descriptor: the soft limit
    // (often 1024) is far below what the hard limit allows.
    if let Some(limit) = toolcell_mcp::raise_open_files_limit() {
        tracing::debug!(limit, "open-files limit");
    }
    let mut builder = builder(source, None, None);
    if let Some(calls) = args.max_queued_calls {
        builder = builder.max_queued_calls(calls);
    }
    if let Some(bytes) = args.max_queued_bytes {
        builder = builder.max_queued_bytes(bytes);
    }
    if let Some(token) = &args.token {
        builder = builder.host_secret(token.clone());
    }
    if let Some(calls) = args.max_concurrent_calls {
        builder = builder.max_concurrent_calls(calls);
    }
    let runtime = builder.build().await?;
    warn_diagnostics(&runtime);
    let tools = runtime.definitions().len();
    let catalog = Arc::new(Catalog::new(runtime));
    let _reloader = match source.tools_dir {
        Some(dir) if !args.no_reload => Some(
            toolcell_mcp::watch(catalog.clone(), dir)
                .with_context(|| format!("cannot watch {} for changes (or pass --no-reload)", dir.display()))?,
        ),
        _ => None,
    };
    match args.transport {
        Transport::Stdio => {
            tracing::info!(tools, "serving MCP over stdio");
            toolcell_mcp::serve_stdio(catalog).await?;
        }
        Transport::Http => {
            let mut options = HttpOptions::default();
            options.listen = args.listen;
            options.token = args.token;
            options.allowed_origins = args.allow_origin;
            options.context_headers = args.context_header;
            options.stateless = args.stateless;
            options.max_body_bytes = usize::try_from(args.max_body).unwrap_or(usize::MAX);
            options.shutdown_grace = args.shutdown_grace;
            options.max_connections = args.max_connections as usize;
            options.max_connections_per_client = args.max_connections_per_client as usize;
            options.header_read_timeout = args.header_timeout;
            options.max_sessions = args.max_sessions as usize;
            options.max_sessions_per_client = args.max_sessions_per_client as usize;
            options.session_idle_timeout = args.session_idle;
            options.max_buffered_body_bytes =
                args.max_buffered_bytes.map(|bytes| usize::try_from(bytes).unwrap_or(usize::MAX));
            let listener = toolcell_mcp::bind(&options).await?;
            let address = listener.local_addr()?;
            eprintln!("serving {tools} tools over MCP at http://{address}/mcp");
            toolcell_mcp::serve_on(listener, catalog, options, shutdown_signal()).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupted = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let terminate = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut terminate) => {
                    terminate.recv().await;
                }
                Err(_) => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = interrupted => {}
            () = terminate => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupted.await;
}

/// What the operator (the person at the command line, not the model) can grant to make a
/// failed call possible: capabilities the tool asks for or tried to use and does not have.
fn operator_hints(runtime: &Runtime, tool: &str, error: Option<&CallError>) -> Vec<String> {
    let (Some(requested), Some(granted)) = (runtime.requested(tool), runtime.grants(tool)) else { return Vec::new() };
    let mut hints = Vec::new();
    if let Some(CallError::HttpDenied { grant, .. }) = error {
        hints.push(match grant {
            Some(grant) => format!("to allow this request, add `--allow-host {grant}`"),
            None => format!("`{tool}` has no HTTP grant: allow the hosts it may reach with `--allow-host HOST`"),
        });
    }
    for dir in &requested.directories {
        if !granted.dirs.iter().any(|granted| granted.guest == dir.guest_path) {
            let mode = if dir.writable { ":rw" } else { "" };
            hints.push(format!(
                "`{tool}` expects a directory at {} and none is granted there: add `--dir HOST_DIR:{}{mode}`",
                dir.guest_path, dir.guest_path
            ));
        }
    }
    for name in &requested.env {
        if !granted.env.iter().any(|granted| &granted.name == name) {
            hints.push(format!(
                "`{tool}` reads the environment variable {name}, which is not granted: add `--env {name}`"
            ));
        }
    }
    hints
}

/// Loads the runtime for a NAME|FILE argument, with `grants` for that tool, and returns the
/// tool's name. A file is loaded alone (and must load); a name is looked up by the caller.
async fn load_one(source: Source<'_>, tool: &str, grants: &Grants) -> anyhow::Result<(Runtime, String)> {
    let path = Path::new(tool);
    if names_a_file(tool) {
        if !path.is_file() {
            bail!("{}", not_a_file(path));
        }
        let mut runtime = load(source, Some(path), None).await?;
        if let Some(diagnostic) = runtime.diagnostics().first() {
            bail!("cannot load {diagnostic}");
        }
        let name = runtime.definitions().next().map(|tool| tool.name.clone()).context("the file defines no tool")?;
        if !grants.is_empty() {
            // The name is known only now; loading again comes from the compile cache.
            runtime = load(source, Some(path), Some((&name, grants))).await?;
            if let Some(diagnostic) = runtime.diagnostics().first() {
                bail!("cannot load {diagnostic}");
            }
        }
        return Ok((runtime, name));
    }
    // Reads and compiles only `<tool>.wasm` when the folder (or the built-in set) has it.
    let grants = (!grants.is_empty()).then_some((tool, grants));
    let runtime = builder(source, None, grants).only_tool(tool).allow_raising_limits_per_call().build().await?;
    if runtime.definition(tool).is_none()
        && let Some(diagnostic) = runtime.diagnostics().iter().find(|d| d.reason.contains(&format!("`{tool}`")))
    {
        bail!("cannot load {diagnostic}");
    }
    Ok((runtime, tool.to_owned()))
}

/// Whether a NAME|FILE argument is a file: it ends in `.wasm` or has a path separator. A
/// bare word is always a tool name, even when a file of that name is in the current folder
/// (which would otherwise run with the grants meant for the named tool).
fn names_a_file(tool: &str) -> bool {
    tool.ends_with(".wasm") || tool.contains('/') || tool.contains(std::path::MAIN_SEPARATOR)
}

/// A runtime over one file, a tools folder, or the built-in tools, with the policy and
/// `grants` for one tool.
async fn load(source: Source<'_>, file: Option<&Path>, grants: Option<(&str, &Grants)>) -> anyhow::Result<Runtime> {
    // The person at the command line is the operator: `--fuel`, `--timeout` and `--memory`
    // may raise the limits of the policy file.
    Ok(builder(source, file, grants).allow_raising_limits_per_call().build().await?)
}

/// A runtime builder over one file, a tools folder, or the built-in tools, with the policy
/// and `grants` for one tool.
fn builder(source: Source<'_>, file: Option<&Path>, grants: Option<(&str, &Grants)>) -> RuntimeBuilder {
    let builtin = file.is_none() && source.tools_dir.is_none();
    let mut builder = Runtime::builder().policy(if builtin {
        // The built-in tools come with their policy (the interpreter's limits), with the
        // operator's over it; a tools folder has its own toolcell.toml.
        let mut policy = builtin_policy();
        policy.merge(source.policy.clone());
        policy
    } else {
        source.policy.clone()
    });
    if let Some(bytes) = source.call_memory_bytes {
        let mut limits = Limits::default();
        limits.memory_bytes = limits.memory_bytes.max(bytes);
        builder = builder.limits(limits);
    }
    if let Some(report) = progress::compile_progress() {
        builder = builder.on_load_progress(report);
    }
    if let Some(cache) = source.cache {
        builder = builder.compile_cache(cache);
    }
    if let Some((tool, grants)) = grants {
        builder = builder.grant(tool, grants.clone());
    }
    for secret in otlp_header_values() {
        builder = builder.host_secret(secret);
    }
    match (file, source.tools_dir) {
        (Some(file), _) => builder.component_file(file),
        (None, Some(dir)) => builder.tools_dir(dir),
        (None, None) => toolcell_tools::ALL
            .iter()
            .fold(builder, |builder, (file, bytes)| builder.component_bytes(format!("builtin:{file}"), *bytes)),
    }
}

/// The values of the OTLP exporter's headers (`OTEL_EXPORTER_OTLP_*HEADERS`, `key=value`
/// pairs separated by commas, as written and with `%20` decoded): credentials of this
/// process that no tool may be granted under another name.
fn otlp_header_values() -> Vec<String> {
    toolcell_runtime::policy::RESERVED_HOST_VARIABLES
        .iter()
        .filter(|name| name.ends_with("HEADERS"))
        .filter_map(|name| std::env::var(name).ok())
        .flat_map(|headers| {
            headers
                .split(',')
                .filter_map(|pair| pair.split_once('=').map(|(_, value)| value.trim().to_owned()))
                .collect::<Vec<_>>()
        })
        .flat_map(|value| [value.replace("%20", " "), value])
        .filter(|value| value.chars().count() >= toolcell_runtime::policy::MIN_SECRET_CHARS)
        .collect()
}

/// [`toolcell_tools::POLICY`], which a test of this crate parses.
fn builtin_policy() -> Policy {
    Policy::parse(toolcell_tools::POLICY, Path::new("."))
        .unwrap_or_else(|problems| unreachable!("the built-in tools' policy is checked by a test: {problems:?}"))
}

fn warn_diagnostics(runtime: &Runtime) {
    for diagnostic in runtime.diagnostics() {
        eprintln!("warning: not loaded: {diagnostic}");
    }
}

fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    out!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}

/// The widest title `list` shows; a longer one is cut.
const MAX_TITLE_COLUMN: usize = 32;

/// The first sentence of a description, cut to fit a table row.
fn summary(description: &str) -> String {
    const MAX_CHARS: usize = 80;
    let line = first_line(description);
    let sentence = line.find(". ").map_or(line.as_str(), |end| &line[..=end]);
    cut(sentence, MAX_CHARS)
}

/// `text`, or its first `max_chars - 1` characters and `…` when it is longer.
fn cut(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max_chars - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_builtin_policy_parses_and_grants_nothing() {
        let policy = super::builtin_policy();
        let tools: Vec<_> = policy.tools().map(|(tool, _)| tool).collect();
        assert_eq!(tools, ["python"]);
        let python = policy.grants("python").unwrap();
        assert!(python.is_empty(), "{python:?}");
        assert!(python.limits.fuel.is_some() && python.limits.memory_bytes.is_some());
    }
}
