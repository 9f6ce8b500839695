//! `toolcell serve`: the tools as an MCP server, over stdio or streamable HTTP.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use toolcell_mcp::{Catalog, CodeModeServing, HttpOptions, OAuth, Schemas, StdioOptions};
use toolcell_runtime::code_mode::{EXECUTE, SEARCH};
use toolcell_runtime::formats::Deferral;
use toolcell_runtime::policy::MissingGrant;
use toolcell_runtime::{Runtime, RuntimeBuilder};

use crate::args::{ServeArgs, Transport};
use crate::commands::registry;
use crate::load::{Source, builder, warn_diagnostics};

pub(crate) async fn serve(source: Source<'_>, args: ServeArgs) -> anyhow::Result<ExitCode> {
    // Every connection, tool file and cached component is a descriptor: the soft limit
    // (often 1024) is far below what the hard limit allows.
    if let Some(limit) = toolcell_mcp::raise_open_files_limit() {
        tracing::debug!(limit, "open-files limit");
    }
    // The command line's grants, over the policy files and --policy.
    let mut policy = source.policy.clone();
    policy.merge(args.policy());
    let mut builder = builder(Source { policy: &policy, denials: args.denials.as_deref(), ..source }, None, None);
    // Registry tools named on the command line are pulled once, before anything is served;
    // a reload keeps them.
    for reference in &args.oci_tools {
        let bytes =
            registry::pull_component(source.registry_store, source.tools_dir, reference, &args.trust, &args.registry)
                .await?;
        builder = builder.component_bytes(reference.clone(), bytes);
    }
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
    // Clients connect and handshake at once; the tools load (on a cold cache, compile) beside
    // them, and requests that need the tools wait for them.
    let catalog = Arc::new(Catalog::loading());
    let schemas = Schemas::from(args.schemas);
    let code_mode = args.code_mode_serving();
    let _reloader = match source.tools_dir {
        Some(dir) if !args.no_reload => Some(
            toolcell_mcp::watch(catalog.clone(), dir)
                .with_context(|| format!("cannot watch {} for changes (or pass --no-reload)", dir.display()))?,
        ),
        _ => None,
    };
    let deferred = args.defer_loading.clone().unwrap_or_default();
    let loading = load_into(&catalog, builder, schemas, code_mode, &deferred);
    match args.transport {
        Transport::Stdio => {
            tracing::info!("serving MCP over stdio");
            let mut options = StdioOptions::default();
            options.schemas = schemas;
            options.code_mode = code_mode;
            options.deferred = deferred.clone();
            options.tasks = args.tasks();
            tokio::select! {
                served = toolcell_mcp::serve_stdio(catalog.clone(), options) => served?,
                failed = loading => return Err(failed),
            }
        }
        Transport::Http => {
            let mut options = HttpOptions::default();
            options.tasks = args.tasks();
            options.listen = args.listen;
            options.schemas = schemas;
            options.code_mode = code_mode;
            options.deferred = deferred.clone();
            options.token = args.token;
            if let (Some(issuer), Some(resource)) = (args.oauth_issuer, args.oauth_resource) {
                let mut oauth = OAuth::new(issuer, resource, args.oauth_scope);
                oauth.jwks_uri = args.oauth_jwks_uri;
                options.oauth = Some(oauth);
            }
            options.allowed_origins = args.allow_origin;
            options.context_headers = args.context_header;
            options.stateless = args.stateless;
            options.max_body_bytes = usize::try_from(args.max_body).unwrap_or(usize::MAX);
            options.shutdown_grace = args.shutdown_grace;
            options.drain_delay = args.drain_delay;
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
            eprintln!("serving MCP at http://{address}/mcp");
            tokio::select! {
                served = toolcell_mcp::serve_on(listener, catalog.clone(), options, shutdown_signal()) => served?,
                failed = loading => return Err(failed),
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds the runtime into `catalog`: its tools are listed and called while they compile, and
/// served whole once compiled. Then waits for ever; completes only when the tools could not be
/// loaded at all, with the reason.
async fn load_into(
    catalog: &Catalog,
    builder: RuntimeBuilder,
    schemas: Schemas,
    code_mode: CodeModeServing,
    deferred: &Deferral,
) -> anyhow::Error {
    let loaded = match builder.start().await {
        Ok(loading) => {
            catalog.compiling(loading.clone());
            loading.finished().await
        }
        Err(err) => Err(err),
    };
    match loaded {
        Ok(runtime) => {
            warn_diagnostics(&runtime);
            warn_unconvertible(&runtime, schemas);
            say_unavailable(&runtime);
            say_code_mode(&runtime, code_mode);
            warn_not_deferred(&runtime, deferred);
            let tools = runtime.definitions().len();
            // Serving first: once stderr says ready, `/healthz` says so too.
            catalog.loaded(runtime);
            eprintln!("toolcell: {tools} tools ready");
            std::future::pending().await
        }
        Err(err) => {
            catalog.failed(err.to_string());
            anyhow::Error::new(err).context("cannot load the tools")
        }
    }
}

/// Says what code mode serves, or why it cannot.
fn say_code_mode(runtime: &Runtime, code_mode: CodeModeServing) {
    if code_mode == CodeModeServing::Off {
        return;
    }
    match runtime.code_mode() {
        Ok(code_mode) => {
            let callable: Vec<&str> = code_mode.tools().callable().iter().map(|tool| tool.name.as_str()).collect();
            eprintln!(
                "toolcell: code mode: `search` and `execute`; programs run in `{}` and may call {} tools: {}",
                code_mode.tools().program(),
                callable.len(),
                callable.join(", ")
            );
        }
        Err(err) => eprintln!("error: {err}; `search` and `execute` fail until it is"),
    }
    let clash: Vec<&str> = runtime
        .definitions()
        .map(|tool| tool.name.as_str())
        .filter(|name| code_mode == CodeModeServing::Also && [SEARCH, EXECUTE].contains(name))
        .collect();
    for name in clash {
        eprintln!(
            "warning: tool `{name}` is not listed: code mode's `{name}` takes the name (rename the tool, or serve \
             with --code-mode only)"
        );
    }
}

/// Says which tools --defer-loading names that are not loaded (they may be later: the
/// folder is watched).
fn warn_not_deferred(runtime: &Runtime, deferred: &Deferral) {
    let Deferral::Only(names) = deferred else { return };
    for name in names.iter().filter(|name| runtime.definition(name).is_none()) {
        eprintln!("warning: --defer-loading names `{name}`, which is not loaded: check the name with `toolcell list`");
    }
}

/// Says which tools miss a grant they need (clients see them listed as unavailable), and how
/// to grant it.
fn say_unavailable(runtime: &Runtime) {
    for tool in runtime.definitions() {
        let missing = runtime.missing_grants(&tool.name);
        if missing.is_empty() {
            continue;
        }
        let needs: Vec<String> = missing.iter().map(ToString::to_string).collect();
        let flags: Vec<String> = missing.iter().map(|grant| grant_flag(&tool.name, grant)).collect();
        eprintln!(
            "toolcell: `{}` is listed as unavailable: it needs {}, which it is not granted; grant it with {} \
             (or in the folder's toolcell.toml)",
            tool.name,
            needs.join(" and "),
            flags.join(" ")
        );
    }
}

/// The `serve` flag that grants `missing` to `tool`.
fn grant_flag(tool: &str, missing: &MissingGrant) -> String {
    match missing {
        MissingGrant::Directory { guest_path } => format!("--dir {tool}=HOST_DIR:{guest_path}"),
        MissingGrant::Hosts { requested } => match requested.first() {
            Some(host) => format!("--allow-host {tool}={host}"),
            None => format!("--allow-host {tool}=HOST"),
        },
        MissingGrant::Env { name } => format!("--env {tool}={name}"),
        _ => format!("a grant for `{tool}`"),
    }
}

/// Says which tools have no schema in the form `schemas` asks for: they are listed in the
/// standard form instead.
fn warn_unconvertible(runtime: &Runtime, schemas: Schemas) {
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
