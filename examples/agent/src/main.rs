//! A complete agent: a model behind any OpenAI-compatible Chat Completions endpoint, the
//! tools of a folder, every call of a turn run at once, failures fed back as results the
//! model corrects itself from, and OpenInference tracing when OTLP is configured.
//!
//! ```sh
//! OPENAI_API_KEY=sk-... cargo run -p toolcell-example-agent -- \
//!     "How many miles is 42.195 km, and what is that times 3?"
//! # A local server (Ollama, vLLM, llama.cpp) and a tools folder, traced into Arize Phoenix:
//! OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:6006/v1/traces \
//!     cargo run -p toolcell-example-agent -- \
//!     --base-url http://127.0.0.1:11434/v1 --model qwen3 --tools-dir tools "..."
//! ```
//!
//! Flags, or the environment: `--base-url` (`OPENAI_BASE_URL`, default
//! `https://api.openai.com/v1`), `--model` (`OPENAI_MODEL`, default `gpt-4.1-mini`),
//! `--api-key` (`OPENAI_API_KEY`; none for a local server), `--tools-dir`
//! (`TOOLCELL_TOOLS_DIR`; default the eight standard tools), `--cache-dir` (`TOOLCELL_CACHE_DIR`;
//! default `toolcell-example-cache` in the temporary folder), `--max-turns` (default 8).
//! The answer goes to stdout; each tool call's outcome to stderr.

use std::error::Error;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use toolcell_runtime::{Format, Runtime};
use toolcell_telemetry::Otlp;
use tracing::Instrument as _;
use tracing::field::Empty;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

type Failure = Box<dyn Error + Send + Sync>;

/// The endpoint used when none is given: the one that needs a key.
const OPENAI_URL: &str = "https://api.openai.com/v1";

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(answer) => {
            println!("{answer}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<String, Failure> {
    let config = Config::from_args_and_env()?;
    // Tracing first: the runtime records its metrics into the provider installed now.
    let otlp = Otlp::from_env()?;
    tracing_subscriber::registry().with(otlp.as_ref().and_then(Otlp::layer)).init();
    let runtime = Runtime::builder().tools_dir(&config.tools_dir).compile_cache(&config.cache_dir).build().await?;
    for diagnostic in runtime.diagnostics() {
        eprintln!("not loaded: {diagnostic}");
    }
    let model = Model::new(&config);
    let span = tracing::info_span!(
        "agent",
        openinference.span.kind = "AGENT",
        input.value = config.prompt.as_str(),
        output.value = Empty,
        otel.status_code = Empty,
    );
    let answer = agent(&runtime, &model, &config.prompt, config.max_turns).instrument(span.clone()).await;
    match &answer {
        Ok(answer) => span.record("output.value", answer.as_str()).record("otel.status_code", "OK"),
        Err(_) => span.record("otel.status_code", "ERROR"),
    };
    drop(span);
    if let Some(otlp) = otlp {
        // Blocks until the last spans are exported: off the async threads.
        tokio::task::spawn_blocking(move || otlp.shutdown()).await??;
    }
    answer
}

/// The loop: ask the model; run every tool call it makes, all at once; give it the results,
/// failures included, and ask again, until it answers without calling a tool.
async fn agent(runtime: &Runtime, model: &Model, prompt: &str, max_turns: usize) -> Result<String, Failure> {
    let tools = Format::OpenAiChat.tools(runtime.definitions())?;
    let mut messages = vec![json!({"role": "user", "content": prompt})];
    for _ in 0..max_turns {
        let reply = model.complete(&messages, &tools).await?;
        messages.push(reply.clone());
        if reply["tool_calls"].as_array().is_none_or(Vec::is_empty) {
            return Ok(reply["content"].as_str().unwrap_or_default().to_owned());
        }
        let results = runtime.respond(Format::OpenAiChat, &reply).await?;
        log_results(&reply, &results);
        messages.extend(results);
    }
    Err(format!("the model gave no answer within {max_turns} turns; raise --max-turns or simplify the prompt").into())
}

/// One line per call on stderr: what the model asked, and what it got back.
fn log_results(reply: &Value, results: &[Value]) {
    let calls = reply["tool_calls"].as_array().into_iter().flatten();
    for (call, result) in calls.zip(results) {
        let function = &call["function"];
        let content = result["content"].as_str().unwrap_or_default();
        eprintln!(
            "tool {}({}) -> {content:.300}",
            function["name"],
            function["arguments"].as_str().unwrap_or_default()
        );
    }
}

/// What the agent was asked to do, and with what.
struct Config {
    base_url: String,
    model: String,
    api_key: Option<String>,
    tools_dir: PathBuf,
    cache_dir: PathBuf,
    max_turns: usize,
    prompt: String,
}

impl Config {
    fn from_args_and_env() -> Result<Self, Failure> {
        let env = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        let mut config = Config {
            base_url: env("OPENAI_BASE_URL").unwrap_or_else(|| OPENAI_URL.into()),
            model: env("OPENAI_MODEL").unwrap_or_else(|| "gpt-4.1-mini".into()),
            api_key: env("OPENAI_API_KEY"),
            tools_dir: env("TOOLCELL_TOOLS_DIR").map_or_else(|| PathBuf::from(toolcell_tools::DIR), PathBuf::from),
            cache_dir: env("TOOLCELL_CACHE_DIR")
                .map_or_else(|| std::env::temp_dir().join("toolcell-example-cache"), PathBuf::from),
            max_turns: 8,
            prompt: String::new(),
        };
        let mut words = Vec::new();
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
            match arg.as_str() {
                "--base-url" => config.base_url = value()?,
                "--model" => config.model = value()?,
                "--api-key" => config.api_key = Some(value()?),
                "--tools-dir" => config.tools_dir = PathBuf::from(value()?),
                "--cache-dir" => config.cache_dir = PathBuf::from(value()?),
                "--max-turns" => {
                    config.max_turns = value()?.parse().map_err(|_| "--max-turns takes a whole number, e.g. 8")?
                }
                flag if flag.starts_with("--") => {
                    return Err(format!("unknown flag {flag}: see the top of examples/agent/src/main.rs").into());
                }
                _ => words.push(arg),
            }
        }
        config.prompt = words.join(" ");
        if config.prompt.trim().is_empty() {
            return Err("give the agent a task, e.g. `-- \"What is 15% of 2,340?\"`".into());
        }
        config.base_url = config.base_url.trim_end_matches('/').to_owned();
        if config.api_key.is_none() && config.base_url == OPENAI_URL {
            return Err("no API key for api.openai.com: set OPENAI_API_KEY or pass --api-key (a local \
                        OpenAI-compatible server needs none: set OPENAI_BASE_URL or --base-url)"
                .into());
        }
        Ok(config)
    }
}

/// A Chat Completions endpoint.
struct Model {
    http: ureq::Agent,
    url: String,
    name: String,
    api_key: Option<String>,
}

impl Model {
    fn new(config: &Config) -> Self {
        let http = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(300)))
            .http_status_as_error(false)
            .build()
            .into();
        let url = format!("{}/chat/completions", config.base_url);
        Self { http, url, name: config.model.clone(), api_key: config.api_key.clone() }
    }

    /// The model's next message, in an OpenInference LLM span.
    async fn complete(&self, messages: &[Value], tools: &Value) -> Result<Value, Failure> {
        let request = json!({"model": self.name, "messages": messages, "tools": tools});
        let span = tracing::info_span!(
            "llm",
            otel.name = "chat.completions",
            openinference.span.kind = "LLM",
            llm.model_name = self.name.as_str(),
            llm.provider = "openai",
            input.value = request["messages"].to_string(),
            input.mime_type = "application/json",
            output.value = Empty,
            output.mime_type = "application/json",
            llm.token_count.prompt = Empty,
            llm.token_count.completion = Empty,
            // An error until a usable answer is read (OK then wins over it).
            otel.status_code = "ERROR",
        );
        let (status, body) = self.post(request.to_string()).instrument(span.clone()).await?;
        let response: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        if !(200..300).contains(&status) {
            let detail = response["error"]["message"].as_str().map_or_else(|| format!("{body:.500}"), str::to_owned);
            return Err(format!(
                "{} answered {status}: {detail}; check --base-url, --model and --api-key (OPENAI_*)",
                self.url
            )
            .into());
        }
        let reply = response["choices"][0]["message"].clone();
        if !reply.is_object() {
            return Err(format!("{} answered without choices[0].message: {body:.500}", self.url).into());
        }
        span.record("output.value", reply.to_string()).record("otel.status_code", "OK");
        if let (Some(prompt), Some(completion)) =
            (response["usage"]["prompt_tokens"].as_i64(), response["usage"]["completion_tokens"].as_i64())
        {
            span.record("llm.token_count.prompt", prompt).record("llm.token_count.completion", completion);
        }
        Ok(reply)
    }

    /// POSTs the body, blocking a thread of tokio's blocking pool (ureq is synchronous).
    async fn post(&self, body: String) -> Result<(u16, String), Failure> {
        let mut request = self.http.post(&self.url).header("content-type", "application/json");
        if let Some(key) = &self.api_key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        let url = self.url.clone();
        tokio::task::spawn_blocking(move || {
            let mut response = request.send(body).map_err(|error| format!("cannot reach {url}: {error}"))?;
            let text =
                response.body_mut().read_to_string().map_err(|error| format!("reading {url}'s answer: {error}"))?;
            Ok((response.status().as_u16(), text))
        })
        .await?
    }
}
