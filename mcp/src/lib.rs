//! Serve toolcell tools to any MCP client: every tool of a [`Runtime`] becomes an MCP tool,
//! with the runtime's limits, policy and model-readable errors.
//!
//! - [`serve_stdio`]: one client on stdin/stdout (desktop assistants, IDEs, agent SDKs that
//!   start the server as a process).
//! - [`serve_http`]: streamable HTTP at `/mcp`, many clients at once, with Prometheus metrics
//!   at `/metrics`.
//!
//! Both serve every protocol revision `rmcp` knows, from 2024-11-05 to 2026-07-28 (which
//! has no `initialize` handshake and no sessions). `tools/call` goes through
//! [`Runtime::call_cancellable`]: a failure is a result with `isError` and the runtime's
//! message, and `notifications/cancelled` stops the tool.
//!
//! [`Runtime`]: toolcell_runtime::Runtime
//! [`Runtime::call_cancellable`]: toolcell_runtime::Runtime::call_cancellable

#![deny(clippy::unwrap_used, clippy::expect_used)]

mod approvals;
mod body;
mod catalog;
mod code_mode;
mod conn;
mod context;
pub mod convert;
mod handler;
mod hangup;
mod http;
mod oauth;
mod origin;
mod peers;
mod progress;
mod prometheus;
mod reload;
mod sessions;
mod stdio;
mod tasks;

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::ServiceExt;

pub use catalog::{Catalog, MAX_WAITING_FOR_LOAD};
pub use code_mode::CodeModeServing;
pub use conn::raise_open_files_limit;
pub use context::{ContextHeader, ContextHeaderError};
pub use convert::Schemas;
pub use handler::ToolServer;
pub use http::{HttpOptions, MIN_TOKEN_CHARS, bind, serve_http, serve_on};
pub use oauth::{OAuth, OAuthError, ScopeTools, ScopeToolsError};
pub use reload::{DEBOUNCE, Reloader, watch};
pub use tasks::TaskLimits;

/// Why serving stopped or could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// Serving off loopback without a token would let anyone who can reach the port run
    /// the tools.
    #[error(
        "refusing to serve on {address} without a bearer token: anyone who can reach it could run the tools. \
         Set --token (or TOOLCELL_TOKEN), or listen on 127.0.0.1"
    )]
    TokenRequired {
        /// The address.
        address: SocketAddr,
    },
    /// A token short enough to guess.
    #[error(
        "the bearer token has {chars} characters; use at least {MIN_TOKEN_CHARS}, e.g. the output of \
         `openssl rand -hex 32`"
    )]
    WeakToken {
        /// Its length.
        chars: usize,
    },
    /// A static token and OAuth at once: which one a client must send would be unclear.
    #[error("--token and --oauth-issuer cannot both be set: serve with OAuth access tokens, or with the static token")]
    TokenAndOAuth,
    /// The OAuth settings are not usable.
    #[error("the OAuth settings are not usable: {0}")]
    OAuth(#[source] OAuthError),
    /// The address could not be bound.
    #[error("cannot listen on {address}: {source}. Pick a free port, e.g. --listen 127.0.0.1:0")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The MCP session over stdio failed to start or ended with an error.
    #[error("the MCP session ended with an error: {0}")]
    Session(String),
    /// Serving failed.
    #[error("serving failed: {0}")]
    Io(#[source] std::io::Error),
}

/// How to serve over stdio.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StdioOptions {
    /// The schemas `tools/list` shows. Default: [`Schemas::Standard`].
    pub schemas: Schemas,
    /// Whether to serve code mode's `search` and `execute`. Default: [`CodeModeServing::Off`].
    pub code_mode: CodeModeServing,
    /// The tools `tools/list` marks `toolcell/deferLoading`. Default: none.
    pub deferred: toolcell_runtime::formats::Deferral,
    /// How calls become tasks for clients that accept them (MCP's Tasks extension); `None`
    /// offers no tasks. Default: [`TaskLimits::default`].
    pub tasks: Option<TaskLimits>,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            schemas: Schemas::Standard,
            code_mode: CodeModeServing::Off,
            deferred: toolcell_runtime::formats::Deferral::None,
            tasks: Some(TaskLimits::default()),
        }
    }
}

/// Serves one client over stdin and stdout until the client closes stdin. Only protocol
/// messages go to stdout: the runtime captures every tool's output, and logs belong on
/// stderr.
///
/// # Errors
/// When the session cannot start (the client's first message is not MCP) or fails.
pub async fn serve_stdio(catalog: Arc<Catalog>, options: StdioOptions) -> Result<(), ServeError> {
    let server = ToolServer::new(catalog, Arc::from([]))
        .with_schemas(options.schemas)
        .with_code_mode(options.code_mode)
        .with_deferral(options.deferred)
        .with_tasks(options.tasks.map(|limits| Arc::new(tasks::Tasks::new(limits))));
    let (input, output, _restore) = stdio::open();
    let running = server.serve((input, output)).await.map_err(|err| ServeError::Session(err.to_string()))?;
    running.waiting().await.map_err(|err| ServeError::Session(err.to_string()))?;
    Ok(())
}
