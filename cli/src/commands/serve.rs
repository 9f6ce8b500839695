//! `toolcell serve`: the tools as an MCP server, over stdio or streamable HTTP.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use toolcell_mcp::{Catalog, HttpOptions, StdioOptions};

use crate::args::{ServeArgs, Transport};
use crate::load::{Source, builder, warn_diagnostics};

pub(crate) async fn serve(source: Source<'_>, args: ServeArgs) -> anyhow::Result<ExitCode> {
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
    let schemas = toolcell_mcp::Schemas::from(args.schemas);
    warn_unconvertible(&runtime, schemas);
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
            let mut options = StdioOptions::default();
            options.schemas = schemas;
            toolcell_mcp::serve_stdio(catalog, options).await?;
        }
        Transport::Http => {
            let mut options = HttpOptions::default();
            options.listen = args.listen;
            options.token = args.token;
            options.allowed_origins = args.allow_origin;
            options.context_headers = args.context_header;
            options.schemas = schemas;
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

/// Says which tools have no schema in the form `schemas` asks for: they are listed in the
/// standard form instead.
fn warn_unconvertible(runtime: &toolcell_runtime::Runtime, schemas: toolcell_mcp::Schemas) {
    for definition in runtime.definitions() {
        if let Err(error) = definition.to_format(schemas.format()) {
            eprintln!("warning: {error}; it is listed with its standard schema");
        }
    }
}

/// Completes on SIGINT or SIGTERM.
pub(crate) async fn shutdown_signal() {
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
