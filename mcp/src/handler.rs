//! The MCP server over a [`Catalog`]: `tools/list`, `tools/call`, and list-change
//! notifications, for every protocol revision `rmcp` serves.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, CreateTaskResult, CustomRequest,
    CustomResult, ErrorCode, GetTaskParams, GetTaskResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, SubscriptionFilter, Tool, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio_util::sync::{CancellationToken, DropGuard};
use toolcell_runtime::code_mode::{CodeMode, EXECUTE, SEARCH};
use toolcell_runtime::formats::{Deferral, ToolMarks};
use toolcell_runtime::loading::ListedTool;
use toolcell_runtime::policy::TaskMode;
use toolcell_runtime::{Arguments, Principal, Runtime, ToolCall, ToolDefinition, ToolOutput};
use toolcell_schema::words::{closest, code_list, truncated};

use crate::approvals::{self, Asker};
use crate::catalog::Catalog;
use crate::code_mode::CodeModeServing;
use crate::context::ContextHeader;
use crate::convert::{self, Schemas};
use crate::oauth::{Caller, Permit, Verifier};
use crate::peers::Peer;
use crate::tasks::{Outcome, Owner, TaskInput, Tasks};

/// What the server tells clients about itself at `initialize` and `server/discover`.
const INSTRUCTIONS: &str = "Every tool runs in a WebAssembly sandbox under time, fuel and memory limits. \
     When a call fails, the result has isError set and its text says what went wrong and what to change; \
     read it, fix the arguments, and call again.";

/// The methods a client may call on this server (beside notifications).
const METHODS: &[&str] = &["initialize", "ping", "tools/list", "tools/call"];

/// The longest method name an error quotes: the name is the client's, of any length.
const MAX_QUOTED_METHOD_BYTES: usize = 100;

/// The host-context key of the caller an OAuth token names: `{"subject", "client_id",
/// "scopes"}`.
pub(crate) const CALLER_KEY: &str = "caller";

/// One client's connection (a stdio process, or an HTTP session or request) to the tools.
#[derive(Debug)]
pub struct ToolServer {
    catalog: Arc<Catalog>,
    context_headers: Arc<[ContextHeader]>,
    /// The schemas `tools/list` shows, and so the shape of the arguments calls send.
    schemas: Schemas,
    /// Whether `search` and `execute` are served, alone or beside the tools.
    code_mode: CodeModeServing,
    /// The tools listed with the `toolcell/deferLoading` mark.
    deferred: Deferral,
    /// The server's tasks, when it offers them (MCP's Tasks extension).
    tasks: Option<Arc<Tasks>>,
    /// Forwards tool-list changes to this connection's client until the connection ends.
    forwarding: Mutex<Option<DropGuard>>,
    /// With OAuth: what each request's token grants (its caller is in the request's extensions).
    oauth: Option<Arc<Verifier>>,
}

/// How a `tools/call` is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answering {
    /// With its result.
    Inline,
    /// With its result when it ends within the time, else with a task.
    TaskAfter(Duration),
    /// With a task.
    Task,
}

impl ToolServer {
    /// A server over `catalog` that copies `context_headers` of HTTP requests into each
    /// call's host context.
    pub fn new(catalog: Arc<Catalog>, context_headers: Arc<[ContextHeader]>) -> Self {
        Self {
            catalog,
            context_headers,
            schemas: Schemas::default(),
            code_mode: CodeModeServing::Off,
            deferred: Deferral::None,
            tasks: None,
            forwarding: Mutex::new(None),
            oauth: None,
        }
    }

    /// Serves each request the tools its OAuth token's scopes grant.
    #[must_use]
    pub(crate) fn with_oauth(mut self, oauth: Option<Arc<Verifier>>) -> Self {
        self.oauth = oauth;
        self
    }

    /// The request's caller, when its OAuth token named one.
    fn caller<'c>(&self, context: &'c RequestContext<RoleServer>) -> Option<&'c Caller> {
        context.extensions.get::<http::request::Parts>()?.extensions.get::<Caller>()
    }

    /// A paused program's resume token, bound to the request's OAuth caller: another caller
    /// cannot resume it (nor approve its call). Without OAuth, the token as it is.
    fn seal(&self, context: &RequestContext<RoleServer>, token: &str) -> String {
        match Caller::key(self.caller(context)) {
            0 => token.to_owned(),
            key => format!("{key:016x}.{token}"),
        }
    }

    /// The runtime's token inside a sealed one, if the request's caller is the one it was
    /// sealed for.
    ///
    /// # Errors
    /// `-32602` for another caller's token.
    fn unseal(
        &self,
        context: &RequestContext<RoleServer>,
        resuming: approvals::Resuming,
    ) -> Result<approvals::Resuming, ErrorData> {
        let key = Caller::key(self.caller(context));
        if key == 0 {
            return Ok(resuming);
        }
        match resuming.token.split_once('.') {
            Some((sealed_for, token)) if sealed_for == format!("{key:016x}") => {
                Ok(approvals::Resuming { token: token.to_owned(), ..resuming })
            }
            _ => Err(ErrorData::invalid_params(
                "this paused program was started by another caller: only its caller can resume it; run the program \
                 again to be asked yourself",
                None,
            )),
        }
    }

    /// Whose the request's tasks are: its client's address and, with OAuth, its caller.
    fn owner(&self, context: &RequestContext<RoleServer>) -> Owner {
        Owner::new(client_of(context), self.caller(context))
    }

    /// The tools the request may see and call: all of them without OAuth; with it, those its
    /// token's scopes grant (none without a verified caller).
    fn permit(&self, context: &RequestContext<RoleServer>) -> Permit {
        match (&self.oauth, self.caller(context)) {
            (None, _) => Permit::All,
            (Some(verifier), Some(caller)) => verifier.permit(caller),
            (Some(_), None) => Permit::Only(std::collections::BTreeSet::new()),
        }
    }

    /// Offers tasks (MCP's Tasks extension) from the server's one store of them.
    #[must_use]
    pub(crate) fn with_tasks(mut self, tasks: Option<Arc<Tasks>>) -> Self {
        self.tasks = tasks;
        self
    }

    /// Lists the tools with `schemas` (and maps calls' arguments back from them).
    #[must_use]
    pub fn with_schemas(mut self, schemas: Schemas) -> Self {
        self.schemas = schemas;
        self
    }

    /// Serves code mode's `search` and `execute`, alone or beside the tools.
    #[must_use]
    pub fn with_code_mode(mut self, code_mode: CodeModeServing) -> Self {
        self.code_mode = code_mode;
        self
    }

    /// Lists `deferred` with the `toolcell/deferLoading` mark, for clients whose tool search
    /// loads them only when the model looks for them.
    #[must_use]
    pub fn with_deferral(mut self, deferred: Deferral) -> Self {
        self.deferred = deferred;
        self
    }

    /// The host context of a call: the configured headers of the HTTP request carrying it.
    fn host_context(&self, context: &RequestContext<RoleServer>) -> Map<String, Value> {
        let mut host = match context.extensions.get::<http::request::Parts>() {
            Some(request) => crate::context::from_headers(&self.context_headers, &request.headers),
            None => Map::new(),
        };
        // Last, so that no header mapped to `caller` can pose as the verified caller.
        if let Some(caller) = self.caller(context) {
            host.insert(
                CALLER_KEY.to_owned(),
                json!({ "subject": caller.subject, "client_id": caller.client_id, "scopes": caller.scopes }),
            );
        }
        host
    }

    /// The call a `tools/call` request makes: its arguments in the tool's own shape, the host
    /// context, the trace parent, and progress when the client asked for it.
    fn tool_call(
        &self,
        request: CallToolRequestParams,
        definition: Option<&ToolDefinition>,
        context: &RequestContext<RoleServer>,
        answering: Answering,
    ) -> (ToolCall, Option<crate::progress::Forwarding>) {
        let arguments = convert::arguments(self.schemas, definition, request.arguments.unwrap_or_default());
        let mut call = ToolCall::new(context.id.to_string(), request.name, Arguments::Value(arguments))
            .with_context(self.host_context(context));
        if let Some(caller) = self.caller(context) {
            call = call.with_principal(Principal::new(caller.subject.clone(), caller.client_id.clone()));
        }
        let headers = context.extensions.get::<http::request::Parts>().map(|request| &request.headers);
        // rmcp moves the request's `_meta` into the context; the params keep it otherwise.
        let meta = match (context.meta.get_traceparent(), &request.meta) {
            (None, Some(params_meta)) => params_meta,
            _ => &context.meta,
        };
        if let Some(parent) = crate::context::trace_parent(meta, headers) {
            call = call.with_trace_parent(parent);
        }
        // A task outlives its request: the extension has no progress for tasks.
        let token = context.meta.get_progress_token().or_else(|| request.meta.as_ref()?.get_progress_token());
        let token = token.filter(|_| answering == Answering::Inline);
        crate::progress::stream_stdout(call, token, &context.peer)
    }

    /// How a call of a tool whose policy says `mode` is answered, for the request's client.
    ///
    /// # Errors
    /// `-32021` for a tool that must be a task, when the client does not accept tasks.
    fn answering(&self, mode: TaskMode, context: &RequestContext<RoleServer>) -> Result<Answering, ErrorData> {
        let Some(tasks) = &self.tasks else { return Ok(Answering::Inline) };
        let accepts = context.client_capabilities().is_some_and(|capabilities| capabilities.supports_tasks());
        Ok(match mode {
            TaskMode::Required if !accepts => {
                return Err(ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ));
            }
            _ if !accepts => Answering::Inline,
            TaskMode::Never => Answering::Inline,
            TaskMode::Optional => Answering::TaskAfter(tasks.limits().after),
            _ => Answering::Task,
        })
    }

    /// Answers a call whose `work` is to run as a task (at once or once it outlasts its time,
    /// as `answering` says); `work` gets the token that stops it, and the task's input when it
    /// runs as a task from the start. With no room for another task, the call is answered with
    /// its result, unless its tool requires a task.
    async fn answer_as_task<W, F>(
        &self,
        answering: Answering,
        mode: TaskMode,
        context: &RequestContext<RoleServer>,
        work: W,
    ) -> Result<CallToolResponse, ErrorData>
    where
        W: FnOnce(CancellationToken, Option<TaskInput>) -> F + Send + 'static,
        F: Future<Output = Outcome> + Send + 'static,
    {
        let Some(tasks) = &self.tasks else { return Err(ErrorData::internal_error("tasks are off", None)) };
        let owner = self.owner(context);
        let stop = CancellationToken::new();
        if answering == Answering::Task {
            return match tasks.create(owner, stop.clone()) {
                Ok(task) => Ok(CreateTaskResult::new(task.run(|input| work(stop, Some(input)))).into()),
                Err(full) if mode == TaskMode::Required => Err(full),
                Err(_) => inline(work(stop.clone(), None), stop, context).await,
            };
        }
        let Answering::TaskAfter(after) = answering else {
            return inline(work(stop.clone(), None), stop, context).await;
        };
        let mut running = tokio::spawn(work(stop.clone(), None));
        tokio::select! {
            ended = &mut running => return answered(ended.unwrap_or_else(crashed)),
            () = tokio::time::sleep(after) => {}
            () = context.ct.cancelled() => {
                stop.cancel();
                return Err(cancelled());
            }
        }
        match tasks.create(owner, stop.clone()) {
            Ok(task) => {
                Ok(CreateTaskResult::new(task.run(|_| async move { running.await.unwrap_or_else(crashed) })).into())
            }
            Err(_) => inline(async move { running.await.unwrap_or_else(crashed) }, stop, context).await,
        }
    }

    /// A call of code mode's `search` (answered from the tools' definitions, while they
    /// compile too) or `execute` (once every tool is loaded: a program may call any), or, with
    /// code mode only, of any other name (not a tool here). For a client that accepts tasks,
    /// every `execute` is a task, whose program's approvals the task asks for.
    async fn call_code_mode(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let permit = self.permit(&context);
        if self.code_mode.serves(&request.name) && !permit.allows(&request.name) {
            return Err(ErrorData::invalid_params(format!("unknown tool `{}`", request.name), None));
        }
        let listed = permitted(self.catalog.tools().await.map_err(not_loaded)?, &permit);
        let tools = self.catalog.code_mode(&listed).map_err(not_loaded)?;
        let definition = tools.definitions().iter().find(|tool| tool.name == request.name);
        let resuming = match approvals::resuming(&request) {
            Some(resuming) => Some(self.unseal(&context, resuming)?),
            None => None,
        };
        let answering =
            if request.name == EXECUTE { self.answering(TaskMode::Always, &context)? } else { Answering::Inline };
        let (call, progress) = self.tool_call(request, definition, &context, answering);
        let call = permit.limit(call);
        if call.name == SEARCH {
            return convert::call_result(tools.search_call(&call)).map(CallToolResponse::from);
        } else if call.name != EXECUTE {
            // With code mode only, the folder's tools are reached through programs.
            return convert::call_result(tools.not_a_tool(&call)).map(CallToolResponse::from);
        }
        // Input missing: ask again, with the same token.
        if let Some(approvals::Resuming { token, decision: None }) = &resuming {
            return Ok(approvals::ask_again(&self.seal(&context, token)).into());
        }
        let runtime = tokio::select! {
            runtime = self.catalog.runtime() => runtime.map_err(not_loaded)?,
            () = context.ct.cancelled() => return Err(cancelled()),
        };
        // With OAuth, the program may call only the tools the caller's token grants.
        let code_mode = match &permit {
            Permit::All => runtime.code_mode(),
            Permit::Only(_) => within(&runtime, &permit)?.code_mode(),
        }
        .map_err(|err| not_loaded(err.to_string()))?;
        if answering != Answering::Inline {
            let can_elicit = approvals::can_elicit(&context);
            return self
                .answer_as_task(answering, TaskMode::Always, &context, move |stop, input| async move {
                    let asker = match &input {
                        Some(input) if can_elicit => Asker::Task(input),
                        _ => Asker::Nobody,
                    };
                    outcome(run_program(&code_mode, call, resuming, &stop, &asker).await)
                })
                .await;
        }
        let output = run_program(&code_mode, call, resuming, &context.ct, &Asker::for_request(&context)).await?;
        if let Some(progress) = progress {
            progress.finish().await;
        }
        if let Some(asked) = approvals::ask_for_approval(&output, &context, |token| self.seal(&context, token)) {
            return Ok(asked.into());
        }
        convert::call_result(output).map(CallToolResponse::from)
    }
}

/// The tools of `listed` that `permit` allows.
fn permitted(mut listed: Vec<ListedTool>, permit: &Permit) -> Vec<ListedTool> {
    listed.retain(|tool| permit.allows(&tool.definition.name));
    listed
}

/// The runtime's tools that `permit` allows, as a tool set: one caller's tools.
fn within(runtime: &Runtime, permit: &Permit) -> Result<toolcell_runtime::ToolSet, ErrorData> {
    let names: Vec<String> =
        runtime.definitions().map(|tool| tool.name.clone()).filter(|name| permit.allows(name)).collect();
    runtime.tool_set().allow(names).build().map_err(|err| ErrorData::internal_error(err.to_string(), None))
}

/// Runs (or resumes) an `execute` program, asking `asker` to approve the calls it pauses at.
async fn run_program(
    code_mode: &CodeMode,
    call: ToolCall,
    resuming: Option<approvals::Resuming>,
    stop: &CancellationToken,
    asker: &Asker<'_>,
) -> Result<ToolOutput, ErrorData> {
    let call_id = call.id.clone();
    let output = match resuming {
        Some(approvals::Resuming { token, decision: Some(decision) }) => code_mode
            .resume(&call_id, &token, decision, Some(stop))
            .await
            .map_err(|err| ErrorData::invalid_params(err.to_string(), None))?,
        _ => code_mode.call_cancellable(call, stop).await,
    };
    approvals::ask_while_paused(output, code_mode, &call_id, asker, stop).await
}

/// The client a request comes from, as the caps count it: its address over HTTP, the one
/// client of stdio.
fn client_of(context: &RequestContext<RoleServer>) -> Peer {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|request| request.extensions.get::<Peer>().copied())
        .unwrap_or(Peer::UNKNOWN)
}

/// How a task's work ended, from the call's output (or the error answering it would be).
fn outcome(output: Result<ToolOutput, ErrorData>) -> Outcome {
    match output.and_then(convert::call_result) {
        Ok(result) => Outcome::Result(result),
        Err(error) => Outcome::Error(error),
    }
}

/// Runs `work` and answers with its result; the request's cancellation stops it.
async fn inline(
    work: impl Future<Output = Outcome>,
    stop: CancellationToken,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let ended = tokio::select! {
        ended = work => ended,
        () = context.ct.cancelled() => {
            stop.cancel();
            return Err(cancelled());
        }
    };
    answered(ended)
}

/// The answer to a call whose work ended (before it became a task).
fn answered(ended: Outcome) -> Result<CallToolResponse, ErrorData> {
    match ended {
        Outcome::Result(result) => Ok(result.into()),
        Outcome::Error(error) => Err(error),
    }
}

/// A task's work that panicked (a bug of the server): a protocol error, never a lost call.
fn crashed(error: tokio::task::JoinError) -> Outcome {
    Outcome::Error(ErrorData::internal_error(format!("the call stopped unexpectedly: {error}"), None))
}

fn cancelled() -> ErrorData {
    ErrorData::internal_error("the call was cancelled", None)
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed();
        let capabilities =
            if self.tasks.is_some() { capabilities.enable_tasks().build() } else { capabilities.build() };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolcell", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // By name, so the order is deterministic. With OAuth, only the caller's tools; code
        // mode's `search` and `execute` are tools too, which a scope grants by name (or `*`).
        let permit = self.permit(&context);
        let listed = permitted(self.catalog.tools().await.map_err(not_loaded)?, &permit);
        let code_mode = match self.code_mode {
            CodeModeServing::Off => None,
            // A caller whose tools lack the one programs run in (`python`) gets no programs.
            _ if permit != Permit::All && !listed.is_empty() => self.catalog.code_mode(&listed).ok(),
            _ if permit != Permit::All => None,
            _ => Some(self.catalog.code_mode(&listed).map_err(not_loaded)?),
        };
        // Beside code mode's tools, those its programs may call say so.
        let callable_from_code = |name: &str| {
            self.code_mode == CodeModeServing::Also
                && code_mode.as_ref().is_some_and(|tools| tools.describe(name).is_some())
        };
        let mut tools: Vec<Tool> = listed
            .iter()
            .filter(|listed| self.code_mode.serves_directly(&listed.definition.name))
            .map(|listed| {
                let name = &listed.definition.name;
                let deferred = self.deferred.defers(name);
                let marks = ToolMarks::NONE
                    .with_deferred(deferred)
                    .with_always_loaded(!deferred && self.deferred.defers_any())
                    .with_code_callable(callable_from_code(name));
                convert::unavailable(convert::tool(&listed.definition, self.schemas, marks), &listed.missing_grants)
            })
            .collect();
        if let Some(code_mode) = code_mode {
            // Never deferred: they are how a model finds the rest.
            let marks = ToolMarks::NONE.with_always_loaded(self.deferred.defers_any());
            tools.extend(
                code_mode
                    .definitions()
                    .iter()
                    .filter(|definition| permit.allows(&definition.name))
                    .map(|definition| convert::tool(definition, self.schemas, marks)),
            );
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.code_mode.serves(&request.name) || !self.code_mode.serves_directly(&request.name) {
            return self.call_code_mode(request, context).await;
        }
        // A call made while the tools are still compiling waits for its own, unless cancelled.
        let runtime = tokio::select! {
            runtime = self.catalog.runtime_for(&request.name) => runtime.map_err(not_loaded)?,
            () = context.ct.cancelled() => return Err(cancelled()),
        };
        let permit = self.permit(&context);
        if !permit.allows(&request.name) {
            // As if the tool were not here: the refusal names only the caller's tools.
            let (call, _) = self.tool_call(request, None, &context, Answering::Inline);
            let output = within(&runtime, &permit)?.call(call).await;
            return convert::call_result(output).map(CallToolResponse::from);
        }
        let definition = runtime.definition(&request.name);
        let mode = runtime.grants(&request.name).and_then(|grants| grants.task).unwrap_or(TaskMode::Optional);
        let answering = if definition.is_some() { self.answering(mode, &context)? } else { Answering::Inline };
        let (call, progress) = self.tool_call(request, definition, &context, answering);
        // The tools it calls in turn (its `call_tools`) are the caller's too, or refused.
        let call = permit.limit(call);
        if answering != Answering::Inline {
            return self
                .answer_as_task(answering, mode, &context, move |stop, _| async move {
                    outcome(Ok(runtime.call_cancellable(call, &stop).await))
                })
                .await;
        }
        let output = runtime.call_cancellable(call, &context.ct).await;
        if let Some(progress) = progress {
            progress.finish().await;
        }
        convert::call_result(output).map(CallToolResponse::from)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let tasks = self.tasks.as_ref().ok_or_else(|| unsupported("tasks/get"))?;
        tasks.get(&request.task_id, self.owner(&context)).map(GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let tasks = self.tasks.as_ref().ok_or_else(|| unsupported("tasks/update"))?;
        tasks.update(&request.task_id, self.owner(&context), request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let tasks = self.tasks.as_ref().ok_or_else(|| unsupported("tasks/cancel"))?;
        tasks.cancel(&request.task_id, self.owner(&context))
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

    /// Prompts and resources are not served: the error says what is.
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Err(unsupported("prompts/list"))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Err(unsupported("resources/list"))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Err(unsupported("resources/templates/list"))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(unsupported(&request.method))
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

/// The error for a request that needs the tools when they are not there to serve it.
fn not_loaded(message: String) -> ErrorData {
    ErrorData::internal_error(message, None)
}

/// `-32601` for `method`, saying what this server serves and the closest method it has.
fn unsupported(method: &str) -> ErrorData {
    let method = truncated(method, MAX_QUOTED_METHOD_BYTES);
    let guess = closest(&method, METHODS.iter().copied(), 1)
        .first()
        .map(|best| format!(" Did you mean `{best}`?"))
        .unwrap_or_default();
    let methods: Vec<String> = METHODS.iter().map(|method| (*method).to_owned()).collect();
    let message = format!(
        "`{method}` is not a method of this server: toolcell serves tools, through {}.{guess}",
        code_list(&methods)
    );
    ErrorData::new(ErrorCode::METHOD_NOT_FOUND, message, Some(json!({ "method": method })))
}
