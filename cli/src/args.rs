//! The command line: every command, flag and argument, with clap.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use toolcell_mcp::{ContextHeader, ScopeTools};
use toolcell_runtime::Format;
use toolcell_runtime::Policy;
use toolcell_runtime::formats::Deferral;
use toolcell_runtime::policy::{CodeModePolicy, DirGrant, EnvGrant, Grants, HostPattern};
use toolcell_runtime::trace::TraceParent;

use crate::parse::{self, ForTool};

/// Run sandboxed WebAssembly tools for LLM agents.
///
/// The tools are the eight standard tools built into this binary (calculator, json_query,
/// regex, datetime, unit_convert, http_fetch, files, python) and those of --tools-dir (or
/// TOOLCELL_TOOLS_DIR), beside them; --no-builtins leaves the standard ones out. A NAME|FILE
/// argument that names a `.wasm` file loads just that file.
#[derive(Debug, Parser)]
#[command(name = "toolcell", version = env!("TOOLCELL_VERSION"), propagate_version = true)]
pub(crate) struct Cli {
    /// Load the tools of this folder (every *.wasm in it, with its toolcell.toml) beside the
    /// built-in tools. A file named like a built-in one (calculator.wasm) replaces it.
    #[arg(long, global = true, env = "TOOLCELL_TOOLS_DIR", value_name = "DIR")]
    pub(crate) tools_dir: Option<PathBuf>,

    /// Leave out the eight built-in tools: only --tools-dir's are loaded.
    #[arg(long, global = true, env = "TOOLCELL_NO_BUILTINS")]
    pub(crate) no_builtins: bool,

    /// Keep compiled tools here [default: $XDG_CACHE_HOME/toolcell or ~/.cache/toolcell].
    #[arg(long, global = true, env = "TOOLCELL_CACHE_DIR", value_name = "DIR")]
    pub(crate) cache_dir: Option<PathBuf>,

    /// Compile every tool afresh; read and write no cache.
    #[arg(long, global = true)]
    pub(crate) no_cache: bool,

    /// Grant capabilities from this policy file, on top of the tools folder's toolcell.toml.
    #[arg(long, global = true, env = "TOOLCELL_POLICY", value_name = "FILE")]
    pub(crate) policy: Option<PathBuf>,

    /// Keep the tools pulled from registries here (the policy's `source = "oci://…"` tools,
    /// and `pull`'s) [default: oci/ in the cache folder].
    #[arg(long, global = true, env = "TOOLCELL_REGISTRY_STORE", value_name = "DIR")]
    pub(crate) registry_store: Option<PathBuf>,

    /// Load registry tools only by digest: a tag toolcell.lock does not pin is not resolved
    /// (the tool does not load). For replicas that must all run the same bytes.
    #[arg(long, global = true, env = "TOOLCELL_LOCKED")]
    pub(crate) locked: bool,

    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the tools: name, version, title, description, and what each requests and is
    /// granted.
    /// Components that failed to load are reported as warnings.
    List {
        /// Print JSON: {"tools": [definitions with "requested" and "granted"], "diagnostics": [...]}.
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// Print the tools as a provider's request takes them, ready to paste into its
        /// `tools` field: openai, openai-strict, openai-responses, openai-responses-strict,
        /// anthropic, anthropic-strict, gemini, gemini-json-schema, mcp, mcp-strict (what
        /// `serve` lists, and with --schemas strict).
        #[arg(long, value_name = "FORMAT")]
        format: Option<Format>,
        #[command(flatten)]
        export: ExportArgs,
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
        /// With --format: mark the tool `defer_loading` (see `list --defer-loading`).
        #[arg(long, requires = "format")]
        defer_loading: bool,
        /// With --format: mark the tool callable from a provider's code (see `list
        /// --allowed-callers`); refused when the policy does not let programs call it.
        #[arg(long, requires = "format")]
        allowed_callers: bool,
    },
    /// Call a tool and print its output as JSON. Exit code 0 when the call succeeded, 1 when
    /// it failed (the output says why), 2 for a usage error or a tool that cannot be loaded
    /// (an `oci://` one that cannot be pulled or is refused among them).
    Invoke(Box<InvokeArgs>),
    /// Run a call recorded with `invoke --record FILE` again, answering every clock reading,
    /// random byte and nested call from the record, and say whether it gave the same result
    /// with the same fuel. Exit code 0 when it did, 1 when not, 2 when it could not replay
    /// (another component, or a run that diverged from the record).
    Replay {
        /// The record.
        file: PathBuf,
    },
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
    /// Compile every tool into the compile cache ahead of time, so that the next `serve`,
    /// `invoke` or `list` starts in milliseconds (a first compile takes seconds per tool, the
    /// `python` tool 10-20 s). Run it after installing or updating toolcell or your tools, with
    /// the same --tools-dir and --cache-dir as the server. Exit code 0 when every tool loads.
    Warm,
    /// Publish a tool's component to an OCI registry, as WebAssembly components are laid out
    /// there (`wkg`, `oras`, Wassette): the `application/wasm` layer, the
    /// `application/vnd.wasm.config.v0+json` config, and the tool's metadata as annotations.
    /// With --sign, signed with a key: a cosign signature and a Sigstore bundle referrer.
    Push(Box<PushArgs>),
    /// Fetch a tool from an OCI registry into the store (`oci/` in the cache folder), check
    /// its signature against the keys given, and pin the digest its tag resolved to in
    /// toolcell.lock (later pulls and loads use the digest). A tool pinned and in the store is
    /// not fetched again: it loads with the registry gone. Exit code 0 when it was pulled and
    /// checked, 1 when it could not be pulled or was refused, 2 for a usage error.
    Pull(Box<PullArgs>),
    /// Write the entry that lists the served tools in the official MCP registry: server.json
    /// (schema 2025-12-11), the tools folder served by an image built from deploy/Dockerfile,
    /// checked against the registry's schema and publishing rules. Exit code 0 when written, 1
    /// when the registry would refuse it (each problem named), 2 for a usage error.
    ServerJson(Box<ServerJsonArgs>),
    /// Make a key pair to sign tools with: PREFIX.key (private, PKCS#8, readable by you only)
    /// and PREFIX.pub (ECDSA P-256, as cosign's).
    Keygen {
        /// Where: PREFIX.key and PREFIX.pub.
        prefix: PathBuf,
        /// Replace existing files.
        #[arg(long)]
        force: bool,
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
    /// Run a tool project's own tests inside its component: Python's test*.py and
    /// JavaScript's *.test.js files are built with the tool into a test component, Rust's
    /// tests into wasm32-wasip2 test binaries; each test runs in a fresh instance under the
    /// tool's limits and the grants of the tools folder's toolcell.toml (--tools-dir, else
    /// PATH/tools) and --policy, as a call of the tool would. Exit code 0 when every test
    /// passed, 1 when not.
    Test {
        /// The project's folder.
        #[arg(value_name = "PATH", default_value = ".")]
        path: PathBuf,
    },
    /// Write the eight built-in tools (NAME.wasm) and their policy (toolcell.toml) into DIR:
    /// to serve them from a folder with your own, change their policy, or ship them.
    ExportBuiltins {
        /// The folder (created if missing).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Replace files in DIR that differ from the built-in ones (a changed toolcell.toml
        /// among them).
        #[arg(long)]
        force: bool,
    },
    /// Compile the eight built-in tools ahead of time into DIR (NAME.cwasm), for a build of
    /// toolcell that ships them: built with TOOLCELL_PRECOMPILED_DIR=DIR, its first `invoke
    /// python` on a new machine starts in a fraction of a second instead of compiling for
    /// 10-20 s (`just install` does both; see docs/src/getting-started.md). The code fits
    /// this wasmtime, its settings and this CPU (any CPU of its architecture with --portable);
    /// elsewhere the tools are compiled as before.
    Precompile {
        /// The folder (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Code for any CPU of this architecture, not just those with this one's features
        /// (SSE4.1, AVX, BMI...): for a build to run on other machines. The python tool's
        /// loop ran 2-5% slower with it.
        #[arg(long)]
        portable: bool,
    },
    /// Print the entry that starts (or reaches) this server from an MCP host's config file,
    /// with absolute paths: a desktop app's PATH does not have ~/.cargo/bin. Carries
    /// --tools-dir, --no-builtins, --policy and --cache-dir as given here.
    ClientConfig {
        /// The host whose config file the entry is for.
        #[arg(long, value_enum, default_value_t = McpHost::ClaudeDesktop)]
        client: McpHost,
        /// stdio: the host starts the server. http: the host connects to a running
        /// `toolcell serve --transport http` at --url.
        #[arg(long, value_enum, default_value_t = Transport::Stdio)]
        transport: Transport,
        /// The server's endpoint, for --transport http.
        #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8000/mcp")]
        url: String,
    },
    /// Ask the policy questions, without loading a tool: what each tool can do (explain),
    /// whether assertions about it hold (check), which rules would have allowed refused
    /// requests (suggest). The policy is the one `invoke` and `serve` would run under: the
    /// built-in tools' defaults, --tools-dir's toolcell.toml and --policy.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Print a completion script for SHELL, e.g. `toolcell completions bash >
    /// ~/.local/share/bash-completion/completions/toolcell`.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum PolicyCommand {
    /// Print what each tool can do: directories (resolved paths and modes), HTTP rules,
    /// environment variables (secrets masked), the secrets the host sends for it and where,
    /// limits, and what it reaches through the tools it may call.
    Explain {
        /// Only this tool.
        tool: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// As `serve --code-mode` runs: the program tool may call every tool the policy's
        /// `[code_mode]` lets programs call (default: all but itself).
        #[arg(long)]
        code_mode: bool,
    },
    /// Prove the policy's `assertions` (and those of each --assertions FILE, one per line)
    /// over every tool and every chain of calls, and print the grants that break any. Exit
    /// code 0 when all hold, 1 when one is broken, 2 when there is none to check.
    Check {
        /// A file of assertions, one per line (`#` starts a comment). Repeatable.
        #[arg(long, value_name = "FILE")]
        assertions: Vec<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// As `serve --code-mode` runs (see `policy explain --code-mode`).
        #[arg(long)]
        code_mode: bool,
    },
    /// Print the narrowest rules that would have allowed the requests in a denials file
    /// (`invoke --denials FILE`, `serve --denials FILE`), for you to review. Changes nothing.
    Suggest {
        /// The denials file.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

impl Command {
    /// Whether the command runs tool calls, and so exports spans and metrics when OTLP is
    /// configured.
    pub(crate) fn runs_calls(&self) -> bool {
        matches!(self, Command::Invoke(_) | Command::Replay { .. } | Command::Respond { .. } | Command::Serve(_))
    }
}

/// What `list --format` adds to the tools for tool search and programmatic tool calling.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// With --format: load these tools only through the provider's tool search
    /// (`defer_loading: true`; the model sees their names and descriptions until it searches):
    /// `all`, or tool names separated by commas. OpenAI Responses and Anthropic formats only
    /// (MCP: the `toolcell/deferLoading` mark); the provider's tool search tool is added to
    /// the list.
    #[arg(long, value_name = "all|NAME,...", num_args = 0..=1, default_missing_value = "all",
          value_parser = parse::deferral, requires = "format")]
    pub(crate) defer_loading: Option<Deferral>,
    /// With --format openai-responses[-strict]: group the functions in one namespace of this
    /// name, which the model calls them in (not the name of one of the tools).
    #[arg(long, value_name = "NAME", requires = "format")]
    pub(crate) namespace: Option<String>,
    /// What the --namespace's tools are for, in a sentence (OpenAI requires one) [default:
    /// "Tools: " and the first ten tools' names].
    #[arg(long, value_name = "TEXT", requires = "namespace")]
    pub(crate) namespace_description: Option<String>,
    /// With --format: let a provider's code call the tools the policy's `[code_mode] tools`
    /// lets a program call (default: every tool but `python`), beside the model
    /// (`allowed_callers`). OpenAI Responses and Anthropic formats only (MCP: the
    /// `toolcell/allowedCallers` mark); the provider's programmatic tool calling (OpenAI) or
    /// code execution tool (Anthropic) is added to the list.
    #[arg(long, requires = "format")]
    pub(crate) allowed_callers: bool,
}

/// An MCP host, for `client-config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum McpHost {
    /// Claude Desktop's claude_desktop_config.json (stdio only).
    ClaudeDesktop,
    /// VS Code's .vscode/mcp.json.
    Vscode,
    /// Cursor's ~/.cursor/mcp.json (and other hosts' `mcpServers` files).
    Cursor,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Serve this component from a registry too (oci://REGISTRY/REPOSITORY:TAG or
    /// …@sha256:DIGEST; repeatable), beside the tools folder's: pulled once at start, its tag
    /// pinned in toolcell.lock, signed by --key or --identity (or taken --unsigned).
    #[arg(long = "tool", value_name = "oci://REF")]
    pub(crate) oci_tools: Vec<String>,
    /// Who each --tool must be signed by.
    #[command(flatten)]
    pub(crate) trust: TrustArgs,
    /// How to reach the registries of --tool.
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
    /// Preopen a directory for one tool: TOOL=HOST_DIR:GUEST_DIR[:ro|rw], e.g.
    /// `files=.:/workspace` (read-only unless :rw). Repeatable. The same as a `dirs` entry of
    /// the tool in toolcell.toml.
    #[arg(long = "dir", value_name = "TOOL=HOST:GUEST[:ro|rw]")]
    pub(crate) dirs: Vec<ForTool<DirGrant>>,
    /// Allow one tool HTTP requests to a host: TOOL=HOST, e.g. `http_fetch=api.github.com`,
    /// `http_fetch=*.example.com`. Repeatable.
    #[arg(long = "allow-host", value_name = "TOOL=HOST")]
    pub(crate) allow_hosts: Vec<ForTool<HostPattern>>,
    /// Set an environment variable for one tool: TOOL=KEY=VALUE (a plain value), or TOOL=KEY to
    /// pass the host's KEY through as a secret, redacted from outputs and logs. Repeatable.
    #[arg(long = "env", value_name = "TOOL=KEY[=VALUE]")]
    pub(crate) envs: Vec<ForTool<EnvGrant>>,
    /// stdio: one client on stdin/stdout. http: streamable HTTP at http://LISTEN/mcp, with
    /// Prometheus metrics at /metrics.
    #[arg(long, value_enum, default_value_t = Transport::Stdio)]
    pub(crate) transport: Transport,
    /// Where the HTTP server listens. Off loopback, --token or --oauth-issuer is required.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8000")]
    pub(crate) listen: SocketAddr,
    /// Bearer token HTTP clients must send (`Authorization: Bearer TOKEN`), to /mcp and to
    /// /metrics; at least 16 characters. Prefer the environment variable: a flag is visible to other users in `ps`.
    #[arg(long, env = "TOOLCELL_TOKEN", hide_env_values = true, value_name = "TOKEN")]
    pub(crate) token: Option<String>,
    /// Accept OAuth access tokens (JWTs) from this authorization server instead of --token:
    /// the server publishes its Protected Resource Metadata and checks each token's issuer,
    /// audience (--oauth-resource), expiry and signature against the issuer's keys.
    #[arg(long, env = "TOOLCELL_OAUTH_ISSUER", value_name = "URL", requires_all = ["oauth_resource", "oauth_scope"])]
    pub(crate) oauth_issuer: Option<String>,
    /// This server's MCP endpoint as clients reach it (https://tools.example.com/mcp): the
    /// resource clients ask tokens for, which each token's audience must include.
    #[arg(long, env = "TOOLCELL_OAUTH_RESOURCE", value_name = "URL", requires = "oauth_issuer")]
    pub(crate) oauth_resource: Option<String>,
    /// The issuer's JWKS, when its metadata (RFC 8414 or OpenID discovery) does not name it.
    #[arg(long, env = "TOOLCELL_OAUTH_JWKS_URI", value_name = "URL", requires = "oauth_issuer")]
    pub(crate) oauth_jwks_uri: Option<String>,
    /// The tools a scope grants: SCOPE=TOOL,TOOL (SCOPE=* for every tool). A caller sees and
    /// calls the tools its token's scopes grant, and no others. Repeatable; in the
    /// environment, separated by `;`.
    #[arg(
        long,
        env = "TOOLCELL_OAUTH_SCOPES",
        value_name = "SCOPE=TOOLS",
        value_delimiter = ';',
        requires = "oauth_issuer"
    )]
    pub(crate) oauth_scope: Vec<ScopeTools>,
    /// Allow browser pages from this origin (e.g. https://app.example.com:443) besides
    /// loopback ones; requests from other origins get 403. Repeatable.
    #[arg(long, value_name = "ORIGIN")]
    pub(crate) allow_origin: Vec<String>,
    /// Copy an HTTP request header into each call's host context: HEADER=key, e.g.
    /// X-User-Id=user_id. Never part of the schema. Repeatable.
    #[arg(long, value_name = "HEADER=KEY")]
    pub(crate) context_header: Vec<ContextHeader>,
    /// The tool schemas to list. standard: JSON Schema every MCP client accepts (no
    /// non-standard `format`s, choices of constants as `enum`s). strict: parameters in OpenAI
    /// strict mode's subset, for clients that make tools strict (the OpenAI Agents SDK's
    /// convert_schemas_to_strict): every property required (null means not given), maps as
    /// lists of {"key", "value"} entries, any-typed values as JSON text; calls in that shape
    /// are mapped back before validation. See `toolcell list --format mcp-strict`.
    #[arg(long, value_enum, value_name = "SCHEMAS", default_value_t = Schemas::Standard)]
    pub(crate) schemas: Schemas,
    /// Serve code mode's two tools: `search` (find tools by what they do, shown as the Python
    /// functions a program calls) and `execute` (run a Python program that calls them as
    /// `tools.NAME(...)`). only: in place of the tools; also: beside them. What programs may
    /// call is the policy's `[code_mode]` table (default: every tool but `python`).
    #[arg(long, value_enum, value_name = "only|also", num_args = 0..=1, default_missing_value = "only")]
    pub(crate) code_mode: Option<CodeMode>,
    /// Mark these tools in `tools/list` for clients with tool search to load only when the
    /// model looks for them (`_meta` "toolcell/deferLoading": true): `all`, or tool names
    /// separated by commas; the others are marked "anthropic/alwaysLoad": true, which Claude
    /// Code reads. Code mode's `search` and `execute` are never deferred. With
    /// --code-mode also, the tools programs may call are marked "toolcell/allowedCallers":
    /// ["direct", "programmatic"] whatever this says.
    #[arg(long, value_name = "all|NAME,...", num_args = 0..=1, default_missing_value = "all",
          value_parser = parse::deferral)]
    pub(crate) defer_loading: Option<Deferral>,
    /// Keep no session state for clients of revisions before 2026-07-28 either, so that any
    /// replica behind a load balancer can serve any request. They then get no list-change
    /// notifications.
    #[arg(long)]
    pub(crate) stateless: bool,
    /// Offer no tasks (MCP's Tasks extension): every call is answered with its result.
    #[arg(long)]
    pub(crate) no_tasks: bool,
    /// For clients that accept tasks, a call running longer than this becomes a task they
    /// poll (tools whose policy leaves `task` unset); every `execute` is one.
    #[arg(long, env = "TOOLCELL_TASK_AFTER", value_name = "DURATION", value_parser = parse::duration,
          default_value = "1s")]
    pub(crate) task_after: Duration,
    /// How long a task is kept from its creation (its ttlMs); one still running then is stopped.
    #[arg(long, env = "TOOLCELL_TASK_TTL", value_name = "DURATION", value_parser = parse::duration,
          default_value = "10m")]
    pub(crate) task_ttl: Duration,
    /// Tasks the server holds, running or kept; past it a call is answered with its result
    /// (or refused, for a tool whose policy requires a task).
    #[arg(long, env = "TOOLCELL_MAX_TASKS", value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_tasks: u32,
    /// Tasks one client address may hold, running or kept.
    #[arg(long, env = "TOOLCELL_MAX_TASKS_PER_CLIENT", value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_tasks_per_client: u32,
    /// Largest HTTP request body accepted, e.g. 4MiB.
    #[arg(long, value_name = "SIZE", value_parser = parse::size, default_value = "4MiB")]
    pub(crate) max_body: u64,
    /// On SIGINT or SIGTERM, how long calls in flight may take to finish before they are stopped.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration, default_value = "10s")]
    pub(crate) shutdown_grace: Duration,
    /// On SIGINT or SIGTERM, first keep serving this long while /healthz answers 503, so that a
    /// load balancer stops sending requests before the server stops accepting them; set it
    /// above the balancer's health-check interval.
    #[arg(long, env = "TOOLCELL_DRAIN_DELAY", value_name = "DURATION", value_parser = parse::duration,
          default_value = "0s")]
    pub(crate) drain_delay: Duration,
    /// Append every HTTP request the policy refuses to FILE, one JSON object per line, for
    /// `toolcell policy suggest FILE`.
    #[arg(long, value_name = "FILE")]
    pub(crate) denials: Option<PathBuf>,
    /// Do not watch --tools-dir. By default, adding, replacing or removing a .wasm file or
    /// editing toolcell.toml reloads the tools without a restart.
    #[arg(long)]
    pub(crate) no_reload: bool,
    /// How many calls run at once, each in an instance slot allocated at start (about 2 MiB
    /// resident each once used); later calls wait in a queue [default: 4 per CPU core, at
    /// least 4].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_concurrent_calls: Option<u32>,
    /// How many calls may wait for a slot; a call past them fails at once as `overloaded`
    /// (retryable) [default: 64 per call that may run at once].
    #[arg(long, value_name = "N")]
    pub(crate) max_queued_calls: Option<u32>,
    /// How many bytes of arguments the waiting calls may hold together; a call past them
    /// fails at once as `overloaded` (retryable) [default: 64 MiB].
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    pub(crate) max_queued_bytes: Option<u64>,
    /// HTTP connections open at once; past it a new one gets 503 and is closed. At most half
    /// the open-files limit, which serve raises to its hard limit at start.
    #[arg(long, env = "TOOLCELL_MAX_CONNECTIONS", value_name = "N", default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_connections: u32,
    /// HTTP connections one client address (an IPv6 /64) may hold; past it a new one gets 429.
    /// Behind a reverse proxy every client is the proxy: raise it to --max-connections.
    #[arg(long, env = "TOOLCELL_MAX_CONNECTIONS_PER_CLIENT", value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_connections_per_client: u32,
    /// How long an HTTP client may take to send a request's headers, and a kept-alive
    /// connection may sit idle, before it is closed.
    #[arg(long, env = "TOOLCELL_HEADER_TIMEOUT", value_name = "DURATION", value_parser = parse::duration,
          default_value = "10s")]
    pub(crate) header_timeout: Duration,
    /// MCP sessions open at once; past it `initialize` gets 503.
    #[arg(long, env = "TOOLCELL_MAX_SESSIONS", value_name = "N", default_value_t = 1024,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_sessions: u32,
    /// MCP sessions one client address may hold; past it `initialize` gets 429. Behind a
    /// reverse proxy, raise it to --max-sessions.
    #[arg(long, env = "TOOLCELL_MAX_SESSIONS_PER_CLIENT", value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_sessions_per_client: u32,
    /// How long an MCP session lives without a request; its client then gets 404 and starts
    /// a new one.
    #[arg(long, env = "TOOLCELL_SESSION_IDLE", value_name = "DURATION", value_parser = parse::duration,
          default_value = "2m")]
    pub(crate) session_idle: Duration,
    /// Request-body bytes received at once over all HTTP requests (the first 16 KiB of each
    /// body not counted); past it a request gets 503 and Retry-After [default: 4 × --max-body].
    #[arg(long, env = "TOOLCELL_MAX_BUFFERED_BYTES", value_name = "SIZE", value_parser = parse::size)]
    pub(crate) max_buffered_bytes: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Lang {
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
pub(crate) enum Transport {
    Stdio,
    Http,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CodeMode {
    Only,
    Also,
}

impl ServeArgs {
    /// How calls become tasks, or `None` with --no-tasks.
    pub(crate) fn tasks(&self) -> Option<toolcell_mcp::TaskLimits> {
        let mut limits = toolcell_mcp::TaskLimits::default();
        limits.after = self.task_after;
        limits.ttl = self.task_ttl;
        limits.max_total = self.max_tasks as usize;
        limits.max_per_client = self.max_tasks_per_client as usize;
        (!self.no_tasks).then_some(limits)
    }

    /// What `--code-mode` asks of the server.
    pub(crate) fn code_mode_serving(&self) -> toolcell_mcp::CodeModeServing {
        match self.code_mode {
            None => toolcell_mcp::CodeModeServing::Off,
            Some(CodeMode::Only) => toolcell_mcp::CodeModeServing::Only,
            Some(CodeMode::Also) => toolcell_mcp::CodeModeServing::Also,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Schemas {
    Standard,
    Strict,
}

impl From<Schemas> for toolcell_mcp::Schemas {
    fn from(schemas: Schemas) -> Self {
        match schemas {
            Schemas::Standard => Self::Standard,
            Schemas::Strict => Self::Strict,
        }
    }
}

/// How to reach a registry.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct RegistryArgs {
    /// Speak plain HTTP to this registry (HOST:PORT; repeatable). Loopback registries
    /// (localhost, 127.x) always are; every other one is spoken to over https.
    #[arg(long, value_name = "HOST:PORT")]
    pub(crate) plain_http: Vec<String>,
    /// The user name for the registry, when it asks for one.
    #[arg(long, env = "TOOLCELL_REGISTRY_USERNAME", value_name = "NAME")]
    pub(crate) username: Option<String>,
    /// The password or token for the registry (only from the environment, never a flag).
    #[arg(skip = std::env::var("TOOLCELL_REGISTRY_PASSWORD").ok())]
    pub(crate) password: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct PushArgs {
    /// The component (.wasm): it must load as a tool.
    pub(crate) file: PathBuf,
    /// Where: oci://REGISTRY/REPOSITORY:TAG.
    pub(crate) reference: String,
    /// Sign it with this private key (PEM PKCS#8, as `toolcell keygen` makes).
    #[arg(long, value_name = "KEY")]
    pub(crate) sign: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ServerJsonArgs {
    /// The server's name in the registry, reverse-DNS with one slash: io.github.OWNER/NAME.
    /// The image must carry it as its `io.modelcontextprotocol.server.name` label.
    #[arg(long)]
    pub(crate) name: String,
    /// The image serving the folder, as the registry names it: REGISTRY/REPOSITORY:TAG (or
    /// @sha256:DIGEST), e.g. ghcr.io/acme/tools:1.0.0.
    #[arg(long)]
    pub(crate) image: String,
    /// The entry's version [default: the image's tag].
    #[arg(long = "server-version", value_name = "VERSION")]
    pub(crate) server_version: Option<String>,
    /// A title for people.
    #[arg(long)]
    pub(crate) title: Option<String>,
    /// At most 100 characters [default: the folder's tools, named].
    #[arg(long)]
    pub(crate) description: Option<String>,
    /// The source's https:// URL on github.com or gitlab.com.
    #[arg(long, value_name = "URL")]
    pub(crate) repository: Option<String>,
    /// The port the image listens on (deploy/Dockerfile's).
    #[arg(long, default_value_t = 8000)]
    pub(crate) port: u16,
    /// Write it here instead of to stdout.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<std::path::PathBuf>,
}

/// Who a tool from a registry must be signed by: `pull`'s, and `invoke`'s and `serve`'s for
/// `oci://` tools.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct TrustArgs {
    /// A registry tool must be signed by this public key (PEM; repeatable: any one of them).
    #[arg(long = "key", value_name = "FILE.pub")]
    pub(crate) keys: Vec<PathBuf>,
    /// Or signed keyless by this certificate identity (an email address, or a CI workflow's
    /// URI), exactly; with --issuer and --trusted-root.
    #[arg(long, value_name = "IDENTITY", requires_all = ["issuer", "trusted_root"],
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub(crate) identity: Option<String>,
    /// The OIDC issuer that vouched for --identity, exactly (e.g. https://token.actions.githubusercontent.com).
    #[arg(long, value_name = "URL", requires = "identity", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub(crate) issuer: Option<String>,
    /// The Sigstore trust root (trusted_root.json: its CAs and logs) --identity's certificate
    /// and log entry are checked against, offline.
    #[arg(long = "trusted-root", value_name = "FILE", requires = "identity")]
    pub(crate) trusted_root: Option<PathBuf>,
    /// Take a registry tool unsigned (explicitly: it must be signed otherwise).
    #[arg(long, conflicts_with_all = ["keys", "identity"])]
    pub(crate) unsigned: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PullArgs {
    /// oci://REGISTRY/REPOSITORY:TAG or oci://REGISTRY/REPOSITORY@sha256:DIGEST.
    pub(crate) reference: String,
    #[command(flatten)]
    pub(crate) trust: TrustArgs,
    /// The lockfile to pin the tag in [default: toolcell.lock in --tools-dir, else here].
    #[arg(long, value_name = "FILE")]
    pub(crate) lock: Option<PathBuf>,
    /// Resolve the tag again, even when the lockfile pins it, and pin what it names now.
    #[arg(long)]
    pub(crate) update: bool,
    /// Also write the component to this file.
    #[arg(long, short, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Print JSON: {"reference", "digest", "component", "verified", "from_store", "lockfile", "elapsed_ms"}.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}

#[derive(Debug, Args)]
pub(crate) struct InvokeArgs {
    /// A tool name, the path of a .wasm file, or a component in a registry
    /// (oci://REGISTRY/REPOSITORY:TAG or …@sha256:DIGEST; with --key, --identity or --unsigned).
    pub(crate) tool: String,
    /// The arguments as a JSON object; `-` reads them from stdin. Default: {}.
    #[arg(value_name = "ARGS_JSON", conflicts_with = "args_file")]
    pub(crate) arguments: Option<String>,
    /// Read the arguments from this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) args_file: Option<PathBuf>,
    /// Host context for the tool, as a JSON object (never part of the schema).
    #[arg(long, value_name = "JSON")]
    pub(crate) context: Option<String>,
    /// The call id given to the tool.
    #[arg(long, default_value = "cli")]
    pub(crate) id: String,
    /// Print only the tool's result (pretty JSON, or its text), not the whole output; a
    /// failed call prints its message for the model on stderr and exits with 1.
    #[arg(long)]
    pub(crate) raw: bool,
    /// Continue this W3C trace: the call's span becomes a child of it (with OTLP export on).
    #[arg(long, env = "TRACEPARENT", value_name = "00-TRACE_ID-SPAN_ID-FLAGS", value_parser = parse::trace_parent)]
    pub(crate) traceparent: Option<TraceParent>,
    /// Fuel limit (about one unit per WebAssembly instruction).
    #[arg(long, value_name = "N")]
    pub(crate) fuel: Option<u64>,
    /// Wall-clock limit, e.g. 500ms, 2s, 1m; a bare number is seconds.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    pub(crate) timeout: Option<Duration>,
    /// Memory limit, e.g. 32MiB, 512KiB, 1GiB, or bytes.
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    pub(crate) memory: Option<u64>,
    /// Largest result accepted, e.g. 64KiB.
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    pub(crate) max_output: Option<u64>,
    /// Also write a record of the call to FILE: its arguments, limits and every clock
    /// reading, random byte, nested call, HTTP response and granted file it observed;
    /// `toolcell replay FILE` runs it again exactly.
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
    /// Append every HTTP request the policy refuses to FILE, one JSON object per line, for
    /// `toolcell policy suggest FILE`.
    #[arg(long, value_name = "FILE")]
    pub(crate) denials: Option<PathBuf>,
    /// Allow HTTP requests to this host for this call: `example.com`, `*.example.com`,
    /// `localhost:8080`. Repeatable.
    #[arg(long, value_name = "HOST")]
    pub(crate) allow_host: Vec<HostPattern>,
    /// Preopen a directory for this call: HOST_DIR:GUEST_DIR[:ro|rw] (read-only unless :rw).
    /// Repeatable.
    #[arg(long, value_name = "HOST:GUEST[:ro|rw]")]
    pub(crate) dir: Vec<DirGrant>,
    /// Set an environment variable for this call: KEY=VALUE (a plain value), or KEY to pass
    /// the host's value through as a secret, redacted from the output. Repeatable.
    #[arg(long, value_name = "KEY[=VALUE]")]
    pub(crate) env: Vec<EnvGrant>,
    /// For an oci:// tool: who it must be signed by.
    #[command(flatten)]
    pub(crate) trust: TrustArgs,
    /// For an oci:// tool: how to reach its registry.
    #[command(flatten)]
    pub(crate) registry: RegistryArgs,
}

impl ServeArgs {
    /// The grants of the command line, per tool: on top of the policy files.
    pub(crate) fn policy(&self) -> Policy {
        let mut policy = Policy::new();
        let mut grant = |tool: &str, add: &dyn Fn(&mut Grants)| {
            let mut grants = Grants::new();
            add(&mut grants);
            policy.grant(tool, grants);
        };
        for ForTool { tool, grant: dir } in &self.dirs {
            grant(tool, &|grants| grants.dirs.push(dir.clone()));
        }
        for ForTool { tool, grant: host } in &self.allow_hosts {
            grant(tool, &|grants| grants.allow_hosts.push(host.clone()));
        }
        for ForTool { tool, grant: env } in &self.envs {
            grant(tool, &|grants| grants.env.push(env.clone()));
        }
        if self.code_mode.is_some() {
            // On, with the policy files' settings if they have any.
            policy.set_code_mode(CodeModePolicy::new());
        }
        policy
    }
}

impl InvokeArgs {
    /// The one-off grants of the command line.
    pub(crate) fn grants(&self) -> Grants {
        let mut grants = Grants::new();
        grants.allow_hosts.clone_from(&self.allow_host);
        grants.dirs.clone_from(&self.dir);
        grants.env.clone_from(&self.env);
        grants
    }
}
