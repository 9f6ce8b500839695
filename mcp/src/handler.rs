//! The MCP server over a [`Catalog`]: `tools/list`, `tools/call`, and list-change
//! notifications, for every protocol revision `rmcp` serves.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use tokio::sync::watch;
use tokio_util::sync::{CancellationToken, DropGuard};
use toolcell_runtime::{Arguments, ToolCall};

use crate::catalog::Catalog;
use crate::context::ContextHeader;
use crate::convert;

/// What the server tells clients about itself at `initialize` and `server/discover`.
const INSTRUCTIONS: &str = "Every tool runs in a WebAssembly sandbox under time, fuel and memory limits. \
     When a call fails, the result has isError set and its text says what went wrong and what to change; \
     read it, fix the arguments, and call again.";

/// One client's connection (a stdio process, or an HTTP session or request) to the tools.
#[derive(Debug)]
pub struct ToolServer {
    catalog: Arc<Catalog>,
    context_headers: Arc<[ContextHeader]>,
    /// Forwards tool-list changes to this connection's client until the connection ends.
    forwarding: Mutex<Option<DropGuard>>,
}

impl ToolServer {
    /// A server over `catalog` that copies `context_headers` of HTTP requests into each
    /// call's host context.
    pub fn new(catalog: Arc<Catalog>, context_headers: Arc<[ContextHeader]>) -> Self {
        Self { catalog, context_headers, forwarding: Mutex::new(None) }
    }

    /// The host context of a call: the configured headers of the HTTP request carrying it.
    fn host_context(&self, context: &RequestContext<RoleServer>) -> Map<String, Value> {
        match context.extensions.get::<http::request::Parts>() {
            Some(request) => crate::context::from_headers(&self.context_headers, &request.headers),
            None => Map::new(),
        }
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolcell", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The runtime keeps tools by name, so the order is deterministic.
        let runtime = self.catalog.runtime();
        Ok(ListToolsResult::with_all_items(runtime.definitions().map(convert::tool).collect()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let runtime = self.catalog.runtime();
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let mut call = ToolCall::new(context.id.to_string(), request.name, Arguments::Value(arguments))
            .with_context(self.host_context(&context));
        let headers = context.extensions.get::<http::request::Parts>().map(|request| &request.headers);
        // rmcp moves the request's `_meta` into the context; the params keep it otherwise.
        let meta = match (context.meta.get_traceparent(), &request.meta) {
            (None, Some(params_meta)) => params_meta,
            _ => &context.meta,
        };
        if let Some(parent) = crate::context::trace_parent(meta, headers) {
            call = call.with_trace_parent(parent);
        }
        let output = runtime.call_cancellable(call, &context.ct).await;
        convert::call_result(output).map(CallToolResponse::from)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let stop = CancellationToken::new();
        let peer = context.peer;
        let mut changes = self.catalog.changes();
        let forwarding = stop.clone();
        tokio::spawn(async move {
            while next_change(&mut changes, &forwarding).await {
                if peer.notify_tool_list_changed().await.is_err() {
                    break;
                }
            }
        });
        *self.forwarding.lock().unwrap_or_else(PoisonError::into_inner) = Some(stop.drop_guard());
    }

    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    /// `subscriptions/listen` (2026-07-28): list changes for clients without a session.
    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.catalog.changes();
        loop {
            tokio::select! {
                () = subscription.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() || subscription.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// Waits for the next change; `false` when forwarding should stop.
async fn next_change(changes: &mut watch::Receiver<u64>, stop: &CancellationToken) -> bool {
    tokio::select! {
        () = stop.cancelled() => false,
        changed = changes.changed() => changed.is_ok(),
    }
}
