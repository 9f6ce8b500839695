//! `toolcell invoke NAME`: one call, its output, and hints for the operator when it fails.

use std::io::Read as _;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde_json::{Map, Value};
use toolcell_runtime::{CallError, LimitOverrides, Runtime, ToolCall, ToolOutput};

use crate::EXIT_TOOL_ERROR;
use crate::args::InvokeArgs;
use crate::commands::registry;
use crate::load::{Source, load_one};
use crate::print::print_json;

pub(crate) async fn invoke(source: Source<'_>, args: InvokeArgs) -> anyhow::Result<ExitCode> {
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
    let source = Source { call_memory_bytes: args.memory, denials: args.denials.as_deref(), ..source };
    let pulled = match args.tool.starts_with("oci://") {
        true => Some(
            registry::pull_component(source.registry_store, source.tools_dir, &args.tool, &args.trust, &args.registry)
                .await?,
        ),
        false => None,
    };
    let source = Source { component: pulled.as_ref().map(|bytes| (args.tool.as_str(), bytes)), ..source };
    let (runtime, name) = load_one(source, &args.tool, &args.grants()).await?;
    let mut call = ToolCall::new(args.id, name.clone(), arguments).with_context(context).with_limits(limits);
    if let Some(parent) = args.traceparent {
        call = call.with_trace_parent(parent);
    }
    let output = match &args.record {
        None => runtime.call(call).await,
        Some(file) => {
            let (output, record) = runtime.call_recorded(call).await;
            let record = record.context("the call ran, but it could not be recorded")?;
            std::fs::write(file, record.to_json())
                .with_context(|| format!("cannot write the record to {}", file.display()))?;
            eprintln!("recorded the call in {} (`toolcell replay {}` runs it again)", file.display(), file.display());
            output
        }
    };
    if args.raw {
        print_result(&output);
    } else {
        print_json(&output)?;
    }
    if output.is_error {
        for hint in operator_hints(&runtime, &name, output.error.as_ref()) {
            eprintln!("hint: {hint}");
        }
    }
    Ok(if output.is_error { ExitCode::from(EXIT_TOOL_ERROR) } else { ExitCode::SUCCESS })
}

/// The result alone (`--raw`): pretty JSON when it is JSON, else the text; a failure's message
/// for the model on stderr.
fn print_result(output: &ToolOutput) {
    if let Some(error) = &output.error {
        eprintln!("error ({}): {}", error.kind(), output.content);
    } else {
        match output.value() {
            Some(Value::String(text)) => out!("{text}"),
            Some(value) => out!("{}", serde_json::to_string_pretty(&value).unwrap_or_else(|_| output.content.clone())),
            None => out!("{}", output.content),
        }
    }
}

/// What the operator (the person at the command line, not the model) can grant to make a
/// failed call possible: capabilities the tool asks for or tried to use and does not have.
pub(crate) fn operator_hints(runtime: &Runtime, tool: &str, error: Option<&CallError>) -> Vec<String> {
    let (Some(requested), Some(granted)) = (runtime.requested(tool), runtime.grants(tool)) else { return Vec::new() };
    let mut hints = Vec::new();
    if let Some(CallError::HttpDenied { grant, rule, .. }) = error {
        match grant {
            Some(grant) => hints.push(format!("to allow any request to this host, add `--allow-host {grant}`")),
            None if !granted.sends_http() => {
                hints
                    .push(format!("`{tool}` has no HTTP grant: allow the hosts it may reach with `--allow-host HOST`"));
            }
            None => {}
        }
        if let Some(rule) = rule {
            hints.push(format!("to allow only requests like this one, add the rule {rule} to `[[tools.{tool}.http]]`"));
        }
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
