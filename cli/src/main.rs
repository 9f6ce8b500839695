//! `toolcell`: list, inspect and invoke WebAssembly tools.

// `out!` first: the modules below use it.
/// `println!`, except that a closed stdout ends the process quietly instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(err) = writeln!(std::io::stdout(), $($arg)*) {
            $crate::stdout_failed(err);
        }
    }};
}

mod args;
mod commands;
mod describe;
mod load;
mod parse;
mod print;
mod progress;
mod schema_text;

use std::io::IsTerminal as _;
use std::process::ExitCode;

use clap::Parser as _;

use crate::args::{Cli, Command};
use crate::commands::{
    author, check, client_config, export, invoke, list, policy, precompile, registry, replay, respond, schema, serve,
    server_json, test, warm,
};
use crate::load::{Source, default_cache_dir};
use toolcell_runtime::Policy;
use toolcell_runtime::formats::ToolMarks;

/// Exit code when the tool call itself failed (the printed output says how).
pub(crate) const EXIT_TOOL_ERROR: u8 = 1;

/// Exit code for a usage error: bad flags, unreadable files, a tool that cannot be loaded.
pub(crate) const EXIT_USAGE: u8 = 2;

/// Exit code when stdout was closed early (`toolcell list | head -1`): what a shell reports
/// for a program ended by SIGPIPE.
const EXIT_STDOUT_CLOSED: i32 = 141;

/// Ends the process after stdout failed: quietly, with SIGPIPE's code, when it was closed.
pub(crate) fn stdout_failed(err: std::io::Error) -> ! {
    if err.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(EXIT_STDOUT_CLOSED);
    }
    eprintln!("error: cannot write to stdout: {err}");
    std::process::exit(EXIT_USAGE.into())
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

/// Logs to stderr as `TOOLCELL_LOG` says (errors only by default), and, when OTLP export is
/// on, every call's span to the collector whatever `TOOLCELL_LOG` says.
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
        // Questions about a policy read no secret: they need not be set.
        Some(file) if matches!(cli.command, Command::Policy { .. }) => Policy::from_file_unresolved(file)?,
        Some(file) => Policy::from_file(file)?,
        None => Policy::new(),
    };
    if cli.no_builtins && cli.tools_dir.is_none() && !matches!(cli.command, Command::ExportBuiltins { .. }) {
        anyhow::bail!("--no-builtins leaves no tools to load: name a folder of your tools with --tools-dir DIR");
    }
    let registry_store = match &cli.registry_store {
        Some(dir) => Some(dir.clone()),
        None => registry::store_dir(cli.cache_dir.as_deref()).ok(),
    };
    let source = Source {
        registry_store: registry_store.as_deref(),
        locked: cli.locked,
        tools_dir: cli.tools_dir.as_deref(),
        builtins: !cli.no_builtins,
        cache: cache.as_deref(),
        policy: &policy,
        call_memory_bytes: None,
        denials: None,
        component: None,
    };
    match cli.command {
        Command::List { json, format, export } => list::list(source, json, format, export).await,
        Command::Check { file } => check::check(source, &file).await,
        Command::Schema { tool, json, format, defer_loading, allowed_callers } => {
            let marks = ToolMarks::NONE.with_deferred(defer_loading).with_code_callable(allowed_callers);
            schema::schema(source, &tool, json, format, marks).await
        }
        Command::Invoke(args) => invoke::invoke(source, *args).await,
        Command::Replay { file } => replay::replay(source, &file).await,
        Command::Respond { format, message } => respond::respond(source, format, &message).await,
        Command::Serve(args) => serve::serve(source, *args).await,
        Command::Warm => warm::warm(source).await,
        Command::Push(args) => registry::push(cache.as_deref(), *args).await,
        Command::Pull(args) => registry::pull(registry_store.as_deref(), cli.tools_dir.as_deref(), *args).await,
        Command::Keygen { prefix, force } => registry::keygen(&prefix, force),
        Command::ServerJson(args) => server_json::server_json(source, *args).await,
        Command::Policy { command } => policy::policy(source, command),
        Command::ExportBuiltins { dir, force } => export::export_builtins(&dir, force),
        Command::Precompile { out, portable } => precompile::precompile(&out, portable).await,
        Command::ClientConfig { client, transport, url } => {
            let server = client_config::ServerFlags {
                tools_dir: cli.tools_dir.as_deref(),
                no_builtins: cli.no_builtins,
                policy: cli.policy.as_deref(),
                cache_dir: cli.cache_dir.as_deref(),
                no_cache: cli.no_cache,
            };
            client_config::client_config(&server, client, transport, &url)
        }
        Command::New { name, path, lang } => author::new_tool(&name, path, lang.into()),
        Command::Build { path, out } => author::build(source, &path, out).await,
        Command::Test { path } => test::test(source, &path).await,
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "toolcell", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
    }
}
